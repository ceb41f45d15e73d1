package security

import (
	"bytes"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/fencefs/fencefs/tenant"
	"github.com/fencefs/fencefs/tenant/tenanttest"
)

// syncBuffer is a bytes.Buffer a logger may write from the server's
// goroutines while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestTenantKeyFetchFailureBody (class 8): when the issuer's key set
// cannot be fetched, the 401 answer carries generic text, never the key
// set's URL or the dial error; the cause goes to the server's log.
func TestTenantKeyFetchFailureBody(t *testing.T) {
	t.Parallel()
	iss := tenanttest.NewIssuer(t)
	// A port that refuses connections: listen, note the address, close.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	jwks := "http://" + ln.Addr().String() + "/secret-internal-keys.json"
	ln.Close()
	v, err := tenant.NewJWT(t.Context(), tenant.JWTConfig{Issuer: iss.URL, JWKSURL: jwks, Audience: iss.Audience})
	if err != nil {
		t.Fatal(err)
	}
	var logBuf syncBuffer
	logger := slog.New(slog.NewTextHandler(&logBuf, nil))
	mw := tenant.Middleware(v, &tenant.MiddlewareOptions{Logger: logger})
	srv := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("the request reached the handler")
	})))
	t.Cleanup(srv.Close)

	token := iss.Sign(t, tenanttest.Claims{Subject: "t1"})
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL, strings.NewReader(initializeBody))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("status %d, want 401 (body %q)", resp.StatusCode, body)
	}
	for _, leak := range []string{ln.Addr().String(), "secret-internal-keys", "dial", "connection refused", "127.0.0.1"} {
		if strings.Contains(string(body), leak) || strings.Contains(resp.Header.Get("WWW-Authenticate"), leak) {
			t.Errorf("the 401 answer carries %q: %q", leak, body)
		}
	}
	if !strings.Contains(logBuf.String(), "secret-internal-keys") {
		t.Errorf("the log does not say why the token was refused: %q", logBuf.String())
	}
}
