package conformance_test

import (
	"context"
	"io/fs"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance"
	"github.com/fencefs/fencefs/memfs"
)

// plainFS is memfs without its Renamer and Copier, both optional: a
// backend that has neither relies on backend.Rename declining and on
// backend.Copy's streamed fallback, and must pass the suite all the same.
type plainFS struct {
	backend.Backend
	backend.Stater
	backend.Writer
	backend.DirMaker
	backend.Remover
	backend.CapabilityReporter
	mem *memfs.FS
}

// Capabilities are memfs's, less the atomic rename it can no longer offer.
func (p *plainFS) Capabilities() backend.Capabilities {
	c := p.mem.Capabilities()
	c.AtomicRename = false
	return c
}

func newPlainFS(mem *memfs.FS) *plainFS {
	return &plainFS{Backend: mem, Stater: mem, Writer: mem, DirMaker: mem, Remover: mem, CapabilityReporter: mem, mem: mem}
}

// plainHarness makes plainFS values and arranges and inspects their
// storage through the memfs beneath.
type plainHarness struct{}

func (plainHarness) MakeBackend(ctx context.Context, t *testing.T) backend.Backend {
	return newPlainFS(memfs.New())
}

func (plainHarness) Reopen(ctx context.Context, t *testing.T, b backend.Backend) backend.Backend {
	return newPlainFS(b.(*plainFS).mem.Reopen())
}

func (plainHarness) ListRaw(ctx context.Context, t *testing.T, b backend.Backend) []string {
	var out []string
	err := backend.Walk(ctx, b.(*plainFS).mem, ".", func(name string, e backend.DirEntry) error {
		if !e.IsDir() {
			out = append(out, name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (plainHarness) Chmod(ctx context.Context, t *testing.T, b backend.Backend, name string, perm fs.FileMode) {
	if err := b.(*plainFS).mem.Chmod(ctx, name, perm); err != nil {
		t.Fatal(err)
	}
}

// TestFallbacks runs the suite on a backend without Renamer and Copier.
// Copies stream through backend.Copy's fallback and pass the whole truth
// table; what it skips beyond memfs's own skips is what needs a Renamer,
// each named.
func TestFallbacks(t *testing.T) {
	if _, ok := backend.Backend(newPlainFS(memfs.New())).(backend.Renamer); ok {
		t.Fatal("plainFS implements backend.Renamer")
	}
	if _, ok := backend.Backend(newPlainFS(memfs.New())).(backend.Copier); ok {
		t.Fatal("plainFS implements backend.Copier")
	}
	conformance.RunWith(t, plainHarness{}, conformance.RunOptions{
		LargeFileSize: 1 << 20,
		ExpectedSkips: []string{
			// memfs's own: no symlinks, special files, Walker or host
			// paths, and writable.
			"Symlinks/*", "SpecialFiles/*", "ReadOnly/*", "FSView/Symlinks", "Walk/ListFallbackAgrees",
			"InvalidPaths/ResolveSymlinks", "InvalidPaths/Readlink", "InvalidPaths/LocalPath",
			"Changes/ChangesRefusedWhenReadOnly",
			// No Renamer.
			"Changes/TruthTable/rename/*", "Changes/TruthTable/rename-source/*", "Changes/Rename*",
			"Changes/ConcurrentRenameCreateOnlyOneWinner",
		},
		RequireAbilities: []conformance.Ability{conformance.AbilityReopener, conformance.AbilityRawLister, conformance.AbilityChmoder},
	})
}

// TestToolsFallbacks runs the tools suite on the same backend. The change
// tools (apply_patch, copy_file, delete_file, move_file) need both a
// Remover and a Renamer, so their scenarios skip, by name; every read and
// write scenario runs.
func TestToolsFallbacks(t *testing.T) {
	conformance.RunToolsWith(t, plainHarness{}, conformance.ToolsOptions{
		ExpectedSkips: []string{
			"Symlinks/*", "SpecialFiles/*", "ToolSelection/ReadOnlyBackend",
			"ApplyPatch/*", "ChangeTools/*", "CopyFile/*", "DeleteFile/*", "MoveFile/*",
		},
	})
}
