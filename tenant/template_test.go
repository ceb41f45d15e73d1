package tenant

import (
	"strings"
	"testing"
)

func TestParseTemplate(t *testing.T) {
	cases := []struct {
		spec string
		want string // part of the error; "" means accepted
	}{
		{"ws=s3://bucket/tenants/{tenant}/ws?region=eu-west-1", ""},
		{"ws=s3://bucket/tenants/{tenant}?region=eu-west-1", ""},
		{"home=local:/srv/homes/{tenant}", ""},
		{"home=local:/srv/homes/{tenant}:ro", ""},
		{"home=local:{tenant}", ""},
		{"ws=s3://bucket/{tenant}/a/{tenant}", ""},
		{"shared=local:/srv/shared:ro", ""},
		{"ws=s3://bucket/tenants/t-{tenant}/ws", "does not follow"},
		{"ws=s3://bucket/tenants/{tenant}x/ws", "is not followed"},
		{"ws=s3://bucket-{tenant}/ws", "does not follow"},
		{"ws=s3://{tenant}/ws", "host"},
		{"ws=sftp://{tenant}", "host"},
		// The host of every URL a spec holds, not only the first: a
		// nested layer's, or an endpoint in the query.
		{"ws=overlay:s3://b/x+sftp://{tenant}/d", "host"},
		{"ws=overlay:local:/srv/base+s3://{tenant}/p", "host"},
		{"ws=s3://bucket/tenants/{tenant}?endpoint=http://{tenant}/", "host"},
		{"ws=s3://bucket/x?endpoint=http://{tenant}", "host"},
		{"ws=overlay:s3://b/base+s3://b/up/{tenant}", ""},
		{"{tenant}=local:/srv", "does not follow"},
		{"ws=s3://bucket/{tenant_id}/ws", "is not {tenant}"},
		{"ws=s3://bucket/{Tenant}/ws", "is not {tenant}"},
		{"ws=s3://bucket/tenant}/ws", "is not {tenant}"},
		{"ws=s3://bucket/{tenant", "is not {tenant}"},
	}
	for _, tc := range cases {
		_, err := ParseTemplate(tc.spec)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("ParseTemplate(%q): %v", tc.spec, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("ParseTemplate(%q): %v, want %q", tc.spec, err, tc.want)
		}
	}
}

func TestTemplateExpand(t *testing.T) {
	tmpl, err := ParseTemplate("ws=s3://bucket/tenants/{tenant}/ws?region=eu-west-1")
	if err != nil {
		t.Fatal(err)
	}
	if tmpl.Shared() {
		t.Fatal("a template with a placeholder is shared")
	}
	got, err := tmpl.Expand("t1")
	if err != nil || got != "ws=s3://bucket/tenants/t1/ws?region=eu-west-1" {
		t.Fatalf("Expand(t1) = %q, %v", got, err)
	}
	for _, bad := range []ID{"../t2", "t1/x", "", "t1\n"} {
		if s, err := tmpl.Expand(bad); err == nil {
			t.Errorf("Expand(%q) = %q, want an error", bad, s)
		}
	}
	shared, err := ParseTemplate("shared=local:/srv/shared:ro")
	if err != nil {
		t.Fatal(err)
	}
	if !shared.Shared() {
		t.Fatal("a template without a placeholder is not shared")
	}
	if s, err := shared.Expand("t1"); err != nil || s != shared.String() {
		t.Fatalf("shared Expand = %q, %v", s, err)
	}
	if _, err := shared.Prefix("t1"); err == nil {
		t.Fatal("a shared template has a prefix")
	}
}

// TestTemplatePrefixIsolation checks, for ids that are prefixes of one
// another, that no tenant's expansion lies under another's prefix.
func TestTemplatePrefixIsolation(t *testing.T) {
	ids := []ID{"t1", "t10", "t1.0", "t1-x", "t", "T1", "t1_"}
	for _, spec := range []string{
		"ws=s3://bucket/tenants/{tenant}/ws?region=eu-west-1",
		"ws=s3://bucket/tenants/{tenant}?region=eu-west-1",
		"home=local:/srv/homes/{tenant}",
		"home=local:/srv/homes/{tenant}:ro",
	} {
		tmpl, err := ParseTemplate(spec)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range ids {
			prefix, err := tmpl.Prefix(a)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(prefix, "/") {
				t.Errorf("%s: Prefix(%s) = %q does not end with a separator", spec, a, prefix)
			}
			for _, b := range ids {
				if a == b {
					continue
				}
				other, err := tmpl.Expand(b)
				if err != nil {
					t.Fatal(err)
				}
				if strings.HasPrefix(other, prefix) {
					t.Errorf("%s: %s's expansion %q lies under %s's prefix %q", spec, b, other, a, prefix)
				}
				if op, _ := tmpl.Prefix(b); strings.HasPrefix(op, prefix) {
					t.Errorf("%s: %s's prefix %q lies under %s's prefix %q", spec, b, op, a, prefix)
				}
			}
		}
	}
}

// FuzzTemplate checks that an accepted template, expanded for an accepted
// id, changes nothing but its tenant segments.
func FuzzTemplate(f *testing.F) {
	f.Add("ws=s3://bucket/tenants/{tenant}/ws?region=x", "t1")
	f.Add("home=local:{tenant}:ro", "t10")
	f.Add("ws=s3://{tenant}/x", "a")
	f.Add("ws=local:/u/{tenant}/{session}/x", "t1")
	f.Fuzz(func(t *testing.T, spec, rawID string) {
		tmpl, err := ParseTemplate(spec)
		if err != nil {
			return
		}
		id, err := ParseID(rawID)
		if err != nil {
			return
		}
		if _, err := tmpl.Expand(id); (err != nil) != tmpl.PerSession() {
			t.Fatalf("Expand(%q) of %q: %v, per session %v", id, spec, err, tmpl.PerSession())
		}
		const sid = "SESSION0"
		got, err := tmpl.ExpandSession(id, sid)
		if err != nil {
			t.Fatalf("ExpandSession(%q) of %q: %v", id, spec, err)
		}
		if strings.Count(got, sid) < strings.Count(spec, SessionPlaceholder) || strings.Contains(got, SessionPlaceholder) && !strings.Contains(string(id), SessionPlaceholder) {
			t.Fatalf("ExpandSession(%q) of %q = %q", id, spec, got)
		}
		if strings.Count(got, string(id)) < strings.Count(spec, Placeholder) {
			t.Fatalf("Expand(%q) of %q = %q", id, spec, got)
		}
		if tmpl.Shared() && got != spec {
			t.Fatalf("shared template %q expanded to %q", spec, got)
		}
		if !tmpl.Shared() {
			prefix, err := tmpl.Prefix(id)
			if err != nil || !strings.HasSuffix(prefix, "/") {
				t.Fatalf("Prefix(%q) of %q = %q, %v", id, spec, prefix, err)
			}
		}
	})
}
