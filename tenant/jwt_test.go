package tenant

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

const testAudience = "https://files.example.test/mcp"

// jwtFixture is an issuer with one RSA key "r1" and one ECDSA key "e1"
// published, and a verifier found by discovery.
type jwtFixture struct {
	iss      *testIssuer
	rsa, ec  signingKey
	verifier *JWTVerifier
}

func newJWTFixture(t testing.TB, cfg JWTConfig) *jwtFixture {
	t.Helper()
	f := &jwtFixture{iss: newTestIssuer(t), rsa: newKey(t, jose.RS256), ec: newKey(t, jose.ES256)}
	f.iss.publish(map[string]signingKey{"r1": f.rsa, "e1": f.ec})
	cfg.Issuer = f.iss.srv.URL
	if cfg.Audience == "" {
		cfg.Audience = testAudience
	}
	v, err := NewJWT(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.verifier = v
	return f
}

// claims returns good claims for tenant, changed by edit.
func (f *jwtFixture) claims(tenant any, edit func(map[string]any)) map[string]any {
	now := time.Now()
	c := map[string]any{
		"iss": f.iss.srv.URL, "sub": "alice", "aud": testAudience, "tenant": tenant,
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(), "scope": "files:read files:write",
	}
	if edit != nil {
		edit(c)
	}
	return c
}

func TestJWTVerify(t *testing.T) {
	f := newJWTFixture(t, JWTConfig{TenantClaim: "tenant"})
	stranger := newKey(t, jose.RS256)
	publicDER, err := x509.MarshalPKIXPublicKey(f.rsa.priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	hs256 := func(claims map[string]any) string {
		// The RSA public key's bytes as an HMAC secret: the algorithm
		// confusion a verifier that trusts the header's alg falls for.
		tok := unsignedJWT(t, map[string]any{"alg": "HS256", "kid": "r1", "typ": "JWT"}, claims, "")
		mac := hmac.New(sha256.New, publicDER)
		mac.Write([]byte(strings.TrimSuffix(tok, ".")))
		return tok + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
	}
	good := f.claims("t1", nil)
	cases := []struct {
		name   string
		token  string
		status int
		tenant ID
	}{
		{"rsa", sign(t, f.rsa, "r1", good), 200, "t1"},
		{"ecdsa", sign(t, f.ec, "e1", good), 200, "t1"},
		{"forged with a known key id", sign(t, stranger, "r1", good), 401, ""},
		{"forged with an unknown key id", sign(t, stranger, "x9", good), 401, ""},
		{"expired", sign(t, f.rsa, "r1", f.claims("t1", func(c map[string]any) { c["exp"] = time.Now().Add(-time.Minute).Unix() })), 401, ""},
		{"no expiry", sign(t, f.rsa, "r1", f.claims("t1", func(c map[string]any) { delete(c, "exp") })), 401, ""},
		{"not yet valid", sign(t, f.rsa, "r1", f.claims("t1", func(c map[string]any) { c["nbf"] = time.Now().Add(time.Hour).Unix() })), 401, ""},
		{"wrong audience", sign(t, f.rsa, "r1", f.claims("t1", func(c map[string]any) { c["aud"] = "https://other.example.test" })), 401, ""},
		{"wrong issuer", sign(t, f.rsa, "r1", f.claims("t1", func(c map[string]any) { c["iss"] = "https://evil.example.test" })), 401, ""},
		{"no subject", sign(t, f.rsa, "r1", f.claims("t1", func(c map[string]any) { delete(c, "sub") })), 401, ""},
		{"alg none", unsignedJWT(t, map[string]any{"alg": "none", "typ": "JWT"}, good, ""), 401, ""},
		{"alg none with a signature", unsignedJWT(t, map[string]any{"alg": "none", "kid": "r1"}, good, "c2ln"), 401, ""},
		{"unsigned", unsignedJWT(t, map[string]any{"alg": "RS256", "kid": "r1"}, good, ""), 401, ""},
		{"HS256 keyed with the public key", hs256(good), 401, ""},
		{"signature of another token", func() string {
			a := strings.Split(sign(t, f.rsa, "r1", good), ".")
			b := strings.Split(sign(t, f.rsa, "r1", f.claims("t2", nil)), ".")
			return b[0] + "." + b[1] + "." + a[2]
		}(), 401, ""},
		{"garbage", "not.a.jwt", 401, ""},
		{"tenant ../t2", sign(t, f.rsa, "r1", f.claims("../t2", nil)), 403, ""},
		{"tenant t1/x", sign(t, f.rsa, "r1", f.claims("t1/x", nil)), 403, ""},
		{"tenant empty", sign(t, f.rsa, "r1", f.claims("", nil)), 403, ""},
		{"tenant with a newline", sign(t, f.rsa, "r1", f.claims("t1\nt2", nil)), 403, ""},
		{"tenant with NUL", sign(t, f.rsa, "r1", f.claims("t1\x00", nil)), 403, ""},
		{"tenant over-long", sign(t, f.rsa, "r1", f.claims(strings.Repeat("a", MaxIDLen+1), nil)), 403, ""},
		{"tenant a number", sign(t, f.rsa, "r1", f.claims(42, nil)), 403, ""},
		{"no tenant claim", sign(t, f.rsa, "r1", f.claims("t1", func(c map[string]any) { delete(c, "tenant") })), 403, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id, err := f.verifier.Verify(context.Background(), tc.token)
			if got := StatusCode(err); got != tc.status {
				t.Fatalf("status %d (%v), want %d", got, err, tc.status)
			}
			if tc.status != 200 {
				t.Logf("refused: %v", err)
				if id != nil {
					t.Fatalf("refused token gave identity %+v", id)
				}
				return
			}
			if id.Tenant != tc.tenant || id.Subject != "alice" || id.Issuer != f.iss.srv.URL {
				t.Fatalf("identity %+v", id)
			}
			if strings.Join(id.Scopes, " ") != "files:read files:write" || id.Expiry.IsZero() {
				t.Fatalf("scopes %q expiry %v", id.Scopes, id.Expiry)
			}
		})
	}
}

// TestJWTKeyRotation rotates the issuer's keys between tokens: a token
// under a new key id is accepted after the verifier fetches the set again,
// and one under the retired key is refused once the set no longer has it.
func TestJWTKeyRotation(t *testing.T) {
	f := newJWTFixture(t, JWTConfig{CacheSize: -1})
	ctx := context.Background()
	if _, err := f.verifier.Verify(ctx, sign(t, f.rsa, "r1", f.claims("t1", nil))); err != nil {
		t.Fatal(err)
	}
	before := f.iss.jwksFetches()

	r2 := newKey(t, jose.RS256)
	f.iss.publish(map[string]signingKey{"r2": r2})
	if _, err := f.verifier.Verify(ctx, sign(t, r2, "r2", f.claims("t1", nil))); err != nil {
		t.Fatalf("token under the new key: %v", err)
	}
	if got := f.iss.jwksFetches(); got != before+1 {
		t.Fatalf("JWKS fetched %d times for the new key, want once", got-before)
	}
	// go-oidc stores the fetched set just after it answers the request that
	// waited for it, so the retired key may verify for a moment more; it
	// must stop within the deadline. A token naming a key id the set lacks
	// costs one fetch, so the refusal makes the second.
	retired := sign(t, f.rsa, "r1", f.claims("t1", nil))
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := f.verifier.Verify(ctx, retired)
		if StatusCode(err) == http.StatusUnauthorized {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("token under the retired key: %v, want 401", err)
		}
		runtime.Gosched()
	}
	if got := f.iss.jwksFetches(); got != before+2 {
		t.Fatalf("JWKS fetched %d times after the rotation, want 2", got-before)
	}
}

