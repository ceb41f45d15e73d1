package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/internal/nsopen"
	"github.com/fencefs/fencefs/mountspec"
	"github.com/fencefs/fencefs/quota"
	"github.com/fencefs/fencefs/telemetry"
	"github.com/fencefs/fencefs/tools"
)

// Mount is one named mount of a rooted namespace.
type Mount struct {
	// Name is the mount's single-component name: it is mounted at /Name.
	Name string
	// Spec says what is mounted.
	Spec mountspec.Spec
	// Shared marks a mount every tenant has alike: its files count
	// against no tenant's quota.
	Shared bool
}

// NamespaceConfig describes one namespace: its storage and the options
// of the tools over it.
type NamespaceConfig struct {
	// Root is the local directory of a plain namespace, used when Mounts
	// is empty.
	Root string
	// Mounts, when not empty, make the namespace rooted: /NAME per mount.
	Mounts []Mount
	// Tools are the options of the namespace's tool sets. OnEvent,
	// OnChangeRequest and Logger are the namespace's own: the events feed
	// the audit and the change requests the quota (see Chain).
	Tools tools.Options
	// StorageTimeout bounds each request to a mount whose spec sets no
	// timeout, and its check at opening.
	StorageTimeout time.Duration
	// Metered builds the change listener that reserves quota and judges
	// directory changes under RequireRead. Any change listener makes
	// every change re-check its path after announcing it, a directory's
	// delete or move name the entries it takes along, and a commit ask
	// the storage again for the version the tool read: set it when an
	// audit, a stored quota or the stateless require-read needs the
	// change requests.
	Metered bool
	// Logger receives the namespace's log lines; nil discards them.
	Logger *slog.Logger
	// Tracing, when set, makes a span of each storage operation under
	// the span of the call that asks it, named by its mount ("root" for
	// Root); nil builds nothing.
	Tracing *telemetry.Tracing
}

// A Namespace is opened storage and the tools over it.
type Namespace struct {
	// b is the storage the tools work on; skills are read from it too.
	b   backend.Backend
	set *tools.Set
	// opts are set's options, for the sets of further sessions.
	opts    tools.Options
	closers []io.Closer
	// children are the mounts' backends by name; nil for a root.
	children map[string]backend.Backend
	// counted names the mounts whose files count against a quota: the
	// writable ones that are not shared.
	counted map[string]bool
	// mounts are the namespace's mounts, sorted by name; nil for a root.
	mounts []Mount
	logger *slog.Logger
	// journal is the namespace's checkpoint journal, if any
	// (Config.Checkpoints).
	journal *nsJournal
}

// OpenNamespace opens the storage c describes (the root, or the mounts,
// with the clients and connections of o; a nil o shares nothing) and
// builds the tools over it. Errors name the setting at fault.
func OpenNamespace(ctx context.Context, c NamespaceConfig, o *mountspec.Opener) (*Namespace, error) {
	n := &Namespace{logger: cmp.Or(c.Logger, slog.New(slog.DiscardHandler)), mounts: c.Mounts}
	b, err := n.open(ctx, c, o)
	n.b = b
	if err == nil {
		n.opts = c.Tools
		logger := n.logger
		n.opts.OnEvent = func(ctx context.Context, ev tools.Event) {
			noteEvent(ctx, ev)
			nsopen.LogEvent(ctx, logger, ev)
		}
		n.opts.Logger = logger
		// The namespace's own listeners read no diff: an edit builds one
		// only for a listener of a call's own that does (an approval),
		// or for a change listener the caller's Tools kept (without
		// Metered).
		n.opts.ListenersReadNoDiff = c.Metered || n.opts.OnChangeRequest == nil
		if c.Metered {
			// Only then: a change listener makes every change re-check
			// its path after announcing it.
			n.opts.OnChangeRequest = func(ctx context.Context, req *tools.ChangeRequest) error {
				noteChangeRequest(ctx, req)
				if err := n.judgeTree(ctx, req); err != nil {
					return err
				}
				if _, cancelled := req.Cancelled(); cancelled {
					return nil
				}
				return n.reserveChange(ctx, req)
			}
		}
		n.set, err = nsopen.Tools(b, n.opts)
	}
	if err == nil {
		err = nsopen.CheckCwd(ctx, b, c.Tools.Cwd)
	}
	if err != nil {
		n.Close()
		return nil, err
	}
	if callInfoOf(ctx).tenant == "" {
		nsopen.WarnRipgrep(n.set, n.logger)
	} else {
		// A tenant's open at its request: the process's PATH is the
		// same for every tenant, so it is looked up, and a missing
		// ripgrep said, once.
		tenantRipgrep.Do(func() { nsopen.WarnRipgrep(n.set, n.logger) })
	}
	return n, nil
}

