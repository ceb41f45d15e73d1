package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/fencefs/fencefs/cmd/fencefs/internal/config"
	"github.com/fencefs/fencefs/skills"
)

// discoverSkills finds the skills under the --skills roots of s on the
// namespace's storage. Problems with single skills are in the catalog; the
// error, naming --skills, is for a root that cannot be spelt so in this
// namespace or a discovery that cannot finish (too many skills).
func discoverSkills(ctx context.Context, ns *namespace, s *config.Settings) (*skills.Loader, *skills.Catalog, error) {
	// Options.Cwd makes read paths on a plain local root relative to the
	// tools' working directory, so that read_file accepts them as given.
	loader, err := skills.New(ns.b, s.Skills, skills.Options{Cwd: s.Cwd})
	if err != nil {
		return nil, nil, skillsSettingError(err)
	}
	cat, err := loader.Discover(ctx)
	if err != nil {
		return nil, nil, skillsSettingError(err)
	}
	return loader, cat, nil
}

// skillsSettingError names --skills in place of the package's own prefix.
func skillsSettingError(err error) error {
	return fmt.Errorf("--skills: %s", strings.TrimPrefix(err.Error(), "skills: "))
}

// logCatalog logs what serve's discovery found: a warning per problem,
// so a broken manifest is noticed, and the shadowed copies at info level.
func logCatalog(logger *slog.Logger, cat *skills.Catalog) {
	for _, p := range cat.Problems {
		logger.Warn("skill problem", "root", p.Root, "path", p.Path, "reason", p.Reason)
	}
	for _, sh := range cat.Shadowed {
		logger.Info("skill shadowed", "skill", sh.Skill.Name, "path", sh.Skill.Path, "in_use", sh.By.Path)
	}
	names := make([]string, len(cat.Skills))
	for i, sk := range cat.Skills {
		names[i] = sk.Name
	}
	logger.Info("skills offered as prompts and resources", "roots", cat.Roots, "skills", names, "problems", len(cat.Problems))
}

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
	_, cat, err := discoverSkills(ctx, ns, s)
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
