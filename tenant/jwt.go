package tenant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4"
	"golang.org/x/time/rate"
)

// Defaults of JWTConfig.
const (
	DefaultTenantClaim = "sub"
	DefaultScopeClaim  = "scope"
)

// asymmetricAlgs returns the signature algorithms a JWTVerifier may accept:
// those whose verification key is public. A symmetric one (HS256) would let
// anyone holding the JWKS's public bytes sign, and "none" signs nothing.
func asymmetricAlgs() []string {
	return []string{
		oidc.RS256, oidc.RS384, oidc.RS512, oidc.ES256, oidc.ES384, oidc.ES512,
		oidc.PS256, oidc.PS384, oidc.PS512, oidc.EdDSA,
	}
}

// JWTConfig configures a JWTVerifier.
type JWTConfig struct {
	// Issuer is the exact "iss" the tokens carry (required). Without
	// JWKSURL, Issuer + "/.well-known/openid-configuration" is fetched
	// once by NewJWT to find the JWKS.
	Issuer string
	// JWKSURL is the issuer's key set; set it to skip discovery.
	JWKSURL string
	// Audience must be one of the token's "aud" values (required): a
	// token issued for another service is refused.
	Audience string
	// Algorithms are the accepted signature algorithms; nil means every
	// asymmetric one (RS*, PS*, ES*, EdDSA). "none" and HS* are refused.
	Algorithms []string
	// TenantClaim names the string claim that holds the tenant id; ""
	// means "sub".
	TenantClaim string
	// ScopeClaim names the claim that holds the scopes, either one
	// space-separated string (RFC 9068 "scope") or an array of strings
	// (as some issuers send "scp"); "" means "scope".
	ScopeClaim string
	// HTTPClient fetches discovery and keys; nil means a client with a
	// timeout of DefaultFetchTimeout. Give yours a timeout too.
	HTTPClient *http.Client
	// KeysMaxAge is how long a fetched key set is trusted before it is
	// fetched again; 0 means DefaultKeysMaxAge. A key the issuer stopped
	// publishing (because it leaked, say) verifies no token after that.
	KeysMaxAge time.Duration
	// MinFetchInterval spaces the key set fetches that tokens naming an
	// unknown key id cause, after a first few; 0 means
	// DefaultMinFetchInterval. It keeps a flood of forged tokens from
	// becoming a flood of requests to the issuer.
	MinFetchInterval time.Duration
	// CacheSize is how many verified tokens are kept, so a client's next
	// requests with the same token skip the signature check (which costs
	// more than a small file read); 0 means DefaultCacheSize, negative
	// keeps none. Tokens that fail are never kept.
	CacheSize int
	// CacheTTL is how long a verified token is kept, at most until it
	// expires; 0 means DefaultCacheTTL. A token verified by a key the
	// issuer has since withdrawn is accepted for that long at most.
	CacheTTL time.Duration
	// TokenType, when set, is the JOSE "typ" header a token must carry
	// ("at+jwt" for RFC 9068 access tokens; compared without case and
	// without an "application/" prefix), so that an ID token the same
	// issuer made for the same audience is not taken as an access token.
	// "" accepts any type.
	TokenType string
}

// Defaults of JWTConfig's key set refresh.
const (
	DefaultKeysMaxAge       = 15 * time.Minute
	DefaultMinFetchInterval = 10 * time.Second
	DefaultFetchTimeout     = 30 * time.Second
	// fetchBurst is how many fetches a key set may make before
	// MinFetchInterval spaces them: the first, and a rotation or two.
	fetchBurst = 3
)

// Defaults of JWTConfig's cache of verified tokens.
const (
	DefaultCacheSize = 10000
	DefaultCacheTTL  = time.Minute
)

// JWTVerifier verifies JWT bearer tokens against an issuer's JWKS:
// signature by a key of the set, one of the allowed algorithms, issuer,
// audience, expiry and not-before. The verification is
// github.com/coreos/go-oidc's. The key set is fetched again when a token
// names a key id the cached set lacks (which is how issuers rotate), at
// most fetchBurst times and then once per MinFetchInterval, and in whole
// once it is KeysMaxAge old.
type JWTVerifier struct {
	issuer, jwksURL  string
	oidcConfig       oidc.Config
	client           *http.Client
	maxAge, interval time.Duration
	tenantClaim      string
	scopeClaim       string
	cacheTTL         time.Duration
	tokenType        string                        // normalType of JWTConfig.TokenType
	verified         *Cache[string, verifiedToken] // nil without a cache

	mu   sync.Mutex
	cur  *oidc.IDTokenVerifier
	born time.Time
}

