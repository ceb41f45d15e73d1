package tenant

import (
	"errors"
	"strings"
	"testing"
)

func TestDisjoint(t *testing.T) {
	local := func(name, p string) Location { return Location{Name: name, Scheme: "local", Path: p} }
	s3 := func(name, bucket, p string) Location {
		return Location{Name: name, Scheme: "s3", Authority: bucket, Path: p}
	}
	for _, c := range []struct {
		name  string
		locs  []Location
		clash [2]ID // the witness ids when refused; both "" when accepted
		ok    bool
	}{
		{"template inside another's directory", []Location{local("ws", "/D/{tenant}"), local("notes", "/D/notes/{tenant}")}, [2]ID{"notes", "t2"}, false},
		{"shared mount a tenant id names", []Location{local("ws", "/D/{tenant}"), local("shared", "/D/shared")}, [2]ID{"shared", ""}, false},
		{"shared mount around every tenant", []Location{local("ws", "/D/{tenant}/ws"), local("all", "/D")}, [2]ID{"t1", ""}, false},
		{"root shared", []Location{local("ws", "/D/{tenant}"), local("root", "/")}, [2]ID{"t1", ""}, false},
		{"cross positions", []Location{local("a", "/D/{tenant}/ws"), local("b", "/D/shared/{tenant}")}, [2]ID{"shared", "ws"}, false},
		{"cleaned before comparing", []Location{local("ws", "/D/x/../{tenant}/"), local("notes", "//D/./notes/{tenant}")}, [2]ID{"notes", "t2"}, false},
		{"s3 prefixes", []Location{s3("ws", "b", "t/{tenant}"), s3("shared", "b", "t/common")}, [2]ID{"common", ""}, false},
		{"disjoint siblings", []Location{local("ws", "/D/ws/{tenant}"), local("notes", "/D/notes/{tenant}"), local("shared", "/D/shared")}, [2]ID{}, true},
		{"same tenant may overlap itself", []Location{local("ws", "/D/{tenant}"), local("docs", "/D/{tenant}/docs")}, [2]ID{}, true},
		{"a name no id can take", []Location{local("ws", "/D/{tenant}"), local("git", "/D/.git")}, [2]ID{}, true},
		{"other bucket", []Location{s3("ws", "b1", "{tenant}"), s3("shared", "b2", "common")}, [2]ID{}, true},
		{"other scheme", []Location{local("ws", "/D/{tenant}"), {Name: "s", Scheme: "sftp", Authority: "h:22", Path: "/D/shared"}}, [2]ID{}, true},
		{"shared beside shared", []Location{local("a", "/D"), local("b", "/D/x")}, [2]ID{}, true},
		{"tenant below a literal that differs", []Location{local("a", "/D/{tenant}/x"), local("b", "/D/{tenant}/y")}, [2]ID{}, true},
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
			got := [2]ID{oe.TenantA, oe.TenantB}
			if got != c.clash && [2]ID{got[1], got[0]} != c.clash {
				t.Errorf("witness %q, want %q (%v)", got, c.clash, err)
			}
			if !overlaps(oe.A, oe.TenantA, oe.B, oe.TenantB) {
				t.Errorf("the witness does not overlap: %v", err)
			}
		})
	}
}

func TestDisjointRefusesRelative(t *testing.T) {
	for _, p := range []string{"D/{tenant}", "{tenant}", "./D/{tenant}", ""} {
		err := Disjoint([]Location{{Name: "ws", Scheme: "local", Path: p}})
		if !errors.Is(err, ErrRelative) {
			t.Errorf("%q: %v, want ErrRelative", p, err)
		}
	}
	if err := Disjoint([]Location{{Name: "ws", Scheme: "local", Path: "/D/x{tenant}"}}); err == nil {
		t.Error("a placeholder inside a segment was accepted")
	}
}

// expand returns l's cleaned segments for id.
func expand(l Location, id ID) []string { return expandSession(l, id, "s0") }

// expandSession returns l's cleaned segments for session sid of id.
func expandSession(l Location, id ID, sid SessionID) []string {
	s, _ := segments(l)
	out := make([]string, len(s))
	for i, seg := range s {
		out[i] = strings.ReplaceAll(strings.ReplaceAll(seg, Placeholder, string(id)), SessionPlaceholder, string(sid))
	}
	return out
}

