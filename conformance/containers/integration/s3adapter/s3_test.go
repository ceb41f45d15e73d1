package s3adapter_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance"
	"github.com/fencefs/fencefs/conformance/containers"
	"github.com/fencefs/fencefs/s3adapter"
)

// s3srv is the S3 server the tests of this package share; TestMain
// terminates it.
var s3srv = containers.Shared[*containers.S3Server]{Start: containers.StartS3Server, Image: containers.S3Image()}

func TestMain(m *testing.M) {
	containers.SetTestcontainersDefaults()
	code := m.Run()
	if err := s3srv.Terminate(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "terminating the S3 server:", err)
	}
	os.Exit(code)
}

// largeFile is big enough for three parts of s3adapter.MinPartSize.
const largeFile = 2*s3adapter.MinPartSize + 123_457

// s3Skips are the tests S3 skips: it holds no symlinks, FIFOs or
// permission bits, has no local path, and checks a conditional delete
// apart from a concurrent write (Capabilities.AtomicRemove=false).
func s3Skips(more ...string) []string {
	return append([]string{
		"InvalidPaths/ResolveSymlinks", "InvalidPaths/Readlink", "InvalidPaths/LocalPath",
		"Changes/ConcurrentRemoveMatchHashAndWrite", "Symlinks/*", "SpecialFiles/*", "FSView/Symlinks",
	}, more...)
}

// s3Abilities are the harness abilities every S3 run needs.
func s3Abilities() []conformance.Ability {
	return []conformance.Ability{conformance.AbilityRawLister, conformance.AbilitySeeder, conformance.AbilityReopener}
}

// writableS3 are the options of the writable runs.
func writableS3() conformance.RunOptions {
	return conformance.RunOptions{
		LargeFileSize:    largeFile,
		ExpectedSkips:    s3Skips("ModeBits/*", "ReadOnly/*", "Changes/ChangesRefusedWhenReadOnly"),
		RequireAbilities: s3Abilities(),
	}
}

func TestConformance(t *testing.T) {
	srv := s3srv.Get(t)
	conformance.RunWith(t, srv.Harness(t.Context(), t), writableS3())
}

// TestConformanceChecksumWhenRequired runs the suite with the SDK's
// checksums limited to the operations that need them, as for servers
// without checksum support.
func TestConformanceChecksumWhenRequired(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode: the default-checksum run covers the same paths")
	}
	srv := s3srv.Get(t)
	h := srv.Harness(t.Context(), t)
	h.Configure = func(c *s3adapter.Config) { c.ChecksumWhenRequired = true }
	conformance.RunWith(t, h, writableS3())
}

// TestConformanceReadOnly runs the suite on read-only backends, filled
// behind their back by the harness.
func TestConformanceReadOnly(t *testing.T) {
	srv := s3srv.Get(t)
	h := srv.Harness(t.Context(), t)
	h.Configure = func(c *s3adapter.Config) { c.Options.ReadOnly = true }
	conformance.RunWith(t, h, conformance.RunOptions{
		LargeFileSize: largeFile,
		ExpectedSkips: s3Skips(
			"RoundTrip/*", "Names/TooLongComponent", "Errors/Write*", "Atomicity/*", "Preconditions/*", "Changes/*",
			"ModeBits/*", "MkdirAll/*", "Reopen/*", "Context/Cancel*Commit*", "Context/CancelledBeforeOpenWrite",
		),
		RequireAbilities: s3Abilities(),
	})
}

// counter counts the HTTP requests an S3 client sends.
type counter struct {
	inner   s3.HTTPClient
	all     atomic.Int64
	lists   atomic.Int64
	deletes atomic.Int64 // DeleteObjects batches
}

func (c *counter) Do(r *http.Request) (*http.Response, error) {
	c.all.Add(1)
	if r.Method == http.MethodGet && r.URL.Query().Get("list-type") == "2" {
		c.lists.Add(1)
	}
	if r.Method == http.MethodPost && r.URL.Query().Has("delete") {
		c.deletes.Add(1)
	}
	return c.inner.Do(r)
}

// reset zeroes the counts.
func (c *counter) reset() {
	c.all.Store(0)
	c.lists.Store(0)
	c.deletes.Store(0)
}

