package azureadapter_test

import (
	"bytes"
	"errors"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
)

// TestServiceConditions sends each conditional request the adapter's
// compare-and-swap rests on, with a condition that fails, straight to the
// emulator: every one is refused and changes nothing. The service
// documents the same for each
// (https://learn.microsoft.com/en-us/rest/api/storageservices/specifying-conditional-headers-for-blob-service-operations);
// this shows that Azurite honours them too, so the conformance suite's
// races test the adapter and not an emulator that ignores a header.
func TestServiceConditions(t *testing.T) {
	srv := azurite.Get(t)
	ctx := t.Context()
	cc := serviceClient(t, srv, nil).NewContainerClient(newContainer(t, srv))
	put := func(name, content string) azcore.ETag {
		t.Helper()
		out, err := cc.NewBlockBlobClient(name).UploadBuffer(ctx, []byte(content), nil)
		if err != nil {
			t.Fatal(err)
		}
		return *out.ETag
	}
	old := put("target", "old")
	stale := old
	put("target", "current")
	put("source", "source")
	ifMatch := &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: &stale}}
	ifNoneMatch := &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: to.Ptr(azcore.ETagAny)}}
	target := cc.NewBlockBlobClient("target")
	refused := func(what string, err error, statuses ...int) {
		t.Helper()
		var re *azcore.ResponseError
		if !errors.As(err, &re) {
			t.Errorf("%s with a failing condition: error = %v, want a refusal", what, err)
			return
		}
		for _, s := range statuses {
			if re.StatusCode == s {
				return
			}
		}
		t.Errorf("%s with a failing condition: status %d (%s), want one of %v", what, re.StatusCode, re.ErrorCode, statuses)
	}
	_, err := target.Upload(ctx, streaming.NopCloser(bytes.NewReader([]byte("x"))), &blockblob.UploadOptions{AccessConditions: ifMatch})
	refused("Put Blob If-Match", err, http.StatusPreconditionFailed)
	_, err = target.Upload(ctx, streaming.NopCloser(bytes.NewReader([]byte("x"))), &blockblob.UploadOptions{AccessConditions: ifNoneMatch})
	refused("Put Blob If-None-Match: *", err, http.StatusConflict, http.StatusPreconditionFailed)
	const id = "YmxvY2stMDAwMDAx"
	if _, err := target.StageBlock(ctx, id, streaming.NopCloser(bytes.NewReader([]byte("x"))), nil); err != nil {
		t.Fatal(err)
	}
	_, err = target.CommitBlockList(ctx, []string{id}, &blockblob.CommitBlockListOptions{AccessConditions: ifMatch})
	refused("Put Block List If-Match", err, http.StatusPreconditionFailed)
	_, err = target.CommitBlockList(ctx, []string{id}, &blockblob.CommitBlockListOptions{AccessConditions: ifNoneMatch})
	refused("Put Block List If-None-Match: *", err, http.StatusConflict, http.StatusPreconditionFailed)
	_, err = target.Delete(ctx, &blob.DeleteOptions{AccessConditions: ifMatch})
	refused("Delete Blob If-Match", err, http.StatusPreconditionFailed)
	_, err = target.DownloadStream(ctx, &blob.DownloadStreamOptions{AccessConditions: ifMatch})
	refused("Get Blob If-Match", err, http.StatusPreconditionFailed)
	src := cc.NewBlobClient("source").URL()
	_, err = target.StartCopyFromURL(ctx, src, &blob.StartCopyFromURLOptions{AccessConditions: ifNoneMatch})
	refused("Copy Blob If-None-Match: *", err, http.StatusConflict, http.StatusPreconditionFailed)
	_, err = target.StartCopyFromURL(ctx, src, &blob.StartCopyFromURLOptions{AccessConditions: ifMatch})
	refused("Copy Blob If-Match", err, http.StatusPreconditionFailed)
	_, err = target.StartCopyFromURL(ctx, src, &blob.StartCopyFromURLOptions{
		SourceModifiedAccessConditions: &blob.SourceModifiedAccessConditions{SourceIfMatch: &stale},
	})
	refused("Copy Blob x-ms-source-if-match", err, http.StatusPreconditionFailed)
	got, err := target.DownloadStream(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Body.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(got.Body); err != nil || b.String() != "current" {
		t.Errorf("target = %q, %v after the refused requests, want \"current\"", b.String(), err)
	}
}