func TestJWTConfig(t *testing.T) {
	iss := newTestIssuer(t)
	iss.publish(map[string]signingKey{"r1": newKey(t, jose.RS256)})
	cases := []struct {
		name string
		cfg  JWTConfig
		want string
	}{
		{"no issuer", JWTConfig{Audience: "a"}, "no issuer"},
		{"no audience", JWTConfig{Issuer: iss.srv.URL}, "no audience"},
		{"alg none", JWTConfig{Issuer: iss.srv.URL, Audience: "a", Algorithms: []string{"none"}}, `"none" not allowed`},
		{"HS256", JWTConfig{Issuer: iss.srv.URL, Audience: "a", Algorithms: []string{"RS256", "HS256"}}, `"HS256" not allowed`},
		{"no algorithm", JWTConfig{Issuer: iss.srv.URL, Audience: "a", Algorithms: []string{}}, "no algorithm"},
		{"negative key age", JWTConfig{Issuer: iss.srv.URL, Audience: "a", KeysMaxAge: -time.Second}, "negative"},
		{"discovery names another issuer", JWTConfig{Issuer: iss.srv.URL + "/", Audience: "a"}, "discovery"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewJWT(context.Background(), tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
}

// TestJWTWithoutDiscovery uses the JWKS URL directly, with the scopes in
// an array claim and only ES256 allowed.
func TestJWTWithoutDiscovery(t *testing.T) {
	iss := newTestIssuer(t)
	ec, rs := newKey(t, jose.ES256), newKey(t, jose.RS256)
	iss.publish(map[string]signingKey{"e1": ec, "r1": rs})
	v, err := NewJWT(context.Background(), JWTConfig{
		Issuer: "https://login.example.test", JWKSURL: iss.srv.URL + "/jwks", Audience: testAudience,
		Algorithms: []string{"ES256"}, ScopeClaim: "scp",
	})
	if err != nil {
		t.Fatal(err)
	}
	claims := map[string]any{"iss": "https://login.example.test", "sub": "t7", "aud": []string{"x", testAudience},
		"exp": time.Now().Add(time.Hour).Unix(), "scp": []string{"files:read"}}
	id, err := v.Verify(context.Background(), sign(t, ec, "e1", claims))
	if err != nil {
		t.Fatal(err)
	}
	if id.Tenant != "t7" || len(id.Scopes) != 1 || id.Scopes[0] != "files:read" || id.UserID() != "t7/t7" {
		t.Fatalf("identity %+v", id)
	}
	if _, err := v.Verify(context.Background(), sign(t, rs, "r1", claims)); !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("RS256 token with only ES256 allowed: %v", err)
	}
	claims["scp"] = 7
	if _, err := v.Verify(context.Background(), sign(t, ec, "e1", claims)); !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("scope claim of a number: %v", err)
	}
}

// TestJWTFetchLimit sends a flood of forged tokens, each naming a key id
// the issuer does not publish: the issuer sees a few fetches, not one per
// token, and good tokens go on verifying.
func TestJWTFetchLimit(t *testing.T) {
	f := newJWTFixture(t, JWTConfig{MinFetchInterval: time.Hour})
	ctx := context.Background()
	good := sign(t, f.rsa, "r1", f.claims("t1", nil))
	if _, err := f.verifier.Verify(ctx, good); err != nil {
		t.Fatal(err)
	}
	stranger := newKey(t, jose.RS256)
	for i := range 50 {
		_, err := f.verifier.Verify(ctx, sign(t, stranger, fmt.Sprintf("k%d", i), f.claims("t1", nil)))
		if StatusCode(err) != http.StatusUnauthorized {
			t.Fatalf("forged token %d: %v", i, err)
		}
	}
	if got := f.iss.jwksFetches(); got > fetchBurst {
		t.Fatalf("%d JWKS fetches for 50 forged tokens, want at most %d", got, fetchBurst)
	}
	if _, err := f.verifier.Verify(ctx, good); err != nil {
		t.Fatalf("good token after the flood: %v", err)
	}
}

// TestJWTKeysMaxAge: a key the issuer stopped publishing verifies nothing
// once the key set is KeysMaxAge old, even under its own key id; a token
// it verified before is served from the cache of verified tokens for at
// most CacheTTL.
func TestJWTKeysMaxAge(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cfg     JWTConfig
		refused bool
	}{
		{"key set young", JWTConfig{KeysMaxAge: time.Hour, CacheSize: -1}, false},
		{"key set old", JWTConfig{KeysMaxAge: time.Nanosecond, CacheSize: -1}, true},
		{"key set old, token cached", JWTConfig{KeysMaxAge: time.Nanosecond}, false},
		{"key set old, cache entry old", JWTConfig{KeysMaxAge: time.Nanosecond, CacheTTL: time.Nanosecond}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newJWTFixture(t, tc.cfg)
			ctx := context.Background()
			leaked := sign(t, f.rsa, "r1", f.claims("t1", nil))
			if _, err := f.verifier.Verify(ctx, leaked); err != nil {
				t.Fatal(err)
			}
			f.iss.publish(map[string]signingKey{"e1": f.ec}) // r1 withdrawn
			_, err := f.verifier.Verify(ctx, leaked)
			if refused := StatusCode(err) == http.StatusUnauthorized; refused != tc.refused {
				t.Fatalf("withdrawn key's token: %v, want refused %v", err, tc.refused)
			}
		})
	}
}

