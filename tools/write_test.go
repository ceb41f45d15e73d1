package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/local"
)

func TestWriteFile(t *testing.T) {
	tests := []struct {
		name, content string
		opts          Options
		want          string
	}{
		{"lines and chars", "Hello\nWorld\n", Options{}, "Wrote 12 chars (2 lines) to f.txt. [hash:" + h12("Hello\nWorld\n") + "]"},
		{"runes not bytes", "héllo wörld", Options{}, "Wrote 11 chars (1 line) to f.txt. [hash:" + h12("héllo wörld") + "]"},
		{"empty", "", Options{}, "Wrote 0 chars (0 lines) to f.txt. [hash:e3b0c44298fc]"},
		{"CRLF", "a\r\nb\r\n", Options{}, "Wrote 6 chars (2 lines) to f.txt. [hash:" + h12("a\r\nb\r\n") + "]"},
		{"no trailing newline", "a\nb", Options{}, "Wrote 3 chars (2 lines) to f.txt. [hash:" + h12("a\nb") + "]"},
		{"no hashes", "x", Options{NoContentHashes: true}, "Wrote 1 char (1 line) to f.txt."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forEach(t, func(t *testing.T, fx fixture) {
				s := newSet(t, fx.b, tt.opts)
				wantEqual(t, ok(t, s, "write_file", "path", "f.txt", "content", tt.content), tt.want)
				wantEqual(t, fx.mustGet(t, "f.txt"), tt.content)
				// Overwriting works the same and stores the bytes exactly.
				wantEqual(t, ok(t, s, "write_file", "path", "f.txt", "content", tt.content), tt.want)
				wantEqual(t, fx.mustGet(t, "f.txt"), tt.content)
			})
		})
	}
}

func TestWriteFileErrors(t *testing.T) {
	forEach(t, func(t *testing.T, fx fixture) {
		fx.put(t, "f.txt", "old\n")
		fx.mkdir(t, "d")
		rec := &recorder{}
		s := newSet(t, fx.b, Options{OnEvent: rec.on, Denied: []string{"private"}})
		tests := []struct {
			args []any
			want string
		}{
			{[]any{"path", "a/b/x.txt", "content", ""}, "Parent directory 'a/b' does not exist. Use create_directory first."},
			{[]any{"path", "d/e/x.txt", "content", ""}, "Parent directory 'd/e' does not exist. Use create_directory first."},
			{[]any{"path", "f.txt/x", "content", ""}, "Path 'f.txt/x' has a parent that is not a directory."},
			{[]any{"path", "f.txt/y/x", "content", ""}, "Path 'f.txt/y/x' has a parent that is not a directory."},
			{[]any{"path", "d", "content", ""}, "Path 'd' exists and is not a regular file."},
			{[]any{"path", ".", "content", ""}, "Path '.' exists and is not a regular file."},
			{[]any{"path", "f.txt", "content", "new", "expected_hash", "000000000000"},
				"Conflict: file 'f.txt' has changed (expected hash:000000000000, got hash:" + h12("old\n") + "). Re-read the file and retry."},
			{[]any{"path", "f.txt", "content", "new", "expected_hash", "abc"},
				"Conflict: file 'f.txt' has changed (expected hash:abc, got hash:" + h12("old\n") + "). Re-read the file and retry."},
			{[]any{"path", ".env", "content", "x"}, "Path '.env' is protected (matches '**/.env')."},
			{[]any{"path", "apps/.env", "content", "x"}, "Path 'apps/.env' is protected (matches '**/.env')."},
			{[]any{"path", ".git/config", "content", "x"}, "Path '.git/config' is protected (matches '**/.git')."},
			{[]any{"path", "private/x", "content", "x"}, "Path 'private/x' is denied by pattern 'private'."},
			{[]any{"path", "../x", "content", "x"}, "Path '../x' resolves outside the root directory."},
			{[]any{"path", "f.txt"}, "Missing required argument 'content'."},
			{[]any{"path", "f.txt", "content", 5}, "Argument 'content' must be a string."},
		}
		for _, tt := range tests {
			wantEqual(t, retry(t, s, "write_file", tt.args...), tt.want)
		}
		wantEqual(t, fx.mustGet(t, "f.txt"), "old\n")
		if len(rec.events) != 0 {
			t.Errorf("failed writes emitted %s", rec.kinds())
		}
	})
}

func TestWriteFileExpectedHash(t *testing.T) {
	forEach(t, func(t *testing.T, fx fixture) {
		s := newSet(t, fx.b, Options{})
		fx.put(t, "f.txt", "one\n")
		full := hashBytes([]byte("one\n"))
		for i, exp := range []string{h12("one\n"), "hash:" + h12("one\n"), full, strings.ToUpper(full[:12])} {
			content := fmt.Sprintf("v%d\n", i)
			ok(t, s, "write_file", "path", "f.txt", "content", content, "expected_hash", exp)
			fx.put(t, "f.txt", "one\n")
		}
		// A missing file ignores expected_hash.
		ok(t, s, "write_file", "path", "new.txt", "content", "x", "expected_hash", "000000000000")
		wantEqual(t, fx.mustGet(t, "new.txt"), "x")
	})
}

