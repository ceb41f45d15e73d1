package mounted_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/spf13/afero"

	"github.com/fencefs/fencefs/aferoadapter"
	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/internal/backendtest"
	"github.com/fencefs/fencefs/local"
	"github.com/fencefs/fencefs/memfs"
	"github.com/fencefs/fencefs/mounted"
)

// memBackend returns a backend over a MemMapFs holding files; a name
// ending in "/" is an empty directory.
func memBackend(t testing.TB, files map[string]string) *aferoadapter.FS {
	t.Helper()
	mem := afero.NewMemMapFs()
	for name, content := range files {
		// MemMapFs would create missing parents with no permission bits.
		err := mem.MkdirAll(path.Dir("/"+name), 0o755)
		if err == nil && !strings.HasSuffix(name, "/") {
			err = afero.WriteFile(mem, "/"+name, []byte(content), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return aferoadapter.New(mem)
}

// listOnly hides everything but Reader and Lister, for the fallbacks.
type listOnly struct{ b backend.Backend }

func (l listOnly) OpenRead(ctx context.Context, name string) (backend.FileReader, error) {
	return l.b.OpenRead(ctx, name)
}

func (l listOnly) List(ctx context.Context, dir string) ([]backend.DirEntry, error) {
	return l.b.List(ctx, dir)
}

// children are the mounts of most tests: two writable MemMapFs, a
// read-only one and one with nothing but Reader and Lister.
type children struct {
	ws, tenant, ro *aferoadapter.FS
	plain          listOnly
}

func newNamespace(t testing.TB) (*mounted.FS, children) {
	t.Helper()
	c := children{
		ws:     memBackend(t, map[string]string{"a.txt": "ws a", "src/main.go": "package main", "empty/": ""}),
		tenant: memBackend(t, map[string]string{"notes.md": "tenant notes", "sessions/s1/log": "log"}),
		ro:     memBackend(t, map[string]string{"ref.txt": "reference", "docs/x.md": "x"}),
		plain:  listOnly{memBackend(t, map[string]string{"p.txt": "plain", "d/q.txt": "q"})},
	}
	m, err := mounted.New(map[string]backend.Backend{
		"ws":     c.ws,
		"tenant": c.tenant,
		"ro":     backend.ReadOnly(c.ro),
		"plain":  c.plain,
	})
	if err != nil {
		t.Fatal(err)
	}
	return m, c
}

func TestNewValidatesNames(t *testing.T) {
	b := memBackend(t, nil)
	bad := []string{"", ".", "..", "a/b", "/a", "a/", "~", "~x", "C:", "c:x", `a\b`, "a\x00", "\xff",
		"ab:c", "with space", "ü", "a~", "new\nline", "tab\t", strings.Repeat("n", mounted.MaxNameBytes+1), "a*", "a%2f"}
	for _, name := range bad {
		if m, err := mounted.New(map[string]backend.Backend{name: b}); err == nil {
			t.Errorf("New with mount name %q = %v, want an error", name, m.Mounts())
		} else if want := fmt.Sprintf("mounted: mount %q: the name must be 1 to 64 ASCII letters, digits, '-', '_' and '.', and not . or ..", name); err.Error() != want {
			t.Errorf("New with mount name %q: error %q, want %q", name, err, want)
		}
		if err := mounted.CheckName(name); err == nil {
			t.Errorf("CheckName(%q) accepted it", name)
		}
	}
	good := []string{"ws", ".hidden", "a.b", "A-Z_09", "...", strings.Repeat("n", mounted.MaxNameBytes)}
	for _, name := range good {
		if _, err := mounted.New(map[string]backend.Backend{name: b}); err != nil {
			t.Errorf("New with mount name %q: %v", name, err)
		}
	}
	if _, err := mounted.New(map[string]backend.Backend{"ws": nil}); err == nil {
		t.Error("New with a nil backend succeeded")
	}
}

func TestNewCopiesMapping(t *testing.T) {
	mounts := map[string]backend.Backend{"a": memBackend(t, nil)}
	m, err := mounted.New(mounts)
	if err != nil {
		t.Fatal(err)
	}
	mounts["b"] = memBackend(t, nil)
	delete(mounts, "a")
	if got := m.Mounts(); !reflect.DeepEqual(got, []string{"a"}) {
		t.Errorf("Mounts() after changing the map = %q, want [a]", got)
	}
	got := m.Mounts()
	got[0] = "changed"
	if m.Mounts()[0] != "a" {
		t.Error("Mounts() returned the internal slice")
	}
	empty, err := mounted.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	if entries, err := empty.List(context.Background(), "."); err != nil || len(entries) != 0 {
		t.Errorf("List(.) of an empty namespace = %v, %v", entries, err)
	}
}

func TestRead(t *testing.T) {
	ctx := context.Background()
	m, _ := newNamespace(t)
	tests := []backendtest.Read{
		{Name: "ws/a.txt", Want: "ws a"},
		{Name: "ws/src/main.go", Want: "package main"},
		{Name: "tenant/sessions/s1/log", Want: "log"},
		{Name: "ro/ref.txt", Want: "reference"},
		{Name: "plain/d/q.txt", Want: "q"},
		{Name: ".", Err: backend.ErrIsDir},
		{Name: "ws", Err: backend.ErrIsDir},
		{Name: "ro", Err: backend.ErrIsDir},
		{Name: "ws/src", Err: backend.ErrIsDir},
		{Name: "nope", Err: fs.ErrNotExist},
		{Name: "nope/a.txt", Err: fs.ErrNotExist},
		{Name: "Ws/a.txt", Err: fs.ErrNotExist}, // exact names only
		{Name: "ws/missing", Err: fs.ErrNotExist},
		{Name: "ws/a.txt/x", Err: backend.ErrNotDir},
		{Name: "/ws/a.txt", Err: backend.ErrInvalidPath},
		{Name: "ws/../tenant/notes.md", Err: backend.ErrInvalidPath},
		{Name: "ws/C:", Err: backend.ErrInvalidPath},
	}
	backendtest.CheckReads(t, ctx, m, tests)
}

func TestList(t *testing.T) {
	ctx := context.Background()
	m, _ := newNamespace(t)
	tests := []struct {
		dir     string
		want    []string // directories with a trailing "/"
		wantErr error
	}{
		{dir: ".", want: []string{"plain/", "ro/", "tenant/", "ws/"}},
		{dir: "ws", want: []string{"a.txt", "empty/", "src/"}},
		{dir: "ws/empty", want: nil},
		{dir: "plain/d", want: []string{"q.txt"}},
		{dir: "ro", want: []string{"docs/", "ref.txt"}},
		{dir: "nope", wantErr: fs.ErrNotExist},
		{dir: "ws/a.txt", wantErr: backend.ErrNotDir},
		{dir: "ws/missing", wantErr: fs.ErrNotExist},
		{dir: "ws/", wantErr: backend.ErrInvalidPath},
	}
	for _, tt := range tests {
		entries, err := m.List(ctx, tt.dir)
		if tt.wantErr != nil {
			backendtest.WantPathErr(t, "List("+tt.dir+")", err, tt.dir, tt.wantErr)
			continue
		}
		if err != nil {
			t.Errorf("List(%q): %v", tt.dir, err)
			continue
		}
		if tt.dir != "." {
			backend.SortEntries(entries)
		}
		var got []string
		for _, e := range entries {
			if e.IsDir() {
				got = append(got, e.Name+"/")
			} else {
				got = append(got, e.Name)
			}
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("List(%q) = %q, want %q", tt.dir, got, tt.want)
		}
	}
}

func TestStat(t *testing.T) {
	ctx := context.Background()
	m, _ := newNamespace(t)
	tests := []struct {
		name     string
		wantName string
		mode     fs.FileMode
		size     int64
		wantErr  error
	}{
		{name: ".", wantName: ".", mode: fs.ModeDir | 0o555},
		{name: "ws", wantName: "ws", mode: fs.ModeDir | 0o755},
		{name: "ro", wantName: "ro", mode: fs.ModeDir | 0o555},
		{name: "plain", wantName: "plain", mode: fs.ModeDir | 0o555}, // no Writer: read-only
		{name: "ws/a.txt", wantName: "a.txt", mode: 0o644, size: 4},
		{name: "ws/src", wantName: "src", mode: fs.ModeDir | 0o755},
		{name: "plain/d/q.txt", wantName: "q.txt", mode: 0, size: 1}, // through the listing
		{name: "nope", wantErr: fs.ErrNotExist},
		{name: "nope/x", wantErr: fs.ErrNotExist},
		{name: "ws/missing", wantErr: fs.ErrNotExist},
		{name: "plain/missing", wantErr: fs.ErrNotExist},
		{name: "ws/a.txt/x", wantErr: fs.ErrNotExist},
	}
	for _, tt := range tests {
		fi, err := m.Stat(ctx, tt.name)
		if tt.wantErr != nil {
			backendtest.WantPathErr(t, "Stat("+tt.name+")", err, tt.name, tt.wantErr)
			continue
		}
		if err != nil {
			t.Errorf("Stat(%q): %v", tt.name, err)
			continue
		}
		if fi.Name != tt.wantName || fi.Mode != tt.mode || fi.Size != tt.size {
			t.Errorf("Stat(%q) = %+v, want name %q mode %v size %d", tt.name, fi, tt.wantName, tt.mode, tt.size)
		}
	}
}

func TestWrite(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		pre     backend.Precondition
		wantErr error
	}{
		{name: "ws/new.txt"},
		{name: "ws/deep/new/file"},
		{name: "tenant/notes.md"},
		{name: ".", wantErr: backend.ErrIsDir},
		{name: "ws", wantErr: backend.ErrIsDir},
		{name: "ro", wantErr: backend.ErrIsDir},
		{name: "ws/src", wantErr: backend.ErrIsDir},
		{name: "newmount/f", wantErr: fs.ErrNotExist},
		{name: "f", wantErr: fs.ErrNotExist}, // a file at the root would be a mount
		{name: "ro/ref.txt", wantErr: backend.ErrReadOnly},
		{name: "ro/new.txt", wantErr: fs.ErrPermission},
		{name: "plain/p.txt", wantErr: backend.ErrReadOnly},
		{name: "ws/a.txt/x", wantErr: backend.ErrNotDir},
		{name: "ws/a.txt", pre: backend.Precondition{CreateOnly: true}, wantErr: fs.ErrExist},
		{name: "ws/a.txt", pre: backend.Precondition{MatchHash: "00"}, wantErr: backend.ErrPrecondition},
		{name: "ws//a.txt", wantErr: backend.ErrInvalidPath},
	}
	for _, tt := range tests {
		m, c := newNamespace(t)
		err := backend.WriteFile(ctx, m, tt.name, []byte("written"), backend.WriteOptions{Precondition: tt.pre})
		if tt.wantErr != nil {
			backendtest.WantPathErr(t, "write "+tt.name, err, tt.name, tt.wantErr)
			// Nothing fell through to another mount.
			for _, child := range []backend.Backend{c.ws, c.tenant, c.ro} {
				if _, err := backend.Stat(ctx, child, "ref.txt"); err == nil && child != c.ro {
					t.Errorf("write %q: a file appeared on another mount", tt.name)
				}
			}
			if data, _ := backend.ReadFile(ctx, c.ro, "ref.txt"); string(data) != "reference" {
				t.Errorf("write %q changed the read-only mount: %q", tt.name, data)
			}
			continue
		}
		if err != nil {
			t.Errorf("write %q: %v", tt.name, err)
			continue
		}
		data, err := backend.ReadFile(ctx, m, tt.name)
		if err != nil || string(data) != "written" {
			t.Errorf("read back %q = %q, %v", tt.name, data, err)
		}
		mount, rest, _ := strings.Cut(tt.name, "/")
		child := map[string]backend.Backend{"ws": c.ws, "tenant": c.tenant}[mount]
		if data, err := backend.ReadFile(ctx, child, rest); err != nil || string(data) != "written" {
			t.Errorf("the child %q holds %q = %q, %v", mount, rest, data, err)
		}
	}
}

func TestWriterErrorsNameNamespacePaths(t *testing.T) {
	ctx := context.Background()
	m, c := newNamespace(t)
	fw, err := m.OpenWrite(ctx, "ws/f", backend.WriteOptions{Precondition: backend.Precondition{CreateOnly: true}})
	if err != nil {
		t.Fatal(err)
	}
	fw.Write([]byte("mine"))
	if err := backend.WriteFile(ctx, c.ws, "f", []byte("theirs"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	backendtest.WantPathErr(t, "Commit", fw.Commit(), "ws/f", fs.ErrExist)
	if err := fw.Close(); err != nil {
		t.Errorf("Close after a failed Commit: %v", err)
	}
	fw, err = m.OpenWrite(ctx, "ws/g", backend.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fw.Close()
	if _, err := fw.Write([]byte("late")); err == nil {
		t.Error("Write after Close succeeded")
	} else {
		backendtest.WantPathErr(t, "Write after Close", err, "ws/g", fs.ErrClosed)
	}
}

func TestMkdirAll(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		dir     string
		wantErr error
	}{
		{dir: "."},
		{dir: "ws"},
		{dir: "ro"}, // exists: nothing to write
		{dir: "ws/new/sub"},
		{dir: "ws/src"},
		{dir: "newmount", wantErr: fs.ErrNotExist},
		{dir: "newmount/x", wantErr: fs.ErrNotExist},
		{dir: "ro/new", wantErr: backend.ErrReadOnly},
		{dir: "plain/new", wantErr: backend.ErrReadOnly},
		{dir: "ws/a.txt", wantErr: fs.ErrExist},
		{dir: "ws/a.txt/x", wantErr: backend.ErrNotDir},
	}
	for _, tt := range tests {
		m, _ := newNamespace(t)
		err := m.MkdirAll(ctx, tt.dir)
		if tt.wantErr != nil {
			backendtest.WantPathErr(t, "MkdirAll("+tt.dir+")", err, tt.dir, tt.wantErr)
			continue
		}
		if err != nil {
			t.Errorf("MkdirAll(%q): %v", tt.dir, err)
			continue
		}
		if fi, err := m.Stat(ctx, tt.dir); err != nil || !fi.IsDir() {
			t.Errorf("after MkdirAll(%q): %+v, %v", tt.dir, fi, err)
		}
	}
}

type step struct {
	name string
	dir  bool
}

func walk(t *testing.T, m *mounted.FS, dir string, skip map[string]bool) ([]step, error) {
	t.Helper()
	var got []step
	err := backend.Walk(context.Background(), m, dir, func(name string, e backend.DirEntry) error {
		got = append(got, step{name, e.IsDir()})
		if skip[name] {
			return fs.SkipDir
		}
		return nil
	})
	return got, err
}

func TestWalk(t *testing.T) {
	tests := []struct {
		dir  string
		skip map[string]bool
		want []step
	}{
		{
			dir:  ".",
			skip: map[string]bool{"ws": true, "tenant/sessions": true},
			want: []step{
				{"plain", true}, {"plain/d", true}, {"plain/d/q.txt", false}, {"plain/p.txt", false},
				{"ro", true}, {"ro/docs", true}, {"ro/docs/x.md", false}, {"ro/ref.txt", false},
				{"tenant", true}, {"tenant/notes.md", false}, {"tenant/sessions", true},
				{"ws", true},
			},
		},
		{
			dir:  "ws",
			want: []step{{"ws/a.txt", false}, {"ws/empty", true}, {"ws/src", true}, {"ws/src/main.go", false}},
		},
		{
			dir:  "tenant/sessions",
			want: []step{{"tenant/sessions/s1", true}, {"tenant/sessions/s1/log", false}},
		},
	}
	for _, tt := range tests {
		m, _ := newNamespace(t)
		got, err := walk(t, m, tt.dir, tt.skip)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Walk(%q) = %v, %v\nwant %v", tt.dir, got, err, tt.want)
		}
	}
}

func TestWalkErrors(t *testing.T) {
	ctx := context.Background()
	m, _ := newNamespace(t)
	nop := func(string, backend.DirEntry) error { return nil }
	backendtest.WantPathErr(t, "Walk(nope)", m.Walk(ctx, "nope", nop), "nope", fs.ErrNotExist)
	backendtest.WantPathErr(t, "Walk(ws/missing)", m.Walk(ctx, "ws/missing", nop), "ws/missing", fs.ErrNotExist)
	backendtest.WantPathErr(t, "Walk(ws/a.txt)", m.Walk(ctx, "ws/a.txt", nop), "ws/a.txt", backend.ErrNotDir)

	// The callback's own error comes back as it was returned, even an
	// *fs.PathError naming another path.
	mine := &fs.PathError{Op: "check", Path: "elsewhere", Err: fs.ErrPermission}
	err := m.Walk(ctx, ".", func(name string, _ backend.DirEntry) error {
		if name == "tenant/notes.md" {
			return mine
		}
		return nil
	})
	if err != mine {
		t.Errorf("Walk returned %v, want the callback's error unchanged", err)
	}
	stop := errors.New("stop")
	if err := m.Walk(ctx, ".", func(string, backend.DirEntry) error { return stop }); err != stop {
		t.Errorf("Walk stopped at a mount root returned %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := m.Walk(cancelled, ".", nop); !errors.Is(err, context.Canceled) {
		t.Errorf("Walk with a cancelled context = %v", err)
	}
}

// TestRootedPaths checks the paths a rooted namespace (Capabilities.Rooted)
// takes: tool paths cleaned by backend.CleanVirtual reach the mounts.
func TestRootedPaths(t *testing.T) {
	m, _ := newNamespace(t)
	if !m.Capabilities().Rooted {
		t.Fatal("a mounted namespace does not report Capabilities.Rooted")
	}
	tests := []struct {
		path, cwd, want string
	}{
		{"notes.md", "/tenant", "/tenant/notes.md"},
		{"/workspace/../tenant/f", "/", "/tenant/f"},
		{"../ws/a.txt", "/tenant", "/ws/a.txt"},
		{"x", "", "/x"},
		{"/etc/passwd", "/ws", "/etc/passwd"}, // a host path is just an unknown mount
	}
	for _, tt := range tests {
		if got, err := backend.CleanVirtual(tt.path, tt.cwd); err != nil || got != tt.want {
			t.Errorf("CleanVirtual(%q, %q) = %q, %v; want %q", tt.path, tt.cwd, got, err, tt.want)
		}
	}
	for _, bad := range []string{"..", "/..", "~/x", "C:x", ""} {
		if got, err := backend.CleanVirtual(bad, "/"); !errors.Is(err, backend.ErrInvalidPath) {
			t.Errorf("CleanVirtual(%q) = %q, %v; want ErrInvalidPath", bad, got, err)
		}
	}
	if _, err := m.Stat(context.Background(), backend.VirtualToStorage("/etc/passwd")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat of a host path = %v, want fs.ErrNotExist", err)
	}
}

func TestResolveSymlinksWithoutLinks(t *testing.T) {
	ctx := context.Background()
	m, _ := newNamespace(t)
	tests := []struct {
		name, want string
		wantErr    error
	}{
		{name: ".", want: "."},
		{name: "ws", want: "ws"},
		{name: "ws/a.txt", want: "ws/a.txt"},
		{name: "plain/not/yet", want: "plain/not/yet"},
		{name: "ro/docs/x.md", want: "ro/docs/x.md"},
		{name: "nope/x", wantErr: fs.ErrNotExist},
		{name: "ws/./a", wantErr: backend.ErrInvalidPath},
	}
	for _, tt := range tests {
		got, err := m.ResolveSymlinks(ctx, tt.name)
		if tt.wantErr != nil {
			backendtest.WantPathErr(t, "ResolveSymlinks("+tt.name+")", err, tt.name, tt.wantErr)
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ResolveSymlinks(%q) = %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
	for _, name := range []string{".", "ws", "ws/a.txt", "plain/p.txt"} {
		_, err := m.Readlink(ctx, name)
		backendtest.WantPathErr(t, "Readlink("+name+")", err, name, fs.ErrInvalid)
	}
	for _, name := range []string{"nope", "plain/missing", "ws/missing"} {
		_, err := m.Readlink(ctx, name)
		backendtest.WantPathErr(t, "Readlink("+name+")", err, name, fs.ErrNotExist)
	}
}

func TestCapabilities(t *testing.T) {
	m, _ := newNamespace(t)
	want := backend.Capabilities{Name: "mounted", Rooted: true} // plain has no capabilities at all
	if got := m.Capabilities(); got != want {
		t.Errorf("Capabilities() = %+v, want %+v", got, want)
	}
	two, err := mounted.New(map[string]backend.Backend{"a": memBackend(t, nil), "b": backend.ReadOnly(memBackend(t, nil))})
	if err != nil {
		t.Fatal(err)
	}
	want = backend.Capabilities{Name: "mounted", Rooted: true, ModeBits: true, ModTimes: true, EmptyDirs: true, AtomicPreconditions: true, AtomicRename: true, AtomicRemove: true,
		StagingPattern: backend.CapabilitiesOf(memBackend(t, nil)).StagingPattern}
	if got := two.Capabilities(); got != want || want.StagingPattern == "" {
		t.Errorf("Capabilities() = %+v, want %+v", got, want)
	}
	// A name one mount reserves is not reserved in the namespace.
	mixed, err := mounted.New(map[string]backend.Backend{"a": memBackend(t, nil), "m": memfs.New()})
	if err != nil {
		t.Fatal(err)
	}
	if got := mixed.Capabilities().StagingPattern; got != "" {
		t.Errorf("StagingPattern of mounts reserving different names = %q, want none", got)
	}
	allRO, _ := mounted.New(map[string]backend.Backend{"b": backend.ReadOnly(memBackend(t, nil))})
	if !allRO.Capabilities().ReadOnly {
		t.Error("a namespace of read-only mounts is not read-only")
	}
	if c, ok := two.MountCapabilities("b"); !ok || !c.ReadOnly || c.Name != "afero" {
		t.Errorf("MountCapabilities(b) = %+v, %v", c, ok)
	}
	if c, ok := two.MountCapabilities("a"); !ok || c.ReadOnly {
		t.Errorf("MountCapabilities(a) = %+v, %v", c, ok)
	}
	if _, ok := two.MountCapabilities("nope"); ok {
		t.Error("MountCapabilities of an unknown mount reported ok")
	}
}

// localChild pretends its files are on local disk under /host.
type localChild struct{ *aferoadapter.FS }

func (l localChild) LocalPath(name string) (string, bool) { return "/host/" + name, true }

func TestLocalPath(t *testing.T) {
	m, err := mounted.New(map[string]backend.Backend{
		"disk": localChild{memBackend(t, nil)},
		"mem":  memBackend(t, nil),
		"ro":   backend.ReadOnly(localChild{memBackend(t, nil)}),
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		want string
		ok   bool
	}{
		{"disk/a/b", "/host/a/b", true},
		{"disk", "/host/.", true},
		{"ro/x", "/host/x", true},
		{"mem/a", "", false},
		{".", "", false},
		{"nope/a", "", false},
		{"disk/../x", "", false},
	}
	for _, tt := range tests {
		if got, ok := m.LocalPath(tt.name); got != tt.want || ok != tt.ok {
			t.Errorf("LocalPath(%q) = %q, %v; want %q, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

func TestIOFSView(t *testing.T) {
	m, _ := newNamespace(t)
	view := backend.FS(context.Background(), m)
	err := fstest.TestFS(view, "ws/a.txt", "ws/src/main.go", "ws/empty", "tenant/notes.md",
		"tenant/sessions/s1/log", "ro/ref.txt", "plain/d/q.txt")
	if err != nil {
		t.Fatal(err)
	}
}

func TestAferoViewOfNamespace(t *testing.T) {
	m, c := newNamespace(t)
	v := aferoadapter.ToAfero(context.Background(), m)
	if err := afero.WriteFile(v, "/tenant/sessions/s2/out.txt", []byte("done"), 0o644); err != nil {
		t.Fatal(err)
	}
	data, err := backend.ReadFile(context.Background(), c.tenant, "sessions/s2/out.txt")
	if err != nil || string(data) != "done" {
		t.Errorf("file on the child = %q, %v", data, err)
	}
	if err := afero.WriteFile(v, "/ro/x", []byte("no"), 0o644); !errors.Is(err, backend.ErrReadOnly) {
		t.Errorf("write to the read-only mount = %v", err)
	}
	if err := fstest.TestFS(afero.NewIOFS(v), "ws/a.txt", "tenant/sessions/s2/out.txt"); err != nil {
		t.Fatal(err)
	}
}

// TestCapabilitiesAt checks each path answers with its own mount's
// capabilities, and the root with the namespace's.
func TestCapabilitiesAt(t *testing.T) {
	links, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer links.Close()
	m, err := mounted.New(map[string]backend.Backend{"disk": links, "mem": memfs.New()})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"disk/a/b": true, "disk": true, "mem/a": false, ".": false, "missing/x": false} {
		if got := backend.CapabilitiesAt(m, name).Symlinks; got != want {
			t.Errorf("CapabilitiesAt(%q).Symlinks = %v, want %v", name, got, want)
		}
	}
}
