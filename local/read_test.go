//go:build linux

package local

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fencefs/fencefs/backend"
)

// readTree is the fixture of the read and stat tests.
func readTree(outside string) tree {
	return tree{
		"a.txt":            "hello",
		"empty.txt":        "",
		"dir/b.txt":        "bee",
		"dir/sub/":         "",
		"link.txt":         "->a.txt",
		"linkdir":          "->dir",
		"dangling":         "->missing",
		"escape":           "->" + outside,
		"fifo":             "|fifo",
		"sock":             "|sock",
		long(230):          "long",
		"dir/" + long(255): "longest",
	}
}

// long returns a name of n bytes.
func long(n int) string { return strings.Repeat("n", n) }

func TestOpenRead(t *testing.T) {
	forEachOpener(t, func(t *testing.T, o opener) {
		outside := t.TempDir()
		makeTree(t, outside, tree{"secret": "canary"})
		f, root := newTestFS(t, o)
		makeTree(t, root, readTree(outside))
		tests := []struct {
			name, want string
			err        error
		}{
			{"a.txt", "hello", nil},
			{"empty.txt", "", nil},
			{"dir/b.txt", "bee", nil},
			{long(230), "long", nil},
			{"dir/" + long(255), "longest", nil},
			{long(256), "", backend.ErrNameTooLong},
			{".", "", backend.ErrIsDir},
			{"dir", "", backend.ErrIsDir},
			{"missing", "", fs.ErrNotExist},
			{"dir/missing", "", fs.ErrNotExist},
			{"a.txt/x", "", backend.ErrNotDir},
			{"link.txt", "", backend.ErrNotRegular},
			{"dangling", "", backend.ErrNotRegular},
			{"escape", "", backend.ErrNotRegular},
			{"linkdir/b.txt", "", backend.ErrSymlink},
			{"escape/secret", "", backend.ErrSymlink},
			{"fifo", "", backend.ErrNotRegular},
			{"sock", "", backend.ErrNotRegular},
		}
		for _, tt := range tests {
			r, err := f.OpenRead(context.Background(), tt.name)
			wantErr(t, err, tt.err, tt.name, root)
			if err != nil {
				continue
			}
			got, err := io.ReadAll(r)
			r.Close()
			if err != nil || string(got) != tt.want {
				t.Errorf("%s: read %q, %v; want %q", tt.name, got, err, tt.want)
			}
		}
	})
}

// TestFIFONeverBlocks opens and stats a FIFO no process writes to; a
// blocking open would hang, so the calls run under a watchdog.
func TestFIFONeverBlocks(t *testing.T) {
	forEachOpener(t, func(t *testing.T, o opener) {
		f, root := newTestFS(t, o)
		if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o666); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			ctx := context.Background()
			_, err := f.OpenRead(ctx, "fifo")
			if _, serr := f.Stat(ctx, "fifo"); serr != nil {
				err = serr
			}
			if _, lerr := f.List(ctx, "."); lerr != nil {
				err = lerr
			}
			_, werr := f.OpenWrite(ctx, "fifo", backend.WriteOptions{})
			if werr == nil {
				t.Error("OpenWrite over a FIFO succeeded")
			}
			done <- err
		}()
		select {
		case err := <-done:
			wantErr(t, err, backend.ErrNotRegular, "fifo", root)
		case <-time.After(10 * time.Second):
			t.Fatal("a FIFO blocked the backend")
		}
	})
}

func TestStat(t *testing.T) {
	forEachOpener(t, func(t *testing.T, o opener) {
		outside := t.TempDir()
		f, root := newTestFS(t, o)
		makeTree(t, root, readTree(outside))
		if err := os.Chmod(filepath.Join(root, "a.txt"), 0o640); err != nil {
			t.Fatal(err)
		}
		mtime := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
		if err := os.Chtimes(filepath.Join(root, "a.txt"), mtime, mtime); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name     string
			wantName string
			mode     fs.FileMode // type bits, plus permissions when not 0
			size     int64
			err      error
		}{
			{".", ".", fs.ModeDir, hostSizeOf(t, root, "."), nil},
			{"a.txt", "a.txt", 0o640, 5, nil},
			{"dir", "dir", fs.ModeDir, hostSizeOf(t, root, "dir"), nil},
			{"dir/sub", "sub", fs.ModeDir, hostSizeOf(t, root, "dir/sub"), nil},
			{"link.txt", "link.txt", fs.ModeSymlink, 5, nil},
			{"escape", "escape", fs.ModeSymlink, int64(len(outside)), nil},
			{"dangling", "dangling", fs.ModeSymlink, 7, nil},
			{"fifo", "fifo", fs.ModeNamedPipe, -1, nil},
			{"sock", "sock", fs.ModeSocket, -1, nil},
			{long(230), long(230), 0, 4, nil},
			{"missing", "", 0, 0, fs.ErrNotExist},
			{"linkdir/b.txt", "", 0, 0, backend.ErrSymlink},
			{"a.txt/x", "", 0, 0, fs.ErrNotExist},
			{"a.txt/x/y", "", 0, 0, backend.ErrNotDir},
			{long(256), "", 0, 0, backend.ErrNameTooLong},
		}
		for _, tt := range tests {
			fi, err := f.Stat(context.Background(), tt.name)
			wantErr(t, err, tt.err, tt.name, root)
			if err != nil {
				continue
			}
			if fi.Name != tt.wantName || fi.Size != tt.size || fi.Mode.Type() != tt.mode.Type() {
				t.Errorf("Stat(%q) = %+v, want name %q size %d type %v", tt.name, fi, tt.wantName, tt.size, tt.mode.Type())
			}
			if perm := tt.mode.Perm(); perm != 0 && fi.Mode.Perm() != perm {
				t.Errorf("Stat(%q) mode %v, want permissions %v", tt.name, fi.Mode, perm)
			}
			if fi.ModTime.IsZero() {
				t.Errorf("Stat(%q) has no mod time", tt.name)
			}
		}
		fi, _ := f.Stat(context.Background(), "a.txt")
		if !fi.ModTime.Equal(mtime) {
			t.Errorf("mod time %v, want %v", fi.ModTime, mtime)
		}
	})
}

// TestStatMatchesLstat compares Stat with os.Lstat on every entry of the
// fixture.
func TestStatMatchesLstat(t *testing.T) {
	forEachOpener(t, func(t *testing.T, o opener) {
		f, root := newTestFS(t, o)
		makeTree(t, root, readTree(t.TempDir()))
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == root {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			want, err := os.Lstat(p)
			if err != nil {
				return err
			}
			got, err := f.Stat(context.Background(), filepath.ToSlash(rel))
			if err != nil {
				return err
			}
			if got.Mode != want.Mode() || !got.ModTime.Equal(want.ModTime()) {
				t.Errorf("%s: Stat %v %v, Lstat %v %v", rel, got.Mode, got.ModTime, want.Mode(), want.ModTime())
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

// hostSizeOf returns the host's lstat size of root/name.
func hostSizeOf(t *testing.T, root, name string) int64 {
	t.Helper()
	fi, err := os.Lstat(filepath.Join(root, name))
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
