package containers_test

import (
	"context"
	"testing"

	"github.com/fencefs/fencefs/conformance"
	"github.com/fencefs/fencefs/conformance/containers"
)

// sftpLargeFileSize keeps the streamed file big enough to need many
// packets and concurrent requests, and small enough for a quick suite.
const sftpLargeFileSize = 16 << 20

func TestSFTPConformance(t *testing.T) {
	ctx := context.Background()
	srv := containers.StartSFTP(ctx, t)
	conformance.RunWith(t, containers.NewSFTPHarness(srv), conformance.RunOptions{LargeFileSize: sftpLargeFileSize})
}
