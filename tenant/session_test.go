package tenant

import (
	"errors"
	"strings"
	"testing"
)

// TestSessionIDCannotEscape: a session id is one path component, so no
// id can climb out of its tenant's directory or name another's.
func TestSessionIDCannotEscape(t *testing.T) {
	tpl, err := ParseTemplate("ws=overlay:local:/srv/base:ro+local:/srv/up/{tenant}/{session}")
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", ".", "..", "../t2", "a/b", "/abs", `a\b`, "a\x00b", "%2e%2e", "a b", "é", ".hidden", strings.Repeat("a", MaxSessionIDLen+1)} {
		if _, err := ParseSessionID(bad); !errors.Is(err, ErrInvalidSessionID) {
			t.Errorf("ParseSessionID(%q) = %v, want ErrInvalidSessionID", bad, err)
		}
		// A conversion does not get past ExpandSession either.
		if spec, err := tpl.ExpandSession("t1", SessionID(bad)); err == nil {
			t.Errorf("ExpandSession(t1, %q) = %q, want an error", bad, spec)
		}
	}
	sid := NewSessionID()
	if _, err := ParseSessionID(string(sid)); err != nil {
		t.Fatalf("NewSessionID gave %q: %v", sid, err)
	}
	if other := NewSessionID(); other == sid {
		t.Fatalf("two new session ids are both %q", sid)
	}
	spec, err := tpl.ExpandSession("t1", sid)
	if want := "ws=overlay:local:/srv/base:ro+local:/srv/up/t1/" + string(sid); err != nil || spec != want {
		t.Fatalf("ExpandSession = %q, %v; want %q", spec, err, want)
	}
	if _, err := tpl.Expand("t1"); err == nil {
		t.Fatal("Expand of a per-session template without a session was accepted")
	}
	if !tpl.PerSession() || tpl.Shared() {
		t.Fatalf("PerSession %v, Shared %v; want true, false", tpl.PerSession(), tpl.Shared())
	}
}

func TestSessionTemplateRules(t *testing.T) {
	for _, c := range []struct{ spec, why string }{
		{"ws=local:/srv/{session}", "a session outside any tenant"},
		{"ws=local:/srv/{session}/{tenant}", "a session before its tenant"},
		{"ws=local:/srv/{tenant}/x{session}", "not a whole segment"},
		{"ws=local:/srv/{tenant}/{session}x", "not a whole segment"},
		{"ws=s3://{session}.b/{tenant}", "in a host"},
		{"ws=local:/srv/{tenant}/{sessions}", "a misspelt placeholder"},
	} {
		if _, err := ParseTemplate(c.spec); err == nil {
			t.Errorf("%s: %q accepted", c.why, c.spec)
		}
	}
	for _, spec := range []string{
		"ws=local:/srv/{tenant}/{session}",
		"ws=overlay:local:/srv/base:ro+s3://b/up/{tenant}/{session}?region=x",
		"ws=local:/srv/{tenant}/{session}/ws",
	} {
		if _, err := ParseTemplate(spec); err != nil {
			t.Errorf("%q refused: %v", spec, err)
		}
	}
}

func TestDisjointSessions(t *testing.T) {
	local := func(name, p string) Location { return Location{Name: name, Scheme: "local", Path: p} }
	for _, c := range []struct {
		name string
		locs []Location
		ok   bool
	}{
		{"each session its own upper", []Location{local("ws", "/U/{tenant}/{session}"), local("base", "/B")}, true},
		{"a tenant's home holds its sessions", []Location{local("ws", "/U/{tenant}/{session}"), local("home", "/U/{tenant}")}, true},
		{"sessions beside tenants", []Location{local("ws", "/U/{tenant}/{session}"), local("notes", "/U/notes/{tenant}")}, false},
		{"two sessions of one tenant", []Location{local("a", "/U/{tenant}/{session}"), local("b", "/U/{tenant}/x/{session}")}, false},
		{"a session below a shared mount", []Location{local("ws", "/S/{tenant}/{session}"), local("all", "/S")}, false},
		{"a session and its tenant's other mount differ", []Location{local("a", "/U/{tenant}/s/{session}"), local("b", "/U/{tenant}/t/{session}")}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := Disjoint(c.locs)
			if c.ok {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var oe *OverlapError
			if !errors.As(err, &oe) {
				t.Fatalf("got %v, want an *OverlapError", err)
			}
			if !overlapsSession(oe.A, oe.TenantA, oe.SessionA, oe.B, oe.TenantB, oe.SessionB) {
				t.Errorf("the witness does not overlap: %v", err)
			}
		})
	}
}
