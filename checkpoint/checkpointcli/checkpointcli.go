// Package checkpointcli is the `checkpoints` command for people: list,
// show, diff and restore the checkpoints of a journal. A program (such as
// fencefs) opens the namespace and the store from its own flags and hands
// the journal and the remaining arguments to Run.
package checkpointcli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/fencefs/fencefs/checkpoint"
)

// Usage is the command's help text.
const Usage = `usage: checkpoints list [--label L] [--limit N]
       checkpoints show N
       checkpoints diff N [--path P]...
       checkpoints restore N [--force | --skip-conflicts] [--path P]... [--dry-run]

Checkpoint N is the state once change N was made; 0 is the state before the first
change. restore returns every path the changes after N touched to its state at N; a
path someone else changed since is a conflict, and the restore is refused listing
them unless --force (overwrite them) or --skip-conflicts (leave them). A restore is a
checkpoint itself: restore to its number minus one to undo it.
`

// Exit codes of Run.
const (
	ExitOK       = 0
	ExitFailed   = 1 // a failure
	ExitUsage    = 2
	ExitConflict = 3 // a restore refused for conflicts
)

// paths is a repeatable --path flag.
type paths []string

func (p *paths) String() string     { return strings.Join(*p, ",") }
func (p *paths) Set(v string) error { *p = append(*p, v); return nil }

// Run runs one checkpoints subcommand on j; args start with the
// subcommand's name.
func Run(ctx context.Context, j *checkpoint.Journal, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, Usage)
		return ExitUsage
	}
	fs := flag.NewFlagSet("checkpoints "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		label   = fs.String("label", "", "only the checkpoints of this label")
		limit   = fs.Int("limit", 0, "list at most this many, newest first (0: all)")
		force   = fs.Bool("force", false, "overwrite paths someone else changed since")
		skip    = fs.Bool("skip-conflicts", false, "restore the rest and leave paths in conflict as they are")
		dryRun  = fs.Bool("dry-run", false, "say what the restore would change, and change nothing")
		only    paths
		numbers []uint64
	)
	fs.Var(&only, "path", "only this path and what lies below it (repeatable)")
	rest := args[1:]
	for {
		if err := fs.Parse(rest); err != nil {
			return ExitUsage
		}
		rest = fs.Args()
		if len(rest) == 0 {
			break
		}
		n, err := strconv.ParseUint(rest[0], 10, 64)
		if err != nil {
			fmt.Fprintf(stderr, "checkpoints %s: %q is not a checkpoint number\n", args[0], rest[0])
			return ExitUsage
		}
		numbers = append(numbers, n)
		rest = rest[1:]
	}
	need := func(k int) bool {
		if len(numbers) != k {
			fmt.Fprintf(stderr, "checkpoints %s: %d checkpoint number(s) given, %d wanted\n%s", args[0], len(numbers), k, Usage)
			return false
		}
		return true
	}
	switch args[0] {
	case "list":
		if !need(0) {
			return ExitUsage
		}
		list(j, *label, *limit, stdout)
	case "show":
		if !need(1) {
			return ExitUsage
		}
		return show(j, numbers[0], stdout, stderr)
	case "diff":
		if !need(1) {
			return ExitUsage
		}
		d, err := j.Diff(ctx, numbers[0], checkpoint.RestoreOptions{Paths: only})
		if err != nil {
			fmt.Fprintln(stderr, err)
			return ExitFailed
		}
		fmt.Fprint(stdout, d)
	case "restore":
		if !need(1) {
			return ExitUsage
		}
		if *force && *skip {
			fmt.Fprintln(stderr, "checkpoints restore: --force and --skip-conflicts exclude each other")
			return ExitUsage
		}
		opts := checkpoint.RestoreOptions{Paths: only, Force: *force, SkipConflicts: *skip}
		if *dryRun {
			return plan(ctx, j, numbers[0], opts, stdout, stderr)
		}
		return restore(ctx, j, numbers[0], opts, stdout, stderr)
	default:
		fmt.Fprintf(stderr, "checkpoints: unknown subcommand %q\n%s", args[0], Usage)
		return ExitUsage
	}
	return ExitOK
}

