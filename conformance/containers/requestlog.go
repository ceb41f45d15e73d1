package containers

import (
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
)

// RequestLog is a reverse proxy on 127.0.0.1 in front of a storage
// server that records every request passing through it, so that tests
// count a client's requests from outside the client, as a bill would.
type RequestLog struct {
	// URL is the proxy's base URL, to give the client as its endpoint.
	URL string

	describe func(*http.Request) string
	mu       sync.Mutex
	log      []string
}

// RequestLogOptions configure StartRequestLog.
type RequestLogOptions struct {
	// Describe names a request in the log; its method and path when nil.
	Describe func(*http.Request) string
	// KeepHost sends each request on with the Host the client dialled
	// (a request signed for that host, as S3's are), not the target's.
	KeepHost bool
}

// StartRequestLog serves a proxy to target (a server's base URL) until
// the test ends.
func StartRequestLog(t testing.TB, target string, o RequestLogOptions) *RequestLog {
	t.Helper()
	to, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &RequestLog{URL: "http://" + ln.Addr().String(), describe: o.Describe}
	if p.describe == nil {
		p.describe = func(r *http.Request) string { return r.Method + " " + r.URL.Path }
	}
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(to)
		if o.KeepHost {
			r.Out.Host = r.In.Host
		}
	}}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.log = append(p.log, p.describe(r))
		p.mu.Unlock()
		rp.ServeHTTP(w, r)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return p
}

// Take returns the requests recorded since the last Take.
func (p *RequestLog) Take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	log := p.log
	p.log = nil
	return log
}
