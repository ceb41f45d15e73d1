package testserver

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"net"
	"sync"
	"testing"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// SFTPConfig says whom an SFTP server started by StartSFTP lets in and
// what it serves.
type SFTPConfig struct {
	// User and Password are the only credentials the server accepts.
	User, Password string
	// Handlers, when set, answer every SFTP request (sftp.InMemHandler or
	// handlers that misbehave on purpose). When nil, the server serves
	// the host's real file system, paths being absolute.
	Handlers *sftp.Handlers
}

// StartSFTP serves SFTP over SSH on 127.0.0.1 with a fresh ed25519 host
// key until t ends, and returns the address to dial and the host key to
// pin. Password authentication is the only method offered.
func StartSFTP(t testing.TB, cfg SFTPConfig) (addr string, hostKey ssh.PublicKey) {
	t.Helper()
	signer, err := newHostKey()
	if err != nil {
		t.Fatal(err)
	}
	sc := &ssh.ServerConfig{
		PasswordCallback: func(c ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
			if c.User() == cfg.User && string(pw) == cfg.Password {
				return nil, nil
			}
			return nil, errors.New("denied")
		},
	}
	sc.AddHostKey(signer)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &sftpServer{ssh: sc, handlers: cfg.Handlers, conns: map[net.Conn]struct{}{}}
	t.Cleanup(func() { s.stop(ln) })
	s.wg.Go(func() { s.accept(ln) })
	return ln.Addr().String(), signer.PublicKey()
}

// newHostKey returns a fresh ed25519 host key, so that every server is
// told apart by its key as real hosts are.
func newHostKey() (ssh.Signer, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	return ssh.NewSignerFromKey(priv)
}

// sftpServer is the state of one StartSFTP server.
type sftpServer struct {
	ssh      *ssh.ServerConfig
	handlers *sftp.Handlers
	wg       sync.WaitGroup // the accept loop and one per connection

	mu     sync.Mutex
	closed bool
	conns  map[net.Conn]struct{}
}

func (s *sftpServer) accept(ln net.Listener) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		if !s.track(conn) {
			conn.Close()
			return
		}
		s.wg.Go(func() {
			defer s.untrack(conn)
			s.serveConn(conn)
		})
	}
}

// track records an open connection so that stop can close it; it
// reports false once the server is stopping.
func (s *sftpServer) track(conn net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[conn] = struct{}{}
	return true
}

func (s *sftpServer) untrack(conn net.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, conn)
}

// stop closes the listener and the connections a client left open, so
// that the end of a test never waits on a client, then waits for every
// goroutine of the server.
func (s *sftpServer) stop(ln net.Listener) {
	ln.Close()
	s.mu.Lock()
	s.closed = true
	for conn := range s.conns {
		conn.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// serveConn serves the SFTP subsystem on every session of one
// connection until the client goes away, and returns once all its
// sessions have ended.
func (s *sftpServer) serveConn(conn net.Conn) {
	var sessions sync.WaitGroup
	defer sessions.Wait()
	defer conn.Close()
	_, chans, reqs, err := ssh.NewServerConn(conn, s.ssh)
	if err != nil {
		return
	}
	sessions.Go(func() { ssh.DiscardRequests(reqs) })
	for nc := range chans {
		if nc.ChannelType() != "session" {
			nc.Reject(ssh.UnknownChannelType, "session only")
			continue
		}
		ch, requests, err := nc.Accept()
		if err != nil {
			return
		}
		sessions.Go(func() { s.serveSession(ch, requests) })
	}
}

// serveSession starts the SFTP server when the client asks for the
// "sftp" subsystem and refuses every other request.
func (s *sftpServer) serveSession(ch ssh.Channel, requests <-chan *ssh.Request) {
	var subsystems sync.WaitGroup
	defer subsystems.Wait()
	for req := range requests {
		// The payload of a subsystem request is the name as an SSH
		// string: a four-byte length, then the bytes.
		ok := req.Type == "subsystem" && len(req.Payload) > 4 && string(req.Payload[4:]) == "sftp"
		req.Reply(ok, nil)
		if ok {
			subsystems.Go(func() {
				defer ch.Close()
				s.serveSFTP(ch)
			})
		}
	}
}

func (s *sftpServer) serveSFTP(ch ssh.Channel) {
	if s.handlers != nil {
		srv := sftp.NewRequestServer(ch, *s.handlers)
		srv.Serve()
		srv.Close()
		return
	}
	if srv, err := sftp.NewServer(ch); err == nil {
		srv.Serve()
	}
}
