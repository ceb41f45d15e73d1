//go:build linux

package local

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fencefs/fencefs/backend"
)

// helperEnv selects a helper role when the test binary runs as a
// subprocess of its own tests.
const helperEnv = "FENCEFS_LOCAL_TEST_HELPER"

func TestMain(m *testing.M) {
	if role := os.Getenv(helperEnv); role != "" {
		os.Exit(runHelper(role))
	}
	os.Exit(m.Run())
}

// opener names one way of opening paths below the root.
type opener struct {
	name      string
	forceRoot bool
}

// openers lists both openers, so that every behaviour test runs against
// openat2 and against the os.Root fallback.
func openers() []opener {
	return []opener{{"openat2", false}, {"root", true}}
}

// forEachOpener runs fn once per opener, as a subtest.
func forEachOpener(t *testing.T, fn func(t *testing.T, o opener)) {
	t.Helper()
	for _, o := range openers() {
		t.Run(o.name, func(t *testing.T) { fn(t, o) })
	}
}

// newTestFS returns a backend over a fresh directory, and that directory.
func newTestFS(t *testing.T, o opener) (*FS, string) {
	t.Helper()
	root := t.TempDir()
	return openTestFS(t, o, root), root
}

// openTestFS returns a backend over root using the opener o.
func openTestFS(t testing.TB, o opener, root string) *FS {
	t.Helper()
	f, err := newFS(root, o.forceRoot)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if !o.forceRoot && f.fallback {
		t.Skip("openat2 is not available on this kernel; the os.Root fallback runs the same tests")
	}
	if o.forceRoot && !f.fallback {
		t.Fatal("fallback requested but not in use")
	}
	return f
}

// tree describes host files to create: a path ending in "/" is a
// directory, "->target" makes a symlink, "|fifo" a FIFO, "|sock" a
// socket, anything else a file with that content.
type tree map[string]string

// makeTree creates t below root.
func makeTree(tb testing.TB, root string, files tree) {
	tb.Helper()
	for name, spec := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		var err error
		switch {
		case strings.HasSuffix(name, "/"):
			err = os.MkdirAll(p, 0o755)
		case strings.HasPrefix(spec, "->"):
			err = os.Symlink(strings.TrimPrefix(spec, "->"), p)
		case spec == "|fifo":
			err = syscall.Mkfifo(p, 0o644)
		case spec == "|sock":
			err = makeSocket(p)
		default:
			err = os.WriteFile(p, []byte(spec), 0o644)
		}
		if err != nil {
			tb.Fatal(err)
		}
	}
}

// makeSocket binds a Unix socket at p and leaves the socket file behind.
func makeSocket(p string) error {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Bind(fd, &unix.SockaddrUnix{Name: p})
}

// wantErr fails unless err matches want (nil meaning no error), is an
// *fs.PathError naming name, and does not mention the host root.
func wantErr(t *testing.T, err, want error, name, root string) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if !errors.Is(err, want) {
		t.Fatalf("error %v, want %v", err, want)
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Path != name {
		t.Fatalf("error %#v is not a *fs.PathError naming %q", err, name)
	}
	if root != "" && strings.Contains(err.Error(), root) {
		t.Fatalf("error %q leaks the host root %q", err, root)
	}
}

func TestNew(t *testing.T) {
	dir := t.TempDir()
	makeTree(t, dir, tree{"file": "x", "sub/": "", "link": "->sub"})
	tests := []struct {
		name, root string
		want       error
	}{
		{"directory", dir, nil},
		{"relative", mustRel(t, dir), nil},
		{"through symlink", filepath.Join(dir, "link"), nil},
		{"missing", filepath.Join(dir, "missing"), fs.ErrNotExist},
		{"empty", "", fs.ErrInvalid},
		{"file", filepath.Join(dir, "file"), backend.ErrNotDir},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := New(tt.root)
			if tt.want != nil {
				if !errors.Is(err, tt.want) {
					t.Fatalf("New(%q) = %v, want %v", tt.root, err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			abs, _ := filepath.Abs(tt.root)
			if f.root != abs {
				t.Errorf("root %q, want %q", f.root, abs)
			}
		})
	}
}

// mustRel returns dir relative to the working directory.
func mustRel(t *testing.T, dir string) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, dir)
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

