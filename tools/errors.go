package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/policy"
	"github.com/fencefs/fencefs/tools/internal/rg"
)

// RetryError is an error the model can correct: a missing file, a denied
// path, a stale hash, bad arguments. Hosts return its Message to the model
// as the tool result and let it try again; every other error a tool
// returns is fatal to the call. Its Kind tells a host what kind of
// refusal it is without reading the text: errors.Is(err, KindConflict).
type RetryError struct {
	// Message is the text shown to the model.
	Message string
	// Kind is what kind of refusal this is. Every refusal of this
	// package has one; KindUnknown is left only for a host's own
	// RetryError that sets none.
	Kind Kind
}

// Error returns the message shown to the model.
func (e *RetryError) Error() string { return e.Message }

// Is reports whether target is the Kind of e, so that errors.Is(err,
// KindNotFound) tells a missing path from any other refusal.
func (e *RetryError) Is(target error) bool {
	k, ok := target.(Kind)
	return ok && k != KindUnknown && k == e.Kind
}

// Refusal returns a *RetryError of kind with msg as the text for the
// model, for a host that refuses a call itself (a quota, a rate limit)
// and wants its refusal told apart as the tools' own are.
func Refusal(kind Kind, msg string) error {
	return &RetryError{Message: msg, Kind: kind}
}

// Kind is the kind of a refusal ([RetryError.Kind]). A Kind is also an
// error, the sentinel errors.Is matches against every refusal of that
// kind; its value is a short word for logs, metrics and audit records.
type Kind string

// Error returns the kind's word.
func (k Kind) Error() string { return string(k) }

// The kinds of refusal. Every refusal of this package has one of them,
// KindQuota, KindRateLimited and KindUnavailable excepted, which are for
// hosts ([Refusal]); package server's links refuse with them.
const (
	// KindUnknown is the kind of a RetryError that sets none, and what
	// KindOf returns for an error that is no refusal.
	KindUnknown Kind = ""
	// KindInvalid: the arguments are invalid (an unknown or missing
	// argument, a value out of range, a malformed path, pattern, glob,
	// regular expression or patch, a move onto itself).
	KindInvalid Kind = "invalid"
	// KindNoMatch: the text or patch context to change is not in the
	// file, or is in it more than once.
	KindNoMatch Kind = "no_match"
	// KindNotFound: a path, or the parent directory of one to create,
	// does not exist.
	KindNotFound Kind = "not_found"
	// KindExists: the path to create already exists.
	KindExists Kind = "exists"
	// KindIsDir: a file was expected and the path is a directory.
	KindIsDir Kind = "is_dir"
	// KindNotDir: a directory was expected and the path, or a name on the
	// way to it, is not one.
	KindNotDir Kind = "not_dir"
	// KindNotEmpty: a directory to delete is not empty and the call is
	// not recursive.
	KindNotEmpty Kind = "not_empty"
	// KindNotRegular: the path is neither a regular file nor a directory
	// (a device, a socket, a link the storage cannot follow).
	KindNotRegular Kind = "not_regular"
	// KindNotText: the file is binary or not valid UTF-8, and the tool
	// changes text only.
	KindNotText Kind = "not_text"
	// KindDenied: the access policy or the storage's permissions refuse
	// the path (a deny pattern, a path outside the allowed patterns or a
	// scope, an operation the host did not approve), or the scopes of the
	// caller's token do not grant the tool.
	KindDenied Kind = "denied"
	// KindProtected: the path may be read but not changed (a protected
	// pattern, the namespace root, a mount, the working directory).
	KindProtected Kind = "protected"
	// KindReadOnly: the storage or the tool set is read-only, or the
	// path is where nothing can be created (the root of a namespace of
	// mounts).
	KindReadOnly Kind = "read_only"
	// KindNotRead: the tool set requires a file to be read before it is
	// changed, and it was not.
	KindNotRead Kind = "not_read"
	// KindConflict: the path changed since it was read or while the call
	// ran (a stale expected_hash, a precondition the storage refused).
	KindConflict Kind = "conflict"
	// KindTooLarge: a file, an argument or a list is over a limit of the
	// tool.
	KindTooLarge Kind = "too_large"
	// KindOutside: the path resolves outside the root, or through a
	// symlink loop.
	KindOutside Kind = "outside"
	// KindUnsupported: the storage cannot do this (remove files, move
	// between mounts).
	KindUnsupported Kind = "unsupported"
	// KindTimeout: the call, or a search it ran, did not finish within
	// its tool's time bound (Options.CallTimeout, RipgrepTimeout).
	KindTimeout Kind = "timeout"
	// KindQuota: a host's stored-usage limit refuses the change.
	KindQuota Kind = "quota"
	// KindRateLimited: a host's rate or concurrency limit refuses the
	// call.
	KindRateLimited Kind = "rate_limited"
	// KindUnavailable: the host cannot take the call now, for a reason of
	// its own the model cannot change (its audit log cannot be written,
	// its usage could not be counted); a later retry may succeed.
	KindUnavailable Kind = "unavailable"
)

