package mountspec

import (
	"context"
	"net"
	"net/http"
	"time"
)

// HTTPClient returns the HTTP client of a mount on an object store (S3
// here; a Scheme's store, such as Cloud Storage, alike): every read and
// write on its connections fails when it makes no progress for timeout,
// so a server that accepts a connection and then never answers (or stops
// in the middle of a body) fails the request instead of holding it. A
// body that keeps moving may take as long as it needs; the call's own
// deadline bounds the whole.
func HTTPClient(timeout time.Duration) *http.Client {
	dialer := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dialer.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &progressConn{Conn: c, timeout: timeout}, nil
	}
	tr.TLSHandshakeTimeout = timeout
	tr.ResponseHeaderTimeout = timeout
	// Idle connections are closed before their pending read's deadline
	// passes, so a request never picks a connection about to time out.
	tr.IdleConnTimeout = timeout / 2
	return &http.Client{Transport: tr}
}

// progressConn is a connection whose every Read and Write must make
// progress within timeout. A Write renews the read deadline too, since the
// answer to what was written is read by a Read that may already wait.
type progressConn struct {
	net.Conn
	timeout time.Duration
}

func (c *progressConn) Read(p []byte) (int, error) {
	if err := c.Conn.SetReadDeadline(time.Now().Add(c.timeout)); err != nil {
		return 0, err
	}
	return c.Conn.Read(p)
}

func (c *progressConn) Write(p []byte) (int, error) {
	if err := c.Conn.SetDeadline(time.Now().Add(c.timeout)); err != nil {
		return 0, err
	}
	return c.Conn.Write(p)
}
