package mcpserver

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/tools"
)

// TestProgress: a search whose caller sent a progress token reports
// before it answers, with that token and a progress that grows; a call
// without a token gets no reports.
func TestProgress(t *testing.T) {
	files := map[string]string{}
	for i := range 300 {
		files[fmt.Sprintf("d%02d/f%03d.txt", i%10, i)] = "needle\n"
	}
	w := newWorkspace(t, tools.Options{}, files)
	reports := make(chan *mcp.ProgressNotificationParams, 1000)
	cs := connect(t, New(w.set, Options{ProgressInterval: time.Millisecond}), &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			reports <- req.Params
		},
	})
	params := &mcp.CallToolParams{Name: "search_files", Arguments: map[string]any{"pattern": "needle"}}
	params.SetProgressToken("walk-1")
	if _, err := cs.CallTool(context.Background(), params); err != nil {
		t.Fatal(err)
	}
	var last float64 = -1
	for n := 0; ; n++ {
		select {
		case p := <-reports:
			if p.ProgressToken != "walk-1" || p.Progress <= last {
				t.Errorf("report %+v after progress %v", p, last)
			}
			last = p.Progress
			continue
		default:
		}
		if n == 0 {
			t.Fatal("no progress report before the result")
		}
		break
	}
	call(t, cs, "find_files", map[string]any{"pattern": "**/*.txt"})
	select {
	case p := <-reports:
		t.Errorf("a call without a token got %+v", p)
	default:
	}
}