// Kinds lists every kind but KindUnknown.
var Kinds = []Kind{
	KindInvalid, KindNoMatch, KindNotFound, KindExists, KindIsDir, KindNotDir, KindNotEmpty,
	KindNotRegular, KindNotText, KindDenied, KindProtected, KindReadOnly, KindNotRead,
	KindConflict, KindTooLarge, KindOutside, KindUnsupported, KindTimeout, KindQuota, KindRateLimited,
	KindUnavailable,
}

// KindOf returns the kind of the refusal err is, or KindUnknown when err
// is no refusal (nil, a fatal error, a cancellation).
func KindOf(err error) Kind {
	var r *RetryError
	if !IsRetry(err) || !errors.As(err, &r) {
		return KindUnknown
	}
	return r.Kind
}

// Outcome is how a tool call really ended, as an audit record or a metric
// names it.
type Outcome string

// The outcomes of a call.
const (
	// OutcomeOK: the call succeeded (err is nil).
	OutcomeOK Outcome = "ok"
	// OutcomeRefused: the call was refused with a retry the model can
	// act on ([KindOf] tells which kind), and changed nothing.
	OutcomeRefused Outcome = "refused"
	// OutcomeError: the call failed on storage, a listener or the host.
	OutcomeError Outcome = "error"
	// OutcomeCancelled: the caller cancelled the call.
	OutcomeCancelled Outcome = "cancelled"
	// OutcomeTimedOut: the call ended by a deadline, the caller's or the
	// tool's own (its refusal is then of KindTimeout).
	OutcomeTimedOut Outcome = "timed_out"
)

// OutcomeOf returns how a call that returned err ended. A refusal is
// OutcomeRefused, but one of KindTimeout is OutcomeTimedOut; a fatal
// error caused by the call's cancellation or deadline is
// OutcomeCancelled or OutcomeTimedOut.
func OutcomeOf(err error) Outcome {
	switch {
	case err == nil:
		return OutcomeOK
	case IsRetry(err):
		if KindOf(err) == KindTimeout {
			return OutcomeTimedOut
		}
		return OutcomeRefused
	case errors.Is(err, context.Canceled):
		return OutcomeCancelled
	case errors.Is(err, context.DeadlineExceeded):
		return OutcomeTimedOut
	}
	return OutcomeError
}

// IsRetry reports whether err is, or wraps, a *RetryError. A fatal error
// that happens to wrap one (a change listener returning it) is not.
func IsRetry(err error) bool {
	var r *RetryError
	var f *fatalError
	return errors.As(err, &r) && !errors.As(err, &f)
}

