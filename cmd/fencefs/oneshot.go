//go:build fencefs_oneshot

package main

// The one-shot build, go install -tags fencefs_oneshot: version, help,
// completion, and call on --root and local: mounts, with the default
// build's flags and output, linking none of the storage SDKs, the MCP
// server, Prometheus or OpenTelemetry, so that a call starts in about 2
// ms of CPU instead of 17. Everything else exits 1 with
// config.NotInBuild, which names the default build.

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/checkpoint"
	"github.com/fencefs/fencefs/cmd/fencefs/internal/config"
	"github.com/fencefs/fencefs/internal/nsopen"
	"github.com/fencefs/fencefs/mountspec/spec"
	"github.com/fencefs/fencefs/tools"
)

// refuse says on stderr that what is not in this build; exit 1.
func refuse(stderr io.Writer, what string) int {
	fmt.Fprintf(stderr, "fencefs: %v\n", config.NotInBuild(what))
	return exitFatal
}

func serve(_ context.Context, _ *config.Settings, _ []string, _ io.Reader, _, stderr io.Writer) int {
	return refuse(stderr, "serve is")
}

func listTools(_ context.Context, _ *config.Settings, _ []string, _, stderr io.Writer) int {
	return refuse(stderr, "tools is")
}

func listSkills(_ context.Context, _ *config.Settings, _ []string, _, stderr io.Writer) int {
	return refuse(stderr, "skills is")
}

func checkpoints(_ context.Context, _ *config.Settings, _ []string, _, stderr io.Writer) int {
	return refuse(stderr, "checkpoints is")
}

func auditCommand(_ []string, _, stderr io.Writer) int { return refuse(stderr, "audit is") }

func overlayCommand(_ context.Context, _ []string, _, stderr io.Writer) int {
	return refuse(stderr, "overlay is")
}

// openJournal is not reached: openCallNamespace refuses --checkpoints.
func openJournal(context.Context, *config.Settings, backend.Backend) (*checkpoint.Journal, func(), error) {
	return nil, nil, config.NotInBuild("--checkpoints is")
}

// newLogger logs to w at level, as text or (format "json") one JSON
// object a line, as the default build's does for a call (which has no
// tenant or request id to add).
func newLogger(w io.Writer, level slog.Level, format string) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if format == "json" {
		h = slog.NewJSONHandler(w, opts)
	}
	return slog.New(h)
}

// oneshotNamespace is a namespace of local storage and its tools.
type oneshotNamespace struct {
	st  nsopen.Storage
	set *tools.Set
}

func (n *oneshotNamespace) Tools() *tools.Set        { return n.set }
func (n *oneshotNamespace) Backend() backend.Backend { return n.st.Backend }
func (n *oneshotNamespace) Close() error             { return n.st.Close() }

// openCallNamespace opens call's namespace as server.OpenNamespace does
// for the default build's call, through the same package nsopen, after
// refusing what this build cannot open.
func openCallNamespace(ctx context.Context, s *config.Settings, logger *slog.Logger) (callNamespace, error) {
	if s.Checkpoints != "" {
		return nil, config.NotInBuild("--checkpoints is")
	}
	c := nsopen.Config{Root: s.Root, StorageTimeout: s.StorageTimeout, Logger: logger, MountLevel: slog.LevelInfo}
	for _, m := range s.Mounts {
		if m.Spec.Kind != spec.KindLocal {
			return nil, fmt.Errorf("mount %q: %w", m.Name, config.NotInBuild(string(m.Spec.Kind)+":// mounts are"))
		}
		c.Mounts = append(c.Mounts, nsopen.Mount{Name: m.Name, Spec: m.Spec})
	}
	st, err := nsopen.Open(ctx, c, nsopen.LocalOpener{})
	if err != nil {
		st.Close()
		return nil, err
	}
	opts := s.ToolOptions()
	opts.OnEvent = func(ctx context.Context, ev tools.Event) { nsopen.LogEvent(ctx, logger, ev) }
	opts.Logger = logger
	set, err := nsopen.Tools(st.Backend, opts)
	if err == nil {
		err = nsopen.CheckCwd(ctx, st.Backend, opts.Cwd)
	}
	if err != nil {
		st.Close()
		return nil, err
	}
	nsopen.WarnRipgrep(set, logger)
	return &oneshotNamespace{st: st, set: set}, nil
}
