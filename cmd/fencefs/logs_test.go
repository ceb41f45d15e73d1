//go:build !fencefs_oneshot

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/tenant/tenanttest"
)

// TestServeHTTPJSONLogs: with --log-format json every line of stderr is
// one JSON object, and the lines of a tool call carry its tenant and its
// request id, which the call's audit line names too.
func TestServeHTTPJSONLogs(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	iss := tenanttest.NewIssuer(t)
	base := t.TempDir()
	if err := os.MkdirAll(filepath.Join(base, "tenants", "t1"), 0o755); err != nil {
		t.Fatal(err)
	}
	auditFile := filepath.Join(base, "audit.jsonl")
	h := startServe(t, "serve", "--http", "127.0.0.1:0", "--log-format", "json", "--log-level", "debug",
		"--auth", "jwt", "--oidc-issuer", iss.URL, "--oidc-audience", iss.Audience,
		"--tenant-mount", "ws=local:"+filepath.Join(base, "tenants", "{tenant}"), "--audit", auditFile)
	cs, err := connectAs(t, h.url, iss.Sign(t, tenanttest.Claims{Subject: "t1"}), "")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	callOK(t, ctx, cs, "write_file", map[string]any{"path": "/ws/a.txt", "content": "x\n"})
	var line struct {
		Msg, Tool, Tenant string
		RequestID         string `json:"request_id"`
	}
	if err := json.Unmarshal([]byte(h.waitLog(t, `"msg":"tool call"`)), &line); err != nil {
		t.Fatal(err)
	}
	if line.Tool != "write_file" || line.Tenant != "t1" || len(line.RequestID) != 16 {
		t.Errorf("the tool call's line: %+v", line)
	}
	mounted := false // logged before the call's line, which was read
	for _, l := range strings.Split(strings.TrimSpace(h.stderr.String()), "\n") {
		var obj map[string]any
		if err := json.Unmarshal([]byte(l), &obj); err != nil {
			t.Errorf("a stderr line is not JSON: %q", l)
		}
		if obj["msg"] == "mounted" {
			mounted = true
			if obj["tenant"] != "t1" {
				t.Errorf("the tenant's mount line names no tenant: %q", l)
			}
		}
	}
	if !mounted {
		t.Errorf("no mount line in:\n%s", h.stderr.String())
	}
	var rec struct {
		RequestID string `json:"request_id"`
		Tool      string
	}
	if err := json.Unmarshal([]byte(strings.SplitN(readFile(t, auditFile), "\n", 2)[0]), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Tool != "write_file" || rec.RequestID != line.RequestID {
		t.Errorf("the audit line %+v, want request id %s", rec, line.RequestID)
	}
}
