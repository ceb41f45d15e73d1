package azureadapter

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/fencefs/fencefs/backend"
)

func responseError(status int, code string) error {
	return &azcore.ResponseError{StatusCode: status, ErrorCode: code}
}

func TestMapError(t *testing.T) {
	for _, c := range []struct {
		err  error
		want error
	}{
		{responseError(404, "BlobNotFound"), fs.ErrNotExist},
		{responseError(404, "ContainerNotFound"), fs.ErrNotExist},
		{responseError(404, ""), fs.ErrNotExist},
		{responseError(403, "AuthorizationPermissionMismatch"), fs.ErrPermission},
		{responseError(403, "AuthenticationFailed"), fs.ErrPermission},
		{responseError(412, "ConditionNotMet"), backend.ErrPrecondition},
		{responseError(412, "SourceConditionNotMet"), backend.ErrPrecondition},
		{responseError(412, ""), backend.ErrPrecondition},
		{responseError(409, "BlobAlreadyExists"), fs.ErrExist},
		{responseError(409, "BlockCountExceedsLimit"), backend.ErrNoSpace},
		{fmt.Errorf("wrapped: %w", context.DeadlineExceeded), context.DeadlineExceeded},
		{fmt.Errorf("wrapped: %w", context.Canceled), context.Canceled},
	} {
		if got := mapError(c.err); !errors.Is(got, c.want) {
			t.Errorf("mapError(%v) = %v, want %v", c.err, got, c.want)
		}
	}
	var re *azcore.ResponseError
	if !errors.As(mapError(responseError(500, "InternalError")), &re) {
		t.Error("an unknown answer lost the SDK error")
	}
}

func TestTransportErrorHidesURL(t *testing.T) {
	err := mapError(&url.Error{Op: "Get", URL: "http://127.0.0.1:1/acct/cont/tenant/a.txt", Err: errors.New("connection refused")})
	if s := err.Error(); strings.Contains(s, "tenant") || strings.Contains(s, "127.0.0.1") {
		t.Errorf("transport error %q names the URL", s)
	}
}

func TestConditionalWriteError(t *testing.T) {
	for _, c := range []struct {
		err     error
		pre     backend.Precondition
		ifMatch string
		want    error
	}{
		{responseError(409, "BlobAlreadyExists"), backend.Precondition{CreateOnly: true}, "", fs.ErrExist},
		{responseError(412, "ConditionNotMet"), backend.Precondition{CreateOnly: true}, "", fs.ErrExist},
		{responseError(404, "BlobNotFound"), backend.Precondition{MatchVersion: `"v"`}, `"v"`, backend.ErrPrecondition},
		{responseError(400, "InvalidBlockList"), backend.Precondition{MatchVersion: `"v"`}, `"v"`, backend.ErrPrecondition},
		{responseError(412, "ConditionNotMet"), backend.Precondition{MatchVersion: `"v"`}, `"v"`, backend.ErrPrecondition},
	} {
		err := conditionalWriteError("commit", "f", c.err, c.pre, c.ifMatch)
		var pe *fs.PathError
		if !errors.Is(err, c.want) || !errors.As(err, &pe) || pe.Path != "f" {
			t.Errorf("conditionalWriteError(%v, %+v) = %v, want %v on f", c.err, c.pre, err, c.want)
		}
	}
}

func TestETagQuoted(t *testing.T) {
	for in, want := range map[azcore.ETag]string{`0x8D1`: `"0x8D1"`, `"0x8D1"`: `"0x8D1"`, "": ""} {
		if got := etagOf(&in); got != want {
			t.Errorf("etagOf(%q) = %q, want %q", in, got, want)
		}
	}
	if etagOf(nil) != "" {
		t.Error("etagOf(nil) is not empty")
	}
}

func TestCheckPath(t *testing.T) {
	client, err := container.NewClientWithNoCredential("https://account.blob.core.windows.net/c", nil)
	if err != nil {
		t.Fatal(err)
	}
	f, err := New(client, "p/", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		want error
	}{
		{"a/b", nil},
		{strings.Repeat("x", 255), nil},
		{strings.Repeat("x", 256), backend.ErrNameTooLong},
		{strings.Repeat("a/", 253) + "a", backend.ErrNameTooLong},
		{strings.Repeat("abc/", 255) + "a", backend.ErrNameTooLong},
		{"../x", backend.ErrInvalidPath},
	} {
		if err := f.keys.Check("op", c.name); !errors.Is(err, c.want) && (err != nil || c.want != nil) {
			t.Errorf("Check(%.30q) = %v, want %v", c.name, err, c.want)
		}
	}
}

func TestNewPrefix(t *testing.T) {
	client, err := container.NewClientWithNoCredential("https://account.blob.core.windows.net/c", nil)
	if err != nil {
		t.Fatal(err)
	}
	// A prefix of MaxSegments segments leaves no room for a name.
	for _, p := range []string{"..", "a//b", "/a", ".", strings.Repeat("x/", 600), strings.Repeat("x/", MaxSegments)} {
		if _, err := New(client, p, Options{}); err == nil {
			t.Errorf("New with prefix %q succeeded", p)
		}
	}
	for p, want := range map[string]string{"": "", "t1": "t1/", "t1/": "t1/", "a/b": "a/b/"} {
		f, err := New(client, p, Options{})
		if err != nil || f.keys.Prefix() != want {
			t.Errorf("New with prefix %q: %v; want prefix %q", p, err, want)
		}
	}
	if _, err := (Options{BlockSize: MaxBlockSize + 1}).withDefaults(); err == nil {
		t.Error("a block size above the service's limit was accepted")
	}
	for _, o := range []Options{{ListPageSize: MaxListPageSize + 1}, {ListPageSize: -1}} {
		if _, err := o.withDefaults(); err == nil {
			t.Errorf("list page size %d was accepted", o.ListPageSize)
		}
	}
	if o, _ := (Options{}).withDefaults(); o.BlockSize != DefaultBlockSize || o.CopyTimeout != DefaultCopyTimeout || o.ListPageSize != MaxListPageSize {
		t.Errorf("defaults = %+v", o)
	}
}
