package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"strings"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/policy"
	"github.com/fencefs/fencefs/tools/internal/rg"
)

// RetryError is an error the model can correct: a missing file, a denied
// path, a stale hash, bad arguments. Hosts return its Message to the model
// as the tool result and let it try again; every other error a tool
// returns is fatal to the call.
type RetryError struct {
	// Message is the text shown to the model.
	Message string
}

// Error returns the message shown to the model.
func (e *RetryError) Error() string { return e.Message }

// IsRetry reports whether err is, or wraps, a *RetryError. A fatal error
// that happens to wrap one (a change listener returning it) is not.
func IsRetry(err error) bool {
	var r *RetryError
	var f *fatalError
	return errors.As(err, &r) && !errors.As(err, &f)
}

// retryf builds a *RetryError from a format.
func retryf(format string, args ...any) error {
	return &RetryError{Message: fmt.Sprintf(format, args...)}
}

// fatalError is a failure the model cannot fix. Its message is safe to
// show the model: it names no host path, endpoint, credential or package
// of the program; Unwrap keeps errors.Is working for the host, and
// [Cause] gives the host the whole story for its log.
type fatalError struct {
	msg string
	err error
}

func (e *fatalError) Error() string { return e.msg }
func (e *fatalError) Unwrap() error { return e.err }

// Cause returns what a fatal error of a tool call stands for, for the
// host's log: the storage's or the listener's own error, which may name
// host paths, endpoints and internals that the call's error message
// leaves out. Any other error is returned as it is.
func Cause(err error) error {
	var f *fatalError
	if errors.As(err, &f) && f.err != nil {
		return f.err
	}
	return err
}

// Message returns the text a host shows the model for an error of a tool
// call: a retry's message, a fatal error's model-safe message, a short
// sentence for the call's cancellation or deadline, and for anything else
// (an error of a host's permission hook) a sentence that names nothing
// of it. It never carries a host path, an endpoint or a credential.
func Message(err error) string {
	var r *RetryError
	var f *fatalError
	switch {
	case IsRetry(err) && errors.As(err, &r):
		return r.Message
	case errors.As(err, &f):
		return f.msg
	case errors.Is(err, context.Canceled):
		return "The call was cancelled."
	case errors.Is(err, context.DeadlineExceeded):
		return "The call did not finish by its deadline."
	}
	return "The call failed: the host reported an internal error. Details are in the server's log."
}

// listenerFailed is the fatal error of a change listener that failed: its
// text is the host's, so the model is told only that it failed.
func listenerFailed(err error) error {
	return &fatalError{msg: "The change was not made: the host's change listener failed. Details are in the server's log.", err: err}
}

// Messages of the path refusals shared by every tool.
func outsideMsg(p string) error { return retryf("Path '%s' resolves outside the root directory.", p) }
func loopMsg(p string) error    { return retryf("Path '%s' resolves through a symlink loop.", p) }
func tooLongMsg(p string) error {
	return retryf("Path '%s' is too long: a name or the whole path exceeds the storage limit.", p)
}

// isFatalStorage reports whether err is a failure of the storage itself
// (full or read-only file system, I/O error) that no other path would
// avoid.
func isFatalStorage(err error) bool {
	return errors.Is(err, backend.ErrNoSpace) || errors.Is(err, backend.ErrReadOnlyStorage) ||
		errors.Is(err, backend.ErrIO)
}

// pathErr maps the errors every tool treats alike: containment, loops,
// over-long or invalid names, policy refusals, read-only storage,
// cancellation. It returns nil when err needs a tool-specific message.
func (s *Set) pathErr(err error, display string) error {
	var r *RetryError
	var d *policy.Denied
	var f *fatalError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &f):
		// Already judged fatal (a listener's error), even if it wraps a
		// retry.
		return err
	case errors.As(err, &r):
		return r
	case errors.As(err, &d):
		return &RetryError{Message: d.Message}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case isFatalStorage(err):
		return s.fatal(err)
	case errors.Is(err, backend.ErrOutside):
		return outsideMsg(display)
	case errors.Is(err, backend.ErrLoop):
		return loopMsg(display)
	case errors.Is(err, backend.ErrNameTooLong):
		return tooLongMsg(display)
	case errors.Is(err, backend.ErrReadOnly):
		return retryf("Path '%s' is on read-only storage and cannot be changed. Write somewhere else.", display)
	case errors.Is(err, backend.ErrInvalidPath):
		return retryf("Path '%s' is not a valid name on this storage.", display)
	case errors.Is(err, backend.ErrSymlink):
		return retryf("Path '%s' changed while it was being used (a symlink appeared). Try again.", display)
	case errors.Is(err, fs.ErrPermission):
		return retryf("Permission denied: %s", display)
	}
	return nil
}

