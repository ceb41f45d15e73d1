package bench

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/bench/internal/servebench"
)

// BenchmarkServeEditCheckpoints measures what checkpoints add to an
// edit_file call through `fencefs serve --http` on local disk: two
// servers, one with `--checkpoints local:STORE` (records in segments)
// and one without, each over its own directory of the same disk with
// the same 80-line file, are called in turn, an edit of each in every
// iteration, by one SDK client each. It reports the median round trip
// of each (ms/plain, ms/journaled), their ratio as overhead-%, and each
// server's CPU per edit; the log line gives the load average.
//
//	go test ./bench -run '^$' -bench ServeEditCheckpoints -benchtime 400x -count 3
func BenchmarkServeEditCheckpoints(b *testing.B) {
	ctx := b.Context()
	dir := b.TempDir()
	bin, err := servebench.Build(dir, "github.com/fencefs/fencefs/cmd/fencefs")
	if err != nil {
		b.Fatal(err)
	}
	content := servebench.EditContent()
	start := func(name string, extra ...string) (*servebench.Process, *mcp.ClientSession) {
		root := filepath.Join(dir, name)
		if err := os.MkdirAll(root, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "f.txt"), []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
		args := append([]string{"serve", "--root", root}, extra...)
		p, err := servebench.Start(bin, append(args, "--http"), nil, nil, time.Minute)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(p.Stop)
		cs, err := servebench.Connect(ctx, "checkpoint-bench", p.URL(), "", http.DefaultTransport)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cs.Close() })
		return p, cs
	}
	plainP, plain := start("plain")
	journaledP, journaled := start("journaled", "--checkpoints", "local:"+filepath.Join(dir, "store"))
	edits := []map[string]any{
		{"path": "f.txt", "old_text": "line 40 x", "new_text": "line 40 y"},
		{"path": "f.txt", "old_text": "line 40 y", "new_text": "line 40 x"},
	}
	call := func(cs *mcp.ClientSession, args map[string]any) time.Duration {
		t0 := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "edit_file", Arguments: args})
		d := time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		if res.IsError {
			b.Fatalf("edit_file: %v", res.Content)
		}
		return d
	}
	// A warm-up pair, so that the journal's segment exists and both
	// servers have built their tool sets.
	call(plain, edits[0])
	call(journaled, edits[0])
	call(plain, edits[1])
	call(journaled, edits[1])
	cpuPlain, cpuJournaled := plainP.CPU(), journaledP.CPU()
	var tp, tj []time.Duration
	for i := 0; b.Loop(); i++ {
		tp = append(tp, call(plain, edits[i%2]))
		tj = append(tj, call(journaled, edits[i%2]))
	}
	n := float64(len(tp))
	median := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2]) / float64(time.Millisecond)
	}
	mp, mj := median(tp), median(tj)
	b.ReportMetric(mp, "ms/plain")
	b.ReportMetric(mj, "ms/journaled")
	b.ReportMetric(100*(mj-mp)/mp, "overhead-%")
	b.ReportMetric(float64(plainP.CPU()-cpuPlain)/n/1e3, "cpu-us/plain")
	b.ReportMetric(float64(journaledP.CPU()-cpuJournaled)/n/1e3, "cpu-us/journaled")
	b.Logf("load average %s", strings.TrimSpace(servebench.LoadAvg()))
}
