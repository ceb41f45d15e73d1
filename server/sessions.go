package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/mountspec"
	"github.com/fencefs/fencefs/tenant"
)

// A tenant template that names {session} (tenant.SessionPlaceholder)
// gives each stateful MCP session of a tenant a namespace of its own,
// such as an overlay whose upper layer is the session's over a base its
// tenant's sessions share. The server then keeps no namespace per
// tenant: an initialize request draws a new session id
// (tenant.NewSessionID), opens the namespace of that tenant and session
// from the templates, and serves the session with an MCP server of its
// own that has the SDK issue that id as the Mcp-Session-Id. So the
// {session} of a path is always an id the server issued, never one a
// client chose; the SDK binds the session to the tenant and subject of
// the token that opened it (tenant.Identity.UserID) and refuses it to
// any other. The namespace is closed when the session ends (DELETE, or
// idle for the session timeout); the cache holding them is sized to the
// session limit, so a live session's namespace is not evicted.
//
// Such a server refuses at start stateless HTTP (a stateless request has
// no session whose storage it could name). A request without a session
// id other than initialize is refused with 400, saying why. Checkpoints
// are kept per session, in a store whose template names {session} too
// (a journal follows one namespace); a storage quota is per tenant,
// across its sessions (see sessionstorage.go, which also removes an
// ended session's storage after Config.SessionRetention).

// sessionKey keys the namespace of one session of one tenant.
type sessionKey struct {
	tenant  tenant.ID
	session tenant.SessionID
}

// perSession reports whether a template names {session}.
func perSession(mounts []TenantMount) bool {
	for _, tm := range mounts {
		if tm.Template.PerSession() {
			return true
		}
	}
	return false
}

// errPerSessionStateless refuses a stateless server whose templates name
// {session}.
var errPerSessionStateless = errors.New("a tenant mount with " + tenant.SessionPlaceholder +
	" needs stateful HTTP sessions: a stateless request has no session whose storage it could name (serve with --stateful, or drop " +
	tenant.SessionPlaceholder + ")")

// openSessions builds the cache of the sessions' namespaces.
func (s *Server) openSessions() error {
	if s.cfg.Stateless {
		return errPerSessionStateless
	}
	places, opaque, err := s.sessionPlaces()
	if err != nil {
		return err
	}
	if len(opaque) > 0 {
		if LimitsStorage(s.cfg.Quota, s.cfg.QuotaTenants) {
			return fmt.Errorf("storage quotas: the sessions' storage of %s cannot be counted: its kind names no place the server can list (use local:, s3://, sftp:// or another URL-like kind)", strings.Join(opaque, ", "))
		}
		s.logger.Warn("the storage of ended sessions is not removed from mounts of a kind that names no place the server can list", "mounts", strings.Join(opaque, ", "))
	}
	c := s.newCollector(places)
	s.collector = c
	s.sessions, err = tenant.NewCache(tenant.CacheOptions[sessionKey, *Servers]{
		// Open sessions are at most MaxSessions (and the initializes
		// admitted beside them): none of theirs is evicted while it lives.
		Size: 2 * cmp.Or(s.cfg.HTTP.MaxSessions, DefaultMaxSessions),
		Build: func(ctx context.Context, k sessionKey) (*Servers, error) {
			// Live before its storage is made: a collection listing
			// the tenant's sessions meanwhile leaves it alone.
			c.started(k)
			v, err := s.openNamespace(ctx, k.tenant, k.session)
			if err != nil {
				c.ended(k)
			}
			return v, err
		},
		OnEvict: func(k sessionKey, v *Servers) {
			v.ns.Close()
			c.ended(k)
		},
		Logger: s.logger,
	})
	if err != nil {
		return err
	}
	s.stub = mcp.NewServer(&mcp.Implementation{Name: "fencefs"}, nil)
	s.ended = map[sessionKey]chan struct{}{}
	s.metrics.gauge("fencefs_sessions_kept", "Ended sessions whose storage is kept for review, to be removed when their retention passes (--session-retention).", func() float64 {
		return float64(c.kept())
	})
	s.metrics.gauge("fencefs_session_namespaces", "Namespaces open for stateful MCP sessions ({session} in a tenant mount); each closes when its session ends.", func() float64 {
		return float64(s.sessions.Len())
	})
	s.quotas, err = NewQuotas(s.cfg.Quota, s.cfg.QuotaTenants, s.sessionTenantUsage)
	if err != nil {
		return err
	}
	c.start()
	return nil
}

