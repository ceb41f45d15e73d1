package tenant

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkJWTVerify is the cost a request's bearer token adds when it is
// a JWT, by signature algorithm, with and without the cache of verified
// tokens.
func BenchmarkJWTVerify(b *testing.B) {
	for _, cache := range []struct {
		name string
		size int
	}{{"uncached", -1}, {"cached", 0}} {
		f := newJWTFixture(b, JWTConfig{TenantClaim: "tenant", CacheSize: cache.size})
		for _, tc := range []struct {
			name string
			key  signingKey
			kid  string
		}{{"RS256", f.rsa, "r1"}, {"ES256", f.ec, "e1"}} {
			b.Run(cache.name+"/"+tc.name, func(b *testing.B) {
				tok := sign(b, tc.key, tc.kid, f.claims("t1", nil))
				ctx := context.Background()
				b.ReportAllocs()
				for b.Loop() {
					if _, err := f.verifier.Verify(ctx, tok); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkStaticVerify is the same for a token file of 1000 tokens.
func BenchmarkStaticVerify(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("tokens:\n")
	for i := range 1000 {
		fmt.Fprintf(&sb, "  - {name: n%d, sha256: %s, tenant: t%d, scopes: [files:read]}\n", i, HashToken(fmt.Sprintf("token-%d", i)), i)
	}
	path := filepath.Join(b.TempDir(), "tokens.yaml")
	if err := os.WriteFile(path, []byte(sb.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	v, err := NewStatic(path)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(ctx, "token-999"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCacheGet is the cost of finding a tenant's cached value.
func BenchmarkCacheGet(b *testing.B) {
	c, err := NewCache(CacheOptions[ID, int]{Size: 1000, Build: func(context.Context, ID) (int, error) { return 1, nil }})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_, release, err := c.Get(ctx, "t1")
			if err != nil {
				b.Error(err)
				return
			}
			release()
		}
	})
}
