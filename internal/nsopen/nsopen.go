// Package nsopen opens a namespace's storage and builds the tools over it,
// with the checks made at opening (a --cwd that names no directory, grep
// without ripgrep). Package server opens its namespaces through it, and
// so does the one-shot build of the fencefs command, which links neither
// the MCP SDK, Prometheus nor OpenTelemetry: nothing here imports them.
package nsopen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/local"
	"github.com/fencefs/fencefs/mounted"
	"github.com/fencefs/fencefs/mountspec/spec"
	"github.com/fencefs/fencefs/tools"
)

// An Opener opens one mount of a namespace; *mountspec.Opener is one.
type Opener interface {
	Open(ctx context.Context, name string, s spec.Spec, timeout time.Duration) (backend.Backend, io.Closer, error)
}

// Mount is one named mount of a rooted namespace.
type Mount struct {
	// Name is the mount's single-component name: it is mounted at /Name.
	Name string
	// Spec says what is mounted.
	Spec spec.Spec
}

// Config describes the storage of one namespace.
type Config struct {
	// Root is the local directory of a plain namespace, used when Mounts
	// is empty.
	Root string
	// Mounts, when not empty, make the namespace rooted: /NAME per mount.
	Mounts []Mount
	// StorageTimeout bounds each request to a mount whose spec sets no
	// timeout, and its check at opening.
	StorageTimeout time.Duration
	// Logger receives the lines of the opening; nil discards them.
	Logger *slog.Logger
	// MountLevel is the level of the line logged for each mount opened.
	MountLevel slog.Level
	// Wrap, when set, wraps the backend of the root (named "root") and
	// of each mount (by its name).
	Wrap func(b backend.Backend, name string) backend.Backend
}

// Storage is the opened storage of a namespace.
type Storage struct {
	// Backend is the namespace's storage: the root, or the mounts under
	// one rooted namespace.
	Backend backend.Backend
	// Children are the mounts' backends by name; nil for a root.
	Children map[string]backend.Backend
	// Closers release what was opened, the descriptors and connections.
	Closers []io.Closer
}

// Close releases what s holds.
func (s Storage) Close() error {
	var errs []error
	for _, c := range s.Closers {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// Open opens the storage c describes, the mounts with o. On an error the
// returned Storage holds what was opened before it, for the caller to
// close. Errors name the setting at fault.
func Open(ctx context.Context, c Config, o Opener) (Storage, error) {
	logger := c.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	wrap := c.Wrap
	if wrap == nil {
		wrap = func(b backend.Backend, _ string) backend.Backend { return b }
	}
	var s Storage
	if len(c.Mounts) == 0 {
		fs, err := local.New(c.Root)
		if err != nil {
			return s, fmt.Errorf("--root: %w", err)
		}
		s.Closers = append(s.Closers, fs)
		if logger.Enabled(ctx, slog.LevelDebug) {
			logger.DebugContext(ctx, "opened root", "root", c.Root)
		}
		s.Backend = wrap(fs, "root")
		return s, nil
	}
	s.Children = make(map[string]backend.Backend, len(c.Mounts))
	for _, m := range c.Mounts {
		timeout := m.Spec.Timeout
		if timeout == 0 {
			timeout = c.StorageTimeout
		}
		b, closer, err := o.Open(ctx, m.Name, m.Spec, timeout)
		if err != nil {
			return s, err
		}
		s.Closers = append(s.Closers, closer)
		s.Children[m.Name] = wrap(b, m.Name)
		if logger.Enabled(ctx, c.MountLevel) {
			// Only then: the attributes cost a tenant's open allocations.
			logger.Log(ctx, c.MountLevel, "mounted", "name", "/"+m.Name, "spec", m.Spec.String())
		}
	}
	b, err := mounted.New(s.Children)
	s.Backend = b
	return s, err
}

// Tools builds the tool set with opts over b, naming --cwd when it is
// what tools.New refuses.
func Tools(b backend.Backend, opts tools.Options) (*tools.Set, error) {
	set, err := tools.New(b, opts)
	if err != nil && opts.Cwd != "" {
		// What tools.New can refuse of checked options is a Cwd
		// outside the namespace.
		if rest, ok := strings.CutPrefix(err.Error(), fmt.Sprintf("tools: Cwd %q: ", opts.Cwd)); ok {
			err = fmt.Errorf("--cwd: %s", rest)
		}
	}
	return set, err
}

// CheckCwd refuses a cwd that does not name a directory, which would
// otherwise leave the model with "Path not found: ." on every call. It
// looks with a tool set of its own, so that the check sees the path as
// the tools do, whatever tools and policy are configured.
func CheckCwd(ctx context.Context, b backend.Backend, cwd string) error {
	if cwd == "" {
		return nil
	}
	set, err := tools.New(b, tools.Options{Cwd: cwd, Tools: []string{"file_info"}, NoDefaultProtect: true})
	if err != nil {
		return fmt.Errorf("--cwd: %w", err)
	}
	text, err := set.Call(ctx, "file_info", json.RawMessage(`{"path":"."}`))
	if msg, ok := RetryMessage(err); ok {
		if errors.Is(err, tools.KindNotFound) {
			return fmt.Errorf("--cwd %s: no such directory", cwd)
		}
		return fmt.Errorf("--cwd %s: %s", cwd, msg)
	}
	if err != nil {
		return fmt.Errorf("--cwd %s: %w", cwd, err)
	}
	if !strings.Contains(text, "\ntype: directory\n") {
		return fmt.Errorf("--cwd %s: not a directory", cwd)
	}
	return nil
}

// RetryMessage returns the text the model is shown for err when err is
// one the model can correct (a tools.RetryError), as
// mcpserver.RetryMessage does.
func RetryMessage(err error) (string, bool) {
	var r *tools.RetryError
	if !tools.IsRetry(err) || !errors.As(err, &r) {
		return "", false
	}
	return r.Message, true
}

// WarnRipgrep says at start-up when grep is offered and ripgrep is not on
// PATH: grep then searches local disk with the built-in engine, which
// answers alike but costs more on large trees.
func WarnRipgrep(set *tools.Set, logger *slog.Logger) {
	if _, grep := set.Tool("grep"); !grep || tools.RipgrepInstalled("") {
		return
	}
	logger.Warn("ripgrep (rg) is not on PATH: grep searches with the built-in engine, which gives the same answers more slowly on large trees; install ripgrep for speed")
}

// LogEvent logs a tool's notification at debug level, without the diff
// an edit carries.
func LogEvent(ctx context.Context, logger *slog.Logger, ev tools.Event) {
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

// LocalOpener opens local: mounts, each of its own, as a nil
// *mountspec.Opener does, and refuses every other kind: the opener of a
// program that links no storage SDK.
type LocalOpener struct{}

// Open opens s, a local: spec.
func (LocalOpener) Open(_ context.Context, name string, s spec.Spec, _ time.Duration) (backend.Backend, io.Closer, error) {
	if s.Kind != spec.KindLocal {
		return nil, nil, fmt.Errorf("mount %q: %s mounts are not opened by this program", name, s.Kind)
	}
	fs, err := local.New(s.Dir)
	if err != nil {
		return nil, nil, fmt.Errorf("mount %q: %w", name, err)
	}
	if s.ReadOnly {
		return backend.ReadOnly(fs), fs, nil
	}
	return fs, fs, nil
}
