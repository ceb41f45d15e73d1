package mounted_test

import (
	"context"
	"errors"
	"io/fs"
	"reflect"
	"slices"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/internal/backendtest"
	"github.com/fencefs/fencefs/mounted"
)

// Fakes with the path-changing optional interfaces, to check which ones
// the read-only wrapper claims.
type (
	withWalk  struct{ listOnly }
	withLinks struct{ listOnly }
	withRoot  struct{ listOnly }
	withHost  struct{ listOnly }
	withAll   struct{ listOnly }
)

func (w withWalk) Walk(ctx context.Context, dir string, fn backend.WalkFunc) error {
	return fn("walked", backend.DirEntry{Name: "walked"})
}
func (withLinks) ResolveSymlinks(ctx context.Context, name string) (string, error) {
	return "resolved/" + name, nil
}
func (withLinks) Readlink(ctx context.Context, name string) (string, error) { return "target", nil }
func (withRoot) ResolvePath(path, cwd string) (string, error)               { return "/rooted", nil }
func (withHost) MapHostPath(hostPath string) (string, error)                { return "mapped", nil }
func (withAll) ResolveSymlinks(ctx context.Context, name string) (string, error) {
	return "resolved/" + name, nil
}
func (withAll) Readlink(ctx context.Context, name string) (string, error) { return "target", nil }
func (withAll) ResolvePath(path, cwd string) (string, error)              { return "/rooted", nil }
func (withAll) MapHostPath(hostPath string) (string, error)               { return "mapped", nil }

// claims lists the optional interfaces b implements.
func claims(b backend.Backend) []string {
	var out []string
	check := func(name string, ok bool) {
		if ok {
			out = append(out, name)
		}
	}
	_, ok := b.(backend.Stater)
	check("Stater", ok)
	_, ok = b.(backend.Writer)
	check("Writer", ok)
	_, ok = b.(backend.DirMaker)
	check("DirMaker", ok)
	_, ok = b.(backend.SymlinkResolver)
	check("SymlinkResolver", ok)
	_, ok = b.(backend.Walker)
	check("Walker", ok)
	_, ok = b.(backend.PathResolver)
	check("PathResolver", ok)
	_, ok = b.(backend.LocalPather)
	check("LocalPather", ok)
	_, ok = b.(backend.HostPathMapper)
	check("HostPathMapper", ok)
	_, ok = b.(backend.CapabilityReporter)
	check("CapabilityReporter", ok)
	return out
}

func TestReadOnlyClaims(t *testing.T) {
	base := []string{"Stater", "Writer", "DirMaker", "LocalPather", "CapabilityReporter"}
	order := []string{"Stater", "Writer", "DirMaker", "SymlinkResolver", "Walker", "PathResolver", "LocalPather", "HostPathMapper", "CapabilityReporter"}
	with := func(extra ...string) []string {
		want := map[string]bool{}
		for _, name := range append(slices.Clone(base), extra...) {
			want[name] = true
		}
		var out []string
		for _, name := range order {
			if want[name] {
				out = append(out, name)
			}
		}
		return out
	}
	plain := listOnly{memBackend(t, map[string]string{"f": "x"})}
	namespace, _ := newNamespace(t)
	tests := []struct {
		name  string
		inner backend.Backend
		want  []string
	}{
		{"plain", plain, base},
		{"walker", withWalk{plain}, with("Walker")},
		{"links", withLinks{plain}, with("SymlinkResolver")},
		{"rooted", withRoot{plain}, with("PathResolver")},
		{"host", withHost{plain}, with("HostPathMapper")},
		{"all", withAll{plain}, with("SymlinkResolver", "PathResolver", "HostPathMapper")},
		{"afero", memBackend(t, nil), with("SymlinkResolver")},
		{"mounted", namespace, with("Walker", "SymlinkResolver", "PathResolver")},
	}
	for _, tt := range tests {
		if got := claims(mounted.ReadOnly(tt.inner)); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ReadOnly(%s) implements %q, want %q", tt.name, got, tt.want)
		}
	}
	all := mounted.ReadOnly(withAll{plain})
	ctx := context.Background()
	if got, _ := all.(backend.SymlinkResolver).ResolveSymlinks(ctx, "x"); got != "resolved/x" {
		t.Errorf("ResolveSymlinks did not pass through: %q", got)
	}
	if got, _ := all.(backend.PathResolver).ResolvePath("x", "/"); got != "/rooted" {
		t.Errorf("ResolvePath did not pass through: %q", got)
	}
	if got, _ := all.(backend.HostPathMapper).MapHostPath("/h"); got != "mapped" {
		t.Errorf("MapHostPath did not pass through: %q", got)
	}
	var walked []string
	err := backend.Walk(ctx, mounted.ReadOnly(withWalk{plain}), ".", func(name string, _ backend.DirEntry) error {
		walked = append(walked, name)
		return nil
	})
	if err != nil || !reflect.DeepEqual(walked, []string{"walked"}) {
		t.Errorf("Walk did not pass through: %q, %v", walked, err)
	}
}

