package aferoadapter_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"reflect"
	"testing"
	"testing/iotest"
	"time"

	"github.com/spf13/afero"

	"github.com/fencefs/fencefs/aferoadapter"
	"github.com/fencefs/fencefs/backend"
)

// toAfero returns the afero view of a backend over a MemMapFs holding
// files, and the backend.
func toAfero(t *testing.T, files map[string]string) (afero.Fs, *aferoadapter.FS) {
	t.Helper()
	_, b := memFS(t, files)
	return aferoadapter.ToAfero(context.Background(), b), b
}

func TestToAferoReadPaths(t *testing.T) {
	v, _ := toAfero(t, sampleFiles)
	tests := []struct {
		name    string
		want    string
		wantErr error
	}{
		{name: "a/b.txt", want: "AB"},
		{name: "/a/b.txt", want: "AB"},
		{name: "//a/./c/../b.txt", want: "AB"},
		{name: "a/c/d.txt", want: "ACD"},
		{name: "missing", wantErr: fs.ErrNotExist},
		{name: "/a", wantErr: backend.ErrIsDir},
		{name: "../a.txt", wantErr: fs.ErrInvalid},
		{name: "~/a.txt", wantErr: fs.ErrInvalid},
		{name: "", wantErr: fs.ErrInvalid},
	}
	for _, tt := range tests {
		data, err := afero.ReadFile(v, tt.name)
		if tt.wantErr != nil {
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("ReadFile(%q) = %q, %v; want %v", tt.name, data, err, tt.wantErr)
			}
			var pe *fs.PathError
			if errors.As(err, &pe) && pe.Path != tt.name {
				t.Errorf("ReadFile(%q) error names %q", tt.name, pe.Path)
			}
			continue
		}
		if err != nil || string(data) != tt.want {
			t.Errorf("ReadFile(%q) = %q, %v; want %q", tt.name, data, err, tt.want)
		}
	}
}

func TestToAferoStatAndDirs(t *testing.T) {
	v, _ := toAfero(t, sampleFiles)
	fi, err := v.Stat("/a/c/d.txt")
	if err != nil || fi.Name() != "d.txt" || fi.Size() != 3 || fi.IsDir() || fi.Mode().Perm() != 0o644 {
		t.Errorf("Stat = %v, %v", fi, err)
	}
	if fi, err := v.Stat("/"); err != nil || !fi.IsDir() {
		t.Errorf("Stat(/) = %v, %v", fi, err)
	}
	if ok, err := afero.DirExists(v, "empty"); !ok || err != nil {
		t.Errorf("DirExists(empty) = %v, %v", ok, err)
	}
	infos, err := afero.ReadDir(v, "/a")
	if err != nil || len(infos) != 2 || infos[0].Name() != "b.txt" || !infos[1].IsDir() {
		t.Errorf("ReadDir(/a) = %v, %v", infos, err)
	}

	var walked []string
	err = afero.Walk(v, "/", func(p string, info fs.FileInfo, err error) error {
		if err != nil {
			return err
		}
		walked = append(walked, p)
		return nil
	})
	want := []string{"/", "/a", "/a/b.txt", "/a/c", "/a/c/d.txt", "/a.txt", "/colon", "/colon/x:y.txt",
		"/dot", "/dot/.hidden", "/empty", "/sp ace", "/sp ace/ü.txt", "/z", "/z/deep", "/z/deep/y.md"}
	if err != nil || !reflect.DeepEqual(walked, want) {
		t.Errorf("Walk = %q, %v\nwant %q", walked, err, want)
	}

	d, err := v.Open("a")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	names, err := d.Readdirnames(1)
	if err != nil || !reflect.DeepEqual(names, []string{"b.txt"}) {
		t.Errorf("Readdirnames(1) = %q, %v", names, err)
	}
	rest, err := d.Readdir(-1)
	if err != nil || len(rest) != 1 || rest[0].Name() != "c" {
		t.Errorf("Readdir(-1) = %v, %v", rest, err)
	}
	if more, err := d.Readdir(1); len(more) != 0 || err != io.EOF {
		t.Errorf("Readdir(1) at the end = %v, %v; want io.EOF", more, err)
	}
	if _, err := d.Read(make([]byte, 1)); !errors.Is(err, backend.ErrIsDir) {
		t.Errorf("Read on a directory = %v", err)
	}
}

