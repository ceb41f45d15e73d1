// Package sftpadapter is a fencefs backend over an SFTP server, rooted at a
// directory on that server.
//
// It speaks SFTP version 3 through github.com/pkg/sftp over an SSH
// connection from golang.org/x/crypto/ssh and implements
// [backend.Backend], [backend.Stater], [backend.Writer],
// [backend.DirMaker], [backend.SymlinkResolver], [backend.Walker] and
// [backend.CapabilityReporter].
//
// # Paths and symlinks
//
// Backend methods accept only canonical storage paths and never follow
// symbolic links. SFTP has no "no-follow" flag on its path operations (the
// server resolves every component itself), so the adapter checks each
// ancestor of a path with LSTAT before it acts: a symlink in a middle
// component gives [backend.ErrSymlink]. The checks of one path are sent
// together, so they cost one round trip, not one per component.
// [FS.ResolveSymlinks] follows links component by component with READLINK
// and keeps the result inside the root.
//
// The server follows links on its own when it opens a path, so a link
// swapped in between the adapter's check and the open is a residual race
// that the protocol cannot close (the local backend closes it with
// openat2). OpenRead narrows it: it compares the LSTAT taken before the
// open with the FSTAT of the opened handle (type, size, modification time
// and mode) and refuses the file when they differ. A hostile user with
// write access to the same server directory can still win that race for
// an open that does not change those attributes; deploy the adapter on
// directories only the agent writes to when that matters.
//
// Names the server returns in a directory listing are checked before
// github.com/pkg/sftp sees them: a name that is empty, "." or "..", or that
// contains "/" or NUL would otherwise be shortened to another, valid name.
// Such entries, and names that are not canonical storage path components
// (see [backend.ValidPath]), are skipped, never aliased.
//
// # Writes
//
// A write goes to a temporary file with a short name in the target's
// directory; Commit gives it the mode of the file it replaces and renames
// it over the target with posix-rename@openssh.com, which replaces
// atomically. Abandoned and failed writes remove the temporary file; when
// the server cannot be reached at that moment, the removal is retried on
// the next connection and at [FS.Close].
//
// Preconditions are checked right before the rename, under a mutex of the
// [FS]: CreateOnly and MatchHash are therefore atomic between writers
// sharing one FS, but not between different clients of the same server,
// and [backend.Capabilities].AtomicPreconditions is false. (A CreateOnly
// commit links the file into place with hardlink@openssh.com when the
// server has it, which fails when the target exists, so CreateOnly alone is
// atomic across clients on such servers.) MatchHash reads the current
// target to hash it, which costs a download of that file. The server keeps
// no version tokens, so a MatchVersion precondition always fails.
//
// # Connections and deadlines
//
// One SSH connection carries every call of an FS. pkg/sftp calls do not
// take a context, so each call arranges for the connection to be closed
// when its context ends while the call is still waiting on the server;
// the call then returns the context's error, other calls in flight on the
// same connection fail, and the next call dials again. A connection that
// broke (a restarted server) is redialled by the next call; a call that
// only reads is retried once on the new connection.
//
// A [Pool] shares one SSH connection between backends rooted at different
// directories of the same server (one per tenant, say). Each backend has
// an SFTP channel of its own on it and its own root, so the checks above
// hold per backend; a call whose context ends closes its backend's
// channel only, and a broken connection is redialled by the next call of
// any of them.
package sftpadapter

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/fencefs/fencefs/backend"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// DefaultDialTimeout bounds connecting and the SSH handshake when
// Config.DialTimeout is zero.
const DefaultDialTimeout = 30 * time.Second

// Config describes an SFTP server, an account on it and the root
// directory the backend exposes.
type Config struct {
	// Addr is the server's "host:port"; a missing port means 22.
	Addr string
	// User is the SSH user name.
	User string
	// Password authenticates with a password when not empty.
	Password string
	// PrivateKey is a PEM-encoded private key (unencrypted) to
	// authenticate with.
	PrivateKey []byte
	// KeyFile names a file holding a PEM-encoded private key, used when
	// PrivateKey is empty.
	KeyFile string
	// Root is the directory on the server that becomes the backend's
	// root ("."). A relative Root is taken from the user's login
	// directory; empty means the login directory itself. It must exist.
	Root string

	// KnownHostsFile names an OpenSSH known_hosts file the server's host
	// key must be listed in.
	KnownHostsFile string
	// HostKey pins the server's host key.
	HostKey ssh.PublicKey
	// InsecureIgnoreHostKey accepts any host key. It exists for tests and
	// must be asked for explicitly: Dial refuses a Config with no host key
	// method at all.
	InsecureIgnoreHostKey bool

	// DialTimeout bounds connecting and the SSH handshake;
	// 0 means DefaultDialTimeout.
	DialTimeout time.Duration
	// OpTimeout, when positive, bounds every call in addition to its
	// context. On a stream it bounds each Read and Write; a whole-stream
	// copy through io.Copy fails when no data moves for that long.
	OpTimeout time.Duration

	// OnRequest, when set, is called before each SFTP request a backend
	// sends, with the request's type ("OPEN", "READ", "LSTAT", ...;
	// "EXTENDED" for the OpenSSH extensions), for metrics. It must not
	// block. A Pool passes it to every backend it opens.
	OnRequest func(op string)
}

