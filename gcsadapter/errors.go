package gcsadapter

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"

	"github.com/fencefs/fencefs/backend"
)

// apiError is a Cloud Storage error answer mapped to a backend sentinel.
// Its message names the sentinel and the HTTP status; the SDK error stays
// reachable through errors.As.
type apiError struct {
	sentinel error
	status   string
	cause    error
}

func (e *apiError) Error() string {
	if e.status == "" {
		return e.sentinel.Error()
	}
	return fmt.Sprintf("%v (GCS %s)", e.sentinel, e.status)
}

func (e *apiError) Unwrap() []error { return []error{e.sentinel, e.cause} }

// transportError is a request that got no answer. Its message leaves out
// the request URL, which names the bucket and the tenant prefix.
type transportError struct {
	err   error
	cause error
}

func (e *transportError) Error() string { return "gcs request failed: " + e.err.Error() }

func (e *transportError) Unwrap() []error { return []error{e.err, e.cause} }

// statusSentinel maps the HTTP status of an error answer.
func statusSentinel(status int) error {
	switch status {
	case http.StatusNotFound:
		return fs.ErrNotExist
	case http.StatusForbidden, http.StatusUnauthorized:
		return fs.ErrPermission
	case http.StatusPreconditionFailed:
		return backend.ErrPrecondition
	case http.StatusInsufficientStorage:
		return backend.ErrNoSpace
	}
	return nil
}

// mapError turns an SDK error into one that matches the backend
// sentinels with errors.Is: missing objects and buckets fs.ErrNotExist,
// refusals fs.ErrPermission, failed preconditions backend.ErrPrecondition,
// and a cancelled or expired context the context's error.
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
	if errors.Is(err, storage.ErrObjectNotExist) || errors.Is(err, storage.ErrBucketNotExist) {
		return &apiError{sentinel: fs.ErrNotExist, status: http.StatusText(http.StatusNotFound), cause: err}
	}
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		if s := statusSentinel(ge.Code); s != nil {
			return &apiError{sentinel: s, status: http.StatusText(ge.Code), cause: err}
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

// isNotFound reports whether err says the object does not exist.
func isNotFound(err error) bool {
	return errors.Is(mapError(err), fs.ErrNotExist)
}

// conditionalWriteError maps the failure of a conditional change: a
// failed DoesNotExist is fs.ErrExist, and a failed GenerationMatch on an
// object that is gone backend.ErrPrecondition.
func conditionalWriteError(op, name string, err error, pre backend.Precondition, matched bool) error {
	m := mapError(err)
	switch {
	case pre.CreateOnly && errors.Is(m, backend.ErrPrecondition):
		return &fs.PathError{Op: op, Path: name, Err: fs.ErrExist}
	case matched && errors.Is(m, fs.ErrNotExist):
		return &fs.PathError{Op: op, Path: name, Err: backend.ErrPrecondition}
	}
	return &fs.PathError{Op: op, Path: name, Err: m}
}
