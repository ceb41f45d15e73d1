package bench_test

import (
	"fmt"
	"strings"

	"github.com/fencefs/fencefs/bench"
)

// The table is read from `go test -bench` output; rows that did not run
// say so.
func ExampleWriteTable() {
	out := `BenchmarkFindFiles-2  1  5000 ns/op  120000000 fencefs-ns/op  0.96 ratio  125000000 ref-ns/op
BenchmarkReadWindowRSS-2  1  5000 ns/op  5.2 peak-rss-MiB
`
	res, err := bench.ParseResults(strings.NewReader(out))
	if err != nil {
		panic(err)
	}
	lines, _ := bench.Evaluate(res)
	for _, l := range lines[4:7] {
		fmt.Printf("%s: %s, %s, %s\n", l.Measure, l.Ours, l.Ratio, l.Met)
	}
	var sb strings.Builder
	allMet, _ := bench.WriteTable(&sb, res)
	fmt.Println(strings.SplitN(sb.String(), "\n", 2)[0])
	fmt.Println("all measured goals met:", allMet)
	// Output:
	// find_files **/*.go, 100k entries: 120 ms, 0.96x, yes
	// read_file of a 4 KiB file, in process: -, -, not run
	// read_file limit 50 of a 1 GiB file: peak RSS 5.2 MiB, -, yes
	//  measure                                      | fencefs          | compared with                | ratio | goal              | met?
	// all measured goals met: true
}
