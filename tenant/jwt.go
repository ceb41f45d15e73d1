package tenant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/coreos/go-oidc/v3/oidc"
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
	// HTTPClient fetches discovery and keys; nil means
	// http.DefaultClient. Give it a timeout.
	HTTPClient *http.Client
}

// JWTVerifier verifies JWT bearer tokens against an issuer's JWKS:
// signature by a key of the set (fetched again when a token names a key id
// the cached set lacks, which is how issuers rotate), one of the allowed
// algorithms, issuer, audience, expiry and not-before. The verification is
// github.com/coreos/go-oidc's.
type JWTVerifier struct {
	verifier    *oidc.IDTokenVerifier
	tenantClaim string
	scopeClaim  string
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
	if cfg.HTTPClient != nil {
		ctx = oidc.ClientContext(ctx, cfg.HTTPClient)
	}
	oc := &oidc.Config{ClientID: cfg.Audience, SupportedSigningAlgs: slices.Clone(algs)}
	var v *oidc.IDTokenVerifier
	if cfg.JWKSURL != "" {
		v = oidc.NewVerifier(cfg.Issuer, oidc.NewRemoteKeySet(ctx, cfg.JWKSURL), oc)
	} else {
		p, err := oidc.NewProvider(ctx, cfg.Issuer)
		if err != nil {
			return nil, fmt.Errorf("tenant: jwt: discovery: %w", err)
		}
		v = p.VerifierContext(ctx, oc)
	}
	return &JWTVerifier{
		verifier:    v,
		tenantClaim: orDefault(cfg.TenantClaim, DefaultTenantClaim),
		scopeClaim:  orDefault(cfg.ScopeClaim, DefaultScopeClaim),
	}, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Verify checks token and returns its holder. A token that does not verify
// gets an error matching auth.ErrInvalidToken; a verified token whose
// tenant claim is missing or not a safe id one matching ErrForbidden.
func (v *JWTVerifier) Verify(ctx context.Context, token string) (*Identity, error) {
	t, err := v.verifier.Verify(ctx, token)
	if err != nil {
		return nil, invalidToken("%v", err)
	}
	if t.Subject == "" {
		return nil, invalidToken("no subject")
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
