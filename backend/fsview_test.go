package backend_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"path"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/fencefs/fencefs/backend"
)

func TestFSViewPassesTestFS(t *testing.T) {
	view := backend.FS(context.Background(), sampleTree())
	if err := fstest.TestFS(view, "a.txt", "a/b.txt", "a/c/d.txt", "b", "z/deep/y.md"); err != nil {
		t.Fatal(err)
	}
}

func TestFSViewEmpty(t *testing.T) {
	if err := fstest.TestFS(backend.FS(context.Background(), newListOnly(nil))); err != nil {
		t.Fatal(err)
	}
}

func TestFSViewErrors(t *testing.T) {
	view := backend.FS(context.Background(), sampleTree())
	tests := []struct {
		name    string
		op      func(name string) error
		path    string
		wantErr error
	}{
		{"open absolute", openErr(view), "/a.txt", fs.ErrInvalid},
		{"open trailing slash", openErr(view), "a/", fs.ErrInvalid},
		{"open missing", openErr(view), "nope", fs.ErrNotExist},
		{"open backslash", openErr(view), `a\b`, fs.ErrInvalid},
		{"stat dot-dot", statErr(view), "a/../a.txt", fs.ErrInvalid},
		{"stat missing", statErr(view), "a/nope", fs.ErrNotExist},
		{"readdir file", readDirErr(view), "a.txt", backend.ErrNotDir},
		{"readdir missing", readDirErr(view), "nope", fs.ErrNotExist},
		{"readfile dir", readFileErr(view), "a", backend.ErrIsDir},
		{"readfile missing", readFileErr(view), "a/nope", fs.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.op(tt.path)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			var pe *fs.PathError
			if !errors.As(err, &pe) || pe.Path != tt.path {
				t.Errorf("error %#v is not an *fs.PathError naming %q", err, tt.path)
			}
		})
	}
}

func openErr(view *backend.IOFS) func(string) error {
	return func(name string) error {
		f, err := view.Open(name)
		if err == nil {
			f.Close()
		}
		return err
	}
}

func statErr(view *backend.IOFS) func(string) error {
	return func(name string) error { _, err := view.Stat(name); return err }
}

func readDirErr(view *backend.IOFS) func(string) error {
	return func(name string) error { _, err := view.ReadDir(name); return err }
}

func readFileErr(view *backend.IOFS) func(string) error {
	return func(name string) error { _, err := view.ReadFile(name); return err }
}

func TestFSViewFiles(t *testing.T) {
	view := backend.FS(context.Background(), sampleTree())
	d, err := view.Open("a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Read(make([]byte, 1)); !errors.Is(err, backend.ErrIsDir) {
		t.Errorf("Read on a directory = %v, want ErrIsDir", err)
	}
	rd := d.(fs.ReadDirFile)
	first, err := rd.ReadDir(1)
	if err != nil || len(first) != 1 || first[0].Name() != "b.txt" {
		t.Fatalf("ReadDir(1) = %v, %v", first, err)
	}
	if d.Close() != nil || d.Close() == nil {
		t.Error("closing a directory twice: want nil then an error")
	}
	if _, err := rd.ReadDir(1); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("ReadDir after Close = %v, want fs.ErrClosed", err)
	}

	f, err := view.Open("a/c/d.txt")
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(f)
	if err != nil || string(data) != "ACD" {
		t.Fatalf("ReadAll = %q, %v", data, err)
	}
	if info, err := f.Stat(); err != nil || info.Name() != "d.txt" || info.Size() != 3 || info.IsDir() {
		t.Errorf("Stat = %v, %v", info, err)
	}
	if f.Close() != nil || f.Close() == nil {
		t.Error("closing a file twice: want nil then an error")
	}
	if _, err := f.Read(make([]byte, 1)); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("Read after Close = %v, want fs.ErrClosed", err)
	}

	matches, err := fs.Glob(view, "*/*.txt")
	if err != nil || strings.Join(matches, " ") != "a/b.txt" {
		t.Errorf("Glob = %v, %v", matches, err)
	}
}

// linked adds symlinks to listOnly: links maps a top-level link name to
// its target, and a target of "" leads outside the root.
type linked struct {
	*listOnly
	links map[string]string
}

func (l linked) List(ctx context.Context, dir string) ([]backend.DirEntry, error) {
	entries, err := l.listOnly.List(ctx, dir)
	if err == nil && dir == "." {
		for name := range l.links {
			entries = append(entries, backend.DirEntry{Name: name, Type: fs.ModeSymlink, Size: 1})
		}
	}
	return entries, err
}

