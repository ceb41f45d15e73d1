package tools

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/local"
	"github.com/fencefs/fencefs/policy"
)

// tracingFS is a local backend that counts the resolutions it is asked
// for.
type tracingFS struct {
	*local.FS
	traced atomic.Int64
}

func (f *tracingFS) TraceSymlinks(ctx context.Context, name string, visit func(string) error) (string, error) {
	f.traced.Add(1)
	return f.FS.TraceSymlinks(ctx, name, visit)
}

// NoLinksBackend: tracingFS keeps local.FS's OpenRead, so it may make
// local's promise its own.
func (f *tracingFS) NoLinksBackend() backend.Backend { return f }

// openingFS wraps a local.FS with an OpenRead of its own and says nothing
// of the promise its embedded FS makes.
type openingFS struct {
	*local.FS
	opened atomic.Int64
}

func (f *openingFS) OpenRead(ctx context.Context, name string) (backend.FileReader, error) {
	f.opened.Add(1)
	return f.FS.OpenRead(ctx, name)
}

// TestReadFileKeepsWrappersOpenRead: a backend embedding local.FS with an
// OpenRead of its own is read through that OpenRead, not through the
// one-step open it inherits (a wrapper that counts, filters or injects
// faults is never passed by).
func TestReadFileKeepsWrappersOpenRead(t *testing.T) {
	fx := localFixture(t)
	fx.put(t, "d/f.txt", "x\n")
	ob := &openingFS{FS: fx.b.(*local.FS)}
	s := newSet(t, ob, Options{})
	ok(t, s, "read_file", "path", "d/f.txt")
	if n := ob.opened.Load(); n != 1 {
		t.Errorf("the wrapper's OpenRead ran %d times, want 1", n)
	}
}

// TestReadFileOpensPlainPathsOnce: read_file opens a path without links
// in one step, with no resolution before, and gives the same texts as
// when it resolves; a link on the way, a denied target behind a link and
// a Permission hook (asked before anything opens) take the resolution.
func TestReadFileOpensPlainPathsOnce(t *testing.T) {
	fx := localFixture(t)
	fx.put(t, "d/f.txt", "x\n")
	fx.put(t, "private/p.txt", "secret\n")
	for name, target := range map[string]string{"dl": "d", "pl": "private/p.txt"} {
		if err := os.Symlink(target, filepath.Join(fx.dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	tb := &tracingFS{FS: fx.b.(*local.FS)}
	s := newSet(t, tb, Options{Denied: []string{"private"}})
	want := "[d/f.txt | 1 line | hash:" + h12("x\n") + "]\n     1\tx\n"
	wantEqual(t, ok(t, s, "read_file", "path", "d/f.txt"), want)
	if n := tb.traced.Load(); n != 0 {
		t.Errorf("a path without links was resolved %d times before its open", n)
	}
	wantEqual(t, ok(t, s, "read_file", "path", "dl/f.txt"), "[dl/f.txt | 1 line | hash:"+h12("x\n")+"]\n     1\tx\n")
	if tb.traced.Load() == 0 {
		t.Error("a path through a link was not resolved")
	}
	wantEqual(t, retry(t, s, "read_file", "path", "pl"), "Path 'pl' is denied by pattern 'private'.")
	wantEqual(t, retry(t, s, "read_file", "path", "private/p.txt"), "Path 'private/p.txt' is denied by pattern 'private'.")
	wantEqual(t, retry(t, s, "read_file", "path", "missing.txt"), "File not found: missing.txt")

	var asked atomic.Int64
	hooked := newSet(t, tb, Options{Permission: policy.CheckerFunc(func(context.Context, policy.Request) error {
		asked.Add(1)
		return nil
	})})
	before := tb.traced.Load()
	wantEqual(t, ok(t, hooked, "read_file", "path", "d/f.txt"), want)
	if asked.Load() != 1 || tb.traced.Load() == before {
		t.Errorf("with a Permission hook: asked %d times, resolved %d times", asked.Load(), tb.traced.Load()-before)
	}
}
