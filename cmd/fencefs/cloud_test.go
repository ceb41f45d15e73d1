//go:build !fencefs_oneshot

package main

import (
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"

	"github.com/fencefs/fencefs/azureadapter"
	"github.com/fencefs/fencefs/conformance/containers"
)

// TestCallCloudMounts drives the command over gs:// and azblob:// mounts
// against fake-gcs-server and Azurite: the schemes the command registers
// parse, open (with their probe) and serve a write, a read and a refusal
// on a read-only mount, as the built-in kinds do.
func TestCallCloudMounts(t *testing.T) {
	t.Run("gs", func(t *testing.T) {
		srv := containers.StartGCS(t.Context(), t)
		bucket := srv.NewBucket(t.Context(), t)
		spec := "gs://" + bucket + "/tenants/t1?endpoint=" + srv.Endpoint + "&timeout=20s"
		callCloud(t, spec, nil)
	})
	t.Run("azblob", func(t *testing.T) {
		srv := containers.StartAzurite(t.Context(), t)
		client, err := azblob.NewClientFromConnectionString(srv.ConnectionString(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := client.CreateContainer(t.Context(), "workspaces", nil); err != nil {
			t.Fatal(err)
		}
		spec := "azblob://workspaces/tenants/t1?timeout=20s"
		callCloud(t, spec, []string{azureadapter.EnvConnectionString + "=" + srv.ConnectionString()})
	})
}

func callCloud(t *testing.T, spec string, env []string) {
	t.Helper()
	dir := t.TempDir()
	got := runFencefs(t, dir, "", env, "call", "--mount", "ws="+spec, "write_file", `{"path":"/ws/notes/a.txt","content":"in the cloud\n"}`)
	if got.code != 2 || !strings.Contains(got.stdout, "does not exist") {
		t.Fatalf("a write into a missing directory: %+v", got)
	}
	got = runFencefs(t, dir, "", env, "call", "--mount", "ws="+spec, "write_file", `{"path":"/ws/a.txt","content":"in the cloud\n"}`)
	if got.code != 0 || !strings.HasPrefix(got.stdout, "Wrote 13 chars (1 line) to /ws/a.txt.") {
		t.Fatalf("write: %+v", got)
	}
	got = runFencefs(t, dir, "", env, "call", "--mount", "ws="+spec, "read_file", `{"path":"/ws/a.txt"}`)
	if got.code != 0 || !strings.Contains(got.stdout, "in the cloud") {
		t.Fatalf("read: %+v", got)
	}
	sep := "?"
	if strings.Contains(spec, "?") {
		sep = "&"
	}
	got = runFencefs(t, dir, "", env, "call", "--mount", "ws="+spec+sep+"ro=1", "edit_file", `{"path":"/ws/a.txt","old_text":"cloud","new_text":"sky"}`)
	if got.code != 2 || !strings.Contains(got.stdout, "read-only") {
		t.Fatalf("edit on a read-only mount: %+v", got)
	}
	got = runFencefs(t, dir, "", env, "call", "--mount", "ws="+spec, "read_file", `{"path":"/ws/a.txt"}`)
	if !strings.Contains(got.stdout, "in the cloud") {
		t.Fatalf("the read-only edit changed the file: %+v", got)
	}
}
