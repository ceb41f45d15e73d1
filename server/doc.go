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
//	  -> one MCP server per tool list the identity's scopes grant
//	  -> the Chain of links around each tool call: Logging, Metrics,
//	     Audit, Scopes (judged on every request), Quota (rate,
//	     concurrency, stored bytes and files reserved before a change
//	     commits), RequireRead (stateless), Config.Links
//	  -> tools.Set.Call -> backend
//
// Session limits, per-write deadlines and request ids bound hostile HTTP
// clients (Serve, Handler); /healthz, /readyz and /metrics come with
// Handler. The same Chain serves stdio (ServeStdio).
package server
