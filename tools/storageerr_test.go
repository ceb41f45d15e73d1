package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/local"
	"github.com/fencefs/fencefs/tools/internal/rg"
)

// TestStorageErrMapping pins how a storage error reaches the model: what
// another path, a retry or a fresh look could avoid is a retry naming the
// tool path; only failures of the storage itself, its connection or the
// host stay fatal.
func TestStorageErrMapping(t *testing.T) {
	pe := func(err error) error { return &fs.PathError{Op: "walk", Path: "d", Err: err} }
	tests := []struct {
		name string
		err  error
		// want is the retry's text; "" means fatal.
		want string
	}{
		{"missing", pe(fs.ErrNotExist), "Path not found: d/x"},
		{"missing errno", pe(syscall.ENOENT), "Path not found: d/x"},
		{"not a directory", pe(backend.ErrNotDir), "Path 'd/x' is not a directory, or a name on the way to it is a file."},
		{"is a directory", pe(backend.ErrIsDir), "'d/x' is a directory, not a file."},
		{"not regular", pe(backend.ErrNotRegular), "Path 'd/x' is not a regular file or directory."},
		{"symlink appeared", pe(backend.ErrSymlink), "Path 'd/x' changed while it was being used (a symlink appeared). Try again."},
		{"outside", pe(backend.ErrOutside), "Path 'd/x' resolves outside the root directory."},
		{"loop", pe(backend.ErrLoop), "Path 'd/x' resolves through a symlink loop."},
		{"too long", pe(backend.ErrNameTooLong), "Path 'd/x' is too long: a name or the whole path exceeds the storage limit."},
		{"invalid", pe(backend.ErrInvalidPath), "Path 'd/x' is not a valid name on this storage."},
		{"precondition", pe(backend.ErrPrecondition), "Conflict: path 'd/x' changed while it was being used. Check it and retry."},
		{"exists", pe(fs.ErrExist), "Path 'd/x' already exists."},
		{"read-only", pe(backend.ErrReadOnly), "Path 'd/x' is on read-only storage and cannot be changed. Write somewhere else."},
		{"permission", pe(fs.ErrPermission), "Permission denied: d/x"},
		{"permission errno", pe(syscall.EACCES), "Permission denied: d/x"},
		{"argument too long", fmt.Errorf("grep: %w", rg.ErrArgTooLong),
			"An argument of this call is too long to pass to ripgrep (at most 128 KiB each). Use a shorter pattern or glob."},
		{"disk full", pe(backend.FatalErrno(syscall.ENOSPC)), ""},
		{"quota", pe(backend.FatalErrno(syscall.EDQUOT)), ""},
		{"read-only file system", pe(backend.FatalErrno(syscall.EROFS)), ""},
		{"i/o error", pe(backend.FatalErrno(syscall.EIO)), ""},
		{"network", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, ""},
		{"unknown", errors.New("storage exploded"), ""},
		{"listener's retry stays fatal", listenerFailed(&RetryError{Message: "no"}), ""},
	}
	s := newSet(t, newMemFS(), Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.storageErr(tt.err, "d/x")
			if tt.want == "" {
				if IsRetry(err) || !errors.Is(err, tt.err) {
					t.Errorf("got %v (retry %v); want a fatal error wrapping %v", err, IsRetry(err), tt.err)
				}
				return
			}
			if !IsRetry(err) {
				t.Fatalf("got fatal %v; want the retry %q", err, tt.want)
			}
			wantEqual(t, err.Error(), tt.want)
		})
	}
	for _, err := range []error{context.Canceled, context.DeadlineExceeded} {
		if got := s.storageErr(fmt.Errorf("read: %w", err), "d/x"); !errors.Is(got, err) || IsRetry(got) {
			t.Errorf("%v: got %v; want it fatal, as it is", err, got)
		}
	}
}

// swappedFS is a memFS whose directory swapped stats as a directory but
// lists as something else, as when a directory is replaced by a link
// between a walker's check and its walk.
type swappedFS struct {
	*memFS
	swapped string
}