func TestNewKeepsDescriptor(t *testing.T) {
	forEachOpener(t, func(t *testing.T, o opener) {
		parent := t.TempDir()
		root := filepath.Join(parent, "root")
		makeTree(t, parent, tree{"root/a.txt": "inside", "other/a.txt": "other"})
		f := openTestFS(t, o, root)
		// Replacing the root path afterwards must not move the backend.
		if err := os.Rename(root, filepath.Join(parent, "moved")); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(parent, "other"), root); err != nil {
			t.Fatal(err)
		}
		got, err := backend.ReadFile(context.Background(), f, "a.txt")
		if err != nil || string(got) != "inside" {
			t.Fatalf("read %q, %v; want the original root's file", got, err)
		}
	})
}

func TestCapabilities(t *testing.T) {
	f, _ := newTestFS(t, openers()[0])
	want := backend.Capabilities{
		Name: "local", Symlinks: true, ModeBits: true, ModTimes: true, EmptyDirs: true,
		SpecialFiles: true, AtomicPreconditions: true, AtomicRename: true, AtomicRemove: true, MaxNameBytes: 255,
		StagingPattern: `^\.fencefs-[0-9a-f]{8}\.tmp$`,
	}
	if got := f.Capabilities(); got != want {
		t.Fatalf("Capabilities() = %+v, want %+v", got, want)
	}
	if got := backend.CapabilitiesOf(f); got != want {
		t.Fatalf("CapabilitiesOf = %+v, want %+v", got, want)
	}
}

func TestClose(t *testing.T) {
	forEachOpener(t, func(t *testing.T, o opener) {
		f, root := newTestFS(t, o)
		makeTree(t, root, tree{"a.txt": "x"})
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		ctx := context.Background()
		_, err := f.OpenRead(ctx, "a.txt")
		wantErr(t, err, fs.ErrClosed, "a.txt", root)
		_, err = f.Stat(ctx, ".")
		wantErr(t, err, fs.ErrClosed, ".", root)
		_, err = f.List(ctx, ".")
		wantErr(t, err, fs.ErrClosed, ".", root)
	})
}

