// Package mounted combines named backends into one rooted namespace:
// "/workspace/src/main.go" is "src/main.go" on the backend mounted as
// "workspace".
//
// The namespace root "/" (storage path ".") is virtual: it lists the mount
// names as directories and holds nothing else, so files cannot be written
// there and mounts cannot be created by writing. Each child enforces its
// own access rules (symlink containment, read-only storage); mounted only
// routes paths and rewrites the paths in the children's errors.
package mounted

import (
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/fencefs/fencefs/backend"
)

// FS is a rooted namespace of named mounts. It implements backend.Backend
// and Stater, Writer, DirMaker, SymlinkResolver, Walker, TypeLister,
// LocalPather and CapabilityReporter; what each child lacks is filled in
// with the fallbacks of package backend or refused, per mount.
//
// Its methods take storage paths like every backend: "." is the root and
// "ws/a/b" is "a/b" on the mount "ws". Tools see the rooted form
// ("/ws/a/b", see backend.CleanVirtual) because its Capabilities say
// Rooted. An FS is immutable and safe
// for concurrent use when its children are.
type FS struct {
	names  []string // sorted
	mounts map[string]backend.Backend
}

// New returns the namespace of mounts. The map is copied, so later changes
// to it have no effect. Every name must pass [CheckName] and every backend
// be non-nil.
func New(mounts map[string]backend.Backend) (*FS, error) {
	m := &FS{mounts: make(map[string]backend.Backend, len(mounts))}
	for name := range mounts {
		m.names = append(m.names, name)
	}
	slices.Sort(m.names)
	for _, name := range m.names {
		if err := CheckName(name); err != nil {
			return nil, fmt.Errorf("mounted: mount %q: %w", name, err)
		}
		if mounts[name] == nil {
			return nil, fmt.Errorf("mounted: mount %q has a nil backend", name)
		}
		m.mounts[name] = mounts[name]
	}
	return m, nil
}

// MaxNameBytes bounds a mount's name, which the model writes at the start
// of every path.
const MaxNameBytes = 64

// CheckName returns an error saying what a mount name must be unless name
// is 1 to MaxNameBytes ASCII letters, digits, '-', '_' and '.', and
// neither "." nor "..": a name the model can type, that no listing line
// or path can be forged with.
func CheckName(name string) error {
	ok := name != "" && len(name) <= MaxNameBytes && name != "." && name != ".."
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
	}
	if !ok {
		return fmt.Errorf("the name must be 1 to %d ASCII letters, digits, '-', '_' and '.', and not . or ..", MaxNameBytes)
	}
	return nil
}

// Mounts returns the mount names, sorted.
func (m *FS) Mounts() []string { return slices.Clone(m.names) }

// MountCapabilities returns the capabilities of the backend mounted as
// name (as backend.CapabilitiesOf reports them), and whether it exists.
func (m *FS) MountCapabilities(name string) (backend.Capabilities, bool) {
	b, ok := m.mounts[name]
	if !ok {
		return backend.Capabilities{}, false
	}
	return backend.CapabilitiesOf(b), true
}

// CapabilitiesAt returns the capabilities of the mount holding name (as
// backend.CapabilitiesOf reports them), and for the root and for names
// outside every mount the namespace's own (see Capabilities).
func (m *FS) CapabilitiesAt(name string) backend.Capabilities {
	t, err := m.route("stat", name)
	if err != nil || t.isRoot() {
		return m.Capabilities()
	}
	return backend.CapabilitiesOf(t.child)
}

// Capabilities returns what every mount can do, each child's facts
// masked into the namespace's (see backend.Capabilities.Mask), and Rooted.
// ReadOnly is the exception: it is true only when every mount is
// read-only, because a namespace with one writable mount still accepts
// writes there (see MountCapabilities for each mount).
func (m *FS) Capabilities() backend.Capabilities {
	c := backend.Unrestricted("mounted")
	c.Rooted = true
	readOnly := true
	// A name is reserved in the namespace only when every mount reserves
	// it: the suite and callers may count on the refusal under any mount.
	staging, same := "", true
	for i, name := range m.names {
		cc := backend.CapabilitiesOf(m.mounts[name])
		readOnly = readOnly && cc.ReadOnly
		cc.ReadOnly = false
		c = c.Mask(cc)
		if i == 0 {
			staging = cc.StagingPattern
		}
		same = same && cc.StagingPattern == staging
	}
	c.ReadOnly = readOnly
	c.StagingPattern = ""
	if same {
		c.StagingPattern = staging
	}
	return c
}

// target is where a storage path leads: the root, a mount's root, or a
// path on a mount.
type target struct {
	mount string          // "" for the namespace root
	child backend.Backend // nil for the namespace root
	rest  string          // the child's storage path; "." at a mount root
}

func (t target) isRoot() bool      { return t.child == nil }
func (t target) isMountRoot() bool { return t.child != nil && t.rest == "." }

// route validates name and finds its mount. An unknown mount is
// fs.ErrNotExist, for every operation.
func (m *FS) route(op, name string) (target, error) {
	if err := backend.CheckPath(op, name); err != nil {
		return target{}, err
	}
	if name == "." {
		return target{rest: "."}, nil
	}
	mount, rest, _ := strings.Cut(name, "/")
	if rest == "" {
		rest = "."
	}
	child, ok := m.mounts[mount]
	if !ok {
		return target{}, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	return target{mount: mount, child: child, rest: rest}, nil
}

// join turns a child's storage path into the namespace's.
func join(mount, name string) string {
	if name == "." || name == "" {
		return mount
	}
	return mount + "/" + name
}

// rewrite puts the mount in front of the path of a child's
// *fs.PathError; anything else is returned unchanged.
func rewrite(mount string, err error) error {
	if pe, ok := err.(*fs.PathError); ok {
		return &fs.PathError{Op: pe.Op, Path: join(mount, pe.Path), Err: pe.Err}
	}
	return err
}

// rootInfo describes the namespace root, which cannot be written.
func rootInfo() backend.FileInfo {
	return backend.FileInfo{Name: ".", Mode: fs.ModeDir | 0o555}
}

// mountInfo describes the root of the mount name. Listing "." and Stat
// of the mount both use it, so they always agree.
func (m *FS) mountInfo(name string) backend.FileInfo {
	mode := fs.ModeDir | 0o755
	if backend.CapabilitiesOf(m.mounts[name]).ReadOnly {
		mode = fs.ModeDir | 0o555
	}
	return backend.FileInfo{Name: name, Mode: mode}
}

// mountEntry is the listing entry of the mount name.
func mountEntry(name string) backend.DirEntry {
	return backend.DirEntry{Name: name, Type: fs.ModeDir}
}

// Interface checks.
var (
	_ backend.Backend            = (*FS)(nil)
	_ backend.Stater             = (*FS)(nil)
	_ backend.Writer             = (*FS)(nil)
	_ backend.DirMaker           = (*FS)(nil)
	_ backend.SymlinkResolver    = (*FS)(nil)
	_ backend.Walker             = (*FS)(nil)
	_ backend.LocalPather        = (*FS)(nil)
	_ backend.CapabilityReporter = (*FS)(nil)

	_ backend.PathCapabilityReporter = (*FS)(nil)
)
