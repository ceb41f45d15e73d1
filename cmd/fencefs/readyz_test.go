//go:build !fencefs_oneshot

package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/tenant/tenanttest"
)

// TestServeHTTPReadyzTenants: with tenant mounts, /readyz checks the
// mounts every tenant shares: 200 while they answer, 503 naming the mount
// (and not its endpoint) when one does not.
func TestServeHTTPReadyzTenants(t *testing.T) {
	t.Parallel()
	iss := tenanttest.NewIssuer(t)
	base := t.TempDir()
	if err := os.MkdirAll(filepath.Join(base, "shared"), 0o755); err != nil {
		t.Fatal(err)
	}
	readyz := func(h *httpServe) (int, string) {
		t.Helper()
		resp, err := http.Get(strings.TrimSuffix(h.url, "/mcp") + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(body)
	}
	args := func(shared string) []string {
		return []string{"serve", "--http", "127.0.0.1:0", "--auth", "jwt", "--oidc-issuer", iss.URL, "--oidc-audience", iss.Audience,
			"--tenant-mount", "ws=local:" + filepath.Join(base, "tenants", "{tenant}"), "--tenant-mount", shared, "--storage-timeout", "5s"}
	}
	up := startServe(t, args("shared=local:"+filepath.Join(base, "shared")+":ro")...)
	if code, body := readyz(up); code != http.StatusOK {
		t.Errorf("/readyz with the shared mount there: %d %q", code, body)
	}
	down := startServe(t, args("shared=s3://bucket/x?endpoint=http://127.0.0.1:1&region=us-east-1&path_style=1")...)
	code, body := readyz(down)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "/shared") || strings.Contains(body, "127.0.0.1:1") {
		t.Errorf("/readyz with the shared mount's server down: %d %q", code, body)
	}
}
