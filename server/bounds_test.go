package server

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/fencefs/fencefs/tenant"
)

// TestTenantsShareRipgrepBound opens two tenants' namespaces of one
// server: their tool sets share one bound on ripgrep processes instead of
// one each.
func TestTenantsShareRipgrepBound(t *testing.T) {
	ctx := t.Context()
	base := t.TempDir()
	for _, tn := range []string{"t1", "t2"} {
		if err := os.MkdirAll(filepath.Join(base, tn), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tmpl, err := tenant.ParseTemplate("local:" + filepath.Join(base, "{tenant}"))
	if err != nil {
		t.Fatal(err)
	}
	anyone := AuthenticatorFunc(func(*http.Request) (*tenant.Identity, error) { return nil, ErrUnauthenticated })
	if _, err := New(ctx, Config{TenantMounts: []TenantMount{{Name: "ws", Template: tmpl}}}); err == nil {
		t.Error("tenant mounts without an identity were accepted")
	}
	s, err := New(ctx, Config{TenantMounts: []TenantMount{{Name: "ws", Template: tmpl}}, Identity: anyone})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	slots := s.cfg.Namespace.Tools.RipgrepSlots
	if slots == nil {
		t.Fatal("the server has no ripgrep bound")
	}
	for _, tn := range []tenant.ID{"t1", "t2"} {
		v, release, err := s.tenants.Get(ctx, tn)
		if err != nil {
			t.Fatal(err)
		}
		if got := v.ns.opts.RipgrepSlots; got != slots {
			t.Errorf("tenant %s got ripgrep bound %p, want the server's %p", tn, got, slots)
		}
		release()
	}
}