func TestLocalPath(t *testing.T) {
	f, root := newTestFS(t, openers()[0])
	tests := []struct {
		name, want string
		ok         bool
	}{
		{".", root, true},
		{"a/b.txt", filepath.Join(root, "a", "b.txt"), true},
		{"../x", "", false},
		{"/etc", "", false},
		{"a//b", "", false},
	}
	for _, tt := range tests {
		got, ok := f.LocalPath(tt.name)
		if got != tt.want || ok != tt.ok {
			t.Errorf("LocalPath(%q) = %q, %v; want %q, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

func TestMapHostPath(t *testing.T) {
	parent := t.TempDir()
	makeTree(t, parent, tree{"real/": "", "alias": "->real"})
	real := filepath.Join(parent, "real")
	alias := filepath.Join(parent, "alias")
	f, err := New(alias)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tests := []struct {
		host, want string
		err        error
	}{
		{alias, ".", nil},
		{alias + "/", ".", nil},
		{alias + "/a/b.txt", "a/b.txt", nil},
		{alias + "//a/./c/../b.txt", "a/b.txt", nil},
		{real + "/a.txt", "a.txt", nil},
		{real, ".", nil},
		{alias + "/../real/x", "x", nil},
		{alias + "/..", "", backend.ErrOutside},
		{alias + "x/a", "", backend.ErrOutside},
		{"/etc/passwd", "", backend.ErrOutside},
		{"/", "", backend.ErrOutside},
		{"a/b", "", backend.ErrInvalidPath},
		{alias + "/~user/x", "", backend.ErrInvalidPath},
	}
	for _, tt := range tests {
		got, err := f.MapHostPath(tt.host)
		if got != tt.want || !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
			t.Errorf("MapHostPath(%q) = %q, %v; want %q, %v", tt.host, got, err, tt.want, tt.err)
		}
	}
}

func TestMapHostPathRootSlash(t *testing.T) {
	f, err := New("/")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for host, want := range map[string]string{"/": ".", "/etc/passwd": "etc/passwd", "//usr/../etc": "etc"} {
		if got, err := f.MapHostPath(host); got != want || err != nil {
			t.Errorf("MapHostPath(%q) = %q, %v; want %q", host, got, err, want)
		}
	}
}

// TestInvalidPaths checks that every method refuses a non-canonical path
// before touching storage.
func TestInvalidPaths(t *testing.T) {
	f, root := newTestFS(t, openers()[0])
	ctx := context.Background()
	calls := map[string]func(name string) error{
		"OpenRead": func(n string) error { _, err := f.OpenRead(ctx, n); return err },
		"Stat":     func(n string) error { _, err := f.Stat(ctx, n); return err },
		"List":     func(n string) error { _, err := f.List(ctx, n); return err },
		"Walk": func(n string) error {
			return f.Walk(ctx, n, func(string, backend.DirEntry) error { return nil })
		},
		"OpenWrite": func(n string) error { _, err := f.OpenWrite(ctx, n, backend.WriteOptions{}); return err },
		"MkdirAll":  func(n string) error { return f.MkdirAll(ctx, n) },
		"Resolve":   func(n string) error { _, err := f.ResolveSymlinks(ctx, n); return err },
		"Readlink":  func(n string) error { _, err := f.Readlink(ctx, n); return err },
	}
	bad := []string{"", "/", "/etc/passwd", "..", "../x", "a/../b", "a//b", "a/", "./a", `a\b`, "a\x00b", "~", "a/~b", "C:x"}
	for method, call := range calls {
		t.Run(method, func(t *testing.T) {
			for _, name := range bad {
				wantErr(t, call(name), backend.ErrInvalidPath, name, root)
			}
		})
	}
	entries, err := os.ReadDir(root)
	if err != nil || len(entries) != 0 {
		t.Fatalf("invalid paths touched storage: %v %v", entries, err)
	}
}

func TestCancelledContext(t *testing.T) {
	f, root := newTestFS(t, openers()[0])
	makeTree(t, root, tree{"a.txt": "x"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := f.OpenRead(ctx, "a.txt")
	wantErr(t, err, context.Canceled, "a.txt", root)
	_, err = f.OpenWrite(ctx, "b.txt", backend.WriteOptions{})
	wantErr(t, err, context.Canceled, "b.txt", root)
	err = f.Walk(ctx, ".", func(string, backend.DirEntry) error { return nil })
	wantErr(t, err, context.Canceled, ".", root)
}

func TestMapErrno(t *testing.T) {
	tests := []struct {
		in   error
		want error
	}{
		{unix.ENOENT, fs.ErrNotExist},
		{unix.EEXIST, fs.ErrExist},
		{unix.ENOTEMPTY, fs.ErrExist},
		{unix.EACCES, fs.ErrPermission},
		{unix.EPERM, fs.ErrPermission},
		{unix.ENOTDIR, backend.ErrNotDir},
		{unix.EISDIR, backend.ErrIsDir},
		{unix.ELOOP, backend.ErrSymlink},
		{unix.EXDEV, backend.ErrOutside},
		{unix.ENAMETOOLONG, backend.ErrNameTooLong},
		{unix.ENXIO, backend.ErrNotRegular},
		{unix.EILSEQ, backend.ErrInvalidPath},
		{unix.EROFS, backend.ErrReadOnlyStorage},
		{unix.ENOSPC, backend.ErrNoSpace},
		{unix.EDQUOT, backend.ErrNoSpace},
		{unix.EIO, backend.ErrIO},
		{&fs.PathError{Op: "write", Path: "/host/x", Err: unix.ENOSPC}, backend.ErrNoSpace},
		{fs.ErrClosed, fs.ErrClosed},
	}
	for _, tt := range tests {
		if got := mapErrno(tt.in); !errors.Is(got, tt.want) {
			t.Errorf("mapErrno(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
	// The fatal sentinels keep their errno, for hosts that log or test it.
	for _, errno := range []unix.Errno{unix.EROFS, unix.ENOSPC, unix.EIO} {
		if got := mapErrno(errno); !errors.Is(got, errno) || got.Error() != errno.Error() {
			t.Errorf("mapErrno(%v) = %v, which lost the errno", errno, got)
		}
	}
	err := pathError("write", "a.txt", &fs.PathError{Op: "write", Path: "/host/a.txt", Err: unix.ENOSPC})
	if strings.Contains(err.Error(), "/host") || !errors.Is(err, unix.ENOSPC) {
		t.Errorf("pathError = %v, want the storage path and ENOSPC", err)
	}
}
