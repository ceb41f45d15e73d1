package server

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/fencefs/fencefs/tenant"
)

// BenchmarkOpenTenant measures the server's own work for a tenant whose
// namespace is not cached, without client or transport: opening its
// namespace, finding the shared MCP server of its tool list, and closing
// the namespace again (the eviction that made it cold). Issue 25's goal
// is a cold tenant within 50 µs of CPU of a warm one.
//
//	go test ./server -run '^$' -bench OpenTenant -benchmem -cpu 1
func BenchmarkOpenTenant(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	const n = 200
	for i := range n {
		if err := os.MkdirAll(filepath.Join(dir, "t"+strconv.Itoa(i)), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	ws, err := tenant.ParseTemplate("local:" + filepath.Join(dir, tenant.Placeholder))
	if err != nil {
		b.Fatal(err)
	}
	s, err := New(ctx, Config{
		TenantMounts: []TenantMount{{Name: "ws", Template: ws}},
		Stateless:    true,
		Identity:     AuthenticatorFunc(nil),
	})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var list []string // every tool, as a token with both scopes gets
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		v, err := s.openTenant(ctx, tenant.ID("t"+strconv.Itoa(i%n)))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := v.Server(list, false); err != nil {
			b.Fatal(err)
		}
		v.ns.Close()
		i++
	}
}
