package s3adapter

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/fencefs/fencefs/backend"
)

// statusError is an error answer with an HTTP status and no known code.
type statusError int

func (e statusError) Error() string       { return fmt.Sprintf("status %d", int(e)) }
func (e statusError) HTTPStatusCode() int { return int(e) }

func TestMapError(t *testing.T) {
	api := func(code string) error {
		return fmt.Errorf("operation error S3: GetObject: %w", &smithy.GenericAPIError{Code: code})
	}
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"NoSuchKey", api("NoSuchKey"), fs.ErrNotExist},
		{"NotFound", api("NotFound"), fs.ErrNotExist},
		{"NoSuchBucket", api("NoSuchBucket"), fs.ErrNotExist},
		{"AccessDenied", api("AccessDenied"), fs.ErrPermission},
		{"SignatureDoesNotMatch", api("SignatureDoesNotMatch"), fs.ErrPermission},
		{"PreconditionFailed", api("PreconditionFailed"), backend.ErrPrecondition},
		{"ConditionalRequestConflict", api("ConditionalRequestConflict"), backend.ErrPrecondition},
		{"ObjectParentIsFile", api("ObjectParentIsFile"), backend.ErrNotDir},
		{"ExistingObjectIsDirectory", api("ExistingObjectIsDirectory"), backend.ErrIsDir},
		{"KeyTooLongError", api("KeyTooLongError"), backend.ErrNameTooLong},
		{"InsufficientStorage", api("InsufficientStorage"), backend.ErrNoSpace},
		{"XMinioStorageFull", api("XMinioStorageFull"), backend.ErrNoSpace},
		{"QuotaExceeded", api("QuotaExceeded"), backend.ErrNoSpace},
		{"EntityTooLarge", api("EntityTooLarge"), backend.ErrFileTooLarge},
		{"413 without a code", statusError(413), backend.ErrFileTooLarge},
		{"507 without a code", statusError(507), backend.ErrNoSpace},
		{"404 without a code", statusError(404), fs.ErrNotExist},
		{"403 without a code", statusError(403), fs.ErrPermission},
		{"412 without a code", statusError(412), backend.ErrPrecondition},
		{"deadline", fmt.Errorf("wrapped: %w", context.DeadlineExceeded), context.DeadlineExceeded},
		{"cancelled", fmt.Errorf("wrapped: %w", context.Canceled), context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mapError(tt.err)
			if !errors.Is(got, tt.want) {
				t.Errorf("mapError(%v) = %v, want a match for %v", tt.err, got, tt.want)
			}
			pe := pathError("open", "a/b", tt.err)
			var pathErr *fs.PathError
			if !errors.As(pe, &pathErr) || pathErr.Path != "a/b" || !errors.Is(pe, tt.want) {
				t.Errorf("pathError = %#v", pe)
			}
		})
	}
	if got := mapError(statusError(500)); got != error(statusError(500)) {
		t.Errorf("an unknown answer changed: %v", got)
	}
}

func TestTransportErrorHidesURL(t *testing.T) {
	err := &url.Error{Op: "Get", URL: "http://127.0.0.1:7070/bucket/tenant7/secret.txt", Err: errors.New("connection refused")}
	msg := pathError("open", "secret.txt", fmt.Errorf("send: %w", err)).Error()
	if strings.Contains(msg, "tenant7") || strings.Contains(msg, "bucket") {
		t.Errorf("error %q names the bucket or the tenant prefix", msg)
	}
	if !strings.Contains(msg, "connection refused") {
		t.Errorf("error %q lost the cause", msg)
	}
}

func TestConditionalWriteError(t *testing.T) {
	failed := &smithy.GenericAPIError{Code: "PreconditionFailed"}
	missing := &smithy.GenericAPIError{Code: "NoSuchKey"}
	tests := []struct {
		name    string
		err     error
		pre     backend.Precondition
		ifMatch string
		want    error
	}{
		{"create-only on an existing key", failed, backend.Precondition{CreateOnly: true}, "", fs.ErrExist},
		{"version changed", failed, backend.Precondition{MatchVersion: `"v"`}, `"v"`, backend.ErrPrecondition},
		{"target gone", missing, backend.Precondition{MatchVersion: `"v"`}, `"v"`, backend.ErrPrecondition},
		{"unconditional write to a missing bucket", missing, backend.Precondition{}, "", fs.ErrNotExist},
	}
	for _, tt := range tests {
		if got := conditionalWriteError("commit", "f", tt.err, tt.pre, tt.ifMatch); !errors.Is(got, tt.want) {
			t.Errorf("%s: %v, want a match for %v", tt.name, got, tt.want)
		}
	}
}

func TestCheckPath(t *testing.T) {
	f, err := New(newTestClient(), "b", strings.Repeat("p", 500), Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		want error
	}{
		{".", nil},
		{"a/b.txt", nil},
		{strings.Repeat("n", MaxNameBytes), nil},
		{strings.Repeat("n", MaxNameBytes+1), backend.ErrNameTooLong},
		{strings.Repeat("abc/", 140) + "f", backend.ErrNameTooLong},
		{"a//b", backend.ErrInvalidPath},
		{"/a", backend.ErrInvalidPath},
		{"~a", backend.ErrInvalidPath},
	}
	for _, tt := range tests {
		err := f.keys.Check("stat", tt.name)
		if (tt.want == nil) != (err == nil) || (tt.want != nil && !errors.Is(err, tt.want)) {
			t.Errorf("Check(%.20q...) = %v, want %v", tt.name, err, tt.want)
		}
	}
}

func TestNewPrefix(t *testing.T) {
	tests := []struct {
		prefix, want string
		ok           bool
	}{
		{"", "", true},
		{"tenant1", "tenant1/", true},
		{"tenant1/", "tenant1/", true},
		{"a/b", "a/b/", true},
		{"/abs", "", false},
		{"a/../b", "", false},
		{".", "", false},
		{"~x", "", false},
	}
	for _, tt := range tests {
		f, err := New(newTestClient(), "b", tt.prefix, Options{})
		if (err == nil) != tt.ok {
			t.Errorf("New(prefix %q) error = %v, want ok=%v", tt.prefix, err, tt.ok)
			continue
		}
		if err == nil && f.keys.Prefix() != tt.want {
			t.Errorf("New(prefix %q) key prefix = %q, want %q", tt.prefix, f.keys.Prefix(), tt.want)
		}
	}
}

func newTestClient() *s3.Client { return s3.New(s3.Options{Region: "us-east-1"}) }