func list(j *checkpoint.Journal, label string, limit int, w io.Writer) {
	cps := j.Checkpoints()
	n := 0
	for i := len(cps) - 1; i >= 0 && (limit <= 0 || n < limit); i-- {
		c := cps[i]
		if label != "" && c.Label != label {
			continue
		}
		n++
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\n", c.Seq, c.Time.UTC().Format(time.RFC3339), c.Label, describe(c))
	}
	fmt.Fprintf(w, "oldest checkpoint kept: %d\n", j.Oldest())
}

// describe says what a checkpoint did in a few words.
func describe(c checkpoint.Checkpoint) string {
	if c.Op == "restore" {
		s := fmt.Sprintf("restore to %d", c.RestoredTo)
		if c.Forced {
			s += " (forced)"
		}
		if !c.Complete {
			s += " (incomplete)"
		}
		return s + ", " + count(len(c.Changes))
	}
	s := c.Op + " " + c.Path
	if c.Source != "" {
		s += " from " + c.Source
	}
	return s + ", " + count(len(c.Changes))
}

// count says n paths.
func count(n int) string {
	if n == 1 {
		return "1 path"
	}
	return fmt.Sprintf("%d paths", n)
}

func show(j *checkpoint.Journal, n uint64, w, stderr io.Writer) int {
	for _, c := range j.Checkpoints() {
		if c.Seq != n {
			continue
		}
		fmt.Fprintf(w, "checkpoint %d\ntime: %s\nlabel: %s\ncall: %s\n%s\n", c.Seq, c.Time.UTC().Format(time.RFC3339), c.Label, c.Call, describe(c))
		for _, p := range c.Changes {
			after := "unknown"
			if p.After != nil {
				after = p.After.String()
			}
			fmt.Fprintf(w, "  %s: %s -> %s\n", p.Path, p.Before, after)
		}
		return ExitOK
	}
	fmt.Fprintf(stderr, "checkpoints show: no change or restore %d\n", n)
	return ExitFailed
}

func plan(ctx context.Context, j *checkpoint.Journal, n uint64, opts checkpoint.RestoreOptions, w, stderr io.Writer) int {
	p, err := j.Plan(ctx, n, opts)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return ExitFailed
	}
	for _, it := range p.Items {
		mark := ""
		if it.Conflict != "" {
			mark = "  CONFLICT: " + it.Conflict
		}
		fmt.Fprintf(w, "%s: %s -> %s%s\n", it.Path, it.Current, it.Target, mark)
	}
	fmt.Fprintf(w, "%d paths would change, %d in conflict, %d already as at %d\n", len(p.Items), len(p.Conflicts()), p.Unchanged, n)
	return ExitOK
}

func restore(ctx context.Context, j *checkpoint.Journal, n uint64, opts checkpoint.RestoreOptions, w, stderr io.Writer) int {
	res, err := j.Restore(ctx, n, opts)
	var ce *checkpoint.ConflictError
	if errors.As(err, &ce) {
		fmt.Fprintln(stderr, err)
		return ExitConflict
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return ExitFailed
	}
	if res.Seq == 0 {
		fmt.Fprintf(w, "nothing to restore: every path is as it was at %d\n", n)
		return ExitOK
	}
	for _, p := range res.Restored {
		fmt.Fprintf(w, "restored %s\n", p)
	}
	for _, it := range res.Forced {
		fmt.Fprintf(w, "overwrote %s (%s)\n", it.Path, it.Conflict)
	}
	for _, it := range res.Skipped {
		fmt.Fprintf(w, "left %s (%s)\n", it.Path, it.Conflict)
	}
	fmt.Fprintf(w, "restore %d: %s to checkpoint %d; `checkpoints restore %d` undoes it\n", res.Seq, count(len(res.Restored)), n, res.Seq-1)
	return ExitOK
}
