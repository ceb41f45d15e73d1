package sftpadapter_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance/containers"
	"github.com/fencefs/fencefs/sftpadapter"
	"github.com/pkg/sftp"
)

// establishedSSH counts the server's established SSH connections.
func establishedSSH(t *testing.T, srv *containers.SFTPServer) int {
	t.Helper()
	n, err := srv.Connections(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// testPoolRoots opens two tenants' roots over one Pool: each sees only its
// own files, no link or ".." leads from one into the other, closing one
// leaves the other working, and the server sees one connection for both.
func testPoolRoots(t *testing.T, srv *containers.SFTPServer) {
	ctx := t.Context()
	var roots [2]string
	for i := range roots {
		r, err := srv.NewRoot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		roots[i] = r
	}
	arrange(t, srv, func(c *sftp.Client) error {
		for i, r := range roots {
			if err := putServer(c, r+"/own.txt", []byte("tenant "+strconv.Itoa(i))); err != nil {
				return err
			}
		}
		links := [][2]string{
			{roots[1], "abs"},
			{roots[1] + "/own.txt", "absfile"},
			{"../" + path.Base(roots[1]), "rel"},
			{"../" + path.Base(roots[1]) + "/own.txt", "relfile"},
		}
		for _, l := range links {
			if err := c.Symlink(l[0], roots[0]+"/"+l[1]); err != nil {
				return err
			}
		}
		return nil
	})
	before := establishedSSH(t, srv)

	cfg := srv.Config("")
	var mu sync.Mutex
	ops := map[string]int{}
	cfg.OnRequest = func(op string) {
		mu.Lock()
		ops[op]++
		mu.Unlock()
	}
	pool, err := sftpadapter.NewPool(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close() })
	var fss [2]*sftpadapter.FS
	for i, r := range roots {
		f, err := pool.Open(ctx, r)
		if err != nil {
			t.Fatalf("Open(%s): %v", r, err)
		}
		fss[i] = f
	}
	for i, f := range fss {
		if got, want := readAll(t, ctx, f, "own.txt"), "tenant "+strconv.Itoa(i); got != want {
			t.Errorf("tenant %d reads %q, want %q", i, got, want)
		}
	}
	if got := pool.Dials(); got != 1 {
		t.Errorf("Dials() = %d, want 1", got)
	}
	if got := establishedSSH(t, srv); got != before+1 {
		t.Errorf("the server has %d SSH connections, want %d (one more than before the pool)", got, before+1)
	}

	for _, name := range []string{"abs", "absfile", "rel", "relfile", "abs/own.txt", "rel/own.txt"} {
		_, err := fss[0].ResolveSymlinks(ctx, name)
		wantErr(t, "ResolveSymlinks("+name+")", err, backend.ErrOutside)
	}
	for _, name := range []string{"abs/own.txt", "rel/own.txt"} {
		_, err := fss[0].OpenRead(ctx, name)
		wantErr(t, "OpenRead("+name+")", err, backend.ErrSymlink)
		_, err = fss[0].OpenWrite(ctx, name, backend.WriteOptions{})
		wantErr(t, "OpenWrite("+name+")", err, backend.ErrSymlink)
	}
	for _, name := range []string{"../" + path.Base(roots[1]) + "/own.txt", "..", "/" + strings.TrimPrefix(roots[1], "/") + "/own.txt"} {
		if _, err := fss[0].OpenRead(ctx, name); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("OpenRead(%q) = %v, want fs.ErrInvalid", name, err)
		}
	}
	entries, err := fss[0].List(ctx, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Type.IsDir() {
			t.Errorf("tenant 0 lists a directory %q: the links must stay links", e.Name)
		}
	}

	// A call of tenant 0 whose context ends closes tenant 0's channel
	// only: tenant 1 goes on over the same connection, and tenant 0's
	// next call opens a channel on it again.
	arrange(t, srv, func(c *sftp.Client) error {
		return putServer(c, roots[0]+"/big", bytes.Repeat([]byte("x"), sftpLargeFileSize))
	})
	cctx, cancel := context.WithCancel(ctx)
	r, err := fss[0].OpenRead(cctx, "big")
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.(io.WriterTo).WriteTo(cancelOnWrite{cancel})
	r.Close()
	if !errors.Is(err, context.Canceled) {
		t.Errorf("a read cancelled in flight: %v, want context.Canceled", err)
	}
	if got := readAll(t, ctx, fss[1], "own.txt"); got != "tenant 1" {
		t.Errorf("after tenant 0's cancelled call, tenant 1 reads %q", got)
	}
	if got := readAll(t, ctx, fss[0], "own.txt"); got != "tenant 0" {
		t.Errorf("after its cancelled call, tenant 0 reads %q", got)
	}
	if got := pool.Dials(); got != 1 {
		t.Errorf("Dials() = %d after a cancelled call, want 1", got)
	}

	if err := fss[0].Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := fss[0].Stat(ctx, "own.txt"); err == nil {
		t.Error("a closed backend still answers")
	}
	if got := readAll(t, ctx, fss[1], "own.txt"); got != "tenant 1" {
		t.Errorf("after the other closed, tenant 1 reads %q", got)
	}
	w, err := fss[1].OpenWrite(ctx, "new.txt", backend.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("still here")); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, ctx, fss[1], "new.txt"); got != "still here" {
		t.Errorf("new.txt = %q", got)
	}
	if got := pool.Dials(); got != 1 {
		t.Errorf("Dials() = %d after closing one backend, want 1", got)
	}
	mu.Lock()
	for _, op := range []string{"REALPATH", "LSTAT", "OPEN", "READ", "WRITE", "CLOSE", "READDIR", "EXTENDED"} {
		if ops[op] == 0 {
			t.Errorf("OnRequest saw no %s request (saw %v)", op, ops)
		}
	}
	mu.Unlock()
	fss[1].Close()
	pool.Close()
	if _, err := pool.Open(ctx, roots[1]); err == nil {
		t.Error("Open on a closed Pool succeeded")
	}
}

// cancelOnWrite takes what it is given and cancels the call as soon as
// the first bytes arrive.
type cancelOnWrite struct{ cancel context.CancelFunc }

func (w cancelOnWrite) Write(p []byte) (int, error) {
	w.cancel()
	return len(p), nil
}
