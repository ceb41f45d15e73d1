package memfs

import (
	"context"
	"io/fs"
	"sync"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance"
)

// harness makes fresh FS values and reaches their storage directly. With
// readOnly it hands out the FS behind a read-only wrapper and fills it
// through the FS itself.
type harness struct {
	readOnly bool

	mu    sync.Mutex
	inner map[backend.Backend]*FS
}

func newHarness(readOnly bool) *harness {
	return &harness{readOnly: readOnly, inner: map[backend.Backend]*FS{}}
}

func (h *harness) MakeBackend(ctx context.Context, t *testing.T) backend.Backend {
	return h.wrap(t, New())
}

// wrap registers f and returns the backend the suite sees over it.
func (h *harness) wrap(t *testing.T, f *FS) backend.Backend {
	var b backend.Backend = f
	if h.readOnly {
		b = backend.ReadOnly(f)
	}
	h.mu.Lock()
	h.inner[b] = f
	h.mu.Unlock()
	t.Cleanup(func() {
		h.mu.Lock()
		delete(h.inner, b)
		h.mu.Unlock()
	})
	return b
}

// fsOf returns the FS beneath b.
func (h *harness) fsOf(t *testing.T, b backend.Backend) *FS {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	f, ok := h.inner[b]
	if !ok {
		t.Fatalf("backend %v was not made by this harness", b)
	}
	return f
}

func (h *harness) Reopen(ctx context.Context, t *testing.T, b backend.Backend) backend.Backend {
	return h.wrap(t, h.fsOf(t, b).Reopen())
}

// ListRaw reports every stored file; an FS keeps nothing else.
func (h *harness) ListRaw(ctx context.Context, t *testing.T, b backend.Backend) []string {
	s := h.fsOf(t, b).s
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for name := range s.files {
		out = append(out, name)
	}
	return out
}

func (h *harness) Chmod(ctx context.Context, t *testing.T, b backend.Backend, name string, perm fs.FileMode) {
	if err := h.fsOf(t, b).Chmod(ctx, name, perm); err != nil {
		t.Fatal(err)
	}
}

func (h *harness) Seed(ctx context.Context, t *testing.T, b backend.Backend, name string, data []byte) {
	if err := backend.WriteFile(ctx, h.fsOf(t, b), name, data, backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (h *harness) SeedDir(ctx context.Context, t *testing.T, b backend.Backend, dir string) {
	if err := h.fsOf(t, b).MkdirAll(ctx, dir); err != nil {
		t.Fatal(err)
	}
}

// abilities are every ability the harness has, so losing one fails the
// run.
func abilities() []conformance.Ability {
	return []conformance.Ability{
		conformance.AbilityRawLister, conformance.AbilityChmoder, conformance.AbilitySeeder, conformance.AbilityReopener,
	}
}

// memSkips are the tests an FS skips, given the ones the run adds: it
// has no symlinks, special files, Walker or host paths, and it is
// writable.
func memSkips(more ...string) []string {
	return append([]string{
		"Symlinks/*", "SpecialFiles/*", "ReadOnly/*", "FSView/Symlinks", "Walk/ListFallbackAgrees",
		"InvalidPaths/ResolveSymlinks", "InvalidPaths/Readlink", "InvalidPaths/LocalPath",
		"Changes/ChangesRefusedWhenReadOnly",
	}, more...)
}

func TestConformance(t *testing.T) {
	conformance.RunWith(t, newHarness(false), conformance.RunOptions{
		ExpectedSkips: memSkips(), RequireAbilities: abilities(),
	})
}

func TestConformanceInDir(t *testing.T) {
	conformance.RunWith(t, newHarness(false), conformance.RunOptions{
		Dir: "work/space", LargeFileSize: 3<<20 + 5,
		ExpectedSkips: memSkips("FSView/Empty"), RequireAbilities: abilities(),
	})
}

// TestConformanceReadOnly runs the read tests on an FS behind a
// read-only wrapper, seeded through the FS: every write test skips.
func TestConformanceReadOnly(t *testing.T) {
	conformance.RunWith(t, newHarness(true), conformance.RunOptions{
		ExpectedSkips: []string{
			"Atomicity/*", "Preconditions/*", "Reopen/*", "Context/Cancel*Commit*", "Context/CancelledBeforeOpenWrite",
			"MkdirAll/*", "RoundTrip/*", "ModeBits/*", "SpecialFiles/*", "Symlinks/*", "Names/TooLongComponent",
			"Errors/WriteThroughFile", "Errors/WriteOntoDirectory", "FSView/Symlinks",
			"Changes/TruthTable/*", "Changes/Remove*", "Changes/Rename*", "Changes/Concurrent*",
		},
		RequireAbilities: abilities(),
	})
}

// toolSkips are the scenarios an FS skips: it has no symlinks or special
// files.
func toolSkips(more ...string) []string {
	return append([]string{"Symlinks/*", "SpecialFiles/*"}, more...)
}

func TestTools(t *testing.T) {
	conformance.RunToolsWith(t, newHarness(false), conformance.ToolsOptions{
		ExpectedSkips: toolSkips("ToolSelection/ReadOnlyBackend"), RequireAbilities: abilities(),
	})
}

func TestToolsReadOnly(t *testing.T) {
	conformance.RunToolsWith(t, newHarness(true), conformance.ToolsOptions{
		ExpectedSkips: toolSkips("WriteFile/*", "EditFile/*", "ApplyPatch/*", "DeleteFile/*", "MoveFile/*", "CopyFile/*",
			"ChangeTools/ChangeRequests", "ChangeTools/Cancelled", "ChangeTools/Events", "CreateDirectory/*", "Policy/Protected*",
			"Events/*", "ChangeRequests/*"),
		RequireAbilities: abilities(),
	})
}
