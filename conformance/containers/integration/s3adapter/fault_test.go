package s3adapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance/containers"
	"github.com/fencefs/fencefs/s3adapter"
	"github.com/fencefs/fencefs/tools"
)

// hookClient calls onRequest before sending each request.
type hookClient struct {
	inner     s3.HTTPClient
	onRequest func(*http.Request)
}

func (c *hookClient) Do(r *http.Request) (*http.Response, error) {
	c.onRequest(r)
	return c.inner.Do(r)
}

// abortSeen returns client options that close the returned channel
// when the first AbortMultipartUpload request is sent.
func abortSeen() (func(*s3.Options), <-chan struct{}) {
	seen := make(chan struct{})
	var once sync.Once
	return func(o *s3.Options) {
		o.HTTPClient = &hookClient{inner: o.HTTPClient, onRequest: func(r *http.Request) {
			if r.Method == http.MethodDelete && r.URL.Query().Has("uploadId") {
				once.Do(func() { close(seen) })
			}
		}}
	}, seen
}

// partStored returns client options that close the returned channel once
// the response to the UploadPart of part number part has come back
// successfully: the part is stored, and no request of the upload is on
// its way.
func partStored(part int) (func(*s3.Options), <-chan struct{}) {
	stored := make(chan struct{})
	var once sync.Once
	return func(o *s3.Options) {
		inner := o.HTTPClient
		o.HTTPClient = doFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := inner.Do(r)
			q := r.URL.Query()
			if err == nil && resp.StatusCode == http.StatusOK && r.Method == http.MethodPut &&
				q.Has("uploadId") && q.Get("partNumber") == strconv.Itoa(part) {
				once.Do(func() { close(stored) })
			}
			return resp, err
		})
	}, stored
}

// doFunc is an s3.HTTPClient made of a function.
type doFunc func(*http.Request) (*http.Response, error)

func (f doFunc) Do(r *http.Request) (*http.Response, error) { return f(r) }