// TestJWTCache: a cached identity is a copy, and a refused token is not
// kept.
func TestJWTCache(t *testing.T) {
	f := newJWTFixture(t, JWTConfig{TenantClaim: "tenant"})
	ctx := context.Background()
	tok := sign(t, f.rsa, "r1", f.claims("t1", nil))
	a, err := f.verifier.Verify(ctx, tok)
	if err != nil {
		t.Fatal(err)
	}
	a.Scopes[0], a.Tenant = "files:admin", "t2"
	b, err := f.verifier.Verify(ctx, tok)
	if err != nil || b.Tenant != "t1" || b.Scopes[0] != "files:read" {
		t.Fatalf("second Verify: %+v, %v", b, err)
	}
	bad := sign(t, f.rsa, "r1", f.claims("../t2", nil))
	for range 2 {
		if _, err := f.verifier.Verify(ctx, bad); StatusCode(err) != http.StatusForbidden {
			t.Fatalf("bad tenant: %v", err)
		}
	}
	if n := f.verifier.verified.Len(); n != 1 {
		t.Fatalf("%d tokens cached, want 1", n)
	}
}

// FuzzJWTVerify hands the verifier of a real issuer arbitrary tokens
// derived from a good one: none may verify as anything but the good
// token's identity (base64 has spellings that decode alike, so an accepted
// mutant is not by itself a failure; a different identity is).
func FuzzJWTVerify(f *testing.F) {
	fx := newJWTFixture(f, JWTConfig{TenantClaim: "tenant", CacheSize: -1})
	good := sign(f, fx.rsa, "r1", fx.claims("t1", nil))
	want, err := fx.verifier.Verify(context.Background(), good)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(sign(f, fx.ec, "e1", fx.claims("t1", nil)))
	f.Add(unsignedJWT(f, map[string]any{"alg": "none"}, fx.claims("t2", nil), ""))
	f.Fuzz(func(t *testing.T, token string) {
		id, err := fx.verifier.Verify(context.Background(), token)
		if err != nil {
			if code := StatusCode(err); code != http.StatusUnauthorized && code != http.StatusForbidden {
				t.Fatalf("status %d for %q: %v", code, token, err)
			}
			return
		}
		if id.Tenant != want.Tenant || id.Subject != want.Subject || id.Issuer != want.Issuer {
			t.Fatalf("%q verified as %+v", token, id)
		}
	})
}
