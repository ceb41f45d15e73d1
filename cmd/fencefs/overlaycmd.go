//go:build !fencefs_oneshot

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/fencefs/fencefs/cmd/fencefs/internal/config"
	"github.com/fencefs/fencefs/overlay"
	"github.com/fencefs/fencefs/overlay/overlayspec"
)

// overlayTimeout bounds the opening of each layer and each request to it.
const overlayTimeout = time.Minute

// overlayCommand runs "fencefs overlay VERB SPEC [PATH...]".
func overlayCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		fmt.Fprint(stdout, overlayUsage)
		return exitOK
	}
	if len(args) < 2 {
		fmt.Fprint(stderr, "fencefs overlay: want a command and a spec\n\n"+overlayUsage)
		return exitFatal
	}
	verb, spec, paths := args[0], args[1], args[2:]
	switch verb {
	case "changes", "diff", "commit":
	case "discard":
		if len(paths) > 0 {
			fmt.Fprintln(stderr, "fencefs overlay discard: takes no PATH: it throws every change away")
			return exitFatal
		}
	default:
		fmt.Fprintf(stderr, "fencefs overlay: unknown command %q\n\n%s", verb, overlayUsage)
		return exitFatal
	}
	if !strings.HasPrefix(spec, overlayspec.Prefix) {
		spec = overlayspec.Prefix + spec
	}
	o, closer, err := openOverlay(ctx, spec)
	if err != nil {
		fmt.Fprintf(stderr, "fencefs overlay: %v\n", err)
		return exitFatal
	}
	defer closer.Close()
	if err := runOverlay(ctx, o, verb, paths, stdout); err != nil {
		fmt.Fprintf(stderr, "fencefs overlay %s: %v\n", verb, err)
		return exitFatal
	}
	return exitOK
}

// openOverlay opens the overlay of spec.
func openOverlay(ctx context.Context, spec string) (*overlay.FS, io.Closer, error) {
	ss := config.CommandSchemes()
	s, err := ss.Parse(spec)
	if err != nil {
		return nil, nil, err
	}
	return ss[overlayspec.Prefix].(*overlayspec.Scheme).OpenFS(ctx, s, overlayTimeout)
}

// errConflicts reports a commit that left conflicts.
var errConflicts = errors.New("conflicts left in the overlay")

// runOverlay runs verb on o and prints its result.
func runOverlay(ctx context.Context, o *overlay.FS, verb string, paths []string, stdout io.Writer) error {
	switch verb {
	case "changes":
		cs, err := o.Changes(ctx)
		if err != nil {
			return err
		}
		for _, c := range cs {
			if len(paths) > 0 && !selected(c, paths) {
				continue
			}
			line := c.Kind.String() + " " + c.Path
			if c.Dir {
				line += "/"
			}
			if c.From != "" {
				line += " (from " + c.From + ")"
			}
			fmt.Fprintln(stdout, line)
		}
		return nil
	case "diff":
		d, err := o.Diff(ctx, paths...)
		if err != nil {
			return err
		}
		_, err = io.WriteString(stdout, d)
		return err
	case "commit":
		res, err := o.Commit(ctx, paths...)
		for _, p := range res.Landed {
			fmt.Fprintln(stdout, "landed "+p)
		}
		for _, c := range res.Conflicts {
			fmt.Fprintf(stdout, "conflict %s: %v\n", c.Path, c.Err)
		}
		if err == nil && len(res.Conflicts) > 0 {
			err = fmt.Errorf("%d %w", len(res.Conflicts), errConflicts)
		}
		return err
	default:
		return o.Discard(ctx)
	}
}

// selected reports whether c is at or inside one of paths, or renamed
// from there.
func selected(c overlay.Change, paths []string) bool {
	for _, p := range paths {
		p = strings.Trim(p, "/")
		for _, name := range []string{c.Path, c.From} {
			if name != "" && (p == "" || p == "." || name == p || strings.HasPrefix(name, p+"/")) {
				return true
			}
		}
	}
	return false
}