// TestFaults injects server faults into writes on a server of its own:
// a paused server (the call fails by its deadline), and a killed and
// restarted one (the old target survives, no partial object, no
// multipart upload left).
func TestFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode: fault tests start a server of their own")
	}
	ctx := t.Context()
	containers.RequireImage(t, containers.S3Image())
	port, err := containers.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	srv := containers.StartS3With(ctx, t, containers.S3Config{HostPort: port, Persist: true})

	open := func(t *testing.T, prefix string, abortTimeout time.Duration, clientOpts ...func(*s3.Options)) *s3adapter.FS {
		t.Helper()
		cfg := srv.Config(containers.DefaultS3Bucket, prefix)
		cfg.Options.AbortTimeout = abortTimeout
		cfg.ClientOptions = clientOpts
		f := srv.Open(t, cfg)
		mustWrite(t, f, "target", "old")
		return f
	}
	pause := func(t *testing.T) {
		t.Helper()
		if err := containers.Pause(ctx, srv.Container); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = containers.Unpause(context.Background(), srv.Container) })
	}
	unpause := func(t *testing.T) {
		t.Helper()
		if err := containers.Unpause(ctx, srv.Container); err != nil {
			t.Fatal(err)
		}
	}
	// byDeadline checks that a call on a paused server failed with the
	// deadline's error, close to the deadline.
	byDeadline := func(t *testing.T, what string, err error, deadline time.Time) {
		t.Helper()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s on a paused server: error = %v, want context.DeadlineExceeded", what, err)
		}
		if late := time.Since(deadline); late > 3*time.Second {
			t.Errorf("%s returned %v after its deadline", what, late.Round(time.Millisecond))
		}
	}

	t.Run("PausedStat", func(t *testing.T) {
		f := open(t, "paused-stat", 0)
		pause(t)
		dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		deadline, _ := dctx.Deadline()
		_, err := f.Stat(dctx, "target")
		byDeadline(t, "Stat", err, deadline)
		unpause(t)
	})

	t.Run("PausedCommit", func(t *testing.T) {
		f := open(t, "paused-put", 0)
		dctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		deadline, _ := dctx.Deadline()
		w, err := f.OpenWrite(dctx, "target", backend.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if _, err := w.Write([]byte("new")); err != nil {
			t.Fatal(err)
		}
		pause(t)
		byDeadline(t, "Commit", w.Commit(), deadline)
		unpause(t)
		if err := w.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		// The whole request reached the frozen server before the client
		// gave up, so the server may still apply it once it thaws: the
		// target is the old or the new content, never a mix.
		got, err := backend.ReadFile(ctx, f, "target")
		if err != nil || (string(got) != "old" && string(got) != "new") {
			t.Errorf("target = %q, %v; want \"old\" or \"new\"", got, err)
		}
		if raw := rawKeys(t, srv, containers.DefaultS3Bucket, "paused-put/"); !slices.Equal(raw, []string{"target"}) {
			t.Errorf("raw storage = %q, want [target]", raw)
		}
	})

	// pausedMidMultipart freezes the server with the first part of an
	// upload stored and the second on its way, and checks the call waiting
	// for it fails by its deadline and Close leaves nothing behind. The
	// server freezes only once the first part's answer is in (observed on
	// the client), so the state at the freeze is always the same. It
	// reports false, having undone what it did, when the deadline passed
	// before the server was frozen (a loaded machine: the call under test
	// would never meet the frozen server); the caller then runs it again
	// with a longer deadline.
	pausedMidMultipart := func(t *testing.T, prefix string, timeout time.Duration) bool {
		hook, stored := partStored(1)
		f := open(t, prefix, 0, hook)
		dctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		deadline, _ := dctx.Deadline()
		w, err := f.OpenWrite(dctx, "target", backend.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if _, err := w.Write(pattern(s3adapter.MinPartSize + 1)); err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				return false
			}
			t.Fatal(err)
		}
		select {
		case <-stored:
		case <-dctx.Done():
			return false
		}
		pause(t)
		if time.Now().After(deadline) {
			unpause(t)
			return false
		}
		// The second part goes to the frozen server; the write returns
		// once it is on its way (or by the deadline, if that comes first).
		_, werr := w.Write(pattern(s3adapter.MinPartSize))
		cerr := w.Commit()
		if werr == nil {
			byDeadline(t, "Commit", cerr, deadline)
		} else {
			byDeadline(t, "Write", werr, deadline)
		}
		unpause(t)
		if err := w.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		wantState(t, srv, f, containers.DefaultS3Bucket, prefix+"/", "old")
		return true
	}

	t.Run("PausedMidMultipart", func(t *testing.T) {
		for i, timeout := 0, 8*time.Second; !pausedMidMultipart(t, fmt.Sprintf("paused-mp-%d", i), timeout); i, timeout = i+1, 2*timeout {
			if timeout >= 2*time.Minute {
				t.Fatalf("the server was not frozen within a %v deadline", timeout)
			}
			t.Logf("the deadline of %v passed before the server was frozen; again with %v", timeout, 2*timeout)
		}
	})

	// restart brings the killed server back on the same port and volume.
	restart := func(t *testing.T) {
		t.Helper()
		if err := srv.Container.Start(ctx); err != nil {
			t.Fatalf("restarting the server: %v", err)
		}
	}

	t.Run("KilledBeforeCommit", func(t *testing.T) {
		f := open(t, "killed-put", 30*time.Second)
		w, err := f.OpenWrite(ctx, "target", backend.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if _, err := w.Write(pattern(1 << 20)); err != nil {
			t.Fatal(err)
		}
		if err := containers.Kill(ctx, srv.Container); err != nil {
			t.Fatal(err)
		}
		if err := w.Commit(); err == nil {
			t.Error("Commit succeeded on a killed server")
		}
		restart(t)
		if err := w.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		wantState(t, srv, f, containers.DefaultS3Bucket, "killed-put/", "old")
	})

	t.Run("KilledMidMultipart", func(t *testing.T) {
		hook, aborting := abortSeen()
		f := open(t, "killed-mp", 60*time.Second, hook)
		w, err := f.OpenWrite(ctx, "target", backend.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// Two parts are stored or on their way when the server dies.
		if _, err := w.Write(pattern(2*s3adapter.MinPartSize + 1)); err != nil {
			t.Fatal(err)
		}
		if raw := rawKeys(t, srv, containers.DefaultS3Bucket, "killed-mp/"); !slices.Contains(raw, "target#upload") {
			t.Fatalf("raw storage = %q before the kill, want an upload in progress", raw)
		}
		if err := containers.Kill(ctx, srv.Container); err != nil {
			t.Fatal(err)
		}
		if err := w.Commit(); err == nil {
			t.Fatal("Commit succeeded on a killed server")
		}
		// Close keeps trying to abort while the server is down; bring it
		// back once the first attempt has been made.
		closed := make(chan error, 1)
		go func() { closed <- w.Close() }()
		select {
		case <-aborting:
		case err := <-closed:
			t.Fatalf("Close returned %v before trying to abort", err)
		}
		restart(t)
		if err := <-closed; err != nil {
			t.Errorf("Close after the restart: %v", err)
		}
		wantState(t, srv, f, containers.DefaultS3Bucket, "killed-mp/", "old")
	})
}

// TestNoSpace fills a server whose storage is a 1 MiB tmpfs: the write
// fails with backend.ErrNoSpace, which tools treat as fatal, leaves no
// object behind, and write_file says that no space is left.
func TestNoSpace(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode: the test starts a server of its own")
	}
	ctx := t.Context()
	containers.RequireImage(t, containers.S3Image())
	srv := containers.StartS3With(ctx, t, containers.S3Config{DataBytes: 1 << 20})
	f := srv.Open(t, srv.Config(containers.DefaultS3Bucket, ""))
	err := backend.WriteFile(ctx, f, "big", make([]byte, 2<<20), backend.WriteOptions{})
	if !errors.Is(err, backend.ErrNoSpace) {
		t.Fatalf("writing 2 MiB onto 1 MiB: %v, want backend.ErrNoSpace", err)
	}
	if _, err := f.Stat(ctx, "big"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat(big) after the failed write: %v, want fs.ErrNotExist", err)
	}
	s, err := tools.New(f, tools.Options{})
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(map[string]string{"path": "big.txt", "content": strings.Repeat("x", 2<<20)})
	out, err := s.Call(ctx, "write_file", args)
	if msg := fmt.Sprint(out, err); !strings.Contains(msg, "no space is left on the storage") {
		t.Errorf("write_file onto a full server = %q, %v; want it to say no space is left", out, err)
	}
	if _, err := f.Stat(ctx, "big.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat(big.txt) after the failed write_file: %v, want fs.ErrNotExist", err)
	}
}
