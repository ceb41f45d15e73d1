// Package tenant turns a bearer token into a verified tenant identity for
// the multi-tenant HTTP server, and holds the pieces that build a tenant's
// namespace from it.
//
// The flow of one request:
//
//	Authorization: Bearer <token>
//	  -> Verifier (JWT against an issuer's JWKS, or a static token file)
//	  -> Identity{Subject, Tenant, Scopes, Expiry}, the tenant taken from a
//	     verified claim and checked to be one safe path component
//	  -> Grants: the tools the identity's scopes allow (NewGrants maps
//	     a deployment's scopes to tools and groups of tools)
//	  -> Policies: the tenant's override, which only narrows the server's
//	     settings (more denied and protected patterns, fewer tools)
//	  -> Template.Expand: the tenant's mounts ("s3://b/tenants/{tenant}/ws")
//	  -> Cache: the tenant's tool set, built once and kept in a bounded LRU;
//	     WithValue puts it in the request's context for the request's length
//
// Middleware plugs a Verifier into the MCP SDK's auth.RequireBearerToken:
// a token that does not verify gets 401, a verified token whose tenant
// claim is not a safe id (or whose scopes grant nothing) gets 403. The
// tenant never comes from a header, a query parameter or an MCP session id:
// only from a claim the issuer signed, or from the token file's entry.
package tenant