// countedBackend opens a backend whose requests are counted.
func countedBackend(t *testing.T, srv *containers.S3Server, bucket, prefix string) (*s3adapter.FS, *counter) {
	t.Helper()
	c := &counter{}
	cfg := srv.Config(bucket, prefix)
	cfg.ClientOptions = append(cfg.ClientOptions, func(o *s3.Options) {
		inner := o.HTTPClient
		if inner == nil {
			inner = awshttp.NewBuildableClient()
		}
		c.inner = inner
		o.HTTPClient = c
	})
	f := srv.Open(t, cfg)
	c.reset()
	return f, c
}

// putKeys stores each key (with its own name as content) directly, with
// a few requests in flight.
func putKeys(t *testing.T, client *s3.Client, bucket string, keys []string) {
	t.Helper()
	work := make(chan string)
	var (
		wg    sync.WaitGroup
		first atomic.Value
	)
	for range 16 {
		wg.Go(func() {
			for k := range work {
				_, err := client.PutObject(t.Context(), &s3.PutObjectInput{Bucket: &bucket, Key: aws.String(k), Body: strings.NewReader(k)})
				if err != nil {
					first.CompareAndSwap(nil, fmt.Errorf("put %q: %w", k, err))
				}
			}
		})
	}
	for _, k := range keys {
		work <- k
	}
	close(work)
	wg.Wait()
	if err, _ := first.Load().(error); err != nil {
		t.Fatal(err)
	}
}

