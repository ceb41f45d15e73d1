package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/cmd/fencefs/internal/config"
	"github.com/fencefs/fencefs/local"
	"github.com/fencefs/fencefs/mcpserver"
	"github.com/fencefs/fencefs/mounted"
	"github.com/fencefs/fencefs/quota"
	"github.com/fencefs/fencefs/s3adapter"
	"github.com/fencefs/fencefs/sftpadapter"
	"github.com/fencefs/fencefs/tools"
)

// namespace is the opened storage and the tools over it.
type namespace struct {
	// b is the storage the tools work on; skills are read from it too.
	b   backend.Backend
	set *tools.Set
	// opts are set's options, for the sets of further sessions.
	opts    tools.Options
	closers []io.Closer
	// children are the mounts' backends by name; nil for a root.
	children map[string]backend.Backend
	// storage is shared with the other namespaces of the server; nil
	// when the namespace has its own.
	storage *storage
	// counted names the mounts whose files count against a quota: the
	// writable ones, less those every tenant shares (tenantServers).
	counted map[string]bool
}

// counts reports whether the file at the canonical path p counts
// against the namespace's quota.
func (n *namespace) counts(p string) bool {
	if n.children == nil {
		return true // a root
	}
	mount, _, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
	return n.counted[mount]
}

// usage scans the files that count against the namespace's quota.
func (n *namespace) usage(ctx context.Context) (quota.Usage, error) {
	if n.children == nil {
		return scanUsage(ctx, n.b)
	}
	var u quota.Usage
	for name := range n.counted {
		mu, err := scanUsage(ctx, n.children[name])
		if err != nil {
			return quota.Usage{}, fmt.Errorf("mount %q: %w", name, err)
		}
		u = u.Add(mu)
	}
	return u, nil
}

// newSet returns another tool set over the namespace, with set's options
// and a record of its own of the files read (Options.RequireRead), for
// one more MCP session.
func (n *namespace) newSet() (*tools.Set, error) {
	return tools.New(n.b, n.opts)
}