func (l linked) ResolveSymlinks(ctx context.Context, name string) (string, error) {
	first, rest, _ := strings.Cut(name, "/")
	target, ok := l.links[first]
	switch {
	case !ok:
		return name, nil
	case target == "":
		return "", &fs.PathError{Op: "resolve", Path: name, Err: backend.ErrOutside}
	case rest == "":
		return target, nil
	}
	return target + "/" + rest, nil
}

func (l linked) TraceSymlinks(ctx context.Context, name string, _ func(string) error) (string, error) {
	return l.ResolveSymlinks(ctx, name)
}

func (l linked) Readlink(ctx context.Context, name string) (string, error) {
	target, ok := l.links[name]
	if !ok {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
	}
	return target, nil
}

func TestFSViewFollowsSymlinks(t *testing.T) {
	b := linked{listOnly: sampleTree(), links: map[string]string{"dirlink": "a", "filelink": "a.txt"}}
	view := backend.FS(context.Background(), b)
	if err := fstest.TestFS(view, "dirlink", "filelink", "a/b.txt"); err != nil {
		t.Fatal(err)
	}
	b.links["escape"] = "" // fstest opens every entry, so only now
	data, err := view.ReadFile("dirlink/c/d.txt")
	if err != nil || string(data) != "ACD" {
		t.Errorf("ReadFile through a directory link = %q, %v", data, err)
	}
	info, err := view.Stat("filelink")
	if err != nil || info.Name() != "filelink" || info.Size() != 1 || !info.Mode().IsRegular() {
		t.Errorf("Stat(filelink) = %v, %v; want the target's metadata under the link's name", info, err)
	}
	entries, err := view.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "dirlink" && (e.Type() != fs.ModeSymlink || e.IsDir()) {
			t.Errorf("entry dirlink: type %v, IsDir %v; want a link", e.Type(), e.IsDir())
		}
	}
	if _, err := view.Open("escape"); !errors.Is(err, backend.ErrOutside) || !errors.Is(err, fs.ErrPermission) {
		t.Errorf("Open(escape) = %v, want ErrOutside", err)
	}
}

func TestFSViewLstatAndReadLink(t *testing.T) {
	b := linked{listOnly: sampleTree(), links: map[string]string{"dirlink": "a", "filelink": "a.txt"}}
	view := backend.FS(context.Background(), b)
	tests := []struct {
		name     string
		wantMode fs.FileMode // type bits of Lstat
		wantLink string
		linkErr  error
	}{
		{name: "filelink", wantMode: fs.ModeSymlink, wantLink: "a.txt"},
		{name: "dirlink", wantMode: fs.ModeSymlink, wantLink: "a"},
		{name: "dirlink/c", wantMode: fs.ModeDir, linkErr: fs.ErrInvalid}, // the parent link is followed
		{name: "a.txt", wantMode: 0, linkErr: fs.ErrInvalid},
		{name: ".", wantMode: fs.ModeDir, linkErr: fs.ErrInvalid},
	}
	for _, tt := range tests {
		info, err := view.Lstat(tt.name)
		if err != nil || info.Mode().Type() != tt.wantMode || info.Name() != path.Base(tt.name) {
			t.Errorf("Lstat(%q) = %v, %v; want type %v", tt.name, info, err, tt.wantMode)
		}
		link, err := fs.ReadLink(view, tt.name)
		if tt.linkErr != nil {
			if !errors.Is(err, tt.linkErr) {
				t.Errorf("ReadLink(%q) = %q, %v; want %v", tt.name, link, err, tt.linkErr)
			}
			continue
		}
		if err != nil || link != tt.wantLink {
			t.Errorf("ReadLink(%q) = %q, %v; want %q", tt.name, link, err, tt.wantLink)
		}
	}
	plain := backend.FS(context.Background(), sampleTree())
	if _, err := fs.ReadLink(plain, "a.txt"); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("ReadLink without symlinks = %v, want fs.ErrInvalid", err)
	}
	if _, err := fs.ReadLink(plain, "missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadLink(missing) = %v, want fs.ErrNotExist", err)
	}
	if _, err := plain.Lstat("/a.txt"); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("Lstat(/a.txt) = %v, want fs.ErrInvalid", err)
	}
	// fs.Sub forwards Lstat, so a sub-view reports links as links too.
	sub, err := fs.Sub(view, ".")
	if err != nil {
		t.Fatal(err)
	}
	if info, err := fs.Lstat(sub, "dirlink"); err != nil || info.Mode().Type() != fs.ModeSymlink {
		t.Errorf("fs.Lstat(sub, dirlink) = %v, %v", info, err)
	}
}
