package gcsadapter_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/storage"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance/containers"
	"github.com/fencefs/fencefs/gcsadapter"
)

// TestCompareAndSwap races writers holding the same version or hash,
// through one backend value and through one value each (two servers over
// the bucket): exactly one commits per round, on the one-request and the
// resumable paths. The emulator honours the generation conditions of
// uploads, which these races rest on.
func TestCompareAndSwap(t *testing.T) {
	srv := gcssrv.Get(t)
	ctx := t.Context()
	bucket := srv.NewBucket(ctx, t)
	tests := []struct {
		name     string
		writers  int
		rounds   int
		size     int
		separate bool // one backend value per writer
		pre      func(fi backend.FileInfo, content []byte) backend.Precondition
	}{
		{"MatchVersion", 8, 4, 100, false, func(fi backend.FileInfo, _ []byte) backend.Precondition {
			return backend.Precondition{MatchVersion: fi.Version}
		}},
		{"MatchHash", 8, 4, 100, false, func(_ backend.FileInfo, content []byte) backend.Precondition {
			return backend.Precondition{MatchHash: hashOf(string(content))}
		}},
		{"MatchHashAcrossValues", 6, 3, 100, true, func(_ backend.FileInfo, content []byte) backend.Precondition {
			return backend.Precondition{MatchHash: hashOf(string(content))}
		}},
		{"MatchVersionResumable", 3, 2, 2*gcsadapter.MinChunkSize + 10, false, func(fi backend.FileInfo, _ []byte) backend.Precondition {
			return backend.Precondition{MatchVersion: fi.Version}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := open(t, config(srv, bucket, strings.ToLower(tt.name)))
			name := "f.txt"
			mustWrite(t, f, name, "round 0")
			for round := 1; round <= tt.rounds; round++ {
				fi, err := f.Stat(ctx, name)
				if err != nil {
					t.Fatal(err)
				}
				cur, err := backend.ReadFile(ctx, f, name)
				if err != nil {
					t.Fatal(err)
				}
				pre := tt.pre(fi, cur)
				var wins, conflicts atomic.Int64
				var wg sync.WaitGroup
				for i := range tt.writers {
					b := f
					if tt.separate {
						b = open(t, config(srv, bucket, strings.ToLower(tt.name)))
					}
					body := append([]byte(fmt.Sprintf("round %d writer %d ", round, i)), pattern(tt.size)...)
					wg.Go(func() {
						err := backend.WriteFile(ctx, b, name, body, backend.WriteOptions{Precondition: pre})
						switch {
						case err == nil:
							wins.Add(1)
						case errors.Is(err, backend.ErrPrecondition):
							conflicts.Add(1)
						default:
							t.Errorf("writer %d: unexpected error %v", i, err)
						}
					})
				}
				wg.Wait()
				if wins.Load() != 1 || conflicts.Load() != int64(tt.writers-1) {
					t.Errorf("round %d: %d writers won and %d saw a conflict, want 1 and %d", round, wins.Load(), conflicts.Load(), tt.writers-1)
				}
			}
		})
	}
}

// TestCreateOnlyRace races CreateOnly writers: one creates, the others
// get fs.ErrExist.
func TestCreateOnlyRace(t *testing.T) {
	srv := gcssrv.Get(t)
	ctx := t.Context()
	f := open(t, config(srv, srv.NewBucket(ctx, t), "co"))
	for round := range 3 {
		name := fmt.Sprintf("new%d", round)
		var wins, exists atomic.Int64
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				err := backend.WriteFile(ctx, f, name, []byte{byte(i)}, backend.WriteOptions{Precondition: backend.Precondition{CreateOnly: true}})
				switch {
				case err == nil:
					wins.Add(1)
				case errors.Is(err, fs.ErrExist):
					exists.Add(1)
				default:
					t.Errorf("writer %d: unexpected error %v", i, err)
				}
			})
		}
		wg.Wait()
		if wins.Load() != 1 || exists.Load() != 7 {
			t.Errorf("round %d: %d created and %d saw fs.ErrExist, want 1 and 7", round, wins.Load(), exists.Load())
		}
	}
}

