// Package server serves the file tools over MCP to many tenants: the
// tenant layer of fencefs as a library, of which the fencefs command is
// one user.
//
// One request's way through it:
//
//	http.Handler (Handler, or MCPHandler on any mux)
//	  -> Identify: any Authenticator (Bearer with tenant.NewJWT or
//	     tenant.NewStatic, or the platform's own)
//	  -> the tenant's namespace: TenantMounts' templates expanded and
//	     opened by a mountspec.Opener (shared clients and pools), cached
//	     and bounded; or the one Namespace of Config.Namespace
//	  -> the MCP server of the tool list the identity's scopes grant, one
//	     per replica shared by every tenant (a stateful session's is its
//	     own), which finds the tenant's tool set and links from the
//	     request's context
//	  -> the Chain of links around each tool call: Logging, Metrics,
//	     Audit, Scopes (judged on every request), Quota (rate,
//	     concurrency, stored bytes and files reserved before a change
//	     commits), RequireRead (stateless), Config.Links
//	  -> tools.Set.Call -> backend
//
// A call a link refuses is answered as the tools' own refusals are: a
// text for the model, and a kind (tools.Kind) in the result's _meta
// (mcpserver.MetaKind) and in its Go error (res.GetError(), for a link
// outside): KindQuota for stored bytes and files, KindRateLimited for
// the rate and concurrency, KindDenied for a scope (wrapping
// ErrNotGranted), KindNotRead for the stateless require-read, and
// KindUnavailable for a broken audit log (wrapping ErrAuditBroken) or
// usage that could not be counted. A quota's error wraps its
// *quota.LimitError. The audit line of a refused call names its kind.
//
// Session limits, a bound on connections below the limit on open files,
// per-write deadlines and request ids bound hostile HTTP clients (Serve,
// Handler); /healthz, /readyz and /metrics come with
// Handler. The same Chain serves stdio (ServeStdio).
package server
