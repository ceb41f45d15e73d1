package azureadapter_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/fencefs/fencefs/azureadapter"
	"github.com/fencefs/fencefs/backend"
)

// TestObjectAndPrefix pins the meaning of a blob that is also a prefix:
// the directory wins everywhere, and the blob cannot be reached (never
// aliased). Non-canonical names are skipped, never shown as another path.
func TestObjectAndPrefix(t *testing.T) {
	srv := azurite.Get(t)
	ctx := t.Context()
	cont := newContainer(t, srv)
	cc := serviceClient(t, srv, nil).NewContainerClient(cont)
	for _, k := range []string{"a", "a/b", "a-x", "a.txt", "d", "d/", "e", "x//y", "x/./z", "x/../w", "x/ok", "/lead"} {
		putBlob(ctx, t, cc, k, k)
	}
	f := open(t, config(srv, cont, ""))
	if got, want := listNames(t, f, "."), []string{"a-x", "a.txt", "a/", "d/", "e", "x/"}; !slices.Equal(got, want) {
		t.Errorf("List(.) = %q, want %q", got, want)
	}
	if got, want := listNames(t, f, "x"), []string{"ok"}; !slices.Equal(got, want) {
		t.Errorf("List(x) = %q, want %q", got, want)
	}
	for _, name := range []string{"a", "d"} {
		fi, err := f.Stat(ctx, name)
		if err != nil || !fi.IsDir() {
			t.Errorf("Stat(%q) = %+v, %v; want a directory", name, fi, err)
		}
		r, err := f.OpenRead(ctx, name)
		if err == nil {
			r.Close()
		}
		if !errors.Is(err, backend.ErrIsDir) {
			t.Errorf("OpenRead(%q) error = %v, want backend.ErrIsDir", name, err)
		}
		if err := backend.WriteFile(ctx, f, name, []byte("over"), backend.WriteOptions{}); !errors.Is(err, backend.ErrIsDir) {
			t.Errorf("WriteFile(%q) error = %v, want backend.ErrIsDir", name, err)
		}
	}
	if got, err := backend.ReadFile(ctx, f, "a/b"); err != nil || string(got) != "a/b" {
		t.Errorf("ReadFile(a/b) = %q, %v", got, err)
	}
	if got, want := walkNames(t, f, "."), []string{"a-x", "a.txt", "a/", "a/b", "d/", "e", "x/", "x/ok"}; !slices.Equal(got, want) {
		t.Errorf("Walk(.) = %q, want %q", got, want)
	}
	if _, err := f.Stat(ctx, "lead"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat(lead) error = %v, want fs.ErrNotExist (the blob is /lead)", err)
	}
}

// TestAbandonedBlocks checks what an abandoned streamed write leaves: its
// blocks were staged (the service holds them, uncommitted), yet no
// listing, read or Stat shows anything but the old blob, and the next
// write commits its own blocks only.
func TestAbandonedBlocks(t *testing.T) {
	srv := azurite.Get(t)
	ctx := t.Context()
	cont := newContainer(t, srv)
	cc := serviceClient(t, srv, nil).NewContainerClient(cont)
	f := open(t, config(srv, cont, "p"))
	mustWrite(t, f, "target", "old")
	for _, name := range []string{"target", "fresh"} {
		w, err := f.OpenWrite(ctx, name, backend.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(pattern(2*testBlockSize + 10)); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if n := uncommittedBlocks(t, cc, "p/"+name); n == 0 {
			t.Errorf("%s: no uncommitted block after the abandoned write; the test proves nothing", name)
		}
	}
	wantOld(t, f, cc, "p/")
	if _, err := f.Stat(ctx, "fresh"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat(fresh) error = %v, want fs.ErrNotExist", err)
	}
	if got := listNames(t, f, "."); !slices.Equal(got, []string{"target"}) {
		t.Errorf("List(.) = %q, want [target]", got)
	}
	big := pattern(3*testBlockSize + 7)
	if err := backend.WriteFile(ctx, f, "target", big, backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, err := backend.ReadFile(ctx, f, "target"); err != nil || !bytes.Equal(got, big) {
		t.Errorf("ReadFile(target) after a later write: %d bytes, %v; want the %d written", len(got), err, len(big))
	}
}

// TestCompareAndSwap races writers that each read the blob's version and
// write with MatchVersion, as edit tools do: with streamed (staged) and
// single-request writes alike, every successful write saw the content it
// replaced, so no update is lost.
func TestCompareAndSwap(t *testing.T) {
	srv := azurite.Get(t)
	ctx := t.Context()
	f := open(t, config(srv, newContainer(t, srv), ""))
	for _, size := range []int{1, testBlockSize + 1} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			name := fmt.Sprintf("counter-%d", size)
			mustWrite(t, f, name, "0")
			const writers, rounds = 4, 5
			var (
				wg   sync.WaitGroup
				wins atomic.Int64
			)
			for range writers {
				wg.Go(func() {
					for range rounds {
						fi, err := f.Stat(ctx, name)
						if err != nil {
							t.Error(err)
							return
						}
						data, err := backend.ReadFile(ctx, f, name)
						if err != nil {
							t.Error(err)
							return
						}
						var n int
						fmt.Sscanf(string(data[:min(len(data), 8)]), "%d", &n)
						next := append([]byte(fmt.Sprintf("%-8d", n+1)), pattern(size)...)
						err = backend.WriteFile(ctx, f, name, next, backend.WriteOptions{Precondition: backend.Precondition{MatchVersion: fi.Version}})
						switch {
						case err == nil:
							wins.Add(1)
						case !errors.Is(err, backend.ErrPrecondition):
							t.Errorf("write: %v, want nil or backend.ErrPrecondition", err)
						}
					}
				})
			}
			wg.Wait()
			data, err := backend.ReadFile(ctx, f, name)
			if err != nil {
				t.Fatal(err)
			}
			var n int
			fmt.Sscanf(string(data[:min(len(data), 8)]), "%d", &n)
			if int64(n) != wins.Load() || n == 0 {
				t.Errorf("counter = %d after %d successful compare-and-swap writes", n, wins.Load())
			}
		})
	}
}