// FS is a backend over one SFTP server directory. It is safe for
// concurrent use. Close it when done.
type FS struct {
	addr    string
	sshConf *ssh.ClientConfig
	dialTO  time.Duration
	opTO    time.Duration
	root    string // absolute, physical server path of the root
	// onRequest is Config.OnRequest, given to each session.
	onRequest func(op string)

	// dialSession makes a new session; tests replace it to talk to an
	// in-process server.
	dialSession func(ctx context.Context) (*session, error)

	// dialing admits one dial at a time; it is a channel so that waiting
	// for a dial in progress honours the waiter's context.
	dialing chan struct{}

	mu      sync.Mutex // guards the fields below; never held across I/O
	cur     *session
	orphans map[string]struct{} // server paths of temporary files to remove
	closed  bool

	// commitMu makes a precondition check and its rename one step for
	// writers sharing this FS.
	commitMu sync.Mutex
}

var (
	_ backend.Backend            = (*FS)(nil)
	_ backend.Stater             = (*FS)(nil)
	_ backend.Writer             = (*FS)(nil)
	_ backend.DirMaker           = (*FS)(nil)
	_ backend.SymlinkResolver    = (*FS)(nil)
	_ backend.Walker             = (*FS)(nil)
	_ backend.CapabilityReporter = (*FS)(nil)
)

// ErrNoHostKeyCheck is returned by Dial when the Config names no way to
// check the server's host key.
var ErrNoHostKeyCheck = errors.New("sftpadapter: no host key check configured: set KnownHostsFile or HostKey (InsecureIgnoreHostKey only for tests)")

// ErrHostKey is wrapped by the dial error when the server's host key is
// not the pinned one or is not listed in the known_hosts file.
var ErrHostKey = errors.New("sftpadapter: host key rejected")

// Dial connects to the server described by cfg, logs in, and checks that
// cfg.Root is a directory. The connection is kept for later calls and
// redialled when it breaks.
func Dial(ctx context.Context, cfg Config) (*FS, error) {
	sshConf, err := clientConfig(cfg, withDefaultPort(cfg.Addr))
	if err != nil {
		return nil, err
	}
	f := &FS{
		addr:      withDefaultPort(cfg.Addr),
		sshConf:   sshConf,
		dialTO:    cfg.DialTimeout,
		opTO:      cfg.OpTimeout,
		onRequest: cfg.OnRequest,
		dialing:   make(chan struct{}, 1),
		orphans:   map[string]struct{}{},
	}
	if f.dialTO <= 0 {
		f.dialTO = DefaultDialTimeout
	}
	f.dialSession = f.dialSSH
	if err := f.start(ctx, cfg.Root); err != nil {
		return nil, err
	}
	return f, nil
}

// start makes the first session and resolves the root on it.
func (f *FS) start(ctx context.Context, root string) error {
	s, err := f.newSession(ctx)
	if err != nil {
		return err
	}
	abs, err := resolveRoot(ctx, s, root)
	if err != nil {
		s.close()
		return err
	}
	f.root = abs
	f.cur = s
	return nil
}

// resolveRoot turns the configured root into the absolute physical path
// the server gives it, and checks that it is a directory.
func resolveRoot(ctx context.Context, s *session, root string) (string, error) {
	if root == "" {
		root = "."
	}
	var abs string
	err := s.run(ctx, func(s *session) error {
		c := s.client
		p, err := c.RealPath(root)
		if err != nil {
			return err
		}
		fi, err := c.Stat(p)
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			return backend.ErrNotDir
		}
		abs = p
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("sftpadapter: root %q: %w", root, mapErr(err))
	}
	if abs == "" || abs[0] != '/' {
		return "", fmt.Errorf("sftpadapter: root %q: server returned a relative path", root)
	}
	return abs, nil
}

