package aferoadapter_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/fencefs/fencefs/aferoadapter"
	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/internal/backendtest"
)

func TestRead(t *testing.T) {
	ctx := context.Background()
	_, b := memFS(t, sampleFiles)
	tests := []backendtest.Read{
		{Name: "a.txt", Want: "A"},
		{Name: "a/c/d.txt", Want: "ACD"},
		{Name: "sp ace/ü.txt", Want: "unicode"},
		{Name: "colon/x:y.txt", Want: "c"},
		{Name: ".", Err: backend.ErrIsDir},
		{Name: "a", Err: backend.ErrIsDir},
		{Name: "empty", Err: backend.ErrIsDir},
		{Name: "missing", Err: fs.ErrNotExist},
		{Name: "a/missing", Err: fs.ErrNotExist},
		{Name: "missing/x", Err: fs.ErrNotExist},
		{Name: "a.txt/x", Err: backend.ErrNotDir},
		{Name: "a.txt/x/y", Err: backend.ErrNotDir},
		{Name: "/a.txt", Err: backend.ErrInvalidPath},
		{Name: "a/../a.txt", Err: backend.ErrInvalidPath},
		{Name: "./a.txt", Err: backend.ErrInvalidPath},
		{Name: "", Err: backend.ErrInvalidPath},
		{Name: "~", Err: backend.ErrInvalidPath},
		{Name: `a\b.txt`, Err: backend.ErrInvalidPath},
		{Name: "C:x", Err: backend.ErrInvalidPath},
	}
	backendtest.CheckReads(t, ctx, b, tests)
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
			backendtest.WantPathErr(t, "Stat("+tt.name+")", err, tt.name, tt.wantErr)
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
			backendtest.WantPathErr(t, "List("+tt.dir+")", err, tt.dir, tt.wantErr)
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
	backendtest.WantPathErr(t, "OpenRead", err, "a.txt", context.Canceled)
	_, err = b.List(ctx, "a")
	backendtest.WantPathErr(t, "List", err, "a", context.Canceled)
	_, err = b.Stat(ctx, "a")
	backendtest.WantPathErr(t, "Stat", err, "a", context.Canceled)
	_, err = b.OpenWrite(ctx, "n", backend.WriteOptions{})
	backendtest.WantPathErr(t, "OpenWrite", err, "n", context.Canceled)
	backendtest.WantPathErr(t, "MkdirAll", b.MkdirAll(ctx, "d"), "d", context.Canceled)
}

func TestCapabilities(t *testing.T) {
	tests := []struct {
		name string
		fs   afero.Fs
		want backend.Capabilities
	}{
		{"MemMapFs", afero.NewMemMapFs(), backend.Capabilities{
			Name: "afero", ModeBits: true, ModTimes: true, EmptyDirs: true, AtomicPreconditions: true, AtomicRename: true, AtomicRemove: true,
		}},
		{"BasePathFs over MemMapFs", afero.NewBasePathFs(afero.NewMemMapFs(), "/base"), backend.Capabilities{
			Name: "afero", ModTimes: true, EmptyDirs: true, AtomicPreconditions: true, AtomicRemove: true,
		}},
		{"ReadOnlyFs over MemMapFs", afero.NewReadOnlyFs(afero.NewMemMapFs()), backend.Capabilities{
			Name: "afero", ReadOnly: true, ModTimes: true, EmptyDirs: true, AtomicPreconditions: true, AtomicRemove: true,
		}},
		{"BasePathFs over OsFs", afero.NewBasePathFs(afero.NewOsFs(), t.TempDir()), backend.Capabilities{
			Name: "afero", Symlinks: true, ModeBits: true, ModTimes: true, EmptyDirs: true, SpecialFiles: true,
			AtomicPreconditions: true, AtomicRename: true, AtomicRemove: true, MaxNameBytes: 255,
		}},
	}
	for _, tt := range tests {
		tt.want.StagingPattern = `^\.fencefs-[0-9a-f]{16}\.tmp$`
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
	backendtest.WantPathErr(t, "OpenWrite", err, "a.txt", backend.ErrReadOnly)
	backendtest.WantPathErr(t, "MkdirAll", b.MkdirAll(ctx, "new"), "new", fs.ErrPermission)
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

// TestReservedNames checks that a path naming a pending write's temporary
// file is refused by every operation with ErrInvalidPath, as backend.Writer
// documents, so nothing reaches another write's bytes.
func TestReservedNames(t *testing.T) {
	ctx := context.Background()
	b := aferoadapter.New(afero.NewMemMapFs())
	const reserved = ".fencefs-0123456789abcdef.tmp"
	for _, name := range []string{reserved, "d/" + reserved, reserved + "/x"} {
		_, readErr := b.OpenRead(ctx, name)
		_, statErr := b.Stat(ctx, name)
		_, listErr := b.List(ctx, name)
		errs := map[string]error{
			"OpenRead": readErr,
			"Stat":     statErr,
			"List":     listErr,
			"write":    backend.WriteFile(ctx, b, name, []byte("x"), backend.WriteOptions{}),
			"MkdirAll": b.MkdirAll(ctx, name),
		}
		for op, err := range errs {
			if !errors.Is(err, backend.ErrInvalidPath) {
				t.Errorf("%s(%q) error = %v, want backend.ErrInvalidPath", op, name, err)
			}
		}
	}
	if err := backend.WriteFile(ctx, b, ".fencefs-notours.tmp", []byte("x"), backend.WriteOptions{}); err != nil {
		t.Errorf("a name that only looks similar was refused: %v", err)
	}
}
