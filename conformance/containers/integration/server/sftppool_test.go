package server_test

import (
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/fencefs/fencefs/conformance/containers"
	"github.com/fencefs/fencefs/mountspec"
	"github.com/fencefs/fencefs/server"
)

// TestStorageSharesSFTPConnections: tenants whose SFTP mounts differ only
// in the root share one SSH connection, each namespace still sees only its
// own root, and one tenant's namespace closing leaves the other working.
func TestStorageSharesSFTPConnections(t *testing.T) {
	ctx := t.Context()
	containers.SetTestcontainersDefaults()
	srv := containers.StartSFTP(ctx, t)
	c, err := srv.Client(ctx)
	if err != nil {
		t.Fatal(err)
	}
	base := containers.SFTPHome + "/tenants"
	for _, tn := range []string{"t1", "t2"} {
		if err := c.MkdirAll(base + "/" + tn); err != nil {
			t.Fatal(err)
		}
		f, err := c.Create(base + "/" + tn + "/own.txt")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte("only " + tn + "\n")); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	if err := c.Symlink(base+"/t2", base+"/t1/t2link"); err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(t.TempDir(), "id")
	if err := os.WriteFile(keyFile, srv.PrivateKey, 0o600); err != nil {
		t.Fatal(err)
	}
	pin := base64.StdEncoding.EncodeToString(srv.HostKey.Marshal())
	connections := func() int {
		t.Helper()
		n, err := srv.Connections(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := connections()

	requests := server.NewMetrics().StorageRequests()
	st := mountspec.New(mountspec.Options{Requests: requests})
	t.Cleanup(st.Close)
	logger := slog.New(slog.DiscardHandler)
	open := func(tn string) *server.Namespace {
		t.Helper()
		ms, err := mountspec.Parse("sftp://" + containers.SFTPUser + "@" + srv.Addr + base + "/" + tn + "?key=" + keyFile + "&host_key=" + pin)
		if err != nil {
			t.Fatal(err)
		}
		nc := server.NamespaceConfig{Mounts: []server.Mount{{Name: "ws", Spec: ms}}, StorageTimeout: 30 * time.Second, Logger: logger}
		ns, err := server.OpenNamespace(ctx, nc, st)
		if err != nil {
			t.Fatal(err)
		}
		return ns
	}
	call := func(ns *server.Namespace, tool, args string) (string, error) {
		t.Helper()
		return ns.Tools().Call(ctx, tool, json.RawMessage(args))
	}
	ns1, ns2 := open("t1"), open("t2")
	if got := connections(); got != before+1 {
		t.Errorf("the server has %d SSH connections, want %d (one for both tenants)", got, before+1)
	}
	for tn, ns := range map[string]*server.Namespace{"t1": ns1, "t2": ns2} {
		text, err := call(ns, "read_file", `{"path":"/ws/own.txt"}`)
		if err != nil || !strings.Contains(text, "only "+tn) {
			t.Errorf("%s reads its own.txt: %q, %v", tn, text, err)
		}
	}
	for _, p := range []string{"/ws/../t2/own.txt", "/ws/t2link/own.txt", "/../t2/own.txt"} {
		text, err := call(ns1, "read_file", `{"path":"`+p+`"}`)
		if err == nil || strings.Contains(text, "only t2") || strings.Contains(err.Error(), "only t2") {
			t.Errorf("t1 read_file %s: %q, %v; want a refusal", p, text, err)
		}
	}
	ns1.Close()
	text, err := call(ns2, "write_file", `{"path":"/ws/new.txt","content":"after t1 left\n"}`)
	if err != nil {
		t.Fatalf("t2 writes after t1 closed: %q, %v", text, err)
	}
	if text, err := call(ns2, "read_file", `{"path":"/ws/own.txt"}`); err != nil || !strings.Contains(text, "only t2") {
		t.Errorf("t2 reads after t1 closed: %q, %v", text, err)
	}
	if got := connections(); got != before+1 {
		t.Errorf("after t1 closed the server has %d SSH connections, want %d", got, before+1)
	}
	ns2.Close()
	for _, op := range []string{"OPEN", "READ", "LSTAT", "EXTENDED"} {
		if n := testutil.ToFloat64(requests.WithLabelValues("ws", op)); n == 0 {
			t.Errorf("no %s requests counted for mount ws", op)
		}
	}
}
