package skills

import (
	"context"
	"errors"
	"fmt"

	"github.com/fencefs/fencefs/backend"
)

// Defaults of Options.
const (
	// DefaultMaxManifestBytes is the default cap on one SKILL.md: 64 KiB.
	DefaultMaxManifestBytes = 64 << 10
	// DefaultMaxSkills is the default cap on skill directories examined by
	// one discovery, over all roots.
	DefaultMaxSkills = 1000
	// DefaultConcurrency is how many manifests discovery reads at once by
	// default; it hides the latency of remote storage.
	DefaultConcurrency = 8
)

// Options configure a Loader. The zero value is a usable configuration.
type Options struct {
	// MaxManifestBytes caps the size of one SKILL.md; a larger one is a
	// problem. 0 means DefaultMaxManifestBytes.
	MaxManifestBytes int64
	// MaxSkills caps the number of skill directories one discovery
	// examines over all roots; past it Discover fails with
	// ErrTooManySkills. 0 means DefaultMaxSkills.
	MaxSkills int
	// Concurrency is how many manifests discovery reads at once. 0 means
	// DefaultConcurrency.
	Concurrency int
	// Cwd is the working directory of the file tools the model uses,
	// written as tools.Options.Cwd is. It matters only in a plain
	// namespace on local disk, where ReadPath is relative to it; "" is
	// the namespace root.
	Cwd string
	// ToolPath, when set, turns the storage path of a skill's directory
	// (canonical and relative, see backend.ValidPath) into the ReadPath
	// of its activation, replacing the default rule of the package
	// documentation.
	ToolPath func(storagePath string) string
}

// Loader discovers and activates the skills under an ordered list of roots
// on one backend. It holds no state between calls: every Discover and
// Activate reads the storage afresh. It is safe for concurrent use when
// its backend is.
type Loader struct {
	b        backend.Backend
	roots    []root
	maxBytes int64
	maxSkill int
	workers  int
	toolPath func(string) string
	// rooted is set when the namespace is rooted (Capabilities.Rooted):
	// paths then start with "/".
	rooted bool
	// hostPaths is set for a plain namespace on local disk, which takes
	// absolute host paths inside its root.
	hostPaths bool
}

// root is one configured root.
type root struct {
	// display is the root as shown in catalogs: rooted canonical in a
	// rooted namespace, canonical relative otherwise.
	display string
	// storage is its canonical storage path, before symlinks.
	storage string
}

// New returns a loader of the skills under roots on b, earlier roots taking
// precedence. A root is written as a tool path is: in a rooted namespace
// (b's Capabilities say Rooted) a rooted path such as "/tenant/skills"; in
// a plain one a path relative to the namespace root, a path starting with
// "/" at the namespace root, or, on local disk (b is a
// backend.HostPathMapper), an absolute host path inside the backend's
// root. New touches no storage; it fails when roots is empty, a root is
// invalid or given twice, or an option is out of range.
func New(b backend.Backend, roots []string, opts Options) (*Loader, error) {
	if b == nil {
		return nil, errors.New("skills: nil backend")
	}
	if len(roots) == 0 {
		return nil, errors.New("skills: no roots given")
	}
	l := &Loader{b: b, maxBytes: opts.MaxManifestBytes, maxSkill: opts.MaxSkills, workers: opts.Concurrency}
	if err := l.applyLimits(); err != nil {
		return nil, err
	}
	l.rooted = backend.CapabilitiesOf(b).Rooted
	_, local := backend.LocalPath(b, ".")
	l.hostPaths = local && !l.rooted
	seen := make(map[string]string, len(roots))
	for _, r := range roots {
		s, err := l.storagePath(r)
		if err != nil {
			return nil, fmt.Errorf("skills: root %q: %w", r, err)
		}
		if prev, dup := seen[s]; dup {
			return nil, fmt.Errorf("skills: root %q names the same directory as %q", r, prev)
		}
		seen[s] = r
		l.roots = append(l.roots, root{display: l.display(s), storage: s})
	}
	cwd := "."
	if opts.Cwd != "" {
		var err error
		if cwd, err = l.storagePath(opts.Cwd); err != nil {
			return nil, fmt.Errorf("skills: Cwd %q: %w", opts.Cwd, err)
		}
	}
	l.toolPath = opts.ToolPath
	if l.toolPath == nil {
		l.toolPath = l.defaultToolPath(cwd)
	}
	return l, nil
}

// applyLimits validates the limits and fills in their defaults.
func (l *Loader) applyLimits() error {
	switch {
	case l.maxBytes < 0:
		return fmt.Errorf("skills: Options.MaxManifestBytes is %d; it must not be negative", l.maxBytes)
	case l.maxSkill < 0:
		return fmt.Errorf("skills: Options.MaxSkills is %d; it must not be negative", l.maxSkill)
	case l.workers < 0:
		return fmt.Errorf("skills: Options.Concurrency is %d; it must not be negative", l.workers)
	}
	if l.maxBytes == 0 {
		l.maxBytes = DefaultMaxManifestBytes
	}
	if l.maxSkill == 0 {
		l.maxSkill = DefaultMaxSkills
	}
	if l.workers == 0 {
		l.workers = DefaultConcurrency
	}
	return nil
}

// Roots returns the roots in precedence order, as catalogs show them.
func (l *Loader) Roots() []string {
	out := make([]string, len(l.roots))
	for i, r := range l.roots {
		out[i] = r.display
	}
	return out
}

// storagePath turns a path written as a tool path (from the namespace
// root) into its canonical storage path, lexically, through the backend's
// path pipeline.
func (l *Loader) storagePath(p string) (string, error) {
	s, err := backend.Cleaner{}.Resolve(l.b, l.rooted, p, ".")
	if backend.ReasonOf(err) == backend.ReasonEmpty {
		return "", errors.New("empty path")
	}
	return s, err
}

// display returns how catalogs show the storage path s: rooted in a
// rooted namespace, as it is otherwise.
func (l *Loader) display(s string) string {
	if l.rooted {
		return backend.StorageToVirtual(s)
	}
	return s
}

// defaultToolPath returns the ReadPath rule of the package documentation
// for a plain namespace whose tools work from cwd (a storage path).
func (l *Loader) defaultToolPath(cwd string) func(string) string {
	switch {
	case l.rooted:
		return backend.StorageToVirtual
	case l.hostPaths:
		return func(s string) string { return backend.Rel(cwd, s) }
	default:
		return backend.StorageToVirtual
	}
}

// resolveRoot returns the storage path to list for r, following the
// symlinks of the root path itself where the backend has them. A root
// that leads outside the namespace, or through a loop, is a problem.
func (l *Loader) resolveRoot(ctx context.Context, r root) (string, *Problem, error) {
	s, err := backend.ResolveSymlinks(ctx, l.b, r.storage)
	switch {
	case err == nil:
		return s, nil, nil
	case ctx.Err() != nil:
		return "", nil, ctx.Err()
	case errors.Is(err, backend.ErrOutside):
		return "", &Problem{Root: r.display, Path: r.display, Reason: "root resolves outside the namespace"}, nil
	case errors.Is(err, backend.ErrLoop):
		return "", &Problem{Root: r.display, Path: r.display, Reason: "root resolves through a symlink loop"}, nil
	}
	// Anything else is left for the listing to report.
	return r.storage, nil, nil
}