// TestPreconditionsOnTheWire checks, from a proxy in front of the
// emulator, that every conditional deletion, copy and rename carries its
// generation condition: the emulator ignores these (it evaluates only
// those of uploads), Cloud Storage evaluates them atomically with the
// change (https://cloud.google.com/storage/docs/request-preconditions).
func TestPreconditionsOnTheWire(t *testing.T) {
	srv := gcssrv.Get(t)
	ctx := t.Context()
	proxy := startCountingProxy(t, srv.Endpoint)
	bucket := srv.NewBucket(ctx, t)
	cfg := config(srv, bucket, "wire")
	cfg.Endpoint = proxy.URL
	f := open(t, cfg)
	mustWrite(t, f, "a", "a")
	mustWrite(t, f, "b", "b")
	fi, err := f.Stat(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	gen := fi.Version
	// last returns the request of log that matches kind.
	find := func(log []string, kind string) string {
		for _, r := range log {
			if strings.Contains(r, kind) {
				return r
			}
		}
		t.Fatalf("no %s request in %q", kind, log)
		return ""
	}
	tests := []struct {
		name string
		do   func() error
		kind string
		want []string
	}{
		{"copy create-only", func() error {
			return backend.Copy(ctx, f, "a", "c", backend.CopyOptions{Precondition: backend.Precondition{CreateOnly: true}})
		}, "/rewriteTo/", []string{"ifGenerationMatch=0", "ifSourceGenerationMatch=" + gen}},
		{"copy match-version", func() error {
			bi, _ := f.Stat(ctx, "b")
			return backend.Copy(ctx, f, "a", "b", backend.CopyOptions{Precondition: backend.Precondition{MatchVersion: bi.Version}})
		}, "/rewriteTo/", []string{"ifGenerationMatch=", "ifSourceGenerationMatch=" + gen}},
		{"rename deletes the generation copied", func() error {
			return backend.Rename(ctx, f, "a", "d", backend.RenameOptions{})
		}, "DELETE", []string{"ifGenerationMatch=" + gen}},
		{"remove match-hash", func() error {
			return backend.Remove(ctx, f, "d", backend.RemoveOptions{Precondition: backend.Precondition{MatchHash: hashOf("a")}})
		}, "DELETE", []string{"ifGenerationMatch="}},
	}
	for _, tt := range tests {
		proxy.Take()
		if err := tt.do(); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		r := find(proxy.Take(), tt.kind)
		for _, w := range tt.want {
			if !strings.Contains(r, w) {
				t.Errorf("%s: request %q lacks %s", tt.name, r, w)
			}
		}
	}
}

// TestWritePaths writes files on each side of the chunk size and checks
// the content, the requests sent and that nothing but the object is
// stored.
func TestWritePaths(t *testing.T) {
	const chunk = gcsadapter.MinChunkSize
	tests := []struct {
		name string
		size int
		// wantType is the upload's type: one request (multipart) up to
		// the chunk size, a resumable upload above it (whose chunks go to
		// the session URL the server names, past the proxy).
		wantType string
	}{
		{"Empty", 0, "multipart"},
		{"OneByte", 1, "multipart"},
		{"AtChunk", chunk, "multipart"},
		{"JustAbove", chunk + 1, "resumable"},
		{"ThreeChunks", 2*chunk + 12345, "resumable"},
	}
	srv := gcssrv.Get(t)
	proxy := startCountingProxy(t, srv.Endpoint)
	bucket := srv.NewBucket(t.Context(), t)
	client := rawClient(t, srv)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			prefix := strings.ToLower(tt.name)
			cfg := config(srv, bucket, prefix)
			cfg.Endpoint = proxy.URL
			f := open(t, cfg)
			data := pattern(tt.size)
			w, err := f.OpenWrite(ctx, "big.bin", backend.WriteOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			proxy.Take()
			for r := bytes.NewReader(data); r.Len() > 0; {
				if _, err := io.CopyN(w, r, 77_777); err != nil && err != io.EOF {
					t.Fatal(err)
				}
			}
			if err := w.Commit(); err != nil {
				t.Fatal(err)
			}
			var uploads []string
			for _, r := range proxy.Take() {
				if strings.Contains(r, "/upload/") {
					uploads = append(uploads, r)
				}
			}
			if len(uploads) != 1 || !strings.Contains(uploads[0], "uploadType="+tt.wantType) {
				t.Errorf("writing %d bytes started the uploads %q, want one of type %s", tt.size, uploads, tt.wantType)
			}
			got, err := backend.ReadFile(ctx, f, "big.bin")
			if err != nil || sha256.Sum256(got) != sha256.Sum256(data) {
				t.Errorf("read back %d bytes (%v), want the %d written", len(got), err, len(data))
			}
			if raw, _ := rawNames(ctx, client, bucket, prefix+"/"); !slices.Equal(raw, []string{"big.bin"}) {
				t.Errorf("raw storage = %q, want [big.bin]", raw)
			}
		})
	}
}

