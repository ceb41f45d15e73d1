// Package overlaytest holds what the tests of package overlay share with
// the tests that run it over layers in containers (in the harness module,
// conformance/containers/integration/overlay): a conformance harness of
// overlays over two layer harnesses, the tests each shape of overlay is
// expected to skip, and the commit table. It is for tests only.
package overlaytest

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance"
	"github.com/fencefs/fencefs/overlay"
)

// LayerHarness makes the backends of one layer and reaches their storage.
type LayerHarness interface {
	conformance.Harness
	conformance.Seeder
	conformance.RawLister
	conformance.Reopener
}

// layers are the two backends under an overlay, as their harnesses made
// them (before any read-only wrapper).
type layers struct{ base, upper backend.Backend }

// Harness makes overlays over backends of two layer harnesses, for
// conformance.Run and conformance.RunTools. Seeding goes to the base, so
// the read tests read through the overlay from the base; the raw listing
// is both layers' with the overlay's index left out.
type Harness struct {
	base, upper     LayerHarness
	baseRO, upperRO bool
	mu              sync.Mutex
	made            map[backend.Backend]layers
}

// NewHarness returns a harness of overlays over a backend of base and one
// of upper, each wrapped in backend.ReadOnly when its flag says so.
func NewHarness(base, upper LayerHarness, baseReadOnly, upperReadOnly bool) *Harness {
	return &Harness{base: base, upper: upper, baseRO: baseReadOnly, upperRO: upperReadOnly, made: map[backend.Backend]layers{}}
}

// MakeBackend returns an overlay over fresh backends of both layers.
func (h *Harness) MakeBackend(ctx context.Context, t *testing.T) backend.Backend {
	return h.over(t, layers{h.base.MakeBackend(ctx, t), h.upper.MakeBackend(ctx, t)})
}

