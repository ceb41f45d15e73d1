package security

import (
	"errors"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/tenant"
)

// TestTenantTemplatesDisjoint (class 2): mount templates are proven
// disjoint as a set for every tenant id, against each other and against
// every shared mount, before any tenant is served. A tenant whose id names
// another template's directory (ws=local:D/{tenant} beside
// notes=local:D/notes/{tenant}: tenant "notes"), or a shared mount's
// (a read-only D/shared beside D/{tenant}: tenant "shared"), or an S3
// prefix beside a tenant's prefix, would reach storage it was never
// given: each set is refused naming the id that would. A relative local
// template (resolved against the server's working directory) is refused.
func TestTenantTemplatesDisjoint(t *testing.T) {
	t.Parallel()
	d := t.TempDir()
	local := func(name, p string) tenant.Location {
		return tenant.Location{Name: name, Scheme: "local", Path: d + p}
	}
	for _, c := range []struct {
		name string
		locs []tenant.Location
		id   tenant.ID // the id that reaches what it was not given
	}{
		{"another template's directory", []tenant.Location{local("ws", "/{tenant}"), local("notes", "/notes/{tenant}")}, "notes"},
		{"a shared read-only mount", []tenant.Location{local("ws", "/{tenant}"), local("shared", "/shared")}, "shared"},
		{"a shared mount around the tenants", []tenant.Location{local("ws", "/t/{tenant}"), local("all", "")}, "t1"},
		{"templates crossing", []tenant.Location{local("a", "/{tenant}/ws"), local("b", "/shared/{tenant}")}, "shared"},
		{"S3 prefixes", []tenant.Location{
			{Name: "ws", Scheme: "s3", Authority: "bucket", Path: "tenants/{tenant}"},
			{Name: "common", Scheme: "s3", Authority: "bucket", Path: "tenants/common/docs"},
		}, "common"},
		{"SFTP directories", []tenant.Location{
			{Name: "ws", Scheme: "sftp", Authority: "host:22", Path: "/data/{tenant}"},
			{Name: "shared", Scheme: "sftp", Authority: "host:22", Path: "/data/shared"},
		}, "shared"},
	} {
		err := tenant.Disjoint(c.locs)
		var oe *tenant.OverlapError
		if !errors.As(err, &oe) {
			t.Errorf("%s: accepted (%v)", c.name, err)
			continue
		}
		if oe.TenantA != c.id && oe.TenantB != c.id {
			t.Errorf("%s: %v does not name tenant %q", c.name, err, c.id)
		}
		if !strings.Contains(err.Error(), string(c.id)) {
			t.Errorf("%s: the message does not name tenant %q: %v", c.name, c.id, err)
		}
	}
	if err := tenant.Disjoint([]tenant.Location{{Name: "ws", Scheme: "local", Path: "data/{tenant}"}}); !errors.Is(err, tenant.ErrRelative) {
		t.Errorf("a relative local template: %v, want tenant.ErrRelative", err)
	}
	ok := []tenant.Location{local("ws", "/ws/{tenant}"), local("notes", "/notes/{tenant}"), local("shared", "/shared"),
		{Name: "s3", Scheme: "s3", Authority: "bucket", Path: "tenants/{tenant}"}}
	if err := tenant.Disjoint(ok); err != nil {
		t.Errorf("disjoint templates refused: %v", err)
	}
}
