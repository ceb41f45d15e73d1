package skills

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/fencefs/fencefs/backend"
)

// ErrNotFound is wrapped by the error of an activation that found no
// usable skill of the name asked for.
var ErrNotFound = errors.New("skill not found")

// Activation is an activated skill: what the model needs to follow it.
type Activation struct {
	// Skill is the skill activated.
	Skill Skill
	// Instructions is the body of SKILL.md, after the front matter.
	Instructions string
	// ReadPath is the skill's directory as a path the file tools accept
	// (see the package documentation), so the model can read the skill's
	// resources as ReadPath + "/" + name.
	ReadPath string
}

// Activate finds the skill name in the roots, earliest first, and returns
// its instructions and read path. It reads the storage afresh and agrees
// with Discover: a copy that Discover would report as a problem is passed
// over for one in a later root. Without a usable copy it fails with an
// error wrapping ErrNotFound that names the copies passed over and why.
// Activation changes no state, and no tool's working directory.
func (l *Loader) Activate(ctx context.Context, name string) (Activation, error) {
	if !ValidName(name) {
		return Activation{}, fmt.Errorf("skills: %w: %q is not a valid skill name", ErrNotFound, name)
	}
	var passed []string
	for _, r := range l.roots {
		a, why, err := l.activateIn(ctx, r, name)
		switch {
		case err != nil:
			return Activation{}, err
		case a != nil:
			return *a, nil
		case why != "":
			passed = append(passed, why)
		}
	}
	err := fmt.Errorf("skills: %w: %q", ErrNotFound, name)
	if len(passed) > 0 {
		err = fmt.Errorf("%w (passed over %s)", err, strings.Join(passed, "; "))
	}
	return Activation{}, err
}

// activateIn activates the skill name from the root r. When r holds no
// usable copy, a is nil and why says what was wrong with the copy there
// ("" when there is none; a root's own problem is no news about a skill).
func (l *Loader) activateIn(ctx context.Context, r root, name string) (a *Activation, why string, err error) {
	dir, prob, err := l.resolveRoot(ctx, r)
	if err != nil || prob != nil {
		return nil, "", err
	}
	d := backend.Join(dir, name)
	fi, err := backend.Stat(ctx, l.b, d)
	switch {
	case ctx.Err() != nil:
		return nil, "", ctx.Err()
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, backend.ErrNotDir):
		return nil, "", nil
	case err != nil:
		return nil, l.skillPath(r, name) + ": " + err.Error(), nil
	case fi.IsSymlink():
		return nil, l.skillPath(r, name) + ": skill directory is a symbolic link; links are not followed", nil
	case !fi.IsDir():
		return nil, "", nil
	}
	res := l.load(ctx, r, name, d)
	switch {
	case res.err != nil:
		return nil, "", res.err
	case res.problem != nil:
		return nil, res.problem.String(), nil
	}
	return &Activation{
		Skill:        res.skill,
		Instructions: res.body,
		ReadPath:     l.toolPath(backend.Join(r.storage, name)),
	}, "", nil
}

// PromptText returns the text of a prompt that activates a: the skill's
// instructions, then a line telling the model where the skill's files are,
// so it reads them with the file tools.
func PromptText(a Activation) string {
	var b strings.Builder
	if a.Instructions != "" {
		b.WriteString(a.Instructions)
		b.WriteString("\n\n")
	}
	fmt.Fprintf(&b, "The files of the skill %q are in the directory %s. Paths in these instructions are relative to it: read them with the file tools as %s/<path>.\n",
		a.Skill.Name, a.ReadPath, strings.TrimSuffix(a.ReadPath, "/"))
	return b.String()
}
