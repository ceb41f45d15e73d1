package mcpserver

import (
	"context"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultProgressInterval is how often a walk or search tells a client
// that asked for progress that it is still going.
const DefaultProgressInterval = time.Second

// walkers are the tools whose calls can run long over a large tree.
var walkers = map[string]bool{"search_files": true, "find_files": true, "list_files": true, "grep": true}

// reportProgress sends progress notifications for the call of req until
// the returned stop is called: one at once, then one per interval, each
// with the time the call has run. The call's cancellation
// (notifications/cancelled) ends the call through its context, and with
// it the reports.
func (h *handlers) reportProgress(ctx context.Context, req *mcp.CallToolRequest, tool string) (stop func()) {
	token := req.Params.GetProgressToken()
	if token == nil || !walkers[tool] || req.Session == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	start := time.Now()
	send := func(n int) {
		_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: token,
			Progress:      float64(n),
			Message:       fmt.Sprintf("%s running for %s", tool, time.Since(start).Round(time.Millisecond)),
		})
	}
	send(0)
	go func() {
		defer close(done)
		tick := time.NewTicker(h.opts.ProgressInterval)
		defer tick.Stop()
		for n := 1; ; n++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				send(n)
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}
