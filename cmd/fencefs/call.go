package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/cmd/fencefs/internal/config"
	"github.com/fencefs/fencefs/internal/nsopen"
	"github.com/fencefs/fencefs/tools"
)

// maxStdinArgs bounds the JSON arguments read from stdin, like the MCP
// transport bounds one message.
const maxStdinArgs = 64 << 20

// callNamespace is what call needs of a namespace: *server.Namespace in
// the default build, the one-shot build's own in that build (oneshot.go).
type callNamespace interface {
	Tools() *tools.Set
	Backend() backend.Backend
	Close() error
}

// call runs one tool once: fencefs call [flags] TOOL [JSON].
func call(ctx context.Context, s *config.Settings, rest []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(rest) == 0 || len(rest) > 2 {
		fmt.Fprintln(stderr, "fencefs: usage: fencefs call [flags] TOOL [JSON] (flags go before TOOL; see fencefs help call)")
		return exitFatal
	}
	name := rest[0]
	logger := newLogger(stderr, s.LogLevel, s.LogFormat)
	ns, err := openCallNamespace(ctx, s, logger)
	if err != nil {
		fmt.Fprintf(stderr, "fencefs: %v\n", err)
		return exitFatal
	}
	defer ns.Close()
	t, ok := ns.Tools().Tool(name)
	if !ok {
		var names []string
		for _, t := range ns.Tools().Tools() {
			names = append(names, t.Name)
		}
		fmt.Fprintf(stderr, "fencefs: unknown tool %q; configured tools: %s\n", name, strings.Join(names, ", "))
		return exitFatal
	}
	args, err := callArgs(rest[1:], stdin)
	if err != nil {
		fmt.Fprintf(stderr, "fencefs: reading arguments from stdin: %v\n", err)
		return exitFatal
	}
	callCtx := ctx
	if s.Checkpoints != "" {
		j, closeStore, err := openJournal(ctx, s, ns.Backend())
		if err != nil {
			fmt.Fprintf(stderr, "fencefs: %v\n", err)
			return exitFatal
		}
		defer closeStore()
		callCtx = j.Bind(ctx)
		defer func() {
			if err := j.Flush(context.WithoutCancel(ctx)); err != nil {
				logger.Error("saving the change's checkpoint", "error", err)
			}
		}()
	}
	text, err := t.Call(callCtx, args)
	if msg, ok := nsopen.RetryMessage(err); ok {
		io.WriteString(stdout, msg)
		return exitRetry
	}
	if err != nil && ctx.Err() != nil {
		fmt.Fprintf(stderr, "fencefs: %s: stopped by a signal before it finished\n", name)
		return exitFatal
	}
	if err != nil {
		logger.Error("tool call failed", "tool", name, "error", tools.Cause(err))
		fmt.Fprintf(stderr, "fencefs: %s: %v\n", name, err)
		return exitFatal
	}
	if _, err := io.WriteString(stdout, text); err != nil {
		logger.Log(ctx, slog.LevelError, "writing the result", "error", err)
		return exitFatal
	}
	return exitOK
}

// callArgs returns the JSON arguments: the command-line argument when
// given, otherwise all of stdin. Empty input means no arguments.
func callArgs(rest []string, stdin io.Reader) (json.RawMessage, error) {
	if len(rest) == 1 {
		return json.RawMessage(rest[0]), nil
	}
	data, err := io.ReadAll(io.LimitReader(stdin, maxStdinArgs+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxStdinArgs {
		return nil, fmt.Errorf("more than %d bytes", maxStdinArgs)
	}
	return slices.Clip(data), nil
}
