package server

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/tenant"
)

// TestIdentify: an authenticator's error chooses 401, 403 or 500 (whose
// cause is not sent), an identity whose tenant is not a safe id or whose
// scopes grant nothing is refused with 403, and a good one reaches the
// handler where tenant.FromContext finds it, the request's own
// Authorization header untouched.
func TestIdentify(t *testing.T) {
	tests := []struct {
		name      string
		id        *tenant.Identity
		err       error
		code      int
		body      string
		notInBody string
	}{
		{"unauthenticated", nil, fmt.Errorf("%w: unknown key", ErrUnauthenticated), 401, "unknown key", ""},
		{"forbidden", nil, fmt.Errorf("%w: suspended", tenant.ErrForbidden), 403, "suspended", ""},
		{"provider down", nil, errors.New("dial tcp 10.0.0.7:443: refused"), 500, "could not be verified", "10.0.0.7"},
		{"no identity", nil, nil, 401, "", ""},
		{"unsafe tenant", &tenant.Identity{Subject: "s", Tenant: "../t2", Scopes: []string{tenant.ScopeRead}}, nil, 403, "", ""},
		{"no granting scope", &tenant.Identity{Subject: "s", Tenant: "t1", Scopes: []string{"other"}}, nil, 403, "", ""},
		{"good", &tenant.Identity{Subject: "s", Tenant: "t1", Scopes: []string{tenant.ScopeRead}}, nil, 200, "t1 s Cookie x", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := AuthenticatorFunc(func(*http.Request) (*tenant.Identity, error) { return tt.id, tt.err })
			h := Identify(a, &IdentifyOptions{Grants: tenant.DefaultGrants(), ResourceMetadataURL: "https://example.com/meta"})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				id, err := tenant.FromContext(r.Context())
				if err != nil {
					t.Fatalf("the handler finds no identity: %v", err)
				}
				fmt.Fprintf(w, "%s %s %s", id.Tenant, id.Subject, r.Header.Get("Authorization"))
			}))
			rec := httptest.NewRecorder()
			req := httptest.NewRequest("POST", "/mcp", nil)
			req.Header.Set("Authorization", "Cookie x")
			h.ServeHTTP(rec, req)
			body := rec.Body.String()
			if rec.Code != tt.code || !strings.Contains(body, tt.body) || tt.notInBody != "" && strings.Contains(body, tt.notInBody) {
				t.Errorf("got %d %q, want %d with %q", rec.Code, body, tt.code, tt.body)
			}
			if tt.code == 401 && !strings.Contains(rec.Header().Get("WWW-Authenticate"), "https://example.com/meta") {
				t.Errorf("401 without the metadata challenge: %q", rec.Header().Get("WWW-Authenticate"))
			}
		})
	}
}