// retryf builds a *RetryError of kind from a format.
func retryf(kind Kind, format string, args ...any) error {
	return &RetryError{Message: fmt.Sprintf(format, args...), Kind: kind}
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

// deniedKind is the kind of the refusal of a policy: KindProtected for a
// protected pattern, KindDenied for any other.
func deniedKind(d *policy.Denied) Kind {
	if d.Protected {
		return KindProtected
	}
	return KindDenied
}

// Messages of the path refusals shared by every tool.
func outsideMsg(p string) error {
	return retryf(KindOutside, "Path '%s' resolves outside the root directory.", p)
}
func loopMsg(p string) error {
	return retryf(KindOutside, "Path '%s' resolves through a symlink loop.", p)
}
func tooLongMsg(p string) error {
	return retryf(KindInvalid, "Path '%s' is too long: a name or the whole path exceeds the storage limit.", p)
}

// isFatalStorage reports whether err is a failure of the storage itself
// (full or read-only file system, I/O error, a file size limit) that no
// other path would avoid.
func isFatalStorage(err error) bool {
	return errors.Is(err, backend.ErrNoSpace) || errors.Is(err, backend.ErrReadOnlyStorage) ||
		errors.Is(err, backend.ErrIO) || errors.Is(err, backend.ErrFileTooLarge)
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
		return &RetryError{Message: d.Message, Kind: deniedKind(d)}
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
		return retryf(KindReadOnly, "Path '%s' is on read-only storage and cannot be changed. Write somewhere else.", display)
	case errors.Is(err, backend.ErrInvalidPath):
		return retryf(KindInvalid, "Path '%s' is not a valid name on this storage.", display)
	case errors.Is(err, backend.ErrSymlink):
		return retryf(KindConflict, "Path '%s' changed while it was being used (a symlink appeared). Try again.", display)
	case errors.Is(err, fs.ErrPermission):
		return retryf(KindDenied, "Permission denied: %s", display)
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
		return retryf(KindNotFound, "Path not found: %s", display)
	case errors.Is(err, backend.ErrNotDir):
		return retryf(KindNotDir, "Path '%s' is not a directory, or a name on the way to it is a file.", display)
	case errors.Is(err, backend.ErrIsDir):
		return retryf(KindIsDir, "'%s' is a directory, not a file.", display)
	case errors.Is(err, backend.ErrNotRegular):
		return retryf(KindNotRegular, "Path '%s' is not a regular file or directory.", display)
	case errors.Is(err, backend.ErrPrecondition):
		return retryf(KindConflict, "Conflict: path '%s' changed while it was being used. Check it and retry.", display)
	case errors.Is(err, fs.ErrExist):
		return retryf(KindExists, "Path '%s' already exists.", display)
	case errors.Is(err, rg.ErrArgTooLong):
		return retryf(KindTooLarge, "An argument of this call is too long to pass to ripgrep (at most 128 KiB each). Use a shorter pattern or glob.")
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
// network's own errors. Only a failure of the network is worded as one:
// an errno of a local file system is no unreachable server, although
// syscall.Errno too satisfies net.Error.
func failureKind(err error) string {
	switch {
	case errors.Is(err, backend.ErrNoSpace):
		return "no space is left on the storage"
	case errors.Is(err, backend.ErrReadOnlyStorage):
		return "the storage is read-only"
	case errors.Is(err, backend.ErrIO):
		return "the storage reported an input/output error"
	case errors.Is(err, backend.ErrFileTooLarge):
		return "the file is larger than the storage allows"
	}
	switch timeout, ok := networkFailure(err); {
	case ok && timeout:
		return "the storage server did not answer in time"
	case ok:
		return "the storage server could not be reached"
	}
	return "the storage failed"
}

// networkFailure reports whether err's tree holds a failure of the
// network, and whether it was a timeout: an error of package net or
// net/url (a dial, a read or write on a connection, a name lookup), or an
// errno only a connection gives. Any other errno is not one.
func networkFailure(err error) (timeout, ok bool) {
	walkErrors(err, func(e error) bool {
		if errno, isErrno := e.(syscall.Errno); isErrno {
			switch errno {
			case syscall.ETIMEDOUT:
				timeout, ok = true, true
			case syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED, syscall.EHOSTUNREACH,
				syscall.ENETUNREACH, syscall.ENETDOWN, syscall.EPIPE:
				ok = true
			}
			return ok
		}
		timeout, ok = netFailure(e)
		return ok
	})
	return timeout, ok
}

// walkErrors calls fn on err and every error it wraps, depth first,
// until fn returns true.
func walkErrors(err error, fn func(error) bool) bool {
	if err == nil {
		return false
	}
	if fn(err) {
		return true
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return walkErrors(u.Unwrap(), fn)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if walkErrors(e, fn) {
				return true
			}
		}
	}
	return false
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
