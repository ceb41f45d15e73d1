//go:build !fencefs_oneshot

package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/fencefs/fencefs/audit"
)

// openAudit opens the audit log --audit names: a file, or stdout for "-".
func openAudit(path string, stdout io.Writer) (*audit.Logger, error) {
	switch path {
	case "":
		return nil, nil
	case "-":
		return audit.New(stdout, audit.Genesis), nil
	}
	l, err := audit.OpenFile(path, nil)
	if err != nil {
		return nil, fmt.Errorf("--audit: %w", err)
	}
	return l, nil
}

// auditCommand runs `fencefs audit verify [--prev H] [--head H
// [--allow-growth]] FILE`: exit 0 when the chain holds, 1 with the first
// bad line otherwise. --prev is the head of the file this one continues
// (a rotated log's); --head is an anchor kept where the log's writer
// cannot reach (the server logs its head as it goes and when it stops),
// which catches lines cut off the end. A log that goes on past --head is
// refused, as the lines of a server whose last head that was, unless
// --allow-growth says the head was logged while the server ran on.
func auditCommand(args []string, stdout, stderr io.Writer) int {
	usage := "usage: fencefs audit verify [--prev HASH] [--head HASH [--allow-growth]] FILE (see fencefs help audit)"
	if len(args) == 0 || args[0] != "verify" {
		fmt.Fprintln(stderr, usage)
		return exitFatal
	}
	fl := flag.NewFlagSet("audit verify", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	prev := fl.String("prev", audit.Genesis, "")
	head := fl.String("head", "", "")
	growth := fl.Bool("allow-growth", false, "")
	if err := fl.Parse(args[1:]); err != nil || fl.NArg() != 1 || *growth && *head == "" {
		fmt.Fprintln(stderr, usage)
		return exitFatal
	}
	file := fl.Arg(0)
	f, err := os.Open(file)
	if err != nil {
		fmt.Fprintf(stderr, "fencefs: audit verify: %v\n", err)
		return exitFatal
	}
	defer f.Close()
	res, err := audit.VerifyHead(f, *prev, cmp.Or(*head, *prev))
	if errors.Is(err, audit.ErrTruncated) {
		fmt.Fprintf(stderr, "fencefs: audit verify %s: the chain holds but never reaches head %s (it ends at %s): lines were cut off its end or rewritten from some line on\n", file, *head, res.Head)
		return exitFatal
	}
	if err != nil {
		var le *audit.LineError
		if errors.As(err, &le) {
			fmt.Fprintf(stderr, "fencefs: audit verify %s: line %d: %v\n", file, le.Line, le.Err)
		} else {
			fmt.Fprintf(stderr, "fencefs: audit verify %s: %v\n", file, err)
		}
		return exitFatal
	}
	if *head != "" && res.Head != *head {
		if !*growth {
			fmt.Fprintf(stderr, "fencefs: audit verify %s: the chain reaches head %s at line %d and goes on for %d more lines, to head %s: not lines of a server whose last head that was (give the head it logged last, or --allow-growth for a head it logged while it ran on)\n",
				file, *head, res.HeadLine, res.Lines-res.HeadLine, res.Head)
			return exitFatal
		}
		fmt.Fprintf(stdout, "ok: %d lines, head %s (head %s at line %d, then %d more lines)\n", res.Lines, res.Head, *head, res.HeadLine, res.Lines-res.HeadLine)
		return exitOK
	}
	fmt.Fprintf(stdout, "ok: %d lines, head %s\n", res.Lines, res.Head)
	return exitOK
}
