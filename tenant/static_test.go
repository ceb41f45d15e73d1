package tenant

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

func writeTokenFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestStaticVerifier(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.yaml")
	writeTokenFile(t, path, `tokens:
  - name: ci-bot
    sha256: `+HashToken("secret-one")+`
    tenant: t1
    scopes: [files:read, files:write]
  - name: reader
    sha256: `+HashToken("secret-two")+`
    tenant: t10
    scopes: [files:read]
    expires: 2099-01-01T00:00:00Z
  - name: old
    sha256: `+HashToken("secret-old")+`
    tenant: t2
    expires: 2001-01-01T00:00:00Z
`)
	v, err := NewStatic(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cases := []struct {
		token   string
		status  int
		tenant  ID
		subject string
	}{
		{"secret-one", 200, "t1", "ci-bot"},
		{"secret-two", 200, "t10", "reader"},
		{"secret-old", 401, "", ""},
		{"secret-on", 401, "", ""},
		{"", 401, "", ""},
		{HashToken("secret-one"), 401, "", ""},
	}
	for _, tc := range cases {
		id, err := v.Verify(ctx, tc.token)
		if got := StatusCode(err); got != tc.status {
			t.Errorf("Verify(%q): status %d (%v), want %d", tc.token, got, err, tc.status)
			continue
		}
		if tc.status == 200 && (id.Tenant != tc.tenant || id.Subject != tc.subject || id.Issuer != StaticIssuer) {
			t.Errorf("Verify(%q) = %+v", tc.token, id)
		}
	}

	// A file that does not parse leaves the old tokens in force.
	writeTokenFile(t, path, "tokens:\n  - name: x\n    sha256: zz\n    tenant: t1\n")
	if err := v.Reload(); err == nil {
		t.Fatal("Reload of a bad file succeeded")
	}
	if _, err := v.Verify(ctx, "secret-one"); err != nil {
		t.Fatalf("after a failed reload: %v", err)
	}

	// A good file replaces them: the removed token stops working at once.
	writeTokenFile(t, path, "tokens:\n  - name: new\n    sha256: "+HashToken("secret-new")+"\n    tenant: t3\n    scopes: [files:read]\n")
	if err := v.Reload(); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(ctx, "secret-one"); !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("removed token after reload: %v", err)
	}
	if id, err := v.Verify(ctx, "secret-new"); err != nil || id.Tenant != "t3" {
		t.Fatalf("new token after reload: %+v, %v", id, err)
	}
}

func TestParseTokenFile(t *testing.T) {
	h := HashToken("x")
	cases := []struct {
		name, content, want string
	}{
		{"empty file", "", ""},
		{"no tokens", "tokens: []\n", ""},
		{"bad hash", "tokens:\n  - {name: a, sha256: abc, tenant: t1}\n", "64 hex"},
		{"plain token instead of hash", "tokens:\n  - {name: a, sha256: " + strings.Repeat("g", 64) + ", tenant: t1}\n", "64 hex"},
		{"no name", "tokens:\n  - {sha256: " + h + ", tenant: t1}\n", "no name"},
		{"bad tenant", "tokens:\n  - {name: a, sha256: " + h + ", tenant: ../t2}\n", "not a safe tenant id"},
		{"no tenant", "tokens:\n  - {name: a, sha256: " + h + "}\n", "not a safe tenant id"},
		{"unknown key", "tokens:\n  - {name: a, sha256: " + h + ", tenant: t1, expire: 2001-01-01T00:00:00Z}\n", "expire"},
		{"same name", "tokens:\n  - {name: a, sha256: " + h + ", tenant: t1}\n  - {name: a, sha256: " + HashToken("y") + ", tenant: t1}\n", "used twice"},
		{"same token", "tokens:\n  - {name: a, sha256: " + h + ", tenant: t1}\n  - {name: b, sha256: " + h + ", tenant: t2}\n", "same token"},
		{"not yaml", "tokens: [", "yaml"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := ParseTokenFile([]byte(tc.content))
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := NewStatic(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Fatal("NewStatic of a missing file succeeded")
	}
}

// FuzzParseTokenFile checks that a token file either parses into entries
// with safe tenants or is refused, and never panics.
func FuzzParseTokenFile(f *testing.F) {
	f.Add([]byte("tokens:\n  - {name: a, sha256: " + HashToken("x") + ", tenant: t1, scopes: [files:read]}\n"))
	f.Add([]byte("tokens: ["))
	f.Fuzz(func(t *testing.T, data []byte) {
		tokens, err := parseTokens(data)
		if err != nil {
			return
		}
		for _, tok := range tokens {
			if _, err := ParseID(string(tok.id.Tenant)); err != nil {
				t.Fatalf("accepted tenant %q", tok.id.Tenant)
			}
			if tok.id.Subject == "" {
				t.Fatal("accepted an entry without a name")
			}
		}
	})
}

func TestStatusCode(t *testing.T) {
	cases := []struct {
		err  error
		want int
	}{
		{nil, http.StatusOK},
		{invalidToken("x"), http.StatusUnauthorized},
		{forbidden(ErrInvalidID), http.StatusForbidden},
		{errors.New("issuer down"), http.StatusInternalServerError},
	}
	for _, tc := range cases {
		if got := StatusCode(tc.err); got != tc.want {
			t.Errorf("StatusCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

// TestStaticReloadConcurrent verifies while the file is reloaded: every
// Verify sees the old tokens or the new ones, whole.
func TestStaticReloadConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.yaml")
	file := func(tenant string) string {
		return "tokens:\n  - {name: a, sha256: " + HashToken("tok") + ", tenant: " + tenant + ", scopes: [files:read]}\n"
	}
	writeTokenFile(t, path, file("t1"))
	v, err := NewStatic(path)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	errs := make(chan error, 1)
	go func() {
		defer close(errs)
		for {
			select {
			case <-done:
				return
			default:
			}
			id, err := v.Verify(context.Background(), "tok")
			if err != nil || (id.Tenant != "t1" && id.Tenant != "t2") {
				errs <- fmt.Errorf("Verify during reloads: %+v, %v", id, err)
				return
			}
		}
	}()
	for i := range 50 {
		writeTokenFile(t, path, file([]string{"t1", "t2"}[i%2]))
		if err := v.Reload(); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
}
