package overlay_test

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/memfs"
	"github.com/fencefs/fencefs/overlay"
)

// stack is an overlay over a base holding files, and its layers.
type stack struct {
	t           *testing.T
	ctx         context.Context
	base, upper backend.Backend
	o           *overlay.FS
}

// newStack returns an overlay over a memfs base holding files (name:
// content, a name ending in "/" a directory) and an empty memfs upper
// layer.
func newStack(t *testing.T, files map[string]string) *stack {
	t.Helper()
	return newStackOn(t, memfs.New(), memfs.New(), files)
}

// newStackOn returns an overlay over base, filled with files, and the
// empty upper.
func newStackOn(t *testing.T, base, upper backend.Backend, files map[string]string) *stack {
	t.Helper()
	ctx := t.Context()
	for name, data := range files {
		if strings.HasSuffix(name, "/") {
			if err := backend.MkdirAll(ctx, base, strings.TrimSuffix(name, "/")); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := backend.WriteFile(ctx, base, name, []byte(data), backend.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	o, err := overlay.New(base, upper, overlay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &stack{t: t, ctx: ctx, base: base, upper: upper, o: o}
}

// reopen returns a second overlay over the same memfs layers.
func (s *stack) reopen() *overlay.FS {
	s.t.Helper()
	o, err := overlay.New(s.base.(*memfs.FS).Reopen(), s.upper.(*memfs.FS).Reopen(), overlay.Options{})
	if err != nil {
		s.t.Fatal(err)
	}
	return o
}

func (s *stack) write(name, data string, pre backend.Precondition) error {
	return backend.WriteFile(s.ctx, s.o, name, []byte(data), backend.WriteOptions{Precondition: pre})
}

func (s *stack) mustWrite(name, data string) {
	s.t.Helper()
	if err := s.write(name, data, backend.Precondition{}); err != nil {
		s.t.Fatalf("write %s: %v", name, err)
	}
}

// content returns what b shows at name, or "<missing>".
func content(t *testing.T, b backend.Backend, name string) string {
	t.Helper()
	data, err := backend.ReadFile(t.Context(), b, name)
	if errors.Is(err, fs.ErrNotExist) {
		return "<missing>"
	}
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return string(data)
}

// names returns the sorted names List shows in dir.
func names(t *testing.T, b backend.Backend, dir string) []string {
	t.Helper()
	entries, err := b.List(t.Context(), dir)
	if err != nil {
		t.Fatalf("list %s: %v", dir, err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name)
	}
	slices.Sort(out)
	return out
}

// walked returns every path Walk reports below dir.
func walked(t *testing.T, b backend.Backend, dir string) []string {
	t.Helper()
	var out []string
	err := backend.Walk(t.Context(), b, dir, func(name string, e backend.DirEntry) error {
		out = append(out, name)
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", dir, err)
	}
	slices.Sort(out)
	return out
}

func TestReadsFallThrough(t *testing.T) {
	s := newStack(t, map[string]string{"a.txt": "base a", "d/x": "base x", "d/y": "base y"})
	s.mustWrite("d/x", "upper x")
	s.mustWrite("d/z", "upper z")
	for name, want := range map[string]string{"a.txt": "base a", "d/x": "upper x", "d/y": "base y", "d/z": "upper z"} {
		if got := content(t, s.o, name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if got := content(t, s.base, "d/x"); got != "base x" {
		t.Errorf("base d/x = %q: the overlay wrote to its base", got)
	}
	if got, want := names(t, s.o, "d"), []string{"x", "y", "z"}; !slices.Equal(got, want) {
		t.Errorf("List(d) = %q, want %q", got, want)
	}
	if got, want := names(t, s.o, "."), []string{"a.txt", "d"}; !slices.Equal(got, want) {
		t.Errorf("List(.) = %q, want %q (the index must not show)", got, want)
	}
	if got, want := walked(t, s.o, "."), []string{"a.txt", "d", "d/x", "d/y", "d/z"}; !slices.Equal(got, want) {
		t.Errorf("Walk(.) = %q, want %q", got, want)
	}
}

// TestVersionsAreTaggedByLayer: a version read from the base never matches
// the upper layer's file, though both memfs layers number theirs alike.
func TestVersionsAreTaggedByLayer(t *testing.T) {
	s := newStack(t, map[string]string{"f": "base"})
	fi, err := s.o.Stat(s.ctx, "f")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.write("f", "one", backend.Precondition{MatchVersion: fi.Version}); err != nil {
		t.Fatalf("write with the base's version: %v", err)
	}
	err = s.write("f", "two", backend.Precondition{MatchVersion: fi.Version})
	if !errors.Is(err, backend.ErrPrecondition) {
		t.Errorf("second write with the base's version: %v, want ErrPrecondition", err)
	}
	if got := content(t, s.o, "f"); got != "one" {
		t.Errorf("f = %q, want one", got)
	}
}

// TestPreconditionsOverBase: a file served from the base is replaced
// under a precondition by exactly one of several writers.
func TestPreconditionsOverBase(t *testing.T) {
	s := newStack(t, map[string]string{"f": "base"})
	fi, err := s.o.Stat(s.ctx, "f")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.write("f", "x", backend.Precondition{CreateOnly: true}); !errors.Is(err, fs.ErrExist) {
		t.Errorf("create-only over a base file: %v, want fs.ErrExist", err)
	}
	if err := s.write("f", "x", backend.Precondition{MatchHash: strings.Repeat("0", 64)}); !errors.Is(err, backend.ErrPrecondition) {
		t.Errorf("wrong hash over a base file: %v, want ErrPrecondition", err)
	}
	const writers = 8
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for i := range writers {
		wg.Go(func() {
			errs[i] = s.write("f", "writer", backend.Precondition{MatchVersion: fi.Version})
		})
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, backend.ErrPrecondition):
			t.Errorf("losing writer: %v, want ErrPrecondition", err)
		}
	}
	if won != 1 {
		t.Errorf("%d writers committed with the same version, want 1", won)
	}
}

func TestWhiteouts(t *testing.T) {
	s := newStack(t, map[string]string{"a": "base a", "d/x": "base x", "d/sub/y": "base y", "keep": "k"})
	if err := backend.Remove(s.ctx, s.o, "a", backend.RemoveOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := content(t, s.o, "a"); got != "<missing>" {
		t.Errorf("a after removal = %q", got)
	}
	if got := content(t, s.base, "a"); got != "base a" {
		t.Errorf("base a = %q: a removal reached the base", got)
	}
	if err := backend.RemoveAll(s.ctx, s.o, "d", backend.RemoveAllOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.o.Stat(s.ctx, "d"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat(d) after RemoveAll: %v", err)
	}
	if got, want := names(t, s.o, "."), []string{"keep"}; !slices.Equal(got, want) {
		t.Errorf("List(.) = %q, want %q", got, want)
	}
	// Made again, d is opaque: the base's entries stay hidden.
	s.mustWrite("d/new", "n")
	if got, want := names(t, s.o, "d"), []string{"new"}; !slices.Equal(got, want) {
		t.Errorf("List(d) after re-creation = %q, want %q", got, want)
	}
	if got, want := walked(t, s.o, "."), []string{"d", "d/new", "keep"}; !slices.Equal(got, want) {
		t.Errorf("Walk(.) = %q, want %q", got, want)
	}
	if got := content(t, s.o, "d/x"); got != "<missing>" {
		t.Errorf("d/x under an opaque directory = %q", got)
	}
	// A file where the base had one, and a file where it had a directory.
	s.mustWrite("a", "again")
	if got := content(t, s.o, "a"); got != "again" {
		t.Errorf("a written again = %q", got)
	}
	// A second overlay value over the same layers sees the same.
	if got, want := walked(t, s.reopen(), "."), []string{"a", "d", "d/new", "keep"}; !slices.Equal(got, want) {
		t.Errorf("reopened Walk(.) = %q, want %q", got, want)
	}
}

func TestRenameAndCopyOfBaseEntries(t *testing.T) {
	s := newStack(t, map[string]string{"f": "base f", "dir/a": "A", "dir/b/c": "C"})
	if err := backend.Rename(s.ctx, s.o, "f", "g", backend.RenameOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := content(t, s.o, "g") + "|" + content(t, s.o, "f"); got != "base f|<missing>" {
		t.Errorf("after rename g|f = %q", got)
	}
	if err := backend.Rename(s.ctx, s.o, "dir", "moved", backend.RenameOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, want := walked(t, s.o, "."), []string{"g", "moved", "moved/a", "moved/b", "moved/b/c"}; !slices.Equal(got, want) {
		t.Errorf("Walk(.) after moving dir = %q, want %q", got, want)
	}
	if err := backend.Copy(s.ctx, s.o, "moved/a", "copy", backend.CopyOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := content(t, s.o, "copy"); got != "A" {
		t.Errorf("copy = %q", got)
	}
	if err := backend.Rename(s.ctx, s.o, "g", "moved", backend.RenameOptions{}); !errors.Is(err, backend.ErrIsDir) {
		t.Errorf("file onto a directory: %v, want ErrIsDir", err)
	}
	// A write below a base file fails as on any backend.
	if err := s.write("copy/x", "x", backend.Precondition{}); !errors.Is(err, backend.ErrNotDir) {
		t.Errorf("write through a file: %v, want ErrNotDir", err)
	}
}

func TestReservedIndexName(t *testing.T) {
	s := newStack(t, map[string]string{"f": "x"})
	if err := backend.Remove(s.ctx, s.o, "f", backend.RemoveOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		s.write(overlay.IndexName, "{}", backend.Precondition{}),
		func() error { _, err := s.o.OpenRead(s.ctx, overlay.IndexName); return err }(),
		func() error { _, err := s.o.Stat(s.ctx, overlay.IndexName+"/x"); return err }(),
		backend.Remove(s.ctx, s.o, overlay.IndexName, backend.RemoveOptions{}),
	} {
		if !errors.Is(err, backend.ErrInvalidPath) {
			t.Errorf("reaching the index: %v, want ErrInvalidPath", err)
		}
	}
}

// TestIndexElsewhere keeps the index on a backend of its own: nothing is
// reserved in the upper layer.
func TestIndexElsewhere(t *testing.T) {
	ctx := t.Context()
	base, upper, meta := memfs.New(), memfs.New(), memfs.New()
	if err := backend.WriteFile(ctx, base, "f", []byte("x"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	o, err := overlay.New(base, upper, overlay.Options{Index: meta, IndexPath: "sessions/s1.json"})
	if err != nil {
		t.Fatal(err)
	}
	if err := backend.Remove(ctx, o, "f", backend.RemoveOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := backend.WriteFile(ctx, o, overlay.IndexName, []byte("mine"), backend.WriteOptions{}); err != nil {
		t.Errorf("writing %s with the index elsewhere: %v", overlay.IndexName, err)
	}
	if got := content(t, meta, "sessions/s1.json"); !strings.Contains(got, `"path":"f"`) {
		t.Errorf("index = %q, want a record of f", got)
	}
	if got := names(t, o, "."); !slices.Equal(got, []string{overlay.IndexName}) {
		t.Errorf("List(.) = %q", got)
	}
}

func TestCapabilities(t *testing.T) {
	ctx := t.Context()
	_ = ctx
	for _, tc := range []struct {
		name        string
		base, upper backend.Backend
		want        func(c backend.Capabilities) bool
	}{
		{"memfs", memfs.New(), memfs.New(), func(c backend.Capabilities) bool {
			return !c.ReadOnly && c.AtomicPreconditions && c.Versions && !c.AtomicRemove && !c.AtomicRename && !c.ModeBits
		}},
		{"read-only upper", memfs.New(), backend.ReadOnly(memfs.New()), func(c backend.Capabilities) bool { return c.ReadOnly }},
		{"read-only base", backend.ReadOnly(memfs.New()), memfs.New(), func(c backend.Capabilities) bool { return !c.ReadOnly && c.Versions }},
	} {
		o, err := overlay.New(tc.base, tc.upper, overlay.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if c := o.Capabilities(); !tc.want(c) {
			t.Errorf("%s: capabilities %+v", tc.name, c)
		}
	}
}
