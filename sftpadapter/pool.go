package sftpadapter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"
)

// Pool is one SSH connection to a server, shared by the backends that
// [Pool.Open] roots at different directories of it: many tenants' roots
// on one server cost one connection and one login. Each backend talks
// SFTP on a channel of its own and keeps its own root, so containment
// holds per backend as with [Dial]; a call whose context ends closes only
// its backend's channel, not the connection the others use. A Pool is
// safe for concurrent use; close it after the backends opened on it.
type Pool struct {
	addr      string
	sshConf   *ssh.ClientConfig
	dialTO    time.Duration
	opTO      time.Duration
	onRequest func(op string)

	// dialing admits one dial at a time, honouring the waiter's context.
	dialing chan struct{}
	dials   atomic.Int64

	mu     sync.Mutex // guards the fields below; never held across I/O
	conn   *poolConn
	closed bool
}

// poolConn is one SSH connection of a Pool.
type poolConn struct {
	client *ssh.Client
	dead   chan struct{} // closed once the connection has ended
}

// NewPool checks cfg (its server, account, credentials, host key check
// and timeouts; Root is not used) and returns a Pool that connects at the
// first [Pool.Open].
func NewPool(cfg Config) (*Pool, error) {
	addr := withDefaultPort(cfg.Addr)
	sshConf, err := clientConfig(cfg, addr)
	if err != nil {
		return nil, err
	}
	p := &Pool{addr: addr, sshConf: sshConf, dialTO: cfg.DialTimeout, opTO: cfg.OpTimeout, onRequest: cfg.OnRequest, dialing: make(chan struct{}, 1)}
	if p.dialTO <= 0 {
		p.dialTO = DefaultDialTimeout
	}
	return p, nil
}

// Open returns a backend rooted at the server directory root (as
// Config.Root) over the pool's connection, connecting first when there is
// none or it broke. Closing the backend leaves the connection to the
// others.
func (p *Pool) Open(ctx context.Context, root string) (*FS, error) {
	f := &FS{opTO: p.opTO, onRequest: p.onRequest, dialing: make(chan struct{}, 1), orphans: map[string]struct{}{}}
	f.dialSession = p.session
	if err := f.start(ctx, root); err != nil {
		return nil, err
	}
	return f, nil
}

// Dials reports how many SSH connections the pool has made.
func (p *Pool) Dials() int64 {
	return p.dials.Load()
}

// Close closes the connection; the backends opened on it fail from then
// on.
func (p *Pool) Close() error {
	p.mu.Lock()
	c := p.conn
	p.closed, p.conn = true, nil
	p.mu.Unlock()
	if c != nil {
		c.client.Close()
	}
	return nil
}

// errPoolClosed is returned by backends whose pool was closed.
var errPoolClosed = errors.New("sftpadapter: use of closed Pool")

// current returns the live connection, or nil when there is none.
func (p *Pool) current() (*poolConn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errPoolClosed
	}
	if p.conn != nil {
		select {
		case <-p.conn.dead:
		default:
			return p.conn, nil
		}
	}
	return nil, nil
}

// connection returns the live connection, dialling one at a time.
func (p *Pool) connection(ctx context.Context) (*poolConn, error) {
	if c, err := p.current(); c != nil || err != nil {
		return c, err
	}
	select {
	case p.dialing <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-p.dialing }()
	if c, err := p.current(); c != nil || err != nil {
		return c, err
	}
	client, err := p.dial(ctx)
	if err != nil {
		return nil, err
	}
	c := &poolConn{client: client, dead: make(chan struct{})}
	go func() {
		_ = client.Wait()
		close(c.dead)
	}()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		client.Close()
		return nil, errPoolClosed
	}
	p.conn = c
	return c, nil
}

// dial connects and logs in, giving up when ctx ends or the dial timeout
// passes.
func (p *Pool) dial(ctx context.Context) (*ssh.Client, error) {
	ctx, cancel := context.WithTimeout(ctx, p.dialTO)
	defer cancel()
	p.dials.Add(1)
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", p.addr)
	if err != nil {
		return nil, fmt.Errorf("sftpadapter: dial: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	c, chans, reqs, err := ssh.NewClientConn(conn, p.addr, p.sshConf)
	if !stop() {
		conn.Close()
		return nil, fmt.Errorf("sftpadapter: dial: %w", ctx.Err())
	}
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("sftpadapter: dial: %w", err)
	}
	return ssh.NewClient(c, chans, reqs), nil
}

// drop closes c and forgets it, so the next call dials even before c's
// end has been noticed.
func (p *Pool) drop(c *poolConn) {
	c.client.Close()
	p.mu.Lock()
	if p.conn == c {
		p.conn = nil
	}
	p.mu.Unlock()
}

// session opens an SFTP channel for one backend. A connection that fails
// to open it is dropped and dialled again once, since it most likely
// broke between calls.
func (p *Pool) session(ctx context.Context) (*session, error) {
	for attempt := 0; ; attempt++ {
		c, err := p.connection(ctx)
		if err != nil {
			return nil, err
		}
		// Opening a channel waits on the server; only closing the
		// connection stops that wait.
		stop := context.AfterFunc(ctx, func() { c.client.Close() })
		s, err := openChannel(c.client)
		if !stop() {
			if s != nil {
				s.close()
			}
			return nil, fmt.Errorf("sftpadapter: dial: %w", ctx.Err())
		}
		if err == nil {
			return s, nil
		}
		p.drop(c)
		if attempt > 0 {
			return nil, fmt.Errorf("sftpadapter: dial: %w", err)
		}
	}
}

// openChannel starts the SFTP subsystem on a channel of client. The
// channel's output goes through a pipe so that aborting the session fails
// the calls waiting on it at once: closing an SSH channel alone waits for
// the server's answer.
func openChannel(client *ssh.Client) (*session, error) {
	sess, err := client.NewSession()
	if err != nil {
		return nil, err
	}
	w, err := sess.StdinPipe()
	if err != nil {
		sess.Close()
		return nil, err
	}
	r, err := sess.StdoutPipe()
	if err != nil {
		sess.Close()
		return nil, err
	}
	if err := sess.RequestSubsystem("sftp"); err != nil {
		sess.Close()
		return nil, err
	}
	pr, pw := io.Pipe()
	go func() {
		_, err := io.Copy(pw, r)
		pw.CloseWithError(cmpErr(err, io.EOF))
	}()
	abort := func() {
		pw.CloseWithError(net.ErrClosed)
		sess.Close()
	}
	return newSession(pr, w, abort)
}

// cmpErr returns err, or def when err is nil.
func cmpErr(err, def error) error {
	if err != nil {
		return err
	}
	return def
}
