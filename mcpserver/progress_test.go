package mcpserver

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/tools"
)

// TestProgress: a walk whose caller sent a progress token reports
// before it answers, with that token and a progress that grows to the
// count of entries it visited; a call without a token gets no reports.
func TestProgress(t *testing.T) {
	files := map[string]string{}
	for i := range 300 {
		files[fmt.Sprintf("d%02d/f%03d.txt", i%10, i)] = "needle\n"
	}
	w := newWorkspace(t, tools.Options{Tools: tools.AllTools()}, files)
	reports := make(chan *mcp.ProgressNotificationParams, 1000)
	cs := connect(t, New(w.set, Options{ProgressInterval: time.Millisecond}), &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			reports <- req.Params
		},
	})
	// 300 files in 10 directories: 310 entries below the root. grep
	// through ripgrep counts the files ripgrep reports, all 300 here.
	grepCount := 310
	if _, err := exec.LookPath("rg"); err == nil {
		grepCount = 300
	}
	for _, tool := range []struct {
		name string
		args map[string]any
		want int
	}{
		{"search_files", map[string]any{"pattern": "needle"}, 310},
		{"find_files", map[string]any{"pattern": "**/*.txt"}, 310},
		{"list_files", map[string]any{}, 310},
		{"grep", map[string]any{"pattern": "needle"}, grepCount},
	} {
		params := &mcp.CallToolParams{Name: tool.name, Arguments: tool.args}
		params.SetProgressToken("walk-" + tool.name)
		if _, err := cs.CallTool(context.Background(), params); err != nil {
			t.Fatal(err)
		}
		// The client may hand the reports over after the result: wait
		// for the final count.
		var last float64 = -1
		var message string
		for n := 0; last != float64(tool.want); n++ {
			select {
			case p := <-reports:
				if p.ProgressToken != "walk-"+tool.name || p.Progress <= last {
					t.Fatalf("%s: report %+v after progress %v", tool.name, p, last)
				}
				last, message = p.Progress, p.Message
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: %d reports, the last %v %q; want the count of %d entries", tool.name, n, last, message, tool.want)
			}
		}
		if want := fmt.Sprintf("%s: %d entries visited in ", tool.name, tool.want); !strings.HasPrefix(message, want) {
			t.Errorf("%s: last report %q, want it to start %q", tool.name, message, want)
		}
	}
	call(t, cs, "find_files", map[string]any{"pattern": "**/*.txt"})
	select {
	case p := <-reports:
		t.Errorf("a call without a token got %+v", p)
	default:
	}
}
