package glob_test

import (
	"fmt"

	"github.com/fencefs/fencefs/tools/internal/glob"
)

func ExampleCompile() {
	p, err := glob.Compile("src/**/*.{go,md}")
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Match("src/a/b/main.go"), p.Match("src/readme.md"), p.Match("lib/x.go"))
	fmt.Println(p.CanDescend("src/a"), p.CanDescend("lib"))
	// Output:
	// true true false
	// true false
}