func TestWriteFileNoHashesHasNoExpectedHash(t *testing.T) {
	s := newSet(t, newMemFS(), Options{NoContentHashes: true})
	wantEqual(t, retry(t, s, "write_file", "path", "f", "content", "", "expected_hash", "x"),
		"Unknown argument 'expected_hash'. Valid arguments: path, content.")
}

func TestWriteFileKeepsModeBits(t *testing.T) {
	fx := localFixture(t)
	p := filepath.Join(fx.dir, "run.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o751); err != nil {
		t.Fatal(err)
	}
	os.Chmod(p, 0o751)
	s := newSet(t, fx.b, Options{})
	ok(t, s, "write_file", "path", "run.sh", "content", "#!/bin/sh\necho hi\n")
	ok(t, s, "edit_file", "path", "run.sh", "old_text", "hi", "new_text", "ho")
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o751 {
		t.Errorf("mode %v, want 0751", info.Mode().Perm())
	}
	entries, _ := os.ReadDir(fx.dir)
	if len(entries) != 1 {
		t.Errorf("files left beside the target: %v", entries)
	}
}

func TestWriteFileThroughSymlinkAndHostPath(t *testing.T) {
	fx := localFixture(t)
	fx.put(t, "real.txt", "old")
	os.Symlink("real.txt", filepath.Join(fx.dir, "link.txt"))
	rec := &recorder{}
	s := newSet(t, fx.b, Options{OnEvent: rec.on})
	ok(t, s, "write_file", "path", "link.txt", "content", "new")
	wantEqual(t, fx.mustGet(t, "real.txt"), "new")
	if fi, err := os.Lstat(filepath.Join(fx.dir, "link.txt")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi, err)
	}
	abs := filepath.Join(fx.dir, "abs.txt")
	wantEqual(t, ok(t, s, "write_file", "path", abs, "content", "a"),
		"Wrote 1 char (1 line) to "+abs+". [hash:"+h12("a")+"]")
	wantEqual(t, fx.mustGet(t, "abs.txt"), "a")
	wantEqual(t, retry(t, s, "write_file", "path", "/etc/passwd", "content", "x"),
		"Path '/etc/passwd' resolves outside the root directory.")
	want := []Event{FileWritten{Path: "real.txt", ContentHash: hashBytes([]byte("new"))}, FileWritten{Path: "abs.txt", ContentHash: hashBytes([]byte("a"))}}
	if fmt.Sprint(rec.events) != fmt.Sprint(want) {
		t.Errorf("events %v, want %v", rec.events, want)
	}
}

func TestWriteFileReadOnly(t *testing.T) {
	m := newMemFS()
	m.put("f.txt", "x")
	m.readOnly = true
	s := newSet(t, m, Options{})
	wantEqual(t, retry(t, s, "write_file", "path", "f.txt", "content", "y"),
		"Path 'f.txt' is on read-only storage and cannot be changed. Write somewhere else.")
	wantEqual(t, retry(t, s, "create_directory", "path", "d"),
		"Path 'd' is on read-only storage and cannot be changed. Write somewhere else.")

	ro := newSet(t, newMemFS(), Options{ReadOnly: true})
	wantEqual(t, retry(t, ro, "write_file", "path", "f", "content", ""), "Path 'f' cannot be changed: this tool set is read-only.")
	wantEqual(t, retry(t, ro, "create_directory", "path", "d"), "Path 'd' cannot be changed: this tool set is read-only.")
	wantEqual(t, retry(t, ro, "edit_file"), "edit_file is not available: this tool set is read-only.")
	// A tool left out by name stays unknown.
	if _, err := newSet(t, newMemFS(), Options{Tools: []string{"read_file"}}).Call(context.Background(), "write_file", args(t, "path", "f")); err == nil || IsRetry(err) {
		t.Errorf("an unconfigured tool: %v, want a fatal error", err)
	}
}

func TestWriteFileConcurrentChangeIsAConflict(t *testing.T) {
	m := newMemFS()
	m.put("f.txt", "mine\n")
	s := newSet(t, m, Options{})
	m.beforeCommit = func() {
		m.beforeCommit = nil
		m.put("f.txt", "theirs\n")
	}
	wantEqual(t, retry(t, s, "write_file", "path", "f.txt", "content", "new\n"),
		"Conflict: file 'f.txt' has changed (expected hash:"+h12("mine\n")+", got hash:"+h12("theirs\n")+"). Re-read the file and retry.")
	wantEqual(t, mustMem(t, m, "f.txt"), "theirs\n")

	m.beforeCommit = func() {
		m.beforeCommit = nil
		m.put("new.txt", "first\n")
	}
	wantEqual(t, retry(t, s, "write_file", "path", "new.txt", "content", "second\n"),
		"Conflict: file 'new.txt' has changed (expected hash:none, got hash:"+h12("first\n")+"). Re-read the file and retry.")
}