func TestToAferoReadHandle(t *testing.T) {
	v, _ := toAfero(t, map[string]string{"f": "0123456789"})
	f, err := v.Open("f")
	if err != nil {
		t.Fatal(err)
	}
	if err := iotest.TestReader(f, []byte("0123456789")); err != nil {
		t.Error(err)
	}
	if _, err := f.Write([]byte("x")); err == nil {
		t.Error("Write on a file opened for reading succeeded")
	}
	if err := f.Close(); err != nil {
		t.Error(err)
	}
	if err := f.Close(); !errors.Is(err, afero.ErrFileClosed) {
		t.Errorf("second Close = %v", err)
	}
	// Streaming first, then random access from where streaming stopped.
	f, _ = v.Open("f")
	defer f.Close()
	buf := make([]byte, 3)
	if _, err := io.ReadFull(f, buf); err != nil || string(buf) != "012" {
		t.Fatalf("ReadFull = %q, %v", buf, err)
	}
	if pos, err := f.Seek(0, io.SeekCurrent); err != nil || pos != 3 {
		t.Errorf("Seek(0, current) = %d, %v", pos, err)
	}
	if n, err := f.ReadAt(buf, 7); n != 3 || string(buf) != "789" {
		t.Errorf("ReadAt(7) = %d %q, %v", n, buf, err)
	}
	if rest, err := io.ReadAll(f); err != nil || string(rest) != "3456789" {
		t.Errorf("reading on after ReadAt = %q, %v", rest, err)
	}
}

