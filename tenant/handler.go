package tenant

import (
	"context"
	"log/slog"
	"net/http"
)

// valueKey keys a Cache value in a request's context; one key type per
// value type, so values of two caches never mix.
type valueKey[V any] struct{}

// WithValue returns a handler that gets the value of the request's tenant
// from c (building it on the tenant's first request), serves the request
// with it in the context, where ValueFrom finds it, and releases it when
// the request ends. It goes inside Middleware, which provides the tenant.
// A request without an Identity gets 401; a value that cannot be built,
// 503 with a body that names the tenant only: the build's error, which
// may name host paths, endpoints or credentials' files, goes to the
// cache's Logger (CacheOptions.Logger).
//
// The value is held only for the request: a handler that keeps it longer
// (a stateful MCP session keeps its server) must not rely on it staying
// open after the tenant is evicted.
func WithValue[V any](c *Cache[ID, V], next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := FromContext(r.Context())
		if err != nil {
			http.Error(w, err.Error(), StatusCode(err))
			return
		}
		v, release, err := c.Get(r.Context(), id.Tenant)
		if err != nil {
			c.log().ErrorContext(r.Context(), "a tenant's value could not be built", "tenant", string(id.Tenant), "error", err)
			http.Error(w, "tenant "+string(id.Tenant)+": not available now (the server's log says why); retry later", http.StatusServiceUnavailable)
			return
		}
		defer release()
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), valueKey[V]{}, v)))
	})
}

// log returns the logger of c's failures.
func (c *Cache[K, V]) log() *slog.Logger {
	if c.logger != nil {
		return c.logger
	}
	return slog.Default()
}

// ValueFrom returns the value WithValue put in ctx.
func ValueFrom[V any](ctx context.Context) (V, bool) {
	v, ok := ctx.Value(valueKey[V]{}).(V)
	return v, ok
}
