package main

import (
	"context"
	"log/slog"
	"testing"

	"github.com/fencefs/fencefs/cmd/fencefs/internal/config"
)

// TestServerSharesRipgrepBound opens two namespaces from one server's
// settings, as two HTTP sessions or two tenants do: their tool sets share
// one bound on ripgrep processes instead of one each.
func TestServerSharesRipgrepBound(t *testing.T) {
	f := newFixture(t)
	s := config.Defaults()
	s.Root = f.root
	shareServerBounds(&s)
	if s.RipgrepSlots == nil {
		t.Fatal("shareServerBounds left RipgrepSlots nil")
	}
	logger := slog.New(slog.DiscardHandler)
	var namespaces []*namespace
	for range 2 {
		ts := s // a tenant's or session's copy of the settings
		ns, err := openNamespace(context.Background(), &ts, logger)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ns.Close() })
		namespaces = append(namespaces, ns)
	}
	if a, b := namespaces[0].opts.RipgrepSlots, namespaces[1].opts.RipgrepSlots; a != s.RipgrepSlots || b != s.RipgrepSlots {
		t.Fatalf("namespaces got ripgrep bounds %p and %p, want the server's %p", a, b, s.RipgrepSlots)
	}
}