func TestReadOnlyRefusesWrites(t *testing.T) {
	ctx := context.Background()
	inner := memBackend(t, map[string]string{"f": "old", "d/g": "g"})
	ro := mounted.ReadOnly(inner)
	w, d := ro.(backend.Writer), ro.(backend.DirMaker)
	for _, name := range []string{"f", "new", "d/new"} {
		fw, err := w.OpenWrite(ctx, name, backend.WriteOptions{})
		if fw != nil {
			t.Errorf("OpenWrite(%q) returned a writer", name)
		}
		backendtest.WantPathErr(t, "OpenWrite("+name+")", err, name, backend.ErrReadOnly)
		backendtest.WantPathErr(t, "OpenWrite("+name+")", err, name, fs.ErrPermission)
		backendtest.WantPathErr(t, "backend.WriteFile("+name+")", backend.WriteFile(ctx, ro, name, nil, backend.WriteOptions{}), name, backend.ErrReadOnly)
		backendtest.WantPathErr(t, "MkdirAll("+name+")", d.MkdirAll(ctx, name), name, backend.ErrReadOnly)
	}
	_, err := w.OpenWrite(ctx, "../x", backend.WriteOptions{})
	backendtest.WantPathErr(t, "OpenWrite(../x)", err, "../x", backend.ErrInvalidPath)
	backendtest.WantPathErr(t, "MkdirAll(/x)", d.MkdirAll(ctx, "/x"), "/x", backend.ErrInvalidPath)
	if data, err := backend.ReadFile(ctx, inner, "f"); err != nil || string(data) != "old" {
		t.Errorf("the wrapped file = %q, %v", data, err)
	}
	if _, err := inner.Stat(ctx, "new"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused write created a file: %v", err)
	}
	c := backend.CapabilitiesOf(ro)
	want := inner.Capabilities()
	want.ReadOnly = true
	if c != want {
		t.Errorf("Capabilities() = %+v, want %+v", c, want)
	}
}

func TestReadOnlyReads(t *testing.T) {
	ctx := context.Background()
	inner := memBackend(t, map[string]string{"f": "old", "d/g": "g"})
	for _, ro := range []backend.Backend{mounted.ReadOnly(inner), mounted.ReadOnly(listOnly{inner})} {
		if data, err := backend.ReadFile(ctx, ro, "d/g"); err != nil || string(data) != "g" {
			t.Errorf("ReadFile = %q, %v", data, err)
		}
		entries, err := ro.List(ctx, ".")
		if err != nil || len(entries) != 2 {
			t.Errorf("List = %+v, %v", entries, err)
		}
		if fi, err := ro.(backend.Stater).Stat(ctx, "d/g"); err != nil || fi.Size != 1 {
			t.Errorf("Stat = %+v, %v", fi, err)
		}
		if _, err := ro.(backend.Stater).Stat(ctx, "missing"); !errors.Is(err, fs.ErrNotExist) {
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
		if p, ok := ro.(backend.LocalPather).LocalPath("f"); ok || p != "" {
			t.Errorf("LocalPath of a memory backend = %q, %v", p, ok)
		}
	}
}
