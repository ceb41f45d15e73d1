package s3adapter

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"

	"github.com/aws/smithy-go"

	"github.com/fencefs/fencefs/backend"
)

// apiError is an S3 error answer mapped to a backend sentinel. Its
// message names the sentinel and the S3 error code; the SDK error stays
// reachable through errors.As.
type apiError struct {
	sentinel error
	code     string
	cause    error
}

func (e *apiError) Error() string {
	if e.code == "" {
		return e.sentinel.Error()
	}
	return fmt.Sprintf("%v (S3 %s)", e.sentinel, e.code)
}

func (e *apiError) Unwrap() []error { return []error{e.sentinel, e.cause} }

// transportError is a request that got no answer. Its message leaves out
// the request URL, which names the bucket and the tenant prefix.
type transportError struct {
	err   error
	cause error
}

func (e *transportError) Error() string { return "s3 request failed: " + e.err.Error() }

func (e *transportError) Unwrap() []error { return []error{e.err, e.cause} }

// codeSentinel maps S3 error codes (including versitygw's POSIX ones) to
// backend sentinels; nil for codes it does not know.
func codeSentinel(code string) error {
	switch code {
	case "NoSuchKey", "NotFound", "NoSuchBucket":
		return fs.ErrNotExist
	case "AccessDenied", "Forbidden", "AllAccessDisabled", "InvalidAccessKeyId", "SignatureDoesNotMatch":
		return fs.ErrPermission
	case "PreconditionFailed", "ConditionalRequestConflict":
		return backend.ErrPrecondition
	case "ObjectParentIsFile":
		return backend.ErrNotDir
	case "ExistingObjectIsDirectory":
		return backend.ErrIsDir
	case "KeyTooLongError":
		return backend.ErrNameTooLong
	case "EntityTooLarge":
		// An object over the store's largest size (5 GiB for one PUT).
		return backend.ErrFileTooLarge
	case "InsufficientStorage", "XMinioStorageFull", "QuotaExceeded":
		// A full disk (versitygw, MinIO) or a reached quota (Ceph RGW):
		// nothing the caller does to the path helps.
		return backend.ErrNoSpace
	}
	return nil
}

// statusSentinel maps the HTTP status of an answer without a known code.
func statusSentinel(status int) error {
	switch status {
	case http.StatusNotFound:
		return fs.ErrNotExist
	case http.StatusForbidden:
		return fs.ErrPermission
	case http.StatusPreconditionFailed:
		return backend.ErrPrecondition
	case http.StatusInsufficientStorage:
		return backend.ErrNoSpace
	case http.StatusRequestEntityTooLarge:
		return backend.ErrFileTooLarge
	}
	return nil
}

// mapError turns an SDK error into one that matches the backend
// sentinels with errors.Is: missing keys fs.ErrNotExist, refusals
// fs.ErrPermission, failed conditions backend.ErrPrecondition, full
// storage backend.ErrNoSpace, and a cancelled or expired context the
// context's error.
func mapError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) {
		return context.Canceled
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return context.DeadlineExceeded
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		if s := codeSentinel(ae.ErrorCode()); s != nil {
			return &apiError{sentinel: s, code: ae.ErrorCode(), cause: err}
		}
	}
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) {
		if s := statusSentinel(re.HTTPStatusCode()); s != nil {
			return &apiError{sentinel: s, code: http.StatusText(re.HTTPStatusCode()), cause: err}
		}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return &transportError{err: ue.Err, cause: err}
	}
	return err
}

// pathError returns err, mapped, as an *fs.PathError naming the storage
// path.
func pathError(op, name string, err error) error {
	return &fs.PathError{Op: op, Path: name, Err: mapError(err)}
}

// isNotFound reports whether err says the key does not exist.
func isNotFound(err error) bool {
	return errors.Is(mapError(err), fs.ErrNotExist)
}

// conditionalWriteError maps the failure of a conditional write: a
// failed If-None-Match is fs.ErrExist, and a failed If-Match (which S3
// answers with 404 for a missing key) backend.ErrPrecondition.
func conditionalWriteError(op, name string, err error, pre backend.Precondition, ifMatch string) error {
	m := mapError(err)
	switch {
	case pre.CreateOnly && errors.Is(m, backend.ErrPrecondition):
		return &fs.PathError{Op: op, Path: name, Err: fs.ErrExist}
	case ifMatch != "" && errors.Is(m, fs.ErrNotExist):
		return &fs.PathError{Op: op, Path: name, Err: backend.ErrPrecondition}
	}
	return &fs.PathError{Op: op, Path: name, Err: m}
}
