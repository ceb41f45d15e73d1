package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/tenant"
	"github.com/fencefs/fencefs/tools"
)

// An Authenticator says who makes an HTTP request: a platform's own
// session cookie, mTLS certificate or gateway header, or a bearer token
// (Bearer). Its errors choose the answer as tenant.StatusCode says: one
// matching auth.ErrInvalidToken gives 401, one matching
// tenant.ErrForbidden 403, any other 500 (its text is not sent). The
// tenant must come from what the platform verified, never from what the
// client merely says. An Authenticator is safe for concurrent use.
type Authenticator interface {
	Authenticate(r *http.Request) (*tenant.Identity, error)
}

// ErrUnauthenticated is what an Authenticator's error wraps for a request
// that carries no valid credentials: it is answered 401. It is the MCP
// SDK's auth.ErrInvalidToken.
var ErrUnauthenticated = auth.ErrInvalidToken

// AuthenticatorFunc is a function as an Authenticator.
type AuthenticatorFunc func(r *http.Request) (*tenant.Identity, error)

// Authenticate calls f.
func (f AuthenticatorFunc) Authenticate(r *http.Request) (*tenant.Identity, error) { return f(r) }

// Bearer authenticates the bearer token of a request's Authorization
// header with Verifier: tenant.NewJWT (tokens of an OIDC issuer) and
// tenant.NewStatic (a token file) are two.
type Bearer struct {
	Verifier tenant.Verifier
}

// Authenticate implements Authenticator.
func (b Bearer) Authenticate(r *http.Request) (*tenant.Identity, error) {
	fields := strings.Fields(r.Header.Get("Authorization"))
	if len(fields) != 2 || !strings.EqualFold(fields[0], "bearer") {
		return nil, fmt.Errorf("%w: no bearer token", auth.ErrInvalidToken)
	}
	return b.Verifier.Verify(r.Context(), fields[1])
}

// IdentifyOptions configure Identify.
type IdentifyOptions struct {
	// ResourceMetadataURL is the URL of the server's RFC 9728 protected
	// resource metadata, sent in WWW-Authenticate so that an OAuth client
	// learns from a 401 where to get a token.
	ResourceMetadataURL string
	// Grants, when set, refuses with 403 an identity whose scopes grant
	// no tool at all.
	Grants *tenant.Grants
	// ClockSkew is how long after its expiry a bearer token is still
	// accepted, for issuers whose clock runs ahead.
	ClockSkew time.Duration
}

// Identify returns HTTP middleware that lets a request through only with
// an identity a authenticates, and puts it where the MCP SDK and the
// links find it (tenant.FromContext, and a tool call's
// req.Extra.TokenInfo through tenant.FromTokenInfo); a stateful session is
// bound to the identity's tenant and subject. A Bearer goes through
// tenant.Middleware, the SDK's bearer check.
func Identify(a Authenticator, opts *IdentifyOptions) func(http.Handler) http.Handler {
	if opts == nil {
		opts = &IdentifyOptions{}
	}
	if b, ok := a.(Bearer); ok {
		return tenant.Middleware(b.Verifier, &tenant.MiddlewareOptions{
			ResourceMetadataURL: opts.ResourceMetadataURL,
			Grants:              opts.Grants,
			ClockSkew:           opts.ClockSkew,
		})
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			id, err := a.Authenticate(r)
			if err == nil && id == nil {
				err = fmt.Errorf("%w: no identity", auth.ErrInvalidToken)
			}
			if err == nil {
				if _, perr := tenant.ParseID(string(id.Tenant)); perr != nil {
					err = fmt.Errorf("%w: %w", tenant.ErrForbidden, perr)
				}
			}
			if err == nil && opts.Grants != nil && !opts.Grants.AllowsAny(id.Scopes) {
				err = fmt.Errorf("%w: no scope of %q grants a tool", tenant.ErrForbidden, strings.Join(id.Scopes, " "))
			}
			if err != nil {
				refuseIdentity(w, err, opts.ResourceMetadataURL)
				return
			}
			withTokenInfo(tenant.TokenInfo(id), next).ServeHTTP(w, r)
		})
	}
}

// identified is the placeholder bearer token withTokenInfo hands the
// SDK's check, whose context key is the SDK's own.
const identified = "fencefs-identified"

// withTokenInfo serves r with ti in its context where
// auth.TokenInfoFromContext finds it: the SDK's bearer check is the one
// way to put it there, so it is handed a placeholder token that verifies
// to ti, and the request's own Authorization header is given back.
func withTokenInfo(ti *auth.TokenInfo, next http.Handler) http.Handler {
	bearer := auth.RequireBearerToken(func(context.Context, string, *http.Request) (*auth.TokenInfo, error) {
		return ti, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		own := r.Header.Values("Authorization")
		r2 := r.Clone(r.Context())
		r2.Header.Set("Authorization", "Bearer "+identified)
		bearer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.Header.Del("Authorization")
			for _, v := range own {
				r.Header.Add("Authorization", v)
			}
			next.ServeHTTP(w, r)
		})).ServeHTTP(w, r2)
	})
}

// refuseIdentity answers a request whose identity did not verify; the
// text of an error that is neither 401 nor 403 (an identity provider
// that could not be reached) is not sent.
func refuseIdentity(w http.ResponseWriter, err error, metadataURL string) {
	code := tenant.StatusCode(err)
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
	msg := err.Error()
	if code != http.StatusUnauthorized && code != http.StatusForbidden {
		msg = "the request's identity could not be verified"
	}
	http.Error(w, msg, code)
}

// Scopes is the Link that judges each call by the scopes of the identity
// that makes it, at the time it makes it: a stateful session offers the
// tools its first request's scopes granted, but a later request whose
// identity no longer grants a tool (a token file reloaded to read-only, a
// read-only token of the same subject) is refused that tool. Calls
// without an identity (no authentication) are let through.
type Scopes struct {
	// Grants map scopes to tools; nil is tenant.DefaultGrants.
	Grants *tenant.Grants
}

// Wrap implements Link.
func (s Scopes) Wrap(t *tools.Tool, next mcp.ToolHandler) mcp.ToolHandler {
	grants := s.Grants
	if grants == nil {
		grants = tenant.DefaultGrants()
	}
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if req.Extra == nil || req.Extra.TokenInfo == nil {
			return next(ctx, req)
		}
		id, err := tenant.FromTokenInfo(req.Extra.TokenInfo)
		if err != nil || !grants.Allows(id.Scopes, t.Name) {
			return refusal(tools.KindDenied, fmt.Sprintf("%s: the scopes of this request's token do not grant this tool (scopes are judged on every request; get a token with a scope that grants it)", t.Name), ErrNotGranted), nil
		}
		return next(ctx, req)
	}
}

// Middleware returns the MCP middleware that judges the requests besides
// tool calls that read storage (resources, completion, prompts) as Wrap
// judges read_file: a request whose identity's scopes no longer grant
// read_file is refused.
func (s Scopes) Middleware() mcp.Middleware {
	grants := s.Grants
	if grants == nil {
		grants = tenant.DefaultGrants()
	}
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			extra := req.GetExtra()
			if !readsStorage(method) || extra == nil || extra.TokenInfo == nil {
				return next(ctx, method, req)
			}
			id, err := tenant.FromTokenInfo(extra.TokenInfo)
			if err != nil || !grants.Allows(id.Scopes, "read_file") {
				return nil, errors.New("the scopes of this request's token do not grant reading files")
			}
			return next(ctx, method, req)
		}
	}
}