// over returns an overlay over l.
func (h *Harness) over(t *testing.T, l layers) backend.Backend {
	t.Helper()
	base, upper := l.base, l.upper
	if h.baseRO {
		base = backend.ReadOnly(base)
	}
	if h.upperRO {
		upper = backend.ReadOnly(upper)
	}
	o, err := overlay.New(base, upper, overlay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	h.made[o] = l
	h.mu.Unlock()
	t.Cleanup(func() {
		h.mu.Lock()
		delete(h.made, o)
		h.mu.Unlock()
	})
	return o
}

// layersOf returns the layers under b.
func (h *Harness) layersOf(t *testing.T, b backend.Backend) layers {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	l, ok := h.made[b]
	if !ok {
		t.Fatalf("backend %v was not made by this harness", b)
	}
	return l
}

// Seed writes name into the base under b.
func (h *Harness) Seed(ctx context.Context, t *testing.T, b backend.Backend, name string, data []byte) {
	h.base.Seed(ctx, t, h.layersOf(t, b).base, name, data)
}

// SeedDir makes dir in the base under b.
func (h *Harness) SeedDir(ctx context.Context, t *testing.T, b backend.Backend, dir string) {
	h.base.SeedDir(ctx, t, h.layersOf(t, b).base, dir)
}

// ListRaw lists what both layers under b hold, the overlay's index left
// out.
func (h *Harness) ListRaw(ctx context.Context, t *testing.T, b backend.Backend) []string {
	l := h.layersOf(t, b)
	out := h.base.ListRaw(ctx, t, l.base)
	for _, name := range h.upper.ListRaw(ctx, t, l.upper) {
		if name != overlay.IndexName && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// Reopen returns a new overlay over the reopened layers under b.
func (h *Harness) Reopen(ctx context.Context, t *testing.T, b backend.Backend) backend.Backend {
	l := h.layersOf(t, b)
	return h.over(t, layers{h.base.Reopen(ctx, t, l.base), h.upper.Reopen(ctx, t, l.upper)})
}

// Abilities are every ability the overlay harness has.
func Abilities() []conformance.Ability {
	return []conformance.Ability{conformance.AbilityRawLister, conformance.AbilitySeeder, conformance.AbilityReopener}
}

// WritableSkips are the tests a writable overlay skips, and more: it shows
// no symlinks, special files or permission bits of its own, has no host
// paths, and whites out a base file apart from a concurrent write
// (Capabilities.AtomicRemove=false).
func WritableSkips(more ...string) []string {
	return append([]string{
		"Symlinks/*", "SpecialFiles/*", "ModeBits/*", "FSView/Symlinks", "ReadOnly/*",
		"InvalidPaths/ResolveSymlinks", "InvalidPaths/Readlink", "InvalidPaths/LocalPath",
		"Changes/ChangesRefusedWhenReadOnly", "Changes/ConcurrentRemoveMatchHashAndWrite",
	}, more...)
}

// ReadOnlySkips are the tests an overlay over a read-only upper layer
// skips, and more: every change, and what a writable overlay skips.
func ReadOnlySkips(more ...string) []string {
	return append([]string{
		"Symlinks/*", "SpecialFiles/*", "ModeBits/*", "FSView/Symlinks",
		"InvalidPaths/ResolveSymlinks", "InvalidPaths/Readlink", "InvalidPaths/LocalPath",
		"Atomicity/*", "Preconditions/*", "Reopen/*", "Context/Cancel*Commit*", "Context/CancelledBeforeOpenWrite",
		"MkdirAll/*", "RoundTrip/*", "Names/TooLongComponent",
		"Errors/WriteThroughFile", "Errors/WriteOntoDirectory",
		"Changes/TruthTable/*", "Changes/Remove*", "Changes/Rename*", "Changes/Concurrent*",
	}, more...)
}

// ToolSkips are the tool scenarios an overlay skips, and more: it shows
// no symlinks or special files.
func ToolSkips(more ...string) []string {
	return append([]string{"Symlinks/*", "SpecialFiles/*", "WriteFile/ModeKept"}, more...)
}

// ReadOnlyToolSkips are the tool scenarios an overlay over a read-only
// upper layer skips.
func ReadOnlyToolSkips() []string {
	return ToolSkips("WriteFile/*", "EditFile/*", "ApplyPatch/*", "DeleteFile/*", "MoveFile/*", "CopyFile/*",
		"ChangeTools/ChangeRequests", "ChangeTools/Cancelled", "ChangeTools/Events", "CreateDirectory/*", "Policy/Protected*",
		"Events/*", "ChangeRequests/*")
}

// DescribeChanges renders changes as "kind path" lines for comparison:
// " from OLD" after a rename, "/" after a directory.
func DescribeChanges(cs []overlay.Change) []string {
	var out []string
	for _, c := range cs {
		s := c.Kind.String() + " " + c.Path
		if c.From != "" {
			s += " from " + c.From
		}
		if c.Dir {
			s += "/"
		}
		out = append(out, s)
	}
	return out
}

// BaseFiles are the base of the review tests: name to content.
var BaseFiles = map[string]string{
	"edit.txt": "one\ntwo\nthree\n", "same.txt": "same\n", "gone.txt": "bye\n",
	"old.txt": "moving\n", "olddir/a": "a\n", "keep.txt": "keep\n",
}

// Fill writes files (name: content, a name ending in "/" a directory)
// into b.
func Fill(t *testing.T, b backend.Backend, files map[string]string) {
	t.Helper()
	ctx := t.Context()
	for name, data := range files {
		if strings.HasSuffix(name, "/") {
			if err := backend.MkdirAll(ctx, b, strings.TrimSuffix(name, "/")); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := backend.WriteFile(ctx, b, name, []byte(data), backend.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// AgentRun changes o the way an agent would: an edit, a file written back
// unchanged, a new file in a new directory, a deletion, a rename and a
// directory removed, all over BaseFiles.
func AgentRun(t *testing.T, o *overlay.FS) {
	t.Helper()
	ctx := t.Context()
	for name, data := range map[string]string{
		"edit.txt": "one\ntwo changed\nthree\n", "same.txt": "same\n", "new/file.txt": "new\n",
	} {
		if err := backend.WriteFile(ctx, o, name, []byte(data), backend.WriteOptions{}); err != nil {
			t.Fatalf("write %s: %v", name, err)
		}
	}
	for _, err := range []error{
		backend.Remove(ctx, o, "gone.txt", backend.RemoveOptions{}),
		backend.Rename(ctx, o, "old.txt", "renamed.txt", backend.RenameOptions{}),
		backend.RemoveAll(ctx, o, "olddir", backend.RemoveAllOptions{}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// Content returns what b shows at name, or "<missing>".
func Content(t *testing.T, b backend.Backend, name string) string {
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

// RunCommit runs the commit table on overlays over the layers mk makes
// (empty, the base writable): AgentRun over BaseFiles, then Commit of
// everything, of everything after the base changed meanwhile (conflicts
// per path, the rest lands), and of a subset; it checks what landed, what
// conflicted, the base afterwards and the changes the overlay still holds.
func RunCommit(t *testing.T, mk func(t *testing.T) (base, upper backend.Backend)) {
	for _, tc := range []struct {
		name string
		// meanwhile changes the base behind the overlay's back.
		meanwhile     func(t *testing.T, base backend.Backend)
		paths         []string
		wantLanded    []string
		wantConflicts []string
		// wantBase is the base's content afterwards.
		wantBase map[string]string
		// wantLeft are the changes the overlay still holds.
		wantLeft []string
	}{
		{
			name:       "all",
			wantLanded: []string{"gone.txt", "olddir/a", "olddir", "new", "edit.txt", "renamed.txt", "new/file.txt"},
			wantBase: map[string]string{
				"edit.txt": "one\ntwo changed\nthree\n", "gone.txt": "<missing>", "new/file.txt": "new\n",
				"old.txt": "<missing>", "renamed.txt": "moving\n", "olddir/a": "<missing>", "keep.txt": "keep\n",
			},
		},
		{
			name: "conflicts",
			meanwhile: func(t *testing.T, base backend.Backend) {
				Fill(t, base, map[string]string{"edit.txt": "someone else\n", "gone.txt": "still here\n", "new/file.txt": "theirs\n"})
			},
			wantLanded:    []string{"olddir/a", "olddir", "renamed.txt"},
			wantConflicts: []string{"gone.txt", "edit.txt", "new/file.txt"},
			wantBase: map[string]string{
				"edit.txt": "someone else\n", "gone.txt": "still here\n", "new/file.txt": "theirs\n",
				"old.txt": "<missing>", "renamed.txt": "moving\n", "olddir/a": "<missing>",
			},
			wantLeft: []string{"deleted gone.txt", "modified edit.txt", "created new/file.txt"},
		},
		{
			name:       "subset",
			paths:      []string{"edit.txt", "old.txt"},
			wantLanded: []string{"edit.txt", "renamed.txt"},
			wantBase: map[string]string{
				"edit.txt": "one\ntwo changed\nthree\n", "gone.txt": "bye\n", "new/file.txt": "<missing>",
				"old.txt": "<missing>", "renamed.txt": "moving\n", "olddir/a": "a\n",
			},
			wantLeft: []string{"created new/", "created new/file.txt", "deleted gone.txt", "deleted olddir/", "deleted olddir/a"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			base, upper := mk(t)
			Fill(t, base, BaseFiles)
			o, err := overlay.New(base, upper, overlay.Options{})
			if err != nil {
				t.Fatal(err)
			}
			AgentRun(t, o)
			if tc.meanwhile != nil {
				tc.meanwhile(t, base)
			}
			res, err := o.Commit(ctx, tc.paths...)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(res.Landed, tc.wantLanded) {
				t.Errorf("landed %q, want %q", res.Landed, tc.wantLanded)
			}
			var conflicts []string
			for _, c := range res.Conflicts {
				conflicts = append(conflicts, c.Path)
				if !errors.Is(c.Err, backend.ErrPrecondition) && !errors.Is(c.Err, fs.ErrExist) {
					t.Errorf("conflict %s: %v, want a failed precondition or fs.ErrExist", c.Path, c.Err)
				}
			}
			if !slices.Equal(conflicts, tc.wantConflicts) {
				t.Errorf("conflicts %q, want %q", conflicts, tc.wantConflicts)
			}
			for name, want := range tc.wantBase {
				if got := Content(t, base, name); got != want {
					t.Errorf("base %s = %q, want %q", name, got, want)
				}
			}
			left, err := o.Changes(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got := DescribeChanges(left)
			slices.Sort(got)
			want := slices.Clone(tc.wantLeft)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("changes left %q, want %q", got, want)
			}
			// What the overlay shows is what was landed or kept.
			for name, want := range map[string]string{"renamed.txt": "moving\n", "old.txt": "<missing>"} {
				if got := Content(t, o, name); got != want {
					t.Errorf("overlay %s = %q, want %q", name, got, want)
				}
			}
		})
	}
}