// TestToAferoReadEnd checks the end of a file reads as os.File's does:
// the bytes without an error, then io.EOF alone (afero's TestMemFileRead).
func TestToAferoReadEnd(t *testing.T) {
	v, _ := toAfero(t, map[string]string{"f": "abcd"})
	f, err := v.Open("f")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 8)
	if n, err := f.Read(buf); n != 4 || err != nil {
		t.Errorf("first Read = %d, %v; want 4, nil", n, err)
	}
	if n, err := f.Read(buf); n != 0 || err != io.EOF {
		t.Errorf("second Read = %d, %v; want 0, EOF", n, err)
	}
	// The same from a file open for reading and writing.
	w, err := v.OpenFile("w", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.WriteString("abcd"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	if n, err := w.Read(buf); n != 4 || err != nil {
		t.Errorf("first Read of the written file = %d, %v; want 4, nil", n, err)
	}
	if n, err := w.Read(buf); n != 0 || err != io.EOF {
		t.Errorf("second Read of the written file = %d, %v; want 0, EOF", n, err)
	}
}

// TestToAferoDirHandleReadDir checks an open directory is an
// fs.ReadDirFile, in batches and whole.
func TestToAferoDirHandleReadDir(t *testing.T) {
	v, _ := toAfero(t, map[string]string{"d/a": "1", "d/b": "2", "d/c/": ""})
	f, err := v.Open("d")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, ok := f.(fs.ReadDirFile)
	if !ok {
		t.Fatalf("%T is not an fs.ReadDirFile", f)
	}
	first, err := rd.ReadDir(2)
	if err != nil || len(first) != 2 || first[0].Name() != "a" || first[1].Name() != "b" {
		t.Fatalf("ReadDir(2) = %v, %v", first, err)
	}
	rest, err := rd.ReadDir(2)
	if err != nil || len(rest) != 1 || rest[0].Name() != "c" || !rest[0].IsDir() {
		t.Fatalf("ReadDir(2) again = %v, %v", rest, err)
	}
	if more, err := rd.ReadDir(2); len(more) != 0 || err != io.EOF {
		t.Errorf("ReadDir(2) at the end = %v, %v; want EOF", more, err)
	}
}

func TestToAferoWrite(t *testing.T) {
	v, b := toAfero(t, map[string]string{"f": "old", "d/": ""})
	ctx := context.Background()
	if err := afero.WriteFile(v, "/new/deep/file", []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	wantContent(t, b, "new/deep/file", "hello")

	// Nothing is visible before Close, and Close commits.
	w, err := v.Create("f")
	if err != nil {
		t.Fatal(err)
	}
	w.WriteString("replaced")
	wantContent(t, b, "f", "old")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	wantContent(t, b, "f", "replaced")
	if err := w.Close(); !errors.Is(err, afero.ErrFileClosed) {
		t.Errorf("second Close = %v", err)
	}

	// Appending and writing in place keep the old content.
	a, err := v.OpenFile("f", os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	a.Write([]byte("+more"))
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	wantContent(t, b, "f", "replaced+more")
	rw, err := v.OpenFile("f", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	rw.WriteAt([]byte("R"), 0)
	head := make([]byte, 3)
	if _, err := rw.Read(head); err != nil || string(head) != "Rep" {
		t.Errorf("Read on O_RDWR = %q, %v", head, err)
	}
	rw.Truncate(8)
	if err := rw.Close(); err != nil {
		t.Fatal(err)
	}
	wantContent(t, b, "f", "Replaced")

	// An in-place edit does not overwrite a change made meanwhile.
	stale, err := v.OpenFile("f", os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	stale.Write([]byte("S"))
	if err := backend.WriteFile(ctx, b, "f", []byte("meanwhile"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := stale.Close(); !errors.Is(err, backend.ErrPrecondition) {
		t.Errorf("Close of a stale edit = %v, want ErrPrecondition", err)
	}
	wantContent(t, b, "f", "meanwhile")
}

func TestToAferoOpenFileErrors(t *testing.T) {
	v, _ := toAfero(t, map[string]string{"f": "old", "d/": ""})
	tests := []struct {
		name    string
		flag    int
		wantErr error
	}{
		{"f", os.O_WRONLY | os.O_CREATE | os.O_EXCL, fs.ErrExist},
		{"f", os.O_RDONLY | os.O_CREATE | os.O_EXCL, fs.ErrExist},
		{"f", os.O_RDWR | os.O_CREATE | os.O_EXCL, fs.ErrExist},
		{"d", os.O_RDONLY | os.O_CREATE | os.O_EXCL, fs.ErrExist},
		{"d", os.O_WRONLY | os.O_CREATE | os.O_EXCL, fs.ErrExist},
		{"missing", os.O_WRONLY, fs.ErrNotExist},
		{"d", os.O_WRONLY | os.O_CREATE, backend.ErrIsDir},
		{"f/x", os.O_WRONLY | os.O_CREATE, backend.ErrNotDir},
		{"../f", os.O_WRONLY | os.O_CREATE, fs.ErrInvalid},
	}
	for _, tt := range tests {
		f, err := v.OpenFile(tt.name, tt.flag, 0o644)
		if err == nil {
			err = f.Close()
		}
		if !errors.Is(err, tt.wantErr) {
			t.Errorf("OpenFile(%q, %#x) = %v, want %v", tt.name, tt.flag, err, tt.wantErr)
		}
	}
	// O_RDONLY|O_CREATE creates an empty file and keeps an existing one.
	for _, name := range []string{"f", "created"} {
		f, err := v.OpenFile(name, os.O_RDONLY|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatalf("OpenFile(%q, O_RDONLY|O_CREATE): %v", name, err)
		}
		data, _ := io.ReadAll(f)
		f.Close()
		if want := map[string]string{"f": "old", "created": ""}[name]; string(data) != want {
			t.Errorf("OpenFile(%q, O_RDONLY|O_CREATE) read %q, want %q", name, data, want)
		}
	}
}

func TestToAferoDirs(t *testing.T) {
	v, b := toAfero(t, map[string]string{"f": "x", "d/": ""})
	ctx := context.Background()
	tests := []struct {
		name    string
		all     bool
		wantErr error
	}{
		{name: "/n", all: false},
		{name: "/d", wantErr: fs.ErrExist},
		{name: "/", wantErr: fs.ErrExist},
		{name: "/x/y", wantErr: fs.ErrNotExist},
		{name: "/f/y", wantErr: backend.ErrNotDir},
		{name: "/x/y/z", all: true},
		{name: "/d", all: true},
	}
	for _, tt := range tests {
		var err error
		if tt.all {
			err = v.MkdirAll(tt.name, 0o755)
		} else {
			err = v.Mkdir(tt.name, 0o755)
		}
		if tt.wantErr != nil {
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("Mkdir(%q, all=%v) = %v, want %v", tt.name, tt.all, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("Mkdir(%q, all=%v): %v", tt.name, tt.all, err)
			continue
		}
		if fi, err := b.Stat(ctx, backend.VirtualToStorage(tt.name)); err != nil || !fi.IsDir() {
			t.Errorf("after Mkdir(%q): %+v, %v", tt.name, fi, err)
		}
	}
}

func TestToAferoRemoveRename(t *testing.T) {
	v, b := toAfero(t, map[string]string{"f": "x", "g": "y", "d/a": "a", "d/sub/b": "b"})
	if err := v.Rename("f", "/moved/f"); err != nil {
		t.Fatalf("Rename: %v", err)
	}
	wantContent(t, b, "moved/f", "x")
	if err := v.Rename("g", "moved/f"); err != nil {
		t.Fatalf("Rename onto a file: %v", err)
	}
	wantContent(t, b, "moved/f", "y")
	if err := v.Remove("d"); !errors.Is(err, backend.ErrNotEmpty) {
		t.Errorf("Remove of a full directory = %v, want ErrNotEmpty", err)
	}
	if err := v.RemoveAll("d"); err != nil {
		t.Fatalf("RemoveAll: %v", err)
	}
	if err := v.RemoveAll("d"); err != nil {
		t.Errorf("RemoveAll of a missing path = %v, want nil", err)
	}
	if err := v.Remove("moved/f"); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	for _, name := range []string{"f", "g", "d", "moved/f"} {
		if _, err := v.Stat(name); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Stat(%q) after the changes = %v, want fs.ErrNotExist", name, err)
		}
	}
	if err := v.Remove("../x"); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("Remove(../x) = %v, want fs.ErrInvalid", err)
	}
}

func TestToAferoUnsupported(t *testing.T) {
	v, b := toAfero(t, map[string]string{"f": "x"})
	ops := map[string]error{
		"Chmod":   v.Chmod("f", 0o600),
		"Chown":   v.Chown("f", 1, 1),
		"Chtimes": v.Chtimes("f", time.Time{}, time.Time{}),
	}
	for op, err := range ops {
		if !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("%s = %v, want errors.ErrUnsupported", op, err)
		}
	}
	wantContent(t, b, "f", "x")
	if _, err := v.(afero.LinkReader).ReadlinkIfPossible("f"); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("ReadlinkIfPossible of a file = %v, want fs.ErrInvalid", err)
	}
	if v.Name() != "fencefs" {
		t.Errorf("Name() = %q", v.Name())
	}
}

func TestToAferoReadOnlyBackend(t *testing.T) {
	mem, _ := memFS(t, map[string]string{"f": "x"})
	v := aferoadapter.ToAfero(context.Background(), aferoadapter.New(afero.NewReadOnlyFs(mem)))
	if err := afero.WriteFile(v, "f", []byte("y"), 0o644); !errors.Is(err, backend.ErrReadOnly) {
		t.Errorf("WriteFile on a read-only backend = %v, want ErrReadOnly", err)
	}
	if err := v.MkdirAll("d", 0o755); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("MkdirAll on a read-only backend = %v, want fs.ErrPermission", err)
	}
}

// TestToAferoRemoveAndRename checks that the view's Remove, RemoveAll and
// Rename behave as os's do, through the backend's Remover and Renamer.
func TestToAferoRemoveAndRename(t *testing.T) {
	tests := []struct {
		name    string
		op      func(v afero.Fs) error
		wantErr error
		gone    []string
		there   map[string]string
	}{
		{"remove a file", func(v afero.Fs) error { return v.Remove("/d/f") }, nil, []string{"d/f"}, map[string]string{"d/g": "g"}},
		{"remove a missing file", func(v afero.Fs) error { return v.Remove("nope") }, fs.ErrNotExist, nil, map[string]string{"d/f": "f"}},
		{"remove a full directory", func(v afero.Fs) error { return v.Remove("d") }, backend.ErrNotEmpty, nil, map[string]string{"d/f": "f"}},
		{"remove all of a directory", func(v afero.Fs) error { return v.RemoveAll("d") }, nil, []string{"d", "d/f", "d/g"}, map[string]string{"top": "t"}},
		{"remove all of nothing", func(v afero.Fs) error { return v.RemoveAll("nope") }, nil, nil, map[string]string{"d/f": "f"}},
		{"rename over a file", func(v afero.Fs) error { return v.Rename("d/f", "top") }, nil, []string{"d/f"}, map[string]string{"top": "f"}},
		{"rename a directory", func(v afero.Fs) error { return v.Rename("d", "e/d") }, nil, []string{"d"}, map[string]string{"e/d/f": "f", "e/d/g": "g"}},
		{"rename a missing file", func(v afero.Fs) error { return v.Rename("nope", "x") }, fs.ErrNotExist, []string{"x"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, b := toAfero(t, map[string]string{"d/f": "f", "d/g": "g", "top": "t"})
			err := tt.op(v)
			if tt.wantErr == nil && err != nil || tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			for _, name := range tt.gone {
				if _, err := backend.Stat(context.Background(), b, name); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("Stat(%q) = %v, want it gone", name, err)
				}
			}
			for name, want := range tt.there {
				wantContent(t, b, name, want)
			}
		})
	}
}

// TestToAferoEmptyReadAtEnd checks that a zero-length Read or ReadAt at
// the end of a file reports (0, nil), as os.File and MemMapFs do, on both
// kinds of handle.
func TestToAferoEmptyReadAtEnd(t *testing.T) {
	mem := afero.NewMemMapFs()
	if err := afero.WriteFile(mem, "/f", []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	v := aferoadapter.ToAfero(context.Background(), aferoadapter.New(mem))
	for _, fsys := range []struct {
		name string
		fs   afero.Fs
	}{{"MemMapFs", mem}, {"view", v}} {
		for _, flag := range []int{os.O_RDONLY, os.O_RDWR} {
			f, err := fsys.fs.OpenFile("/f", flag, 0o644)
			if err != nil {
				t.Fatalf("%s: OpenFile(flag %d): %v", fsys.name, flag, err)
			}
			if data, err := io.ReadAll(f); err != nil || string(data) != "abc" {
				t.Errorf("%s, flag %d: ReadAll = %q, %v", fsys.name, flag, data, err)
			}
			if n, err := f.Read(nil); n != 0 || err != nil {
				t.Errorf("%s, flag %d: empty Read at the end = %d, %v; want 0, nil", fsys.name, flag, n, err)
			}
			if n, err := f.ReadAt([]byte{}, 3); n != 0 || err != nil {
				t.Errorf("%s, flag %d: empty ReadAt at the end = %d, %v; want 0, nil", fsys.name, flag, n, err)
			}
			if n, err := f.Read(make([]byte, 1)); n != 0 || err != io.EOF {
				t.Errorf("%s, flag %d: Read at the end = %d, %v; want 0, io.EOF", fsys.name, flag, n, err)
			}
			f.Close()
		}
	}
}
