package conformance_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/memfs"
)

// brokenFS is the reference backend memfs with one deliberate defect of
// the kind real adapters have, so TestSuiteCatchesBugs can check that the
// suite notices it. Every method the defect does not concern is memfs's.
type brokenFS struct {
	*memfs.FS
	bug string

	mu        sync.Mutex
	leftovers []string // what the "temp-left" bug leaves in raw storage
}

// clean applies the "lax-paths" defect: a careless backend cleans a path
// it should refuse.
func (b *brokenFS) clean(name string) string {
	if b.bug != "lax-paths" {
		return name
	}
	if name = strings.TrimPrefix(path.Clean("/"+name), "/"); name == "" {
		return "."
	}
	return name
}

// Capabilities are memfs's, with NonAtomicReplace when the defect is
// declared ("replace-gap-declared"), as an honest WebDAV adapter would.
func (b *brokenFS) Capabilities() backend.Capabilities {
	c := b.FS.Capabilities()
	c.NonAtomicReplace = b.bug == "replace-gap-declared"
	return c
}

func (b *brokenFS) OpenRead(ctx context.Context, name string) (backend.FileReader, error) {
	if b.bug == "ignore-cancel-read" {
		ctx = context.WithoutCancel(ctx)
	}
	r, err := b.FS.OpenRead(ctx, b.clean(name))
	if b.bug == "bare-errno" && errors.Is(err, fs.ErrNotExist) {
		// An adapter that passes the host's errno through unmapped.
		err = &fs.PathError{Op: "open", Path: name, Err: syscall.ENOENT}
	}
	return r, err
}

func (b *brokenFS) List(ctx context.Context, dir string) ([]backend.DirEntry, error) {
	entries, err := b.FS.List(ctx, b.clean(dir))
	switch {
	case b.bug == "list-file-notexist" && errors.Is(err, backend.ErrNotDir):
		return nil, &fs.PathError{Op: "list", Path: dir, Err: fs.ErrNotExist}
	case b.bug == "list-dup":
		for _, e := range entries {
			if e.IsDir() {
				entries = append(entries, e)
			}
		}
	}
	return entries, err
}

func (b *brokenFS) OpenWrite(ctx context.Context, name string, opts backend.WriteOptions) (backend.FileWriter, error) {
	name = b.clean(name)
	var preErr error
	switch b.bug {
	case "ignore-cancel":
		ctx = context.WithoutCancel(ctx)
	case "ignore-hash":
		opts.Precondition.MatchHash = ""
	case "hash-at-open":
		if h := opts.Precondition.MatchHash; h != "" {
			if data, err := backend.ReadFile(ctx, b.FS, name); err != nil || hashOf(data) != h {
				preErr = &fs.PathError{Op: "write", Path: name, Err: backend.ErrPrecondition}
			}
			opts.Precondition.MatchHash = ""
		}
	}
	_, statErr := b.FS.Stat(ctx, name)
	fw, err := b.FS.OpenWrite(ctx, name, opts)
	if err != nil {
		return nil, err
	}
	return &brokenWriter{FileWriter: fw, b: b, ctx: ctx, name: name, pre: opts.Precondition, existed: statErr == nil, preErr: preErr}, nil
}

// brokenWriter carries the defects of a pending write.
type brokenWriter struct {
	backend.FileWriter
	b       *brokenFS
	ctx     context.Context
	name    string
	pre     backend.Precondition
	existed bool
	preErr  error // the precondition as judged at OpenWrite ("hash-at-open")
	done    bool
}

func (w *brokenWriter) Write(p []byte) (int, error) {
	if w.b.bug == "write-through" {
		// Like a file opened for appending in place: readers see the old
		// content with the new bytes added.
		old, _ := backend.ReadFile(w.ctx, w.b.FS, w.name)
		if err := backend.WriteFile(w.ctx, w.b.FS, w.name, append(old, p...), backend.WriteOptions{}); err != nil {
			return 0, err
		}
	}
	return w.FileWriter.Write(p)
}

func (w *brokenWriter) Commit() error {
	w.done = true
	if w.preErr != nil {
		w.FileWriter.Close()
		return w.preErr
	}
	if (w.b.bug == "replace-gap" || w.b.bug == "replace-gap-declared") && w.existed && w.pre.IsZero() {
		return w.replaceWithGap()
	}
	if err := w.FileWriter.Commit(); err != nil {
		return err
	}
	switch w.b.bug {
	case "temp-left":
		w.b.mu.Lock()
		w.b.leftovers = append(w.b.leftovers, w.name+".tmp")
		w.b.mu.Unlock()
	case "mode-reset":
		if w.existed {
			return w.b.FS.Chmod(w.ctx, w.name, 0o644)
		}
	}
	return nil
}

// replaceWithGap commits like a server whose replace deletes the old file,
// then moves the new one in (WebDAV's MOVE), keeping its mode.
func (w *brokenWriter) replaceWithGap() error {
	old, err := w.b.FS.Stat(w.ctx, w.name)
	if err != nil {
		return w.FileWriter.Commit()
	}
	if err := w.b.FS.Remove(w.ctx, w.name, backend.RemoveOptions{}); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	// A backend that replaces this way spends a request between the
	// delete and the write; memfs spends nanoseconds, which readers on a
	// busy machine could all miss in a run.
	time.Sleep(200 * time.Microsecond)
	if err := w.FileWriter.Commit(); err != nil {
		return err
	}
	// Another writer's replacement may have removed it again meanwhile.
	if err := w.b.FS.Chmod(w.ctx, w.name, old.Mode.Perm()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func (w *brokenWriter) Close() error {
	if w.b.bug == "close-commits" && !w.done {
		return w.Commit()
	}
	return w.FileWriter.Close()
}

// brokenHarness makes brokenFS values and inspects them through the
// memfs beneath, which keeps nothing hidden.
type brokenHarness struct{ bug string }

func (h brokenHarness) MakeBackend(ctx context.Context, t *testing.T) backend.Backend {
	return &brokenFS{FS: memfs.New(), bug: h.bug}
}

func (h brokenHarness) Reopen(ctx context.Context, t *testing.T, b backend.Backend) backend.Backend {
	fsys := b.(*brokenFS).FS.Reopen()
	if h.bug == "reopen-fresh" {
		fsys = memfs.New()
	}
	return &brokenFS{FS: fsys, bug: h.bug}
}

func (brokenHarness) ListRaw(ctx context.Context, t *testing.T, b backend.Backend) []string {
	bf := b.(*brokenFS)
	var out []string
	err := backend.Walk(ctx, bf.FS, ".", func(name string, e backend.DirEntry) error {
		if !e.IsDir() {
			out = append(out, name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	bf.mu.Lock()
	defer bf.mu.Unlock()
	return append(out, slices.Clone(bf.leftovers)...)
}

func (brokenHarness) Chmod(ctx context.Context, t *testing.T, b backend.Backend, name string, perm fs.FileMode) {
	if err := b.(*brokenFS).FS.Chmod(ctx, name, perm); err != nil {
		t.Fatal(err)
	}
}

func hashOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
