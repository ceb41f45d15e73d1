package aferoadapter_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/fencefs/fencefs/aferoadapter"
	"github.com/fencefs/fencefs/backend"
)

// wantPathErr fails unless err is an *fs.PathError naming name and
// matching target.
func wantPathErr(t *testing.T, what string, err error, name string, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: error %v, want %v", what, err, target)
		return
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Path != name {
		t.Errorf("%s: error %#v is not an *fs.PathError naming %q", what, err, name)
	}
}

func TestRead(t *testing.T) {
	ctx := context.Background()
	_, b := memFS(t, sampleFiles)
	tests := []struct {
		name    string
		want    string
		wantErr error
	}{
		{name: "a.txt", want: "A"},
		{name: "a/c/d.txt", want: "ACD"},
		{name: "sp ace/ü.txt", want: "unicode"},
		{name: "colon/x:y.txt", want: "c"},
		{name: ".", wantErr: backend.ErrIsDir},
		{name: "a", wantErr: backend.ErrIsDir},
		{name: "empty", wantErr: backend.ErrIsDir},
		{name: "missing", wantErr: fs.ErrNotExist},
		{name: "a/missing", wantErr: fs.ErrNotExist},
		{name: "missing/x", wantErr: fs.ErrNotExist},
		{name: "a.txt/x", wantErr: backend.ErrNotDir},
		{name: "a.txt/x/y", wantErr: backend.ErrNotDir},
		{name: "/a.txt", wantErr: backend.ErrInvalidPath},
		{name: "a/../a.txt", wantErr: backend.ErrInvalidPath},
		{name: "./a.txt", wantErr: backend.ErrInvalidPath},
		{name: "", wantErr: backend.ErrInvalidPath},
		{name: "~", wantErr: backend.ErrInvalidPath},
		{name: `a\b.txt`, wantErr: backend.ErrInvalidPath},
		{name: "C:x", wantErr: backend.ErrInvalidPath},
	}
	for _, tt := range tests {
		r, err := b.OpenRead(ctx, tt.name)
		if tt.wantErr != nil {
			if err == nil {
				r.Close()
			}
			wantPathErr(t, "OpenRead("+tt.name+")", err, tt.name, tt.wantErr)
			continue
		}
		if err != nil {
			t.Errorf("OpenRead(%q): %v", tt.name, err)
			continue
		}
		data, err := io.ReadAll(r)
		if err != nil || string(data) != tt.want {
			t.Errorf("OpenRead(%q) read %q, %v; want %q", tt.name, data, err, tt.want)
		}
		if err := r.Close(); err != nil {
			t.Errorf("Close(%q): %v", tt.name, err)
		}
	}
}

func TestStat(t *testing.T) {
	ctx := context.Background()
	_, b := memFS(t, sampleFiles)
	tests := []struct {
		name     string
		wantName string
		dir      bool
		size     int64
		wantErr  error
	}{
		{name: ".", wantName: ".", dir: true},
		{name: "a", wantName: "a", dir: true},
		{name: "empty", wantName: "empty", dir: true},
		{name: "a.txt", wantName: "a.txt", size: 1},
		{name: "a/c/d.txt", wantName: "d.txt", size: 3},
		{name: "missing", wantErr: fs.ErrNotExist},
		{name: "a.txt/x", wantErr: fs.ErrNotExist}, // through a file: missing
		{name: "a/", wantErr: backend.ErrInvalidPath},
	}
	for _, tt := range tests {
		fi, err := b.Stat(ctx, tt.name)
		if tt.wantErr != nil {
			wantPathErr(t, "Stat("+tt.name+")", err, tt.name, tt.wantErr)
			continue
		}
		if err != nil {
			t.Errorf("Stat(%q): %v", tt.name, err)
			continue
		}
		if fi.Name != tt.wantName || fi.IsDir() != tt.dir || fi.Size != tt.size || fi.ModTime.IsZero() {
			t.Errorf("Stat(%q) = %+v, want name %q dir %v size %d and a ModTime", tt.name, fi, tt.wantName, tt.dir, tt.size)
		}
		if !tt.dir && fi.Mode.Perm() != 0o644 {
			t.Errorf("Stat(%q).Mode = %v, want the stored 0644", tt.name, fi.Mode)
		}
	}
}

func TestList(t *testing.T) {
	ctx := context.Background()
	_, b := memFS(t, sampleFiles)
	tests := []struct {
		dir     string
		want    []string // names, directories with a trailing "/"
		wantErr error
	}{
		{dir: ".", want: []string{"a/", "a.txt", "colon/", "dot/", "empty/", "sp ace/", "z/"}},
		{dir: "a", want: []string{"b.txt", "c/"}},
		{dir: "empty", want: nil},
		{dir: "dot", want: []string{".hidden"}},
		{dir: "a.txt", wantErr: backend.ErrNotDir},
		{dir: "missing", wantErr: fs.ErrNotExist},
		{dir: "a.txt/x", wantErr: backend.ErrNotDir},
		{dir: "a//c", wantErr: backend.ErrInvalidPath},
	}
	for _, tt := range tests {
		entries, err := b.List(ctx, tt.dir)
		if tt.wantErr != nil {
			wantPathErr(t, "List("+tt.dir+")", err, tt.dir, tt.wantErr)
			continue
		}
		if err != nil {
			t.Errorf("List(%q): %v", tt.dir, err)
			continue
		}
		backend.SortEntries(entries)
		var got []string
		for _, e := range entries {
			name := e.Name
			if e.IsDir() {
				name += "/"
				if e.Size != 0 {
					t.Errorf("List(%q): directory %q has size %d, want 0", tt.dir, e.Name, e.Size)
				}
			} else if fi, err := b.Stat(ctx, backend.Join(tt.dir, e.Name)); err != nil || fi.Size != e.Size || !fi.ModTime.Equal(e.ModTime) {
				t.Errorf("List(%q): entry %+v disagrees with Stat %+v, %v", tt.dir, e, fi, err)
			}
			got = append(got, name)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("List(%q) = %q, want %q", tt.dir, got, tt.want)
		}
	}
}

func TestCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, b := memFS(t, sampleFiles)
	_, err := b.OpenRead(ctx, "a.txt")
	wantPathErr(t, "OpenRead", err, "a.txt", context.Canceled)
	_, err = b.List(ctx, "a")
	wantPathErr(t, "List", err, "a", context.Canceled)
	_, err = b.Stat(ctx, "a")
	wantPathErr(t, "Stat", err, "a", context.Canceled)
	_, err = b.OpenWrite(ctx, "n", backend.WriteOptions{})
	wantPathErr(t, "OpenWrite", err, "n", context.Canceled)
	wantPathErr(t, "MkdirAll", b.MkdirAll(ctx, "d"), "d", context.Canceled)
}

func TestCapabilities(t *testing.T) {
	tests := []struct {
		name string
		fs   afero.Fs
		want backend.Capabilities
	}{
		{"MemMapFs", afero.NewMemMapFs(), backend.Capabilities{
			Name: "afero", ModeBits: true, ModTimes: true, EmptyDirs: true, AtomicPreconditions: true,
		}},
		{"BasePathFs over MemMapFs", afero.NewBasePathFs(afero.NewMemMapFs(), "/base"), backend.Capabilities{
			Name: "afero", ModTimes: true, EmptyDirs: true, AtomicPreconditions: true,
		}},
		{"ReadOnlyFs over MemMapFs", afero.NewReadOnlyFs(afero.NewMemMapFs()), backend.Capabilities{
			Name: "afero", ReadOnly: true, ModTimes: true, EmptyDirs: true, AtomicPreconditions: true,
		}},
		{"BasePathFs over OsFs", afero.NewBasePathFs(afero.NewOsFs(), t.TempDir()), backend.Capabilities{
			Name: "afero", Symlinks: true, ModeBits: true, ModTimes: true, EmptyDirs: true, SpecialFiles: true,
			AtomicPreconditions: true, MaxNameBytes: 255,
		}},
	}
	for _, tt := range tests {
		if got := aferoadapter.New(tt.fs).Capabilities(); got != tt.want {
			t.Errorf("%s: Capabilities() = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestReadOnlyFs(t *testing.T) {
	ctx := context.Background()
	mem, _ := memFS(t, sampleFiles)
	b := aferoadapter.New(afero.NewReadOnlyFs(mem))
	if data, err := backend.ReadFile(ctx, b, "a/b.txt"); err != nil || string(data) != "AB" {
		t.Errorf("ReadFile = %q, %v", data, err)
	}
	_, err := b.OpenWrite(ctx, "a.txt", backend.WriteOptions{})
	wantPathErr(t, "OpenWrite", err, "a.txt", backend.ErrReadOnly)
	wantPathErr(t, "MkdirAll", b.MkdirAll(ctx, "new"), "new", fs.ErrPermission)
	if b.Fs() == mem {
		t.Error("Fs() returned the inner Fs, want the ReadOnlyFs given to New")
	}
}

// TestHostPathsNeverLeak checks that errors from an Fs over the host
// directory name storage paths only.
func TestHostPathsNeverLeak(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	b := aferoadapter.New(afero.NewBasePathFs(afero.NewOsFs(), root))
	if err := backend.WriteFile(ctx, b, "f", []byte("x"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	var errs []error
	_, err := b.OpenRead(ctx, "missing/x")
	errs = append(errs, err)
	_, err = b.OpenRead(ctx, "f/x")
	errs = append(errs, err)
	_, err = b.List(ctx, "nope")
	errs = append(errs, err)
	_, err = b.Stat(ctx, "f/x")
	errs = append(errs, err)
	errs = append(errs, backend.WriteFile(ctx, b, "f/x", nil, backend.WriteOptions{}))
	errs = append(errs, b.MkdirAll(ctx, "f"))
	if err := os.Chmod(root, 0o500); err == nil && os.Getuid() != 0 {
		errs = append(errs, backend.WriteFile(ctx, b, "g", nil, backend.WriteOptions{}))
		defer os.Chmod(root, 0o700)
	}
	for _, err := range errs {
		if err == nil {
			t.Error("an operation that should fail succeeded")
			continue
		}
		if msg := err.Error(); strings.Contains(msg, root) {
			t.Errorf("error %q names the host directory", msg)
		}
	}
}