// NewJWT returns a JWTVerifier for cfg. Without cfg.JWKSURL it performs
// OIDC discovery with ctx and fails when the issuer cannot be reached or
// names another issuer.
func NewJWT(ctx context.Context, cfg JWTConfig) (*JWTVerifier, error) {
	if cfg.Issuer == "" {
		return nil, errors.New("tenant: jwt: no issuer")
	}
	if cfg.Audience == "" {
		return nil, errors.New("tenant: jwt: no audience: a token issued for any other service would be accepted")
	}
	if cfg.KeysMaxAge < 0 || cfg.MinFetchInterval < 0 || cfg.CacheTTL < 0 {
		return nil, errors.New("tenant: jwt: negative KeysMaxAge, MinFetchInterval or CacheTTL")
	}
	allowed := asymmetricAlgs()
	algs := cfg.Algorithms
	if algs == nil {
		algs = allowed
	}
	if len(algs) == 0 {
		return nil, errors.New("tenant: jwt: no algorithm allowed")
	}
	for _, a := range algs {
		if !slices.Contains(allowed, a) {
			return nil, fmt.Errorf("tenant: jwt: algorithm %q not allowed (allowed: %v)", a, allowed)
		}
	}
	v := &JWTVerifier{
		issuer: cfg.Issuer, jwksURL: cfg.JWKSURL,
		oidcConfig:  oidc.Config{ClientID: cfg.Audience, SupportedSigningAlgs: slices.Clone(algs)},
		client:      cfg.HTTPClient,
		maxAge:      orDefault(cfg.KeysMaxAge, DefaultKeysMaxAge),
		interval:    orDefault(cfg.MinFetchInterval, DefaultMinFetchInterval),
		tenantClaim: orDefault(cfg.TenantClaim, DefaultTenantClaim),
		scopeClaim:  orDefault(cfg.ScopeClaim, DefaultScopeClaim),
		cacheTTL:    orDefault(cfg.CacheTTL, DefaultCacheTTL),
		tokenType:   normalType(cfg.TokenType),
	}
	if size := orDefault(cfg.CacheSize, DefaultCacheSize); size > 0 {
		c, err := NewCache(CacheOptions[string, verifiedToken]{Size: size, Build: v.verifyToken})
		if err != nil {
			return nil, err
		}
		v.verified = c
	}
	if v.client == nil {
		// A fetch that never ends would hold every later key lookup, which
		// waits for the fetch in flight.
		v.client = &http.Client{Timeout: DefaultFetchTimeout}
	}
	if v.jwksURL == "" {
		p, err := oidc.NewProvider(oidc.ClientContext(ctx, v.client), cfg.Issuer)
		if err != nil {
			return nil, fmt.Errorf("tenant: jwt: discovery: %w", err)
		}
		var meta struct {
			JWKSURL string `json:"jwks_uri"`
		}
		if err := p.Claims(&meta); err != nil || meta.JWKSURL == "" {
			return nil, fmt.Errorf("tenant: jwt: discovery: no jwks_uri")
		}
		v.jwksURL = meta.JWKSURL
	}
	return v, nil
}

// verifier returns the go-oidc verifier of the current key set, starting
// a new key set once the current one is KeysMaxAge old.
func (v *JWTVerifier) verifier() *oidc.IDTokenVerifier {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.cur == nil || time.Since(v.born) >= v.maxAge {
		// Each key set has its own fetch limiter, so its first fetch is
		// never the one a flood of forged tokens used up.
		client := *v.client
		client.Transport = &limitedTransport{
			next:    orDefault(v.client.Transport, http.DefaultTransport),
			limiter: rate.NewLimiter(rate.Every(v.interval), fetchBurst),
		}
		keys := oidc.NewRemoteKeySet(oidc.ClientContext(context.Background(), &client), v.jwksURL)
		cfg := v.oidcConfig
		v.cur, v.born = oidc.NewVerifier(v.issuer, keys, &cfg), time.Now()
	}
	return v.cur
}

