package tenant

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// testIssuer is a token issuer on 127.0.0.1: OIDC discovery, a JWKS of
// real RSA and ECDSA keys that the test can rotate, and a signer.
type testIssuer struct {
	srv     *httptest.Server
	mu      sync.Mutex
	keys    map[string]signingKey // by key id, the ones the JWKS publishes
	fetches int                   // JWKS requests served
}

type signingKey struct {
	alg  jose.SignatureAlgorithm
	priv crypto.Signer
}

func newTestIssuer(t testing.TB) *testIssuer {
	t.Helper()
	iss := &testIssuer{keys: map[string]signingKey{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{
			"issuer":                                iss.srv.URL,
			"jwks_uri":                              iss.srv.URL + "/jwks",
			"authorization_endpoint":                iss.srv.URL + "/authorize",
			"token_endpoint":                        iss.srv.URL + "/token",
			"id_token_signing_alg_values_supported": []string{"RS256", "ES256"},
		})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		iss.mu.Lock()
		defer iss.mu.Unlock()
		iss.fetches++
		var set jose.JSONWebKeySet
		for kid, k := range iss.keys {
			set.Keys = append(set.Keys, jose.JSONWebKey{Key: k.priv.Public(), KeyID: kid, Algorithm: string(k.alg), Use: "sig"})
		}
		writeJSON(w, set)
	})
	iss.srv = httptest.NewServer(mux)
	t.Cleanup(iss.srv.Close)
	return iss
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// newKey makes a key of alg (RS256 or ES256) without publishing it.
func newKey(t testing.TB, alg jose.SignatureAlgorithm) signingKey {
	t.Helper()
	var priv crypto.Signer
	var err error
	switch alg {
	case jose.RS256:
		priv, err = rsa.GenerateKey(rand.Reader, 2048)
	case jose.ES256:
		priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	default:
		t.Fatalf("no key for %s", alg)
	}
	if err != nil {
		t.Fatal(err)
	}
	return signingKey{alg: alg, priv: priv}
}

// publish makes keys the whole published key set.
func (iss *testIssuer) publish(keys map[string]signingKey) {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	iss.keys = keys
}

func (iss *testIssuer) jwksFetches() int {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	return iss.fetches
}

// sign returns a compact JWT of claims signed by k under key id kid.
func sign(t testing.TB, k signingKey, kid string, claims map[string]any) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: k.alg, Key: jose.JSONWebKey{Key: k.priv, KeyID: kid}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// unsignedJWT returns header.payload.signature with the given parts, for
// tokens no library would make.
func unsignedJWT(t testing.TB, header, claims map[string]any, sig string) string {
	t.Helper()
	enc := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return enc(header) + "." + enc(claims) + "." + sig
}
