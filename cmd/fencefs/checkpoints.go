//go:build !fencefs_oneshot

package main

import (
	"context"
	"fmt"
	"io"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/checkpoint"
	"github.com/fencefs/fencefs/checkpoint/checkpointcli"
	"github.com/fencefs/fencefs/cmd/fencefs/internal/config"
	"github.com/fencefs/fencefs/mountspec"
	"github.com/fencefs/fencefs/server"
	"github.com/fencefs/fencefs/tenant"
)

// checkpoints runs fencefs checkpoints [flags] STORE SUBCOMMAND [ARGS].
func checkpoints(ctx context.Context, s *config.Settings, rest []string, stdout, stderr io.Writer) int {
	if len(rest) < 2 {
		fmt.Fprintln(stderr, "fencefs: usage: fencefs checkpoints [flags] STORE list|show|diff|restore [ARGS] (see fencefs help checkpoints)")
		return exitFatal
	}
	spec, err := mountspec.Parse(rest[0])
	if err != nil {
		fmt.Fprintf(stderr, "fencefs: checkpoints: the store %q: %v\n", rest[0], err)
		return exitFatal
	}
	logger := newLogger(stderr, s.LogLevel, s.LogFormat)
	ns, err := openNamespace(ctx, s, logger)
	if err != nil {
		fmt.Fprintf(stderr, "fencefs: %v\n", err)
		return exitFatal
	}
	defer ns.Close()
	j, closeStore, err := openJournalAt(ctx, spec, s, ns.Backend())
	if err != nil {
		fmt.Fprintf(stderr, "fencefs: %v\n", err)
		return exitFatal
	}
	defer closeStore()
	switch code := checkpointcli.Run(ctx, j, rest[1:], stdout, stderr); code {
	case checkpointcli.ExitOK, checkpointcli.ExitConflict:
		return code
	default:
		return exitFatal
	}
}

// openJournal opens the journal of ns in the store --checkpoints names.
func openJournal(ctx context.Context, s *config.Settings, ns backend.Backend) (*checkpoint.Journal, func(), error) {
	spec, err := mountspec.Parse(s.Checkpoints)
	if err != nil {
		return nil, nil, fmt.Errorf("--checkpoints %q: %w", s.Checkpoints, err)
	}
	return openJournalAt(ctx, spec, s, ns)
}

// openJournalAt opens the journal of ns in the store spec; the function
// returned closes the store.
func openJournalAt(ctx context.Context, spec mountspec.Spec, s *config.Settings, ns backend.Backend) (*checkpoint.Journal, func(), error) {
	store, closer, err := (*mountspec.Opener)(nil).Open(ctx, "checkpoints", spec, s.StorageTimeout)
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoints: %w", err)
	}
	j, err := checkpoint.Open(ctx, ns, store, checkpoint.Options{})
	if err != nil {
		closer.Close()
		return nil, nil, err
	}
	return j, func() { closer.Close() }, nil
}

// checkpointsConfig returns the server's checkpoints of --checkpoints (a
// store template with {tenant} under --tenant-mount) and
// --checkpoint-tools.
func checkpointsConfig(s *config.Settings) (*server.Checkpoints, error) {
	store, err := tenant.ParseTemplate(s.Checkpoints)
	if err != nil {
		return nil, fmt.Errorf("--checkpoints: %w", err)
	}
	return &server.Checkpoints{
		Store: store,
		// On a local store, records go to segments: one fdatasync per
		// change, overlapped with the change's own (docs/checkpoints.md).
		Options: checkpoint.Options{KeepCount: s.CheckpointKeep, KeepAge: s.CheckpointKeepAge, KeepBytes: s.CheckpointKeepBytes, Segments: true},
		List:    s.CheckpointTools == "list" || s.CheckpointTools == "restore",
		Restore: s.CheckpointTools == "restore",
	}, nil
}