// limitedTransport refuses requests beyond its limiter's rate.
type limitedTransport struct {
	next    http.RoundTripper
	limiter *rate.Limiter
}

func (t *limitedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if !t.limiter.Allow() {
		return nil, errors.New("key set fetched too often; the token names a key id the issuer does not publish")
	}
	return t.next.RoundTrip(r)
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// verifiedToken is a cache entry: the identity of a token and until when
// it may be served from the cache.
type verifiedToken struct {
	id    *Identity
	until time.Time
}

// Verify checks token and returns its holder. A token that does not verify
// gets an error matching auth.ErrInvalidToken; a verified token whose
// tenant claim is missing or not a safe id one matching ErrForbidden.
func (v *JWTVerifier) Verify(ctx context.Context, token string) (*Identity, error) {
	if v.verified == nil {
		vt, err := v.verifyToken(ctx, token)
		return vt.id, err
	}
	vt, release, err := v.verified.Get(ctx, token)
	release()
	if err == nil && !time.Now().Before(vt.until) {
		// Kept too long: verify again, and serve what that gives even if
		// a CacheTTL shorter than the call has already passed.
		v.verified.Remove(token)
		vt, release, err = v.verified.Get(ctx, token)
		release()
	}
	if err != nil {
		return nil, err
	}
	id := *vt.id
	id.Scopes = slices.Clone(id.Scopes)
	return &id, nil
}

// verifyToken checks token's signature and claims.
func (v *JWTVerifier) verifyToken(ctx context.Context, token string) (verifiedToken, error) {
	id, err := v.verify(ctx, token)
	if err != nil {
		return verifiedToken{}, err
	}
	return verifiedToken{id: id, until: minTime(id.Expiry, time.Now().Add(v.cacheTTL))}, nil
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func (v *JWTVerifier) verify(ctx context.Context, token string) (*Identity, error) {
	t, err := v.verifier().Verify(ctx, token)
	if err != nil {
		return nil, invalidToken("%v", err)
	}
	if t.Subject == "" {
		return nil, invalidToken("no subject")
	}
	if v.tokenType != "" {
		if typ := headerType(token, v.oidcConfig.SupportedSigningAlgs); typ != v.tokenType {
			return nil, invalidToken("token type %q, want %q", typ, v.tokenType)
		}
	}
	var claims map[string]json.RawMessage
	if err := t.Claims(&claims); err != nil {
		return nil, invalidToken("claims: %v", err)
	}
	scopes, err := scopeList(claims[v.scopeClaim])
	if err != nil {
		return nil, invalidToken("claim %q: %v", v.scopeClaim, err)
	}
	var raw string
	if c, ok := claims[v.tenantClaim]; !ok {
		return nil, forbidden(fmt.Errorf("no tenant claim %q", v.tenantClaim))
	} else if err := json.Unmarshal(c, &raw); err != nil {
		return nil, forbidden(fmt.Errorf("tenant claim %q is not a string", v.tenantClaim))
	}
	tenant, err := ParseID(raw)
	if err != nil {
		return nil, forbidden(fmt.Errorf("tenant claim %q: %w", v.tenantClaim, err))
	}
	return &Identity{Issuer: t.Issuer, Subject: t.Subject, Tenant: tenant, Scopes: scopes, Expiry: t.Expiry}, nil
}

// normalType is a JOSE "typ" value as RFC 7515 compares it: without case
// and without an "application/" prefix.
func normalType(typ string) string {
	typ = strings.ToLower(typ)
	return strings.TrimPrefix(typ, "application/")
}

// headerType returns the normalType of the "typ" header of a token whose
// signature was verified; "" when it has none.
func headerType(token string, algs []string) string {
	var sigAlgs []jose.SignatureAlgorithm
	for _, a := range algs {
		sigAlgs = append(sigAlgs, jose.SignatureAlgorithm(a))
	}
	jws, err := jose.ParseSigned(token, sigAlgs)
	if err != nil || len(jws.Signatures) != 1 {
		return ""
	}
	typ, _ := jws.Signatures[0].Protected.ExtraHeaders[jose.HeaderType].(string)
	return normalType(typ)
}

// scopeList reads a scope claim: absent, a space-separated string, or an
// array of strings.
func scopeList(raw json.RawMessage) ([]string, error) {
	if raw == nil {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return strings.Fields(s), nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, errors.New("neither a string nor an array of strings")
	}
	return list, nil
}
