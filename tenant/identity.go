package tenant

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// Identity is what a verified token says about its holder.
type Identity struct {
	// Issuer is the token's issuer: the JWT "iss", or "file" for a static
	// token.
	Issuer string
	// Subject is who holds the token: the JWT "sub", or the name of the
	// token file's entry.
	Subject string
	// Tenant is the namespace the holder works in, from a verified claim.
	Tenant ID
	// Scopes are the token's scopes, in the order the token lists them.
	Scopes []string
	// Expiry is when the token stops being valid; zero means never (a
	// static token without an expiry).
	Expiry time.Time
}

// LogValue makes an Identity a structured log group (tenant, subject,
// issuer, scopes), so log lines say who called without the token.
func (id *Identity) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("tenant", string(id.Tenant)),
		slog.String("subject", id.Subject),
		slog.String("issuer", id.Issuer),
		slog.String("scopes", strings.Join(id.Scopes, " ")),
	)
}

// UserID is the id the MCP SDK binds a session to (auth.TokenInfo.UserID):
// tenant and subject together.
func (id *Identity) UserID() string { return userID(id.Tenant, id.Subject) }

// A Verifier checks a bearer token and says who holds it. Its errors tell
// the HTTP status apart (see StatusCode): one that matches
// auth.ErrInvalidToken means the token is not good (401), one that matches
// ErrForbidden means the token is good but its holder may not come in
// (403). A Verifier is safe for concurrent use.
type Verifier interface {
	Verify(ctx context.Context, token string) (*Identity, error)
}

// ErrForbidden is matched by the errors of a token that verified but may
// not be served: a tenant claim that is missing or not a safe id, or scopes
// that grant nothing. It maps to HTTP 403.
var ErrForbidden = errors.New("forbidden")

// StatusCode returns the HTTP status for a Verifier's error: 401 for a
// token that did not verify (auth.ErrInvalidToken), 403 for ErrForbidden,
// 500 for anything else (the issuer could not be reached, say), 200 for
// nil.
func StatusCode(err error) int {
	switch {
	case err == nil:
		return http.StatusOK
	case errors.Is(err, ErrForbidden):
		return http.StatusForbidden
	case errors.Is(err, auth.ErrInvalidToken):
		return http.StatusUnauthorized
	default:
		return http.StatusInternalServerError
	}
}

func invalidToken(format string, args ...any) error {
	return fmt.Errorf("%w: %s", auth.ErrInvalidToken, fmt.Sprintf(format, args...))
}

func forbidden(err error) error {
	return fmt.Errorf("%w: %w", ErrForbidden, err)
}

// identityKey keys the Identity in auth.TokenInfo.Extra; a forbidden
// token carries its error under forbiddenKey instead, so no code can read
// an Identity out of it.
const (
	identityKey  = "fencefs.identity"
	forbiddenKey = "fencefs.forbidden"
)

// TokenVerifier adapts v to the MCP SDK's auth.TokenVerifier. A token that
// does not verify gets the SDK's 401. The SDK has no way to answer 403, so
// a forbidden token passes the SDK's check carrying its error and no
// Identity, and Middleware answers 403 for it: use Middleware, not
// TokenVerifier alone, unless you check FromContext's error yourself.
//
// The SDK answers a refused token with the error's text as the body, so
// the error TokenVerifier returns is generic ("invalid token", or "the
// token could not be verified" for a 500): the cause, which may name the
// issuer's key set URL or a dial error when the keys cannot be fetched,
// goes to slog.Default instead (Middleware uses its Logger).
func TokenVerifier(v Verifier) auth.TokenVerifier {
	return tokenVerifier(v, nil)
}

// Public errors of a token that did not verify: the body of the SDK's
// answer carries their text and nothing of the cause.
var (
	errPublicInvalid  = fmt.Errorf("%w", auth.ErrInvalidToken)
	errPublicInternal = errors.New("the token could not be verified")
)

func tokenVerifier(v Verifier, log *slog.Logger) auth.TokenVerifier {
	return func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		id, err := v.Verify(ctx, token)
		if errors.Is(err, ErrForbidden) {
			// The SDK refuses a TokenInfo without an expiry; this one is
			// refused with 403 by Middleware right after.
			return &auth.TokenInfo{Expiration: time.Now().Add(time.Minute), Extra: map[string]any{forbiddenKey: err}}, nil
		}
		if err != nil {
			if log == nil {
				log = slog.Default()
			}
			log.WarnContext(ctx, "tenant: token refused", slog.Int("status", StatusCode(err)), slog.Any("error", err))
			if errors.Is(err, auth.ErrInvalidToken) {
				return nil, errPublicInvalid
			}
			return nil, errPublicInternal
		}
		return TokenInfo(id), nil
	}
}

