//go:build !fencefs_oneshot

package main

import (
	"context"
	"log/slog"

	"github.com/fencefs/fencefs/cmd/fencefs/internal/config"
)

// openCallNamespace opens call's namespace as serve opens its own.
func openCallNamespace(ctx context.Context, s *config.Settings, logger *slog.Logger) (callNamespace, error) {
	ns, err := openNamespace(ctx, s, logger)
	if err != nil {
		return nil, err
	}
	return ns, nil
}
