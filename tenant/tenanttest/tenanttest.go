// Package tenanttest provides a token issuer for tests of servers that
// verify tokens with package tenant: a real OpenID Connect issuer on
// 127.0.0.1 (discovery document and JWKS over HTTP) that signs real ES256
// tokens, the kind a deployment's issuer gives its clients.
package tenanttest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// KeyID is the kid of the issuer's key in its JWKS and its tokens.
const KeyID = "k1"

// DefaultScope is the scope of a token whose Claims name none.
const DefaultScope = "files:read files:write"

// Issuer is an OpenID Connect issuer served on 127.0.0.1.
type Issuer struct {
	// URL is the issuer (its discovery document is below it).
	URL string
	// Audience is the audience of the tokens it signs unless told
	// otherwise.
	Audience string
	key      *ecdsa.PrivateKey
	srv      *httptest.Server
}

// NewIssuer starts an issuer with a fresh P-256 key; it stops when t ends.
func NewIssuer(t testing.TB) *Issuer {
	t.Helper()
	iss, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(iss.Close)
	return iss
}

// Start starts an issuer with a fresh P-256 key, until Close.
func Start() (*Issuer, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	iss := &Issuer{key: key, Audience: "https://files.example/mcp"}
	mux := http.NewServeMux()
	iss.srv = httptest.NewServer(mux)
	iss.URL = iss.srv.URL
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"issuer": iss.URL, "jwks_uri": iss.URL + "/jwks",
			"id_token_signing_alg_values_supported": []string{"ES256"}})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: key.Public(), KeyID: KeyID, Algorithm: "ES256", Use: "sig"}}})
	})
	return iss, nil
}

// Close stops the issuer.
func (iss *Issuer) Close() { iss.srv.Close() }

// Claims are the claims of a token to sign; zero fields get values the
// issuer's verifier accepts.
type Claims struct {
	// Subject is the sub claim (the tenant, by default).
	Subject string
	// Audience defaults to the issuer's Audience.
	Audience string
	// Scope defaults to DefaultScope.
	Scope string
	// Expiry defaults to an hour from now.
	Expiry time.Time
	// Key, when set, signs the token instead of the issuer's key: a
	// forgery.
	Key *ecdsa.PrivateKey
	// Extra claims are added as they are.
	Extra map[string]any
	// Type is the JOSE "typ" header; "" means "JWT" (an issuer's RFC
	// 9068 access tokens say "at+jwt").
	Type string
}

// Sign returns a token with c's claims, failing t on an error.
func (iss *Issuer) Sign(t testing.TB, c Claims) string {
	t.Helper()
	tok, err := iss.Token(c)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// Token returns a token with c's claims.
func (iss *Issuer) Token(c Claims) (string, error) {
	key := c.Key
	if key == nil {
		key = iss.key
	}
	if c.Audience == "" {
		c.Audience = iss.Audience
	}
	if c.Expiry.IsZero() {
		c.Expiry = time.Now().Add(time.Hour)
	}
	if c.Scope == "" {
		c.Scope = DefaultScope
	}
	typ := c.Type
	if typ == "" {
		typ = "JWT"
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithType(jose.ContentType(typ)).WithHeader("kid", KeyID))
	if err != nil {
		return "", err
	}
	claims := map[string]any{"iss": iss.URL, "sub": c.Subject, "aud": c.Audience,
		"exp": c.Expiry.Unix(), "iat": time.Now().Add(-time.Minute).Unix(), "scope": c.Scope}
	for k, v := range c.Extra {
		claims[k] = v
	}
	return jwt.Signed(signer).Claims(claims).Serialize()
}

// Unsigned returns a token of subject with alg "none" and the signature
// part signature (empty, or one taken from another token), which no
// verifier may accept.
func (iss *Issuer) Unsigned(subject, signature string) string {
	enc := base64.RawURLEncoding.EncodeToString
	head, _ := json.Marshal(map[string]string{"alg": "none", "typ": "JWT"})
	body, _ := json.Marshal(map[string]any{"iss": iss.URL, "sub": subject, "aud": iss.Audience,
		"exp": time.Now().Add(time.Hour).Unix(), "scope": DefaultScope})
	return enc(head) + "." + enc(body) + "." + signature
}