// storageErr maps err with pathErr, then the errors a fresh look or
// another path could avoid (a path missing, of another type or changed
// underfoot, since storage can change between a tool's checks and its
// use) to retries naming the path; anything left is a failure of the
// storage, its connection or the host, and fatal.
func (s *Set) storageErr(err error, display string) error {
	if m := s.pathErr(err, display); m != nil {
		return m
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return retryf("Path not found: %s", display)
	case errors.Is(err, backend.ErrNotDir):
		return retryf("Path '%s' is not a directory, or a name on the way to it is a file.", display)
	case errors.Is(err, backend.ErrIsDir):
		return retryf("'%s' is a directory, not a file.", display)
	case errors.Is(err, backend.ErrNotRegular):
		return retryf("Path '%s' is not a regular file or directory.", display)
	case errors.Is(err, backend.ErrPrecondition):
		return retryf("Conflict: path '%s' changed while it was being used. Check it and retry.", display)
	case errors.Is(err, fs.ErrExist):
		return retryf("Path '%s' already exists.", display)
	case errors.Is(err, rg.ErrArgTooLong):
		return retryf("An argument of this call is too long to pass to ripgrep (at most 128 KiB each). Use a shorter pattern or glob.")
	}
	return s.fatal(err)
}

// fatal wraps a storage failure. The storage's own text may name host
// paths, endpoints, credentials and the program's packages ("stat s3/...:
// s3 request failed: dial tcp 127.0.0.1:..."), so the message says only
// what kind of failure it was; the whole error stays wrapped for the host.
func (s *Set) fatal(err error) error {
	var f *fatalError
	if errors.As(err, &f) {
		return err
	}
	return &fatalError{msg: "Storage failure: " + failureKind(err) + ". Details are in the server's log.", err: err}
}

// failureKind words what kind of storage failure err is, from the fatal
// sentinels of package backend (which adapters map errnos to) and the
// network's own errors.
func failureKind(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, backend.ErrNoSpace):
		return "no space is left on the storage"
	case errors.Is(err, backend.ErrReadOnlyStorage):
		return "the storage is read-only"
	case errors.Is(err, backend.ErrIO):
		return "the storage reported an input/output error"
	case errors.As(err, &ne) && ne.Timeout():
		return "the storage server did not answer in time"
	case errors.As(err, &ne):
		return "the storage server could not be reached"
	}
	return "the storage failed"
}

// scrub rewrites host paths in an error text: paths inside the local root
// become relative to it, any other absolute path becomes
// <outside-workspace>. Rooted namespaces print virtual paths, which are
// not host paths, so only plain namespaces are scrubbed.
func (s *Set) scrub(msg string) string {
	if s.rooted {
		return msg
	}
	if s.hostRoot != "" {
		msg = strings.ReplaceAll(msg, s.hostRoot+"/", "")
		msg = strings.ReplaceAll(msg, s.hostRoot, ".")
	}
	var b strings.Builder
	for i := 0; i < len(msg); {
		if msg[i] == '/' && (i == 0 || strings.IndexByte(" '\"(:=\t[", msg[i-1]) >= 0) {
			j := i
			for j < len(msg) && strings.IndexByte(" '\"():,\t]", msg[j]) < 0 {
				j++
			}
			b.WriteString("<outside-workspace>")
			i = j
			continue
		}
		b.WriteByte(msg[i])
		i++
	}
	return b.String()
}
