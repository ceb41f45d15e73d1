package mcpserver

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/tools"
)

// DefaultProgressInterval is how often a walk or search tells a client
// that asked for progress how far it has come.
const DefaultProgressInterval = time.Second

// walkers are the tools whose calls can run long over a large tree.
var walkers = map[string]bool{"search_files": true, "find_files": true, "list_files": true, "grep": true}

// reportProgress sends progress notifications for the call of req, which
// runs under the returned context, until the returned stop is called:
// one at once, then one per interval while the count of entries the walk
// visited grows, and the final count when it ends (before the result).
// The progress is that count, which only grows; there is no total, as a
// walk does not know the tree's size before it ends. The call's
// cancellation (notifications/cancelled) ends the call through its
// context, and with it the reports.
func (h *handlers) reportProgress(ctx context.Context, req *mcp.CallToolRequest, tool string) (_ context.Context, stop func()) {
	token := req.Params.GetProgressToken()
	if token == nil || !walkers[tool] || req.Session == nil {
		return ctx, func() {}
	}
	var visited atomic.Int64
	callCtx := tools.WithWalkCounter(ctx, &visited)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	start := time.Now()
	var last int64 = -1
	// send is called by one goroutine at a time: the ticker's, then,
	// after it has stopped, stop's.
	send := func(ctx context.Context, n int64) {
		if n <= last {
			return
		}
		err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: token,
			Progress:      float64(n),
			Message:       fmt.Sprintf("%s: %d %s visited in %s", tool, n, plural(n, "entry", "entries"), time.Since(start).Round(time.Millisecond)),
		})
		if err == nil {
			last = n
		}
	}
	send(ctx, 0)
	go func() {
		defer close(done)
		tick := time.NewTicker(h.opts.ProgressInterval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if ctx.Err() != nil {
					return // the call ended as the tick came: stop sends the count
				}
				send(ctx, visited.Load())
			}
		}
	}()
	return callCtx, func() {
		cancel()
		<-done
		if callCtx.Err() == nil {
			send(callCtx, visited.Load())
		}
	}
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