// TestAbandonedResumable checks that Close without Commit, and a
// cancelled context, end a resumable upload part way and keep the old
// content, with nothing else stored.
func TestAbandonedResumable(t *testing.T) {
	srv := gcssrv.Get(t)
	ctx := t.Context()
	bucket := srv.NewBucket(ctx, t)
	client := rawClient(t, srv)
	f := open(t, config(srv, bucket, "ab"))
	mustWrite(t, f, "target", "old")
	t.Run("Close", func(t *testing.T) {
		w, err := f.OpenWrite(ctx, "target", backend.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(pattern(3 * gcsadapter.MinChunkSize)); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		wantState(t, f, client, bucket, "ab/", "old")
	})
	t.Run("CancelledContext", func(t *testing.T) {
		wctx, cancel := t.Context(), func() {}
		wctx, cancel = contextWithCancel(wctx)
		w, err := f.OpenWrite(wctx, "target", backend.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(pattern(2*gcsadapter.MinChunkSize + 1)); err != nil {
			t.Fatal(err)
		}
		cancel()
		_, werr := w.Write(pattern(2 * gcsadapter.MinChunkSize))
		cerr := w.Commit()
		if werr == nil && cerr == nil {
			t.Fatal("Write and Commit succeeded after the context was cancelled")
		}
		if err := w.Close(); err != nil {
			t.Errorf("Close after a failed Commit: %v", err)
		}
		wantState(t, f, client, bucket, "ab/", "old")
	})
}

// TestPrefixIsolation checks that the tenant "t1" never sees the objects
// of "t10", whose name starts with its own, nor neighbours such as
// "t1x", over one shared client.
func TestPrefixIsolation(t *testing.T) {
	srv := gcssrv.Get(t)
	ctx := t.Context()
	bucket := srv.NewBucket(ctx, t)
	client, err := gcsadapter.NewClient(ctx, gcsadapter.Config{Endpoint: srv.Endpoint})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	tenant := func(prefix string) *gcsadapter.FS {
		// The fields about the client are not read with Client set.
		f, err := gcsadapter.Open(ctx, gcsadapter.Config{Bucket: bucket, Prefix: prefix, Client: client, Endpoint: "http://127.0.0.1:1"})
		if err != nil {
			t.Fatalf("Open %q with a shared client: %v", prefix, err)
		}
		return f
	}
	t1, t10 := tenant("t1"), tenant("t10/")
	mustWrite(t, t1, "mine.txt", "one")
	mustWrite(t, t10, "theirs.txt", "ten")
	mustWrite(t, t10, "d/deep.txt", "ten")
	for _, k := range []string{"t1x", "t1.txt", "t100/x"} {
		put(ctx, t, client, bucket, k, k)
	}
	for _, tt := range []struct {
		b    *gcsadapter.FS
		want []string
	}{{t1, []string{"mine.txt"}}, {t10, []string{"d/", "d/deep.txt", "theirs.txt"}}} {
		if got := walkNames(t, tt.b, "."); !slices.Equal(got, tt.want) {
			key, _ := tt.b.Key(".")
			t.Errorf("walk of prefix %q = %q, want %q", key, got, tt.want)
		}
	}
	if _, err := t1.Stat(ctx, "theirs.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("t1 Stat(theirs.txt) error = %v, want fs.ErrNotExist", err)
	}
	if _, err := gcsadapter.Open(ctx, gcsadapter.Config{Bucket: "no-such-bucket", Client: client}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open of a missing bucket: error = %v, want fs.ErrNotExist", err)
	}
}

// TestListingRequests checks that listings and walks send one request per
// 1,000 names: 1,200 files below tree/big and 3 directories of 50 (the
// emulator stores objects slowly, so the tree is kept small).
func TestListingRequests(t *testing.T) {
	srv := gcssrv.Get(t)
	ctx := t.Context()
	bucket := srv.NewBucket(ctx, t)
	client := rawClient(t, srv)
	var names []string
	for i := range 1200 {
		names = append(names, fmt.Sprintf("p/tree/big/f%04d", i))
	}
	for d := range 3 {
		for i := range 50 {
			names = append(names, fmt.Sprintf("p/tree/d%d/f%03d", d, i))
		}
	}
	start := time.Now()
	putMany(t, client, bucket, names)
	t.Logf("seeding %d objects took %v", len(names), time.Since(start))
	proxy := startCountingProxy(t, srv.Endpoint)
	cfg := config(srv, bucket, "p")
	cfg.Endpoint = proxy.URL
	f := open(t, cfg)
	for _, tt := range []struct {
		dir      string
		entries  int
		requests int
	}{{"tree/big", 1200, 2}, {"tree", 4, 1}, {"tree/d0", 50, 1}} {
		proxy.Take()
		entries, err := f.List(ctx, tt.dir)
		if err != nil || len(entries) != tt.entries {
			t.Fatalf("List(%q) = %d entries, %v; want %d", tt.dir, len(entries), err, tt.entries)
		}
		if n := len(proxy.Take()); n != tt.requests {
			t.Errorf("List(%q) of %d entries sent %d requests, want %d", tt.dir, tt.entries, n, tt.requests)
		}
	}
	proxy.Take()
	files := 0
	err := f.Walk(ctx, ".", func(name string, e backend.DirEntry) error {
		if !e.IsDir() {
			files++
		}
		return nil
	})
	if err != nil || files != 1350 {
		t.Fatalf("Walk = %d files, %v; want 1350", files, err)
	}
	if n := len(proxy.Take()); n != 2 {
		t.Errorf("Walk of 1,350 names sent %d requests, want 2", n)
	}
	// Skipping tree/big jumps past its names: its first page, then one
	// listing from past it.
	proxy.Take()
	files = 0
	err = f.Walk(ctx, ".", func(name string, e backend.DirEntry) error {
		if name == "tree/big" {
			return fs.SkipDir
		}
		if !e.IsDir() {
			files++
		}
		return nil
	})
	if err != nil || files != 150 {
		t.Fatalf("Walk skipping tree/big = %d files, %v; want 150", files, err)
	}
	if n := len(proxy.Take()); n != 2 {
		t.Errorf("Walk skipping tree/big sent %d requests, want 2", n)
	}
	proxy.Take()
	if err := backend.RemoveAll(ctx, f, "tree/d0", backend.RemoveAllOptions{}); err != nil {
		t.Fatal(err)
	}
	// One walk, a deletion per object (the SDK has no batch requests, so
	// RemoveFiles sends them side by side), and the directory's Stats.
	deletes, others := 0, 0
	for _, r := range proxy.Take() {
		if strings.HasPrefix(r, "DELETE ") {
			deletes++
		} else {
			others++
		}
	}
	t.Logf("RemoveAll of 50 objects: %d deletions, %d other requests", deletes, others)
	if deletes != 50 || others > 3 {
		t.Errorf("RemoveAll of 50 objects sent %d deletions and %d other requests, want 50 and at most 3", deletes, others)
	}
	if _, err := f.Stat(ctx, "tree/d0"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat(tree/d0) after RemoveAll = %v, want fs.ErrNotExist", err)
	}
}

// putMany stores each name (with its own name as content), a few at a
// time.
func putMany(t *testing.T, client *storage.Client, bucket string, names []string) {
	t.Helper()
	work := make(chan string)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for n := range work {
				put(t.Context(), t, client, bucket, n, n)
			}
		})
	}
	for _, n := range names {
		work <- n
	}
	close(work)
	wg.Wait()
}