// clientConfig builds the SSH client configuration for addr, refusing a
// Config without a host key check.
func clientConfig(cfg Config, addr string) (*ssh.ClientConfig, error) {
	conf := &ssh.ClientConfig{User: cfg.User}
	methods := 0
	if cfg.KnownHostsFile != "" {
		cb, err := knownhosts.New(cfg.KnownHostsFile)
		if err != nil {
			return nil, fmt.Errorf("sftpadapter: known hosts: %w", err)
		}
		conf.HostKeyCallback = cb
		conf.HostKeyAlgorithms = knownAlgorithms(cb, addr)
		methods++
	}
	if cfg.HostKey != nil {
		conf.HostKeyCallback = ssh.FixedHostKey(cfg.HostKey)
		conf.HostKeyAlgorithms = hostKeyAlgorithms(cfg.HostKey)
		methods++
	}
	if cfg.InsecureIgnoreHostKey {
		conf.HostKeyCallback = ssh.InsecureIgnoreHostKey() //nolint:gosec // asked for explicitly
		methods++
	}
	switch {
	case methods == 0:
		return nil, ErrNoHostKeyCheck
	case methods > 1:
		return nil, errors.New("sftpadapter: set only one of KnownHostsFile, HostKey and InsecureIgnoreHostKey")
	}
	auth, err := authMethods(cfg)
	if err != nil {
		return nil, err
	}
	conf.Auth = auth
	check := conf.HostKeyCallback
	conf.HostKeyCallback = func(hostname string, remote net.Addr, key ssh.PublicKey) error {
		if err := check(hostname, remote, key); err != nil {
			return fmt.Errorf("%w: %w", ErrHostKey, err)
		}
		return nil
	}
	return conf, nil
}

// knownAlgorithms returns the host key algorithms of the keys the
// known_hosts callback lists for addr, so that the server is asked for a
// key the file can vouch for rather than its first key of another type.
// The callback reveals them when shown a key it does not know.
func knownAlgorithms(cb ssh.HostKeyCallback, addr string) []string {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil
	}
	probe, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return nil
	}
	var keyErr *knownhosts.KeyError
	err = cb(addr, &net.TCPAddr{IP: net.IPv4zero, Port: 22}, probe.PublicKey())
	if !errors.As(err, &keyErr) {
		return nil
	}
	var algos []string
	for _, k := range keyErr.Want {
		for _, a := range hostKeyAlgorithms(k.Key) {
			if !slices.Contains(algos, a) {
				algos = append(algos, a)
			}
		}
	}
	return algos
}

// hostKeyAlgorithms lists the signature algorithms a pinned key can
// verify, so the server is asked for that key and not another of its keys.
func hostKeyAlgorithms(k ssh.PublicKey) []string {
	if k.Type() == ssh.KeyAlgoRSA {
		return []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA}
	}
	return []string{k.Type()}
}

// authMethods returns the configured ways to log in: the key first, then
// the password.
func authMethods(cfg Config) ([]ssh.AuthMethod, error) {
	var methods []ssh.AuthMethod
	pem := cfg.PrivateKey
	if len(pem) == 0 && cfg.KeyFile != "" {
		b, err := os.ReadFile(cfg.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("sftpadapter: key file: %w", err)
		}
		pem = b
	}
	if len(pem) > 0 {
		signer, err := ssh.ParsePrivateKey(pem)
		if err != nil {
			return nil, fmt.Errorf("sftpadapter: private key: %w", err)
		}
		methods = append(methods, ssh.PublicKeys(signer))
	}
	if cfg.Password != "" {
		methods = append(methods, ssh.Password(cfg.Password))
	}
	if len(methods) == 0 {
		return nil, errors.New("sftpadapter: no credentials: set Password, PrivateKey or KeyFile")
	}
	return methods, nil
}

// withDefaultPort adds SSH's port to an address without one.
func withDefaultPort(addr string) string {
	if _, _, err := net.SplitHostPort(addr); err == nil {
		return addr
	}
	return net.JoinHostPort(addr, "22")
}

// Capabilities reports what the SFTP backend can do.
func (f *FS) Capabilities() backend.Capabilities {
	return backend.Capabilities{
		Name:         "sftp",
		Symlinks:     true,
		ModeBits:     true,
		ModTimes:     true,
		EmptyDirs:    true,
		SpecialFiles: true,
		AtomicRename: true,
		MaxNameBytes: 255,
		// Staged writes are temporary files beside their targets.
		StagingPattern: stagingPattern,
	}
}

// Close removes what is left of abandoned writes when the server can be
// reached, and closes the connection. Calls after Close fail.
func (f *FS) Close() error {
	f.mu.Lock()
	s := f.cur
	already := f.closed
	f.closed, f.cur = true, nil
	f.mu.Unlock()
	if already || s == nil {
		return nil
	}
	if s.alive() {
		f.removeOrphans(context.Background(), s)
	}
	s.close()
	return nil
}