func (f *swappedFS) List(ctx context.Context, dir string) ([]backend.DirEntry, error) {
	if dir == f.swapped {
		return nil, &fs.PathError{Op: "list", Path: dir, Err: backend.ErrNotDir}
	}
	return f.memFS.List(ctx, dir)
}

// TestWalkRootReplacedBeforeTheWalk: every walker whose root stops being
// a directory between its check and its walk answers with a retry.
func TestWalkRootReplacedBeforeTheWalk(t *testing.T) {
	m := newMemFS()
	m.put("d/a.txt", "needle\n")
	s := newSet(t, &swappedFS{memFS: m, swapped: "d"}, Options{Tools: AllTools()})
	for _, tool := range []string{nameListDirectory, nameSearchFiles, nameFindFiles, nameListFiles, nameGrep} {
		t.Run(tool, func(t *testing.T) {
			a := []any{"path", "d", "pattern", "needle"}
			switch tool {
			case nameListDirectory, nameListFiles:
				a = a[:2]
			case nameFindFiles:
				a[3] = "**"
			}
			want := "Path 'd' is not a directory, or a name on the way to it is a file."
			if tool == nameListDirectory {
				want = "Not a directory: d"
			}
			wantEqual(t, retry(t, s, tool, a...), want)
		})
	}
}

// TestCreateDirectoryOutsideEveryMount: at the top of a rooted namespace
// only mounts exist; creating anything else there is a retry naming the
// path and the name that is not a mount, and nothing is created.
func TestCreateDirectoryOutsideEveryMount(t *testing.T) {
	m, _ := mountedFixture(t)
	s := newSet(t, m, Options{Cwd: "/tenant"})
	for _, tt := range []struct{ path, mount string }{
		{"/etc", "/etc"},
		{"/etc/a/b", "/etc"},
		{"../x", "/x"},
		{"/tenant/../nope/y", "/nope"},
	} {
		wantEqual(t, retry(t, s, "create_directory", "path", tt.path),
			fmt.Sprintf("Path '%s' cannot be created: '%s' is not a mount. Create directories inside a mount; list_directory '/' shows them.", tt.path, tt.mount))
	}
	wantEqual(t, ok(t, s, "list_directory", "path", "/"), "/docs/\n/tenant/\n/work/")
	wantEqual(t, ok(t, s, "create_directory", "path", "/work"), "Created directory: /work")
}

// unlinkedFS is a local backend whose links stop being links before they
// are read, as when one is replaced between file_info's stat and its
// readlink.
type unlinkedFS struct{ *local.FS }

func (f unlinkedFS) Readlink(ctx context.Context, name string) (string, error) {
	return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
}

// TestFileInfoLinkReplacedUnderfoot: file_info on a link that is no link
// when it reads the target answers with a retry.
func TestFileInfoLinkReplacedUnderfoot(t *testing.T) {
	fx := localFixture(t)
	fx.put(t, "f.txt", "a\n")
	if err := os.Symlink("f.txt", filepath.Join(fx.dir, "l")); err != nil {
		t.Fatal(err)
	}
	s := newSet(t, unlinkedFS{fx.b.(*local.FS)}, Options{})
	wantEqual(t, retry(t, s, "file_info", "path", "l"), "Path 'l' changed while it was being used. Try again.")
}

// Message gives the model a text for every error of a call, naming
// nothing of a host's own error.
func TestMessage(t *testing.T) {
	hook := errors.New("policy service at http://10.0.0.7:8080 refused token sk-123")
	tests := []struct {
		err  error
		want string
	}{
		{&RetryError{Message: "Path not found: x"}, "Path not found: x"},
		{fmt.Errorf("read: %w", context.Canceled), "The call was cancelled."},
		{context.DeadlineExceeded, "The call did not finish by its deadline."},
		{listenerFailed(hook), "The change was not made: the host's change listener failed. Details are in the server's log."},
		{hook, "The call failed: the host reported an internal error. Details are in the server's log."},
	}
	for _, tt := range tests {
		wantEqual(t, Message(tt.err), tt.want)
	}
	if Cause(listenerFailed(hook)) != hook || Cause(hook) != hook {
		t.Errorf("Cause does not return the host's error")
	}
}
