package backend_test

import (
	"context"
	"errors"
	"io/fs"
	"reflect"
	"testing"

	"github.com/fencefs/fencefs/aferoadapter"
	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/internal/backendtest"
	"github.com/fencefs/fencefs/mounted"
	"github.com/spf13/afero"
)

// memAfero returns an in-memory backend holding files.
func memAfero(t *testing.T, files map[string]string) *aferoadapter.FS {
	t.Helper()
	fsys := afero.NewMemMapFs()
	for name, content := range files {
		if err := afero.WriteFile(fsys, "/"+name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return aferoadapter.New(fsys)
}

// TestReadOnlyForwards checks that the one wrapper type forwards each
// behaviour the wrapped backend has and declines, with ErrUnsupported,
// each it lacks, so the helpers of package backend take their fallback.
func TestReadOnlyForwards(t *testing.T) {
	ctx := context.Background()
	ns, err := mounted.New(map[string]backend.Backend{"m": memAfero(t, map[string]string{"f": "x"})})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name           string
		inner          backend.Backend
		walks          bool // the wrapped backend has a Walker
		links          bool // the wrapped backend has a SymlinkResolver
		path, resolved string
	}{
		{"plain", sampleTree(), false, false, "a/b.txt", "a/b.txt"},
		{"walker", walker{sampleTree()}, true, false, "a/b.txt", "a/b.txt"},
		{"links", linked{listOnly: sampleTree(), links: map[string]string{"a": "z"}}, false, true, "a/b.txt", "z/b.txt"},
		{"afero", memAfero(t, map[string]string{"a/b.txt": "AB"}), false, true, "a/b.txt", "a/b.txt"},
		{"mounted", ns, true, true, "m/f", "m/f"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ro := backend.ReadOnly(tt.inner)
			called := false
			err := ro.Walk(ctx, ".", func(string, backend.DirEntry) error { called = true; return nil })
			if declined := errors.Is(err, backend.ErrUnsupported); declined == tt.walks || (declined && called) {
				t.Errorf("Walk = %v (callback called: %v); the wrapped backend has a Walker: %v", err, called, tt.walks)
			}
			resolved, err := ro.ResolveSymlinks(ctx, tt.path)
			if tt.links && (err != nil || resolved != tt.resolved) {
				t.Errorf("ResolveSymlinks = %q, %v; want it passed through as %q", resolved, err, tt.resolved)
			}
			if !tt.links && !errors.Is(err, backend.ErrUnsupported) {
				t.Errorf("ResolveSymlinks = %q, %v; want a decline with ErrUnsupported", resolved, err)
			}
			if got, err := backend.ResolveSymlinks(ctx, ro, tt.path); err != nil || got != tt.resolved {
				t.Errorf("backend.ResolveSymlinks = %q, %v; want %q", got, err, tt.resolved)
			}
			if !tt.links {
				_, err = ro.ResolveSymlinks(ctx, "../x")
				backendtest.WantPathErr(t, "ResolveSymlinks(../x)", err, "../x", backend.ErrInvalidPath)
			}
			if _, err := ro.MapHostPath("/h"); !errors.Is(err, backend.ErrUnsupported) {
				t.Errorf("MapHostPath = %v; want a decline with ErrUnsupported", err)
			}
			if p, ok := ro.LocalPath("a"); ok || p != "" {
				t.Errorf("LocalPath = %q, %v; want none", p, ok)
			}
			want := backend.CapabilitiesOf(tt.inner)
			want.ReadOnly = true
			if got := ro.Capabilities(); got != want {
				t.Errorf("Capabilities() = %+v, want %+v", got, want)
			}
		})
	}
}

