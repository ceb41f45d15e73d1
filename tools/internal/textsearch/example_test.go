package textsearch_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/fencefs/fencefs/tools/internal/textsearch"
)

func ExampleMatcher_Search() {
	m, err := textsearch.Compile(`fo+`, textsearch.Options{Context: 1})
	if err != nil {
		panic(err)
	}
	p := textsearch.NewPrinter(100, true)
	text := "one\nfoo\ntwo\nthree\nand\nfour\nfour more\nfive\nsix\n"
	_ = m.Search(context.Background(), strings.NewReader(text), func(l textsearch.Line) error {
		p.AddLine("notes.txt", l)
		return nil
	})
	fmt.Println(p.String())
	// Output:
	// notes.txt-1-one
	// notes.txt:2:foo
	// notes.txt-3-two
	// --
	// notes.txt-5-and
	// notes.txt:6:four
	// notes.txt:7:four more
	// notes.txt-8-five
}