// TestListAndWalkRequests checks the listing budget: one request per
// page of entries, whatever the depth. The page is lowered from the
// service's 5,000 to 500 so that 1,200 blobs span pages (Azurite stores
// about a hundred blobs a second); with 5,000, 5,500 blobs list and walk
// in 2 requests each.
func TestListAndWalkRequests(t *testing.T) {
	srv := azurite.Get(t)
	ctx := t.Context()
	cont := newContainer(t, srv)
	cc := serviceClient(t, srv, nil).NewContainerClient(cont)
	var keys []string
	for i := range 1100 {
		keys = append(keys, fmt.Sprintf("p/big/f%04d", i))
	}
	for d := range 5 {
		for i := range 20 {
			keys = append(keys, fmt.Sprintf("p/d%d/sub/f%03d", d, i))
		}
	}
	work := make(chan string)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for k := range work {
				putBlob(ctx, t, cc, k, k)
			}
		})
	}
	for _, k := range keys {
		work <- k
	}
	close(work)
	wg.Wait()
	f, c := countedBackend(t, srv, cont, "p", func(cfg *azureadapter.Config) { cfg.Options.ListPageSize = 500 })
	for _, tt := range []struct {
		dir            string
		entries        int
		wantRequests   int64
		wantWalkFiles  int
		wantWalkRounds int64
	}{
		{"big", 1100, 3, 1100, 3},
		{"d0", 1, 1, 20, 1},
		{".", 6, 1, 1200, 3},
	} {
		c.reset()
		entries, err := f.List(ctx, tt.dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != tt.entries || c.all.Load() != tt.wantRequests {
			t.Errorf("List(%q): %d entries in %d requests, want %d in %d", tt.dir, len(entries), c.all.Load(), tt.entries, tt.wantRequests)
		}
		c.reset()
		files := 0
		err = f.Walk(ctx, tt.dir, func(name string, e backend.DirEntry) error {
			if !e.IsDir() {
				files++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if files != tt.wantWalkFiles || c.all.Load() != tt.wantWalkRounds {
			t.Errorf("Walk(%q): %d files in %d requests, want %d in %d", tt.dir, files, c.all.Load(), tt.wantWalkFiles, tt.wantWalkRounds)
		}
		t.Logf("%s: List %d entries, Walk %d files in %d requests", tt.dir, len(entries), files, c.all.Load())
	}
}

// TestCopyIsServerSide checks that Copy sends the bytes through no
// client: one Copy Blob request, which the emulator completes at once,
// with the target's precondition on it.
func TestCopyIsServerSide(t *testing.T) {
	srv := azurite.Get(t)
	ctx := t.Context()
	cont := newContainer(t, srv)
	f, c := countedBackend(t, srv, cont, "")
	big := pattern(3*testBlockSize + 5)
	if err := backend.WriteFile(ctx, f, "src", big, backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	c.reset()
	if err := f.Copy(ctx, "src", "dst", backend.CopyOptions{Precondition: backend.Precondition{CreateOnly: true}}); err != nil {
		t.Fatal(err)
	}
	if c.gets.Load() != 0 {
		t.Errorf("Copy downloaded %d times", c.gets.Load())
	}
	if got, err := backend.ReadFile(ctx, f, "dst"); err != nil || !bytes.Equal(got, big) {
		t.Errorf("ReadFile(dst) = %d bytes, %v", len(got), err)
	}
	err := f.Copy(ctx, "src", "dst", backend.CopyOptions{Precondition: backend.Precondition{CreateOnly: true}})
	if !errors.Is(err, fs.ErrExist) {
		t.Errorf("a second CreateOnly Copy: error = %v, want fs.ErrExist", err)
	}
}