// TestRequestCounts checks the request budget of listings and walks on
// 10,000 keys: tree/big holds 2500 files and tree/d00..d14 500 each.
func TestRequestCounts(t *testing.T) {
	srv := s3srv.Get(t)
	ctx := t.Context()
	bucket := srv.NewBucket(ctx, t)
	var keys []string
	for i := range 2500 {
		keys = append(keys, fmt.Sprintf("p/tree/big/f%04d", i))
	}
	for d := range 15 {
		for i := range 500 {
			keys = append(keys, fmt.Sprintf("p/tree/d%02d/f%03d", d, i))
		}
	}
	putKeys(t, srv.Client(), bucket, keys)
	f, c := countedBackend(t, srv, bucket, "p")

	listTests := []struct {
		dir          string
		entries      int
		wantRequests int64
	}{
		{"tree/d00", 500, 1},
		{"tree/big", 2500, 3},
		{"tree", 16, 1},
		{".", 1, 1},
	}
	for _, tt := range listTests {
		c.reset()
		entries, err := f.List(ctx, tt.dir)
		if err != nil {
			t.Fatalf("List(%q): %v", tt.dir, err)
		}
		if len(entries) != tt.entries {
			t.Errorf("List(%q) gave %d entries, want %d", tt.dir, len(entries), tt.entries)
		}
		if got := c.all.Load(); got != tt.wantRequests {
			t.Errorf("List(%q) of %d entries sent %d requests, want %d", tt.dir, tt.entries, got, tt.wantRequests)
		}
		t.Logf("List(%q): %d entries, %d requests", tt.dir, len(entries), c.all.Load())
	}

	for _, root := range []string{"tree", "."} {
		c.reset()
		files, dirs := 0, 0
		err := f.Walk(ctx, root, func(name string, e backend.DirEntry) error {
			if e.IsDir() {
				dirs++
			} else {
				files++
			}
			return nil
		})
		if err != nil {
			t.Fatalf("Walk(%q): %v", root, err)
		}
		if files != 10_000 {
			t.Errorf("Walk(%q) reported %d files, want 10000", root, files)
		}
		if got := c.all.Load(); got != 10 {
			t.Errorf("Walk(%q) of 10,000 keys sent %d requests, want 10", root, got)
		}
		t.Logf("Walk(%q): %d files, %d directories, %d requests", root, files, dirs, c.all.Load())
	}

	// Skipping a directory jumps past its keys: tree/big's 2500 keys
	// come first, so the walk needs 1 page for them plus 8 for the rest.
	c.reset()
	files := 0
	err := f.Walk(ctx, ".", func(name string, e backend.DirEntry) error {
		if name == "tree/big" {
			return fs.SkipDir
		}
		if !e.IsDir() {
			files++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files != 7500 || c.all.Load() != 9 {
		t.Errorf("walk skipping tree/big reported %d files with %d requests, want 7500 with 9", files, c.all.Load())
	}

	// A find_files-like search: walk everything, keep what matches.
	c.reset()
	var found []string
	err = backend.Walk(ctx, f, ".", func(name string, e backend.DirEntry) error {
		if !e.IsDir() && strings.HasSuffix(name, "/f0042") {
			found = append(found, name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 || c.all.Load() != 10 {
		t.Errorf("find-like walk found %q with %d requests, want [tree/big/f0042] with 10", found, c.all.Load())
	}

	statTests := []struct{ name string }{{"tree/big/f0001"}, {"tree/d03"}}
	for _, tt := range statTests {
		c.reset()
		if _, err := f.Stat(ctx, tt.name); err != nil {
			t.Fatal(err)
		}
		if got := c.all.Load(); got != 1 {
			t.Errorf("Stat(%q) sent %d requests, want 1 (the listing of the keys starting with the name)", tt.name, got)
		}
	}
}

// TestPrefixIsolation checks that the tenant "t1" never sees the keys of
// "t10", whose name starts with its own.
func TestPrefixIsolation(t *testing.T) {
	srv := s3srv.Get(t)
	ctx := t.Context()
	bucket := srv.NewBucket(ctx, t)
	t1 := srv.Open(t, srv.Config(bucket, "t1"))
	t10 := srv.Open(t, srv.Config(bucket, "t10/"))
	mustWrite(t, t1, "mine.txt", "one")
	mustWrite(t, t10, "theirs.txt", "ten")
	mustWrite(t, t10, "d/deep.txt", "ten")
	putKeys(t, srv.Client(), bucket, []string{"t1x", "t1.txt", "t100/x"})

	for _, tt := range []struct {
		b    *s3adapter.FS
		want []string
	}{{t1, []string{"mine.txt"}}, {t10, []string{"d/", "d/deep.txt", "theirs.txt"}}} {
		var got []string
		err := tt.b.Walk(ctx, ".", func(name string, e backend.DirEntry) error {
			if e.IsDir() {
				name += "/"
			}
			got = append(got, name)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		if !slices.Equal(got, tt.want) {
			key, _ := tt.b.Key(".")
			t.Errorf("walk of prefix %q = %q, want %q", key, got, tt.want)
		}
	}
	if _, err := t1.Stat(ctx, "theirs.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("t1 Stat(theirs.txt) error = %v, want fs.ErrNotExist", err)
	}
	names := listNames(t, t1, ".")
	if !slices.Equal(names, []string{"mine.txt"}) {
		t.Errorf("t1 List(.) = %q, want [mine.txt]", names)
	}
}

// TestUnrepresentableKeys stores keys another tool could write that are
// not canonical storage paths: they are skipped, never shown under
// another name. (versitygw stores objects as POSIX files, so it cleans
// "a//b", "/a" and "a/./b" itself and refuses names over 255 bytes; the
// walker tests cover those.)
func TestUnrepresentableKeys(t *testing.T) {
	srv := s3srv.Get(t)
	ctx := t.Context()
	bucket := srv.NewBucket(ctx, t)
	putKeys(t, srv.Client(), bucket, []string{
		"p/ok", "p/~home", "p/back\\slash", "p/dir/~tilde", "p/dir/fine", "p/C:", "p/sub/C:",
	})
	f := srv.Open(t, srv.Config(bucket, "p"))
	if got, want := listNames(t, f, "."), []string{"dir/", "ok", "sub/"}; !slices.Equal(got, want) {
		t.Errorf("List(.) = %q, want %q", got, want)
	}
	if got, want := listNames(t, f, "dir"), []string{"fine"}; !slices.Equal(got, want) {
		t.Errorf("List(dir) = %q, want %q", got, want)
	}
	if got, want := listNames(t, f, "sub"), []string{"C:"}; !slices.Equal(got, want) {
		t.Errorf("List(sub) = %q, want %q (a drive-like name is fine below the root)", got, want)
	}
	var walked []string
	if err := f.Walk(ctx, ".", func(name string, e backend.DirEntry) error {
		walked = append(walked, name)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(walked)
	if want := []string{"dir", "dir/fine", "ok", "sub", "sub/C:"}; !slices.Equal(walked, want) {
		t.Errorf("Walk = %q, want %q", walked, want)
	}
	for _, name := range []string{"~home", "dir/~tilde", "back\\slash", "C:", strings.Repeat("n", s3adapter.MaxNameBytes+1)} {
		if _, err := f.Stat(ctx, name); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("Stat(%q) error = %v, want fs.ErrInvalid", name, err)
		}
	}
}

// TestWritePaths writes files on each side of the multipart threshold,
// with thresholds below, at and above the part size and with both
// checksum modes, and checks the content, the requests sent and that no
// upload is left behind.
func TestWritePaths(t *testing.T) {
	const part = s3adapter.MinPartSize
	tests := []struct {
		name      string
		required  bool
		threshold int64
		size      int
		// wantPuts is the number of PutObject, UploadPart and
		// CompleteMultipartUpload requests (the upload's creation aside).
		wantPuts int64
	}{
		{"SinglePartAtThreshold", false, 0, part, 1},
		{"MultipartJustAbove", false, 0, part + 1, 3},
		{"ThreePartsDefaultChecksums", false, 0, largeFile, 4},
		{"ThreePartsChecksumWhenRequired", true, 0, largeFile, 4},
		{"ThresholdBelowPartSize", false, 1 << 20, part + 10, 3},
		{"ThresholdAbovePartSize", false, 2*part + 5, largeFile, 4},
		{"Empty", false, 0, 0, 1},
	}
	srv := s3srv.Get(t)
	bucket := srv.NewBucket(t.Context(), t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			prefix := strings.ToLower(tt.name)
			c := &counter{}
			cfg := srv.Config(bucket, prefix)
			cfg.ChecksumWhenRequired = tt.required
			cfg.Options.MultipartThreshold = tt.threshold
			cfg.ClientOptions = []func(*s3.Options){func(o *s3.Options) { c.inner, o.HTTPClient = o.HTTPClient, c }}
			f := srv.Open(t, cfg)
			data := pattern(tt.size)
			w, err := f.OpenWrite(ctx, "big.bin", backend.WriteOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			c.reset()
			// Odd-sized writes cross the part boundaries.
			for r := bytes.NewReader(data); r.Len() > 0; {
				if _, err := io.CopyN(w, r, 777_777); err != nil && err != io.EOF {
					t.Fatal(err)
				}
			}
			if err := w.Commit(); err != nil {
				t.Fatal(err)
			}
			multipart := int64(0)
			if tt.wantPuts > 1 {
				multipart = 1 // CreateMultipartUpload
			}
			if got := c.all.Load(); got != tt.wantPuts+multipart {
				t.Errorf("writing %d bytes sent %d requests, want %d", tt.size, got, tt.wantPuts+multipart)
			}
			got, err := backend.ReadFile(ctx, f, "big.bin")
			if err != nil {
				t.Fatal(err)
			}
			if sha256.Sum256(got) != sha256.Sum256(data) {
				t.Errorf("read back %d bytes that differ from the %d written", len(got), len(data))
			}
			if raw := rawKeys(t, srv, bucket, prefix+"/"); !slices.Equal(raw, []string{"big.bin"}) {
				t.Errorf("raw storage = %q, want [big.bin]", raw)
			}
		})
	}
}

// TestAbandonedMultipart checks that Close without Commit, and a
// cancelled context, abort the upload and keep the old content.
func TestAbandonedMultipart(t *testing.T) {
	srv := s3srv.Get(t)
	ctx := t.Context()
	bucket := srv.NewBucket(ctx, t)
	f := srv.Open(t, srv.Config(bucket, "ab"))
	mustWrite(t, f, "target", "old")

	t.Run("Close", func(t *testing.T) {
		w, err := f.OpenWrite(ctx, "target", backend.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(pattern(largeFile)); err != nil {
			t.Fatal(err)
		}
		if raw := rawKeys(t, srv, bucket, "ab/"); !slices.Contains(raw, "target#upload") {
			t.Errorf("raw storage = %q during the write, want an upload in progress", raw)
		}
		if err := w.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		wantState(t, srv, f, bucket, "ab/", "old")
	})
	t.Run("CancelledContext", func(t *testing.T) {
		wctx, cancel := context.WithCancel(ctx)
		w, err := f.OpenWrite(wctx, "target", backend.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(pattern(2*s3adapter.MinPartSize + 1)); err != nil {
			t.Fatal(err)
		}
		cancel()
		_, werr := w.Write(pattern(2 * s3adapter.MinPartSize))
		cerr := w.Commit()
		if werr == nil && cerr == nil {
			t.Fatal("Write and Commit succeeded after the context was cancelled")
		}
		if !errors.Is(cerr, context.Canceled) {
			t.Errorf("Commit error = %v, want context.Canceled", cerr)
		}
		if err := w.Close(); err != nil {
			t.Errorf("Close after a failed Commit: %v", err)
		}
		wantState(t, srv, f, bucket, "ab/", "old")
	})
}

// TestCompareAndSwap races writers holding the same version or hash:
// exactly one commits per round, on the single-part and multipart paths.
func TestCompareAndSwap(t *testing.T) {
	srv := s3srv.Get(t)
	ctx := t.Context()
	f := srv.Open(t, srv.Config(srv.NewBucket(ctx, t), "cas"))
	tests := []struct {
		name    string
		writers int
		rounds  int
		size    int
		pre     func(fi backend.FileInfo, content []byte) backend.Precondition
	}{
		{"MatchVersion", 8, 4, 100, func(fi backend.FileInfo, _ []byte) backend.Precondition {
			return backend.Precondition{MatchVersion: fi.Version}
		}},
		{"MatchHash", 8, 4, 100, func(_ backend.FileInfo, content []byte) backend.Precondition {
			sum := sha256.Sum256(content)
			return backend.Precondition{MatchHash: hex.EncodeToString(sum[:])}
		}},
		{"MatchVersionMultipart", 3, 2, s3adapter.MinPartSize + 10, func(fi backend.FileInfo, _ []byte) backend.Precondition {
			return backend.Precondition{MatchVersion: fi.Version}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := tt.name + ".txt"
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
					body := append([]byte(fmt.Sprintf("round %d writer %d ", round, i)), pattern(tt.size)...)
					wg.Go(func() {
						err := backend.WriteFile(ctx, f, name, body, backend.WriteOptions{Precondition: pre})
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
	srv := s3srv.Get(t)
	ctx := t.Context()
	f := srv.Open(t, srv.Config(srv.NewBucket(ctx, t), "co"))
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

// TestErrorMapping checks the S3 errors that have no conformance test.
func TestErrorMapping(t *testing.T) {
	srv := s3srv.Get(t)
	ctx := t.Context()
	cfg := srv.Config(containers.DefaultS3Bucket, "")
	cfg.SecretAccessKey = "wrong"
	if _, err := s3adapter.Open(ctx, cfg); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("Open with a wrong secret: error = %v, want fs.ErrPermission", err)
	}
	cfg = srv.Config("no-such-bucket", "")
	if _, err := s3adapter.Open(ctx, cfg); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open of a missing bucket: error = %v, want fs.ErrNotExist", err)
	}
	f := srv.NewBackend(t, "errors")
	long := strings.Repeat("x/", 600) + "f"
	if _, err := f.OpenWrite(ctx, long, backend.WriteOptions{}); !errors.Is(err, backend.ErrNameTooLong) {
		t.Errorf("OpenWrite of a %d-byte key: error = %v, want backend.ErrNameTooLong", len(long), err)
	}
	if err := f.MkdirAll(ctx, strings.Repeat("n", 256)); !errors.Is(err, backend.ErrNameTooLong) {
		t.Errorf("MkdirAll of a 256-byte name: error = %v, want backend.ErrNameTooLong", err)
	}
}

func mustWrite(t *testing.T, f *s3adapter.FS, name, content string) {
	t.Helper()
	if err := backend.WriteFile(t.Context(), f, name, []byte(content), backend.WriteOptions{}); err != nil {
		t.Fatalf("writing %q: %v", name, err)
	}
}

func listNames(t *testing.T, f *s3adapter.FS, dir string) []string {
	t.Helper()
	entries, err := f.List(t.Context(), dir)
	if err != nil {
		t.Fatalf("List(%q): %v", dir, err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name+"/")
		} else {
			names = append(names, e.Name)
		}
	}
	slices.Sort(names)
	return names
}

func rawKeys(t *testing.T, srv *containers.S3Server, bucket, prefix string) []string {
	t.Helper()
	raw, err := containers.RawS3Keys(t.Context(), srv.Client(), bucket, prefix)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(raw)
	return raw
}

// wantState checks that "target" holds content and is the only thing
// stored below prefix: no parts, no uploads, no temporary objects.
func wantState(t *testing.T, srv *containers.S3Server, f *s3adapter.FS, bucket, prefix, content string) {
	t.Helper()
	got, err := backend.ReadFile(t.Context(), f, "target")
	if err != nil || string(got) != content {
		t.Errorf("target = %q, %v; want %q", got, err, content)
	}
	if raw := rawKeys(t, srv, bucket, prefix); !slices.Equal(raw, []string{"target"}) {
		t.Errorf("raw storage = %q, want [target]", raw)
	}
}

// pattern returns n bytes that differ from part to part.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>16)
	}
	return b
}