func mustWrite(t *testing.T, f backend.Backend, name, content string) {
	t.Helper()
	if err := backend.WriteFile(t.Context(), f, name, []byte(content), backend.WriteOptions{}); err != nil {
		t.Fatalf("writing %q: %v", name, err)
	}
}

func walkNames(t *testing.T, f *gcsadapter.FS, dir string) []string {
	t.Helper()
	var names []string
	err := f.Walk(t.Context(), dir, func(name string, e backend.DirEntry) error {
		if e.IsDir() {
			name += "/"
		}
		names = append(names, name)
		return nil
	})
	if err != nil {
		t.Fatalf("Walk(%q): %v", dir, err)
	}
	slices.Sort(names)
	return names
}

// wantState checks that "target" holds content and is the only object
// stored below prefix.
func wantState(t *testing.T, f *gcsadapter.FS, client *storage.Client, bucket, prefix, content string) {
	t.Helper()
	got, err := backend.ReadFile(t.Context(), f, "target")
	if err != nil || string(got) != content {
		t.Errorf("target = %q, %v; want %q", got, err, content)
	}
	raw, err := rawNames(t.Context(), client, bucket, prefix)
	if err != nil || !slices.Equal(raw, []string{"target"}) {
		t.Errorf("raw storage = %q, %v; want [target]", raw, err)
	}
}

// pattern returns n bytes that differ from chunk to chunk.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>16)
	}
	return b
}

// TestEmulatorHostVariable opens a backend with no endpoint while
// STORAGE_EMULATOR_HOST names the emulator, as the SDK's chain reads it:
// the backend writes and reads there without credentials.
func TestEmulatorHostVariable(t *testing.T) {
	srv := gcssrv.Get(t)
	t.Setenv("STORAGE_EMULATOR_HOST", strings.TrimPrefix(srv.Endpoint, "http://"))
	ctx := t.Context()
	f, err := gcsadapter.Open(ctx, gcsadapter.Config{Bucket: containers.DefaultGCSBucket, Prefix: "env"})
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, f, "a.txt", "through the variable")
	if got, err := backend.ReadFile(ctx, f, "a.txt"); err != nil || string(got) != "through the variable" {
		t.Errorf("ReadFile = %q, %v", got, err)
	}
}
