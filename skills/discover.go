package skills

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"
	"sync"

	"github.com/fencefs/fencefs/backend"
)

// ErrTooManySkills is wrapped by the error of a discovery that met more
// skill directories than Options.MaxSkills allows.
var ErrTooManySkills = errors.New("too many skills")

// Skill is a skill found by discovery.
type Skill struct {
	// Name is the skill's name, equal to its directory's name.
	Name string
	// Description says what the skill does and when to use it.
	Description string
	// Fields holds the other keys of the front matter (see Manifest).
	Fields map[string]any
	// Root is the root holding the skill, as Loader.Roots shows it.
	Root string
	// Path is the skill's directory: rooted ("/tenant/skills/pdf-forms")
	// in a rooted namespace, canonical relative ("skills/pdf-forms")
	// otherwise. It is for people; the model gets Activation.ReadPath.
	Path string
	// Manifest is the path of its SKILL.md, in the same form as Path.
	Manifest string
}

// Shadowed is a valid copy of a skill hidden by a copy of the same name in
// an earlier root.
type Shadowed struct {
	// Skill is the hidden copy.
	Skill Skill
	// By is the copy in use.
	By Skill
}

// Problem is a skill, or a root, that discovery could not load.
type Problem struct {
	// Root is the root where the problem was found, as Loader.Roots
	// shows it.
	Root string
	// Name is the skill's name when its manifest gave a valid one, and
	// "" otherwise.
	Name string
	// Path is what is at fault (a root, a skill directory or a SKILL.md),
	// in the form of Skill.Path.
	Path string
	// Reason says what is wrong, in a sentence fragment such as
	// "description is missing".
	Reason string
}

// String returns the problem as "<path>: <reason>".
func (p Problem) String() string { return p.Path + ": " + p.Reason }

// Catalog is the result of a discovery.
type Catalog struct {
	// Roots are the roots searched, in precedence order.
	Roots []string
	// Skills are the skills in use, sorted by name.
	Skills []Skill
	// Shadowed are the copies hidden by earlier roots, in root order.
	Shadowed []Shadowed
	// Problems are in root order, and by directory name within a root.
	Problems []Problem
}

// Lookup returns the skill in use with the given name.
func (c *Catalog) Lookup(name string) (Skill, bool) {
	i := sort.Search(len(c.Skills), func(i int) bool { return c.Skills[i].Name >= name })
	if i < len(c.Skills) && c.Skills[i].Name == name {
		return c.Skills[i], true
	}
	return Skill{}, false
}

// Discover lists every root and loads every skill in it. Problems with a
// root or a skill are recorded in the catalog and do not stop discovery;
// it fails only when ctx ends or past Options.MaxSkills skill directories
// (an error wrapping ErrTooManySkills).
func (l *Loader) Discover(ctx context.Context) (*Catalog, error) {
	cat := &Catalog{Roots: l.Roots()}
	inUse := make(map[string]int)
	examined := 0
	for _, r := range l.roots {
		cands, prob, err := l.candidates(ctx, r)
		if err != nil {
			return nil, err
		}
		if prob != nil {
			cat.Problems = append(cat.Problems, *prob)
			continue
		}
		examined += len(cands)
		if examined > l.maxSkill {
			return nil, fmt.Errorf("skills: %w: %d skill directories in %s and the roots before it, limit is %d",
				ErrTooManySkills, examined, r.display, l.maxSkill)
		}
		results, err := l.loadAll(ctx, r, cands)
		if err != nil {
			return nil, err
		}
		for _, res := range results {
			switch i, dup := inUse[res.skill.Name]; {
			case res.problem != nil:
				cat.Problems = append(cat.Problems, *res.problem)
			case dup:
				cat.Shadowed = append(cat.Shadowed, Shadowed{Skill: res.skill, By: cat.Skills[i]})
			default:
				inUse[res.skill.Name] = len(cat.Skills)
				cat.Skills = append(cat.Skills, res.skill)
			}
		}
	}
	sort.Slice(cat.Skills, func(i, j int) bool { return cat.Skills[i].Name < cat.Skills[j].Name })
	return cat, nil
}

// candidate is an entry of a root that may be a skill: a directory to
// load, or an entry already known to be a problem.
type candidate struct {
	name    string
	dir     string // storage path to read, below the resolved root
	problem *Problem
}

// candidates lists the root r and returns its possible skills, sorted by
// name, or the problem that kept it from being listed.
func (l *Loader) candidates(ctx context.Context, r root) ([]candidate, *Problem, error) {
	dir, prob, err := l.resolveRoot(ctx, r)
	if err != nil || prob != nil {
		return nil, prob, err
	}
	entries, err := l.b.List(ctx, dir)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, &Problem{Root: r.display, Path: r.display, Reason: rootReason(err)}, nil
	}
	backend.SortEntries(entries)
	var out []candidate
	for _, e := range entries {
		if strings.HasPrefix(e.Name, ".") {
			continue // hidden: version control, editor and OS files
		}
		c := candidate{name: e.Name, dir: backend.Join(dir, e.Name)}
		switch {
		case e.IsSymlink():
			c.problem = &Problem{Root: r.display, Path: l.skillPath(r, e.Name),
				Reason: "skill directory is a symbolic link; links are not followed"}
		case !e.IsDir():
			continue // a file beside the skills, such as a README
		case !ValidName(e.Name):
			c.problem = &Problem{Root: r.display, Path: l.skillPath(r, e.Name),
				Reason: "directory " + checkName(e.Name).Error()}
		}
		out = append(out, c)
	}
	return out, nil, nil
}