// hasSession reports whether l names a session.
func hasSession(l Location) bool { return strings.Contains(l.Path, SessionPlaceholder) }

// overlaps reports whether a for x and b for y lie one inside the other.
func overlaps(a Location, x ID, b Location, y ID) bool {
	return overlapsSession(a, x, "s0", b, y, "s0")
}

// overlapsSession reports whether a for session sx of x and b for
// session sy of y lie one inside the other.
func overlapsSession(a Location, x ID, sx SessionID, b Location, y ID, sy SessionID) bool {
	if a.Scheme != b.Scheme || a.Authority != b.Authority {
		return false
	}
	ea, eb := expandSession(a, x, sx), expandSession(b, y, sy)
	n := min(len(ea), len(eb))
	for i := 0; i < n; i++ {
		if ea[i] != eb[i] {
			return false
		}
	}
	return true
}

// FuzzDisjoint checks Disjoint against brute force over the ids that can
// matter (every literal segment of either path, and a few others): when
// it accepts two locations no pair of distinct ids (or an id and the
// shared side) overlaps, and when it refuses, its witness overlaps.
func FuzzDisjoint(f *testing.F) {
	f.Add("/D/{tenant}", "/D/notes/{tenant}")
	f.Add("/D/{tenant}/ws", "/D/shared/{tenant}")
	f.Add("/D/{tenant}", "/D/shared")
	f.Add("/D/ws/{tenant}", "/D/notes/{tenant}")
	f.Add("/{tenant}/{tenant}", "/a/{tenant}/b")
	f.Add("/U/{tenant}/{session}", "/U/{tenant}/x/{session}")
	f.Add("/U/{tenant}/{session}", "/U/{tenant}")
	f.Add("/U/{tenant}/{session}", "/U/{session}")
	f.Add("/U/{tenant}/{session}/{session}", "/U/{tenant}/a/b")
	f.Fuzz(func(t *testing.T, pa, pb string) {
		a := Location{Name: "a", Scheme: "local", Path: pa}
		b := Location{Name: "b", Scheme: "local", Path: pb}
		sa, errA := segments(a)
		sb, errB := segments(b)
		err := Disjoint([]Location{a, b})
		if errA != nil || errB != nil {
			if err == nil {
				t.Fatalf("%q, %q: bad paths accepted", pa, pb)
			}
			return
		}
		var oe *OverlapError
		if errors.As(err, &oe) {
			if (oe.TenantA != "" && oe.TenantA.valid() != nil) || (oe.TenantB != "" && oe.TenantB.valid() != nil) {
				t.Fatalf("witness ids not valid: %v", err)
			}
			if !oe.A.Shared() && !oe.B.Shared() && oe.TenantA == oe.TenantB && (oe.SessionA == "" || oe.SessionA == oe.SessionB) {
				t.Fatalf("witness is one tenant's one session: %v", err)
			}
			if (oe.SessionA != "" && oe.SessionA.valid() != nil) || (oe.SessionB != "" && oe.SessionB.valid() != nil) {
				t.Fatalf("witness session ids not valid: %v", err)
			}
			if !overlapsSession(oe.A, oe.TenantA, oe.SessionA, oe.B, oe.TenantB, oe.SessionB) {
				t.Fatalf("witness does not overlap: %v", err)
			}
			return
		}
		if err != nil {
			t.Fatalf("%q, %q: %v", pa, pb, err)
		}
		ids := []ID{"t1", "t2", "t3", "s0"}
		for _, seg := range append(sa, sb...) {
			if _, e := ParseID(seg); e == nil {
				ids = append(ids, ID(seg))
			}
		}
		locs := []Location{a, b}
		for i, l := range locs {
			for j, m := range locs {
				if i > j || l.Shared() && m.Shared() {
					continue
				}
				for _, x := range ids {
					for _, y := range ids {
						for _, sx := range ids {
							for _, sy := range ids {
								// One tenant's own storage may overlap, but
								// not two sessions' of it.
								sameTenant := !l.Shared() && !m.Shared() && x == y
								if sameTenant && !(hasSession(l) && hasSession(m) && sx != sy) {
									continue
								}
								if overlapsSession(l, x, SessionID(sx), m, y, SessionID(sy)) {
									t.Fatalf("%q, %q accepted, but %s for %q/%q overlaps %s for %q/%q", pa, pb, l, x, sx, m, y, sy)
								}
							}
						}
					}
				}
			}
		}
	})
}
