package azureadapter

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/fencefs/fencefs/backend"
)

// apiError is an Azure error answer mapped to a backend sentinel. Its
// message names the sentinel and the Azure error code; the SDK error stays
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
	return fmt.Sprintf("%v (Azure %s)", e.sentinel, e.code)
}

func (e *apiError) Unwrap() []error { return []error{e.sentinel, e.cause} }

// transportError is a request that got no answer. Its message leaves out
// the request URL, which names the account, the container and the tenant
// prefix.
type transportError struct {
	err   error
	cause error
}

func (e *transportError) Error() string { return "azure blob request failed: " + e.err.Error() }

func (e *transportError) Unwrap() []error { return []error{e.err, e.cause} }

// Error codes of the Blob service (bloberror.Code values) that this
// adapter maps or tells apart.
const (
	codeBlobNotFound          = "BlobNotFound"
	codeConditionNotMet       = "ConditionNotMet"
	codeBlobAlreadyExists     = "BlobAlreadyExists"
	codeSourceConditionNotMet = "SourceConditionNotMet"
	codeTargetConditionNotMet = "TargetConditionNotMet"
	codeInvalidBlockList      = "InvalidBlockList"
)

// codeSentinel maps Blob service error codes to backend sentinels; nil for
// codes it does not know. See
// https://learn.microsoft.com/en-us/rest/api/storageservices/blob-service-error-codes.
func codeSentinel(code string) error {
	switch code {
	case codeBlobNotFound, "ContainerNotFound", "ResourceNotFound", "ContainerBeingDeleted":
		return fs.ErrNotExist
	case "AuthorizationFailure", "AuthenticationFailed", "AuthorizationPermissionMismatch",
		"AuthorizationResourceTypeMismatch", "InsufficientAccountPermissions", "AccountIsDisabled",
		"ContainerDisabled", "BlobArchived", "BlobImmutableDueToPolicy":
		return fs.ErrPermission
	case codeConditionNotMet, codeSourceConditionNotMet, codeTargetConditionNotMet, "LeaseIdMissing", "LeaseIdMismatch":
		return backend.ErrPrecondition
	case codeBlobAlreadyExists:
		return fs.ErrExist
	case "InvalidResourceName", "OutOfRangeInput":
		return backend.ErrNameTooLong
	case "ContainerQuotaExceeded", "AccountLimitExceeded", "BlockCountExceedsLimit", "BlockListTooLong":
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
	}
	return nil
}

// errorCode returns the Blob service error code of an SDK error, if any.
func errorCode(err error) string {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.ErrorCode
	}
	return ""
}

// mapError turns an SDK error into one that matches the backend sentinels
// with errors.Is: missing blobs fs.ErrNotExist, refusals fs.ErrPermission,
// failed conditions backend.ErrPrecondition, full storage
// backend.ErrNoSpace, and a cancelled or expired context the context's
// error.
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
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		if s := codeSentinel(re.ErrorCode); s != nil {
			return &apiError{sentinel: s, code: re.ErrorCode, cause: err}
		}
		if s := statusSentinel(re.StatusCode); s != nil {
			return &apiError{sentinel: s, code: http.StatusText(re.StatusCode), cause: err}
		}
		return &apiError{sentinel: errors.New("azure blob service refused the request"), code: re.ErrorCode, cause: err}
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

// isNotFound reports whether err says the blob does not exist.
func isNotFound(err error) bool {
	return errors.Is(mapError(err), fs.ErrNotExist)
}

// conditionalWriteError maps the failure of a conditional write: a failed
// If-None-Match: * is fs.ErrExist (the service answers 409
// BlobAlreadyExists, or 412), and a failed If-Match (a 404 for a missing
// blob, or a block list whose blocks a concurrent commit discarded)
// backend.ErrPrecondition.
func conditionalWriteError(op, name string, err error, pre backend.Precondition, ifMatch string) error {
	m := mapError(err)
	switch {
	case pre.CreateOnly && (errors.Is(m, backend.ErrPrecondition) || errors.Is(m, fs.ErrExist)):
		return &fs.PathError{Op: op, Path: name, Err: fs.ErrExist}
	case ifMatch != "" && errors.Is(m, fs.ErrNotExist):
		return &fs.PathError{Op: op, Path: name, Err: backend.ErrPrecondition}
	case ifMatch != "" && errorCode(err) == codeInvalidBlockList:
		// Another writer's commit replaced the blob and with it the
		// blocks staged here: the blob is not the one matched.
		return &fs.PathError{Op: op, Path: name, Err: &apiError{sentinel: backend.ErrPrecondition, code: codeInvalidBlockList, cause: err}}
	}
	return &fs.PathError{Op: op, Path: name, Err: m}
}
