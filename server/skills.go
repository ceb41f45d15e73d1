package server

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/fencefs/fencefs/skills"
)

// DiscoverSkills finds the skills under roots on the namespace's storage.
// Problems with single skills are in the catalog; the error, naming
// --skills, is for a root that cannot be spelt so in this namespace or a
// discovery that cannot finish (too many skills).
func DiscoverSkills(ctx context.Context, ns *Namespace, roots []string) (*skills.Loader, *skills.Catalog, error) {
	// Options.Cwd makes read paths on a plain local root relative to the
	// tools' working directory, so that read_file accepts them as given.
	loader, err := skills.New(ns.b, roots, skills.Options{Cwd: ns.opts.Cwd})
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

// LogCatalog logs what a discovery found: a warning per problem, so a
// broken manifest is noticed, and the shadowed copies at info level.
func LogCatalog(logger *slog.Logger, cat *skills.Catalog) {
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