// rootReason says why a root could not be listed.
func rootReason(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "root does not exist"
	case errors.Is(err, backend.ErrNotDir):
		return "root is not a directory"
	case errors.Is(err, backend.ErrSymlink):
		return "root passes through a symbolic link, which is not followed"
	}
	return err.Error()
}

// loaded is the outcome of loading one skill directory.
type loaded struct {
	skill   Skill
	body    string
	problem *Problem
	err     error // fatal: the context ended
}

// loadAll loads the candidates of r, Options.Concurrency at a time,
// keeping their order.
func (l *Loader) loadAll(ctx context.Context, r root, cands []candidate) ([]loaded, error) {
	out := make([]loaded, len(cands))
	sem := make(chan struct{}, l.workers)
	var wg sync.WaitGroup
	for i, c := range cands {
		if c.problem != nil {
			out[i].problem = c.problem
			continue
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return nil, ctx.Err()
		}
		wg.Go(func() {
			defer func() { <-sem }()
			res := l.load(ctx, r, c.name, c.dir)
			res.body = "" // discovery keeps no instructions
			out[i] = res
		})
	}
	wg.Wait()
	for _, res := range out {
		if res.err != nil {
			return nil, res.err
		}
	}
	return out, nil
}

// skillPath returns the display path of the directory name in root r.
func (l *Loader) skillPath(r root, name string) string {
	return l.display(backend.Join(r.storage, name))
}

// load reads and checks the manifest of the skill directory name in root
// r, stored at dir (below the resolved root).
func (l *Loader) load(ctx context.Context, r root, name, dir string) loaded {
	path := l.skillPath(r, name)
	manifest := strings.TrimSuffix(path, "/") + "/" + ManifestName
	problem := func(skill, at, reason string) loaded {
		return loaded{problem: &Problem{Root: r.display, Name: skill, Path: at, Reason: reason}}
	}
	data, err := l.readManifest(ctx, backend.Join(dir, ManifestName))
	if err != nil {
		if ctx.Err() != nil {
			return loaded{err: ctx.Err()}
		}
		if errors.Is(err, fs.ErrNotExist) {
			return problem("", path, "no "+ManifestName+" in the skill directory")
		}
		return problem("", manifest, manifestReason(err))
	}
	m, err := parseManifest(data)
	known := ""
	if ValidName(m.Name) {
		known = m.Name
	}
	if err != nil {
		return problem(known, manifest, err.Error())
	}
	if m.Name != name {
		return problem(known, manifest, fmt.Sprintf("name %q does not match the directory name %q", m.Name, name))
	}
	return loaded{
		skill: Skill{Name: m.Name, Description: m.Description, Fields: m.Fields, Root: r.display, Path: path, Manifest: manifest},
		body:  m.Body,
	}
}

// sizeError reports a manifest over the size limit.
type sizeError struct {
	size, limit int64 // size < 0: unknown, over the limit
}

func (e *sizeError) Error() string {
	if e.size < 0 {
		return fmt.Sprintf("manifest is over %d bytes, limit is %d", e.limit, e.limit)
	}
	return fmt.Sprintf("manifest is %d bytes, limit is %d", e.size, e.limit)
}

// readManifest reads the file name, refusing one over the size limit
// without reading more than one byte past it.
func (l *Loader) readManifest(ctx context.Context, name string) ([]byte, error) {
	rc, err := l.b.OpenRead(ctx, name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, l.maxBytes+1))
	if err != nil {
		return nil, backend.PathError("read", name, err)
	}
	if int64(len(data)) <= l.maxBytes {
		return data, nil
	}
	size := int64(-1)
	if fi, err := backend.Stat(ctx, l.b, name); err == nil && fi.Size > l.maxBytes {
		size = fi.Size
	}
	return nil, &sizeError{size: size, limit: l.maxBytes}
}

// manifestReason says why a SKILL.md could not be read.
func manifestReason(err error) string {
	var se *sizeError
	switch {
	case errors.As(err, &se):
		return se.Error()
	case errors.Is(err, backend.ErrIsDir):
		return ManifestName + " is a directory"
	case errors.Is(err, backend.ErrNotRegular):
		return ManifestName + " is not a regular file; links are not followed"
	case errors.Is(err, backend.ErrSymlink):
		return "the path passes through a symbolic link, which is not followed"
	case errors.Is(err, backend.ErrNotDir):
		return "the skill directory is not a directory"
	}
	return err.Error()
}