// TestWriteFileFalsePreconditionFailure checks that a precondition failure
// the storage reports although the file still holds the expected content
// is told as such, not as a change between two equal hashes.
func TestWriteFileFalsePreconditionFailure(t *testing.T) {
	m := newMemFS()
	m.put("f.txt", "mine\n")
	s := newSet(t, m, Options{})
	m.commitErr = &fs.PathError{Op: "commit", Path: "f.txt", Err: backend.ErrPrecondition}
	wantEqual(t, retry(t, s, "write_file", "path", "f.txt", "content", "new\n"),
		"Conflict: file 'f.txt' still holds the expected content (hash:"+h12("mine\n")+"), but the storage refused the change as if it had changed: it was rewritten with the same content meanwhile, or the storage misreports its precondition. Retry the call.")
	wantEqual(t, mustMem(t, m, "f.txt"), "mine\n")
}

func mustMem(t *testing.T, m *memFS, name string) string {
	t.Helper()
	d, ok := m.get(name)
	if !ok {
		t.Fatalf("%s missing", name)
	}
	return d
}

// failingFS is a local backend whose writes fail with err.
type failingFS struct {
	*local.FS
	err error
}

func (f failingFS) OpenWrite(ctx context.Context, name string, opts backend.WriteOptions) (backend.FileWriter, error) {
	return nil, f.err
}

func (f failingFS) MkdirAll(ctx context.Context, dir string) error { return f.err }

// A storage failure is fatal, and its message says what kind of failure
// it was and nothing of the storage's own text (host paths, endpoints,
// the program's packages); Cause keeps that text for the host's log.
func TestStorageFailuresAreFatalAndClean(t *testing.T) {
	fx := localFixture(t)
	lb := fx.b.(*local.FS)
	const tail = ". Details are in the server's log."
	tests := []struct {
		name  string
		err   error
		retry bool
		want  string
	}{
		{"disk full", &fs.PathError{Op: "write", Path: "f.txt", Err: backend.FatalErrno(syscall.ENOSPC)}, false, "Storage failure: no space is left on the storage" + tail},
		{"quota", &fs.PathError{Op: "write", Path: "f.txt", Err: backend.FatalErrno(syscall.EDQUOT)}, false, "Storage failure: no space is left on the storage" + tail},
		{"read-only file system", &fs.PathError{Op: "write", Path: "f.txt", Err: backend.FatalErrno(syscall.EROFS)}, false, "Storage failure: the storage is read-only" + tail},
		{"i/o error", &fs.PathError{Op: "write", Path: "f.txt", Err: backend.FatalErrno(syscall.EIO)}, false, "Storage failure: the storage reported an input/output error" + tail},
		{"host path inside", fmt.Errorf("rename %s/sub/x: device busy", fx.dir), false, "Storage failure: the storage failed" + tail},
		{"host path outside", errors.New("open /var/tmp/other: device busy"), false, "Storage failure: the storage failed" + tail},
		{"unreachable", fmt.Errorf("stat s3/ws/f.txt: s3 request failed: %w", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}), false,
			"Storage failure: the storage server could not be reached" + tail},
		{"file size limit", &fs.PathError{Op: "write", Path: "f.txt", Err: backend.FatalErrno(syscall.EFBIG)}, false, "Storage failure: the file is larger than the storage allows" + tail},
		// An errno no adapter maps is no unreachable server, although
		// syscall.Errno satisfies net.Error.
		{"unmapped errno", &fs.PathError{Op: "write", Path: "f.txt", Err: syscall.EMFILE}, false, "Storage failure: the storage failed" + tail},
		{"unmapped errno that says timeout", &fs.PathError{Op: "write", Path: "f.txt", Err: syscall.EAGAIN}, false, "Storage failure: the storage failed" + tail},
		{"connection reset", &fs.PathError{Op: "write", Path: "f.txt", Err: syscall.ECONNRESET}, false, "Storage failure: the storage server could not be reached" + tail},
		{"dial timeout", fmt.Errorf("s3 request failed: %w", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ETIMEDOUT}), false,
			"Storage failure: the storage server did not answer in time" + tail},
		{"permission", &fs.PathError{Op: "write", Path: "f.txt", Err: fs.ErrPermission}, true, "Permission denied: f.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSet(t, failingFS{lb, tt.err}, Options{})
			_, err := s.Call(context.Background(), "write_file", args(t, "path", "f.txt", "content", "x"))
			if err == nil || IsRetry(err) != tt.retry {
				t.Fatalf("error %v, retry %v; want retry=%v", err, IsRetry(err), tt.retry)
			}
			wantEqual(t, err.Error(), tt.want)
			wantEqual(t, Message(err), tt.want)
			if tt.retry {
				return
			}
			if !errors.Is(err, tt.err) || Cause(err) != tt.err {
				t.Errorf("fatal error %v: Cause %v; want it to wrap %v", err, Cause(err), tt.err)
			}
		})
	}
}