// Close releases the storage connections and descriptors.
func (n *namespace) Close() error {
	var errs []error
	for _, c := range n.closers {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// openNamespace opens the storage the settings describe (the root, or the
// mounts) and builds the tools over it. Errors name the setting at fault.
func openNamespace(ctx context.Context, s *config.Settings, logger *slog.Logger) (*namespace, error) {
	return openSharing(ctx, s, logger, nil)
}

// openSharing is openNamespace with the storage clients of st (nil: its
// own).
func openSharing(ctx context.Context, s *config.Settings, logger *slog.Logger, st *storage) (*namespace, error) {
	n := &namespace{storage: st}
	b, err := n.open(ctx, s, logger)
	n.b = b
	if err == nil {
		n.opts = s.ToolOptions()
		n.opts.OnEvent = func(ctx context.Context, ev tools.Event) {
			noteEvent(ctx, ev)
			logEvent(ctx, logger, ev)
		}
		n.opts.Logger = logger
		if s.Audit != "" || limitsStorage(s) {
			// Only then: a change listener makes every write build its diff.
			n.opts.OnChangeRequest = func(ctx context.Context, req *tools.ChangeRequest) error {
				noteChangeRequest(ctx, req)
				return n.reserveChange(ctx, req)
			}
		}
		n.set, err = tools.New(b, n.opts)
		if err != nil && s.Cwd != "" {
			// The options were checked while parsing; what tools.New can
			// still refuse is a Cwd outside the namespace.
			if rest, ok := strings.CutPrefix(err.Error(), fmt.Sprintf("tools: Cwd %q: ", s.Cwd)); ok {
				err = fmt.Errorf("--cwd: %s", rest)
			}
		}
	}
	if err == nil {
		err = checkCwd(ctx, b, s)
	}
	if err != nil {
		n.Close()
		return nil, err
	}
	warnRipgrep(n.set, logger)
	return n, nil
}

// checkCwd refuses a --cwd that does not name a directory, which would
// otherwise leave the model with "Path not found: ." on every call. It
// looks with a tool set of its own, so that the check sees the path as
// the tools do, whatever tools and policy are configured.
func checkCwd(ctx context.Context, b backend.Backend, s *config.Settings) error {
	if s.Cwd == "" {
		return nil
	}
	set, err := tools.New(b, tools.Options{Cwd: s.Cwd, Tools: []string{"file_info"}, NoDefaultProtect: true})
	if err != nil {
		return fmt.Errorf("--cwd: %w", err)
	}
	text, err := set.Call(ctx, "file_info", json.RawMessage(`{"path":"."}`))
	if msg, ok := mcpserver.RetryMessage(err); ok {
		if strings.HasPrefix(msg, "Path not found") {
			return fmt.Errorf("--cwd %s: no such directory", s.Cwd)
		}
		return fmt.Errorf("--cwd %s: %s", s.Cwd, msg)
	}
	if err != nil {
		return fmt.Errorf("--cwd %s: %w", s.Cwd, err)
	}
	if !strings.Contains(text, "\ntype: directory\n") {
		return fmt.Errorf("--cwd %s: not a directory", s.Cwd)
	}
	return nil
}

// warnRipgrep says at start-up when grep is offered and ripgrep is not on
// PATH: grep then searches local disk with the built-in engine, which
// answers alike but costs more on large trees.
func warnRipgrep(set *tools.Set, logger *slog.Logger) {
	if _, grep := set.Tool("grep"); !grep || tools.RipgrepInstalled("") {
		return
	}
	logger.Warn("ripgrep (rg) is not on PATH: grep searches with the built-in engine, which gives the same answers more slowly on large trees; install ripgrep for speed")
}

// open opens the backend of the namespace.
func (n *namespace) open(ctx context.Context, s *config.Settings, logger *slog.Logger) (backend.Backend, error) {
	if len(s.Mounts) == 0 {
		fs, err := local.New(s.Root)
		if err != nil {
			return nil, fmt.Errorf("--root: %w", err)
		}
		n.closers = append(n.closers, fs)
		logger.DebugContext(ctx, "opened root", "root", s.Root)
		return fs, nil
	}
	children := make(map[string]backend.Backend, len(s.Mounts))
	n.children, n.counted = children, map[string]bool{}
	for _, m := range s.Mounts {
		timeout := cmp.Or(m.Spec.Timeout, s.StorageTimeout)
		b, err := n.openMount(ctx, m.Name, m.Spec, timeout)
		if err != nil {
			return nil, mountErr(ctx, m, timeout, err)
		}
		if m.Spec.ReadOnly {
			b = backend.ReadOnly(b)
		} else {
			n.counted[m.Name] = true
		}
		children[m.Name] = b
		logger.InfoContext(ctx, "mounted", "name", "/"+m.Name, "spec", m.Spec.String())
	}
	return mounted.New(children)
}

// mountErr says why the mount m could not be opened; a server that did not
// answer in time is named as such, with the setting that bounds the wait.
func mountErr(ctx context.Context, m config.Mount, timeout time.Duration, err error) error {
	var ne net.Error
	if (errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()) && ctx.Err() == nil {
		return fmt.Errorf("mount %q: the storage did not answer within %v (set timeout= in the spec, or --storage-timeout, to wait longer)", m.Name, timeout)
	}
	return fmt.Errorf("mount %q: %w", m.Name, err)
}

// openMount opens the backend of one mount spec. Network storage is
// checked at once, within timeout, and each of its requests later gets
// timeout too.
// The S3 client comes from n.storage when the server shares them.
func (n *namespace) openMount(ctx context.Context, name string, m config.MountSpec, timeout time.Duration) (backend.Backend, error) {
	if m.Kind != config.KindLocal {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	switch m.Kind {
	case config.KindLocal, config.KindSFTP:
		if n.storage != nil {
			b, release, err := n.storage.backends.Get(ctx, newBackendKey(name, m, timeout))
			if err != nil {
				return nil, err
			}
			n.closers = append(n.closers, closerFunc(release))
			return b, nil
		}
		b, err := openConnected(ctx, m, timeout)
		if err != nil {
			return nil, err
		}
		n.closers = append(n.closers, b)
		return b, nil
	case config.KindS3:
		client, err := n.storage.s3Client(ctx, name, m.S3, timeout)
		if err != nil {
			return nil, err
		}
		return s3adapter.Open(ctx, s3adapter.Config{
			Bucket:        m.S3.Bucket,
			Prefix:        m.S3.Prefix,
			Endpoint:      m.S3.Endpoint,
			Region:        m.S3.Region,
			PathStyle:     m.S3.PathStyle,
			Options:       s3adapter.Options{ReadOnly: m.ReadOnly},
			ClientOptions: n.storage.clientOptions(name, timeout),
			Client:        client,
		})
	}
	return nil, fmt.Errorf("unknown mount kind %q", m.Kind)
}

// connected is a backend that holds a descriptor or a connection.
type connected interface {
	backend.Backend
	io.Closer
}

// openConnected opens a local or SFTP mount.
func openConnected(ctx context.Context, m config.MountSpec, timeout time.Duration) (connected, error) {
	if m.Kind == config.KindLocal {
		return local.New(m.Dir)
	}
	cfg, err := sftpConfig(m.SFTP)
	if err != nil {
		return nil, err
	}
	cfg.DialTimeout, cfg.OpTimeout = timeout, timeout
	return sftpadapter.Dial(ctx, cfg)
}

// closerFunc is a func as an io.Closer.
type closerFunc func()

func (f closerFunc) Close() error {
	f()
	return nil
}

// sftpConfig turns an SFTP spec into the adapter's configuration, reading
// the password from the environment and defaulting the host key check to
// ~/.ssh/known_hosts.
func sftpConfig(s config.SFTPSpec) (sftpadapter.Config, error) {
	cfg := sftpadapter.Config{
		Addr:                  s.Addr(),
		User:                  s.User,
		KeyFile:               s.KeyFile,
		Root:                  s.Root,
		KnownHostsFile:        s.KnownHostsFile,
		InsecureIgnoreHostKey: s.Insecure,
	}
	if s.PasswordEnv != "" {
		pw, ok := os.LookupEnv(s.PasswordEnv)
		if !ok {
			return cfg, fmt.Errorf("password_env: the environment variable %s is not set", s.PasswordEnv)
		}
		cfg.Password = pw
	}
	if s.HostKey != "" {
		key, _, _, _, err := ssh.ParseAuthorizedKey([]byte(s.HostKey))
		if err != nil {
			return cfg, fmt.Errorf("host_key: %w", err)
		}
		cfg.HostKey = key
	}
	if cfg.KnownHostsFile == "" && cfg.HostKey == nil && !cfg.InsecureIgnoreHostKey {
		home, err := os.UserHomeDir()
		kh := filepath.Join(home, ".ssh", "known_hosts")
		if _, statErr := os.Stat(kh); err != nil || statErr != nil {
			return cfg, errors.New("no host key check: add known_hosts=FILE or host_key=KEY (no ~/.ssh/known_hosts was found)")
		}
		cfg.KnownHostsFile = kh
	}
	return cfg, nil
}

// logEvent logs a tool's notification at debug level, without the diff
// an edit carries.
func logEvent(ctx context.Context, logger *slog.Logger, ev tools.Event) {
	attrs := []any{"kind", ev.Kind()}
	switch e := ev.(type) {
	case tools.FileRead:
		attrs = append(attrs, "path", e.Path)
	case tools.DirectoryListed:
		attrs = append(attrs, "path", e.Path, "entries", e.EntryCount)
	case tools.FileWritten:
		attrs = append(attrs, "path", e.Path, "hash", e.ContentHash)
	case tools.FileEdited:
		attrs = append(attrs, "path", e.Path, "hash", e.ContentHash)
	case tools.DirectoryCreated:
		attrs = append(attrs, "path", e.Path)
	case tools.FilesSearched:
		attrs = append(attrs, "path", e.Path, "pattern", e.Pattern, "matches", e.MatchCount, "truncated", e.Truncated)
	}
	logger.DebugContext(ctx, "event", attrs...)
}
