// Command fencefs-bench prepares and reports fencefs's benchmark suite;
// scripts/bench.sh runs it around `go test -bench`.
//
//	fencefs-bench corpora        generate the corpora (kept in $FENCEFS_BENCH_DIR)
//	fencefs-bench table [FILE]   print the table of the `go test -bench` output in FILE (or stdin)
//
// table exits with status 3 when a goal that was measured was not met.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/fencefs/fencefs/bench"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "fencefs-bench:", err)
		if err == errGoals {
			os.Exit(3)
		}
		os.Exit(1)
	}
}

// errGoals reports that a measured goal was not met.
var errGoals = fmt.Errorf("a goal was not met")

func run(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: fencefs-bench corpora | table [FILE]")
	}
	switch args[0] {
	case "corpora":
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		defer stop()
		return corpora(ctx, stdout)
	case "table":
		in := io.Reader(os.Stdin)
		if len(args) > 1 {
			f, err := os.Open(args[1])
			if err != nil {
				return err
			}
			defer f.Close()
			in = f
		}
		res, err := bench.ParseResults(in)
		if err != nil {
			return err
		}
		ok, err := bench.WriteTable(stdout, res)
		if err != nil {
			return err
		}
		if !ok {
			return errGoals
		}
		return nil
	}
	return fmt.Errorf("unknown command %q", args[0])
}

// corpora generates every corpus that is missing and says where they are.
func corpora(ctx context.Context, w io.Writer) error {
	cache := bench.CacheDir()
	for _, c := range []struct {
		name string
		gen  func(context.Context, string) (string, error)
	}{
		{"source tree", bench.SourceTree},
		{"wide tree", bench.WideTree},
		{"ignored tree", bench.IgnoredTree},
		{"1 GiB file", bench.BigFile},
	} {
		start := time.Now()
		dir, err := c.gen(ctx, cache)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%-12s %s (%s)\n", c.name, dir, time.Since(start).Round(time.Millisecond))
	}
	return nil
}