// tenantRipgrep makes the tenants' opens check for ripgrep once.
var tenantRipgrep sync.Once

// Backend returns the storage the namespace's tools work on.
func (n *Namespace) Backend() backend.Backend { return n.b }

// Tools returns the namespace's first tool set. Each further session
// that must keep its own record of reads (tools.Options.RequireRead)
// takes a set of its own from NewSet.
func (n *Namespace) Tools() *tools.Set { return n.set }

// Options returns the options of the namespace's tool sets.
func (n *Namespace) Options() tools.Options { return n.opts }

// NewSet returns another tool set over the namespace with its options, but
// offering only list (nil: the namespace's tools).
func (n *Namespace) NewSet(list []string) (*tools.Set, error) {
	opts := n.opts
	if list != nil {
		opts.Tools = list
	}
	return tools.New(n.b, opts)
}

// Usage scans the files that count against the namespace's quota: every
// file of a plain namespace, the files of the writable, unshared mounts
// of a rooted one, and what its checkpoint store holds.
func (n *Namespace) Usage(ctx context.Context) (quota.Usage, error) {
	if n.children == nil {
		u, err := scanUsage(ctx, n.b)
		return u.Add(n.journalUsage()), err
	}
	u := n.journalUsage()
	for name := range n.counted {
		mu, err := scanUsage(ctx, n.children[name])
		if err != nil {
			return quota.Usage{}, fmt.Errorf("mount %q: %w", name, err)
		}
		u = u.Add(mu)
	}
	return u, nil
}

// counts reports whether the file at the canonical path p counts
// against the namespace's quota.
func (n *Namespace) counts(p string) bool {
	if n.children == nil {
		return true // a root
	}
	mount, _, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
	return n.counted[mount]
}

// probe returns a file_info tool over the namespace with its policy,
// whatever the caller's tools, for the checks before a change.
func (n *Namespace) probe() *tools.Tool {
	opts := n.opts
	opts.Tools = []string{"file_info"}
	opts.OnEvent = nil
	opts.OnChangeRequest = nil
	set, err := tools.New(n.b, opts)
	if err != nil {
		return nil // the same options built n.set: this does not happen
	}
	t, _ := set.Tool("file_info")
	return t
}

// Close releases the storage connections and descriptors.
func (n *Namespace) Close() error {
	var errs []error
	for _, c := range n.closers {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// open opens the backend of the namespace (package nsopen opens it).
func (n *Namespace) open(ctx context.Context, c NamespaceConfig, o *mountspec.Opener) (backend.Backend, error) {
	mounts := make([]nsopen.Mount, len(c.Mounts))
	for i, m := range c.Mounts {
		mounts[i] = nsopen.Mount{Name: m.Name, Spec: m.Spec}
	}
	// The server's own mounts are worth a line at start-up; a tenant's
	// open at its requests, and a line each would cost a stateless
	// request a line whenever its tenant is not cached.
	level := slog.LevelInfo
	if callInfoOf(ctx).tenant != "" {
		level = slog.LevelDebug
	}
	st, err := nsopen.Open(ctx, nsopen.Config{
		Root:           c.Root,
		Mounts:         mounts,
		StorageTimeout: c.StorageTimeout,
		Logger:         n.logger,
		MountLevel:     level,
		Wrap:           c.Tracing.Backend,
	}, o)
	n.closers, n.children = st.Closers, st.Children
	if err != nil || st.Children == nil {
		return st.Backend, err
	}
	n.counted = map[string]bool{}
	for _, m := range c.Mounts {
		if !m.Spec.ReadOnly && !m.Shared {
			n.counted[m.Name] = true
		}
	}
	return st.Backend, nil
}

// scanUsage returns the stored usage of a namespace's backend.
func scanUsage(ctx context.Context, b backend.Backend) (quota.Usage, error) {
	return quota.ScanFS(ctx, backend.FS(ctx, b))
}