// sessionEnded returns the channel closed once the namespace of key is
// closed after its session ended, or nil.
func (s *Server) sessionEnded(key sessionKey) chan struct{} {
	s.endedMu.Lock()
	defer s.endedMu.Unlock()
	return s.ended[key]
}

// sessionSlot carries, through the SDK, the namespace an initialize
// request opened, and the server getServer built over it.
type sessionSlot struct {
	v   *Servers
	srv *mcp.Server
}

type sessionSlotKey struct{}

// sessionHandler opens the namespace of each new session (an initialize
// request) and closes it when the session ends; a request of an open
// session goes to the SDK, which serves it with its session's server, or
// refuses a session id it did not issue, or issued to another tenant or
// subject.
func (s *Server) sessionHandler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := tenant.FromContext(r.Context())
		if err != nil {
			http.Error(w, err.Error(), tenant.StatusCode(err))
			return
		}
		if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
			// A DELETE answers once the session's namespace is closed.
			var ended chan struct{}
			if r.Method == http.MethodDelete {
				ended = s.sessionEnded(sessionKey{tenant: id.Tenant, session: tenant.SessionID(sid)})
			}
			next.ServeHTTP(w, r)
			if ended != nil {
				select {
				case <-ended:
				case <-time.After(shutdownTimeout):
				}
			}
			return
		}
		if r.Method != http.MethodPost || !isInitialize(r) {
			http.Error(w, "fencefs: this server's mounts are per MCP session ("+tenant.SessionPlaceholder+
				" in --tenant-mount): open a session with initialize, then send its Mcp-Session-Id with every request", http.StatusBadRequest)
			return
		}
		key := sessionKey{tenant: id.Tenant, session: tenant.NewSessionID()}
		v, release, err := s.sessions.Get(r.Context(), key)
		if err != nil {
			s.logger.ErrorContext(r.Context(), "a session's namespace could not be opened", "tenant", string(id.Tenant), "error", err)
			http.Error(w, "tenant "+string(id.Tenant)+": a session's storage is not available now (the server's log says why); retry later", http.StatusServiceUnavailable)
			return
		}
		defer release()
		slot := &sessionSlot{v: v}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sessionSlotKey{}, slot)))
		if slot.srv != nil {
			for ss := range slot.srv.Sessions() {
				s.logger.InfoContext(r.Context(), "opened a session's namespace", "tenant", string(id.Tenant), "session", ss.ID())
				ended := make(chan struct{})
				s.endedMu.Lock()
				s.ended[key] = ended
				s.endedMu.Unlock()
				go func() {
					ss.Wait()
					s.sessions.Remove(key)
					s.endedMu.Lock()
					delete(s.ended, key)
					s.endedMu.Unlock()
					close(ended)
				}()
				return
			}
		}
		// No session came of it: its namespace goes.
		s.sessions.Remove(key)
	})
}

// sessionServer is getServer with per-session namespaces: an initialize
// gets the server of the namespace sessionHandler opened for it, built
// once; a request of an open session gets the stub, which only answers
// the SDK's protocol-version check before the session's own server
// serves the request.
func (s *Server) sessionServer(req *http.Request) *mcp.Server {
	slot, ok := req.Context().Value(sessionSlotKey{}).(*sessionSlot)
	if !ok {
		return s.stub
	}
	if slot.srv == nil {
		srv, err := slot.v.Server(s.toolList(req.Context(), slot.v.offered), true)
		if err != nil {
			s.logger.Error("building a tool set", "error", err)
			return nil
		}
		slot.srv = srv
		recordServer(req, srv)
	}
	return slot.srv
}

// makeSessionDirs makes the local directories of mount name's spec ms
// (or of its layers) that hold session sid's segment, which no one has
// made before the session: the session's directory (with its tenant's,
// if missing) and those below it, mode 0700. An S3 prefix needs none;
// an SFTP directory must exist already.
func (s *Server) makeSessionDirs(name string, ms mountspec.Spec, sid tenant.SessionID) error {
	locs, err := locations(s.cfg.Schemes, name, ms, 0)
	if err != nil {
		return err
	}
	for _, l := range locs {
		if l.Scheme != string(mountspec.KindLocal) || !slices.Contains(strings.Split(l.Path, "/"), string(sid)) {
			continue
		}
		if err := os.MkdirAll(filepath.FromSlash(l.Path), 0o700); err != nil {
			return fmt.Errorf("mount %q: making the session's directory: %w", name, err)
		}
	}
	return nil
}
