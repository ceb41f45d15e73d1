//go:build !fencefs_oneshot

package main

import (
	"context"
	"fmt"
	"io"

	"github.com/fencefs/fencefs/cmd/fencefs/internal/config"
	"github.com/fencefs/fencefs/server"
	"github.com/fencefs/fencefs/skills"
)

// listSkills prints the skills under the --skills roots, the copies they
// shadow and the problems found: fencefs skills [flags].
func listSkills(ctx context.Context, s *config.Settings, rest []string, stdout, stderr io.Writer) int {
	if len(rest) > 0 {
		fmt.Fprintf(stderr, "fencefs: skills takes no arguments, got %q\n", rest)
		return exitFatal
	}
	if len(s.Skills) == 0 {
		fmt.Fprintln(stderr, "fencefs: skills: no skill roots given; add --skills ROOT (repeatable), or a skills list to the config file")
		return exitFatal
	}
	ns, err := openNamespace(ctx, s, newLogger(stderr, s.LogLevel, s.LogFormat))
	if err != nil {
		fmt.Fprintf(stderr, "fencefs: %v\n", err)
		return exitFatal
	}
	defer ns.Close()
	_, cat, err := server.DiscoverSkills(ctx, ns, s.Skills)
	if err != nil {
		fmt.Fprintf(stderr, "fencefs: %v\n", err)
		return exitFatal
	}
	if _, err := io.WriteString(stdout, skills.Format(cat)); err != nil {
		fmt.Fprintf(stderr, "fencefs: %v\n", err)
		return exitFatal
	}
	if len(cat.Problems) > 0 {
		// The listing is complete, but a script checking a skills folder
		// must notice a broken manifest or a missing root.
		fmt.Fprintf(stderr, "fencefs: skills: %d %s (listed above)\n", len(cat.Problems), plural(len(cat.Problems), "problem", "problems"))
		return exitRetry
	}
	return exitOK
}

// plural returns one or many by n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