// TokenInfo returns the SDK's view of id: its scopes, expiry and UserID,
// with id itself in Extra for FromTokenInfo.
func TokenInfo(id *Identity) *auth.TokenInfo {
	return &auth.TokenInfo{
		Scopes:     slices.Clone(id.Scopes),
		Expiration: id.Expiry,
		UserID:     id.UserID(),
		Extra:      map[string]any{identityKey: id},
	}
}

// FromTokenInfo returns the Identity TokenVerifier stored in ti. Its error
// matches ErrForbidden for a forbidden token and auth.ErrInvalidToken when
// ti holds no Identity at all.
func FromTokenInfo(ti *auth.TokenInfo) (*Identity, error) {
	if ti == nil {
		return nil, invalidToken("no verified token")
	}
	if err, ok := ti.Extra[forbiddenKey].(error); ok {
		return nil, err
	}
	id, ok := ti.Extra[identityKey].(*Identity)
	if !ok {
		return nil, invalidToken("the token was not verified by a tenant verifier")
	}
	return id, nil
}

// FromContext returns the Identity of the request whose context is ctx, as
// Middleware (through auth.RequireBearerToken) stored it. An MCP tool
// handler finds the same through req.Extra.TokenInfo and FromTokenInfo.
func FromContext(ctx context.Context) (*Identity, error) {
	return FromTokenInfo(auth.TokenInfoFromContext(ctx))
}

// MiddlewareOptions configure Middleware.
type MiddlewareOptions struct {
	// ResourceMetadataURL is the URL of the server's RFC 9728 protected
	// resource metadata (served by auth.ProtectedResourceMetadataHandler),
	// sent in WWW-Authenticate so clients find the authorization server.
	ResourceMetadataURL string
	// Grants, when set, refuses with 403 a token whose scopes grant no
	// tool at all.
	Grants *Grants
	// ClockSkew is how long after its expiry a token is still accepted by
	// the SDK's own check, for issuers whose clock runs ahead.
	ClockSkew time.Duration
	// Logger receives why a token was refused (the client gets generic
	// text); nil means slog.Default().
	Logger *slog.Logger
}

// Middleware returns HTTP middleware that lets a request through only with
// a bearer token v verifies and whose holder may be served: 401 with a
// WWW-Authenticate challenge when the token is missing or bad, 403 when it
// is forbidden. The handler it wraps finds the Identity with FromContext,
// and the SDK's streamable handler binds each session to its UserID.
func Middleware(v Verifier, opts *MiddlewareOptions) func(http.Handler) http.Handler {
	if opts == nil {
		opts = &MiddlewareOptions{}
	}
	bearer := auth.RequireBearerToken(tokenVerifier(v, opts.Logger), &auth.RequireBearerTokenOptions{
		ResourceMetadataURL: opts.ResourceMetadataURL,
		// Both verifiers enforce expiry themselves; a static token may have
		// none.
		AllowMissingExpiration: true,
		ClockSkew:              opts.ClockSkew,
	})
	return func(next http.Handler) http.Handler {
		return bearer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			id, err := FromContext(r.Context())
			if err == nil && opts.Grants != nil && !opts.Grants.AllowsAny(id.Scopes) {
				err = forbidden(fmt.Errorf("no scope of %q grants a tool", strings.Join(id.Scopes, " ")))
			}
			if err != nil {
				refuse(w, err, opts.ResourceMetadataURL)
				return
			}
			next.ServeHTTP(w, r)
		}))
	}
}

func refuse(w http.ResponseWriter, err error, metadataURL string) {
	code := StatusCode(err)
	var params []string
	if code == http.StatusForbidden {
		params = append(params, `error="insufficient_scope"`)
	}
	if metadataURL != "" {
		params = append(params, fmt.Sprintf("resource_metadata=%q", metadataURL))
	}
	challenge := "Bearer"
	if len(params) > 0 {
		challenge += " " + strings.Join(params, ", ")
	}
	w.Header().Set("WWW-Authenticate", challenge)
	http.Error(w, err.Error(), code)
}