func TestReadOnlyRefusesChanges(t *testing.T) {
	ctx := context.Background()
	inner := memAfero(t, map[string]string{"f": "old", "d/g": "g"})
	ro := backend.ReadOnly(inner)
	for _, name := range []string{"f", "new", "d/new"} {
		fw, err := ro.OpenWrite(ctx, name, backend.WriteOptions{})
		if fw != nil {
			t.Errorf("OpenWrite(%q) returned a writer", name)
		}
		backendtest.WantPathErr(t, "OpenWrite("+name+")", err, name, backend.ErrReadOnly)
		backendtest.WantPathErr(t, "OpenWrite("+name+")", err, name, fs.ErrPermission)
		backendtest.WantPathErr(t, "backend.WriteFile("+name+")", backend.WriteFile(ctx, ro, name, nil, backend.WriteOptions{}), name, backend.ErrReadOnly)
		backendtest.WantPathErr(t, "MkdirAll("+name+")", ro.MkdirAll(ctx, name), name, backend.ErrReadOnly)
		backendtest.WantPathErr(t, "Remove("+name+")", ro.Remove(ctx, name, backend.RemoveOptions{}), name, backend.ErrReadOnly)
		backendtest.WantPathErr(t, "Rename("+name+")", ro.Rename(ctx, name, "to", backend.RenameOptions{}), name, backend.ErrReadOnly)
		backendtest.WantPathErr(t, "Copy("+name+")", ro.Copy(ctx, "f", name, backend.CopyOptions{}), name, backend.ErrReadOnly)
	}
	_, err := ro.OpenWrite(ctx, "../x", backend.WriteOptions{})
	backendtest.WantPathErr(t, "OpenWrite(../x)", err, "../x", backend.ErrInvalidPath)
	backendtest.WantPathErr(t, "MkdirAll(/x)", ro.MkdirAll(ctx, "/x"), "/x", backend.ErrInvalidPath)
	backendtest.WantPathErr(t, "Rename(f, ../x)", ro.Rename(ctx, "f", "../x", backend.RenameOptions{}), "../x", backend.ErrInvalidPath)
	if data, err := backend.ReadFile(ctx, inner, "f"); err != nil || string(data) != "old" {
		t.Errorf("the wrapped file = %q, %v", data, err)
	}
	if _, err := inner.Stat(ctx, "new"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused write created a file: %v", err)
	}
}

func TestReadOnlyReads(t *testing.T) {
	ctx := context.Background()
	for _, inner := range []backend.Backend{memAfero(t, map[string]string{"f": "old", "d/g": "g"}), newListOnly(map[string]string{"f": "old", "d/g": "g"})} {
		ro := backend.ReadOnly(inner)
		if data, err := backend.ReadFile(ctx, ro, "d/g"); err != nil || string(data) != "g" {
			t.Errorf("ReadFile = %q, %v", data, err)
		}
		entries, err := ro.List(ctx, ".")
		if err != nil || len(entries) != 2 {
			t.Errorf("List = %+v, %v", entries, err)
		}
		if fi, err := ro.Stat(ctx, "d/g"); err != nil || fi.Size != 1 {
			t.Errorf("Stat = %+v, %v", fi, err)
		}
		if _, err := ro.Stat(ctx, "missing"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Stat(missing) = %v", err)
		}
		var walked []string
		err = backend.Walk(ctx, ro, ".", func(name string, _ backend.DirEntry) error {
			walked = append(walked, name)
			return nil
		})
		if err != nil || !reflect.DeepEqual(walked, []string{"d", "d/g", "f"}) {
			t.Errorf("Walk = %q, %v", walked, err)
		}
	}
}

func TestMask(t *testing.T) {
	local := backend.Capabilities{Name: "local", Symlinks: true, ModeBits: true, ModTimes: true, EmptyDirs: true,
		SpecialFiles: true, AtomicRename: true, AtomicRemove: true, AtomicPreconditions: true, MaxNameBytes: 255}
	s3 := backend.Capabilities{Name: "s3", ModTimes: true, EmptyDirs: true, Versions: true,
		AtomicPreconditions: true, MaxNameBytes: 1024}
	dav := backend.Capabilities{Name: "webdav", CaseInsensitive: true, NonAtomicReplace: true}
	staged := backend.Capabilities{Name: "local", StagingPattern: `^\.fencefs-[0-9a-f]{8}\.tmp$`}
	readOnly := backend.Unrestricted("")
	readOnly.ReadOnly = true
	rooted := backend.Unrestricted("mounted")
	rooted.Rooted = true
	tests := []struct {
		name        string
		layer, kids backend.Capabilities
		want        backend.Capabilities
	}{
		{"unrestricted keeps the child", backend.Unrestricted(""), local, local},
		{"read-only adds a restriction", readOnly, s3, backend.Capabilities{Name: "s3", ReadOnly: true, ModTimes: true,
			EmptyDirs: true, Versions: true, AtomicPreconditions: true, MaxNameBytes: 1024}},
		{"abilities of both", local, s3, backend.Capabilities{Name: "local", ModTimes: true, EmptyDirs: true,
			AtomicPreconditions: true, MaxNameBytes: 255}},
		{"restrictions of either", rooted.Mask(local), dav, backend.Capabilities{Name: "mounted", Rooted: true,
			CaseInsensitive: true, NonAtomicReplace: true, MaxNameBytes: 255}},
		{"the child's staging names", readOnly, staged, backend.Capabilities{Name: "local", ReadOnly: true,
			StagingPattern: staged.StagingPattern}},
		{"the layer's own staging names", staged, s3, backend.Capabilities{Name: "local", MaxNameBytes: 1024,
			StagingPattern: staged.StagingPattern}},
	}
	for _, tt := range tests {
		if got := tt.layer.Mask(tt.kids); got != tt.want {
			t.Errorf("%s: Mask = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}
