package security

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/mounted"
	"github.com/fencefs/fencefs/tools"
)

// TestEditBatchBounded sends edit_file a batch of thousands of
// replacements over a large file, each matching once: the batch is
// refused at once by the replacement cap, a batch at the cap ends by its
// deadline, and neither leaves the file changed unless it finished whole.
// Before the cap every replacement scanned and copied the whole text, so
// such a call ran for minutes, long after its deadline.
func TestEditBatchBounded(t *testing.T) {
	dir := t.TempDir()
	var file bytes.Buffer
	// atCap is tools.MaxReplacements, spelled out so the test also runs
	// where the cap does not exist yet.
	const tokens, atCap = 5000, 100
	line := strings.Repeat("x", 3000) + "\n"
	for i := range tokens {
		fmt.Fprintf(&file, "k%05d %s", i, line)
	}
	content := file.Bytes()
	path := filepath.Join(dir, "big.txt")
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	reps := func(n int) []map[string]string {
		out := make([]map[string]string, n)
		for i := range out {
			out[i] = map[string]string{"old_text": fmt.Sprintf("k%05d ", i), "new_text": fmt.Sprintf("v%05d ", i)}
		}
		return out
	}
	lb := openLocal(t, dir)
	m, err := mounted.New(map[string]backend.Backend{"ws": lb})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, path string
		b          backend.Backend
	}{
		{"local", "big.txt", lb},
		{"mounted", "/ws/big.txt", m},
	} {
		s, err := tools.New(c.b, tools.Options{})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		out, err := boundedCall(t, s, "edit_file", map[string]any{"path": c.path, "replacements": reps(tokens)}, 3*time.Second, func() {})
		t.Logf("%s: %d replacements: %v in %v", c.name, tokens, err, time.Since(start).Round(time.Millisecond))
		if !tools.IsRetry(err) || !strings.Contains(err.Error(), "at most 100 per call") {
			t.Errorf("%s: %d replacements answered %q, %v; want the cap's retry", c.name, tokens, out, err)
		}
		if got, _ := os.ReadFile(path); !bytes.Equal(got, content) {
			t.Fatalf("%s: a refused batch changed the file", c.name)
		}
		start = time.Now()
		mm := measure(t, s, "edit_file", map[string]any{"path": c.path, "replacements": reps(atCap)}, 2*time.Second)
		t.Logf("%s: %d replacements: %v in %v, %d MiB allocated", c.name, atCap, mm.err, time.Since(start).Round(time.Millisecond), mm.alloc>>20)
		mm.answered(t, c.name)
		got, _ := os.ReadFile(path)
		if mm.err != nil && !bytes.Equal(got, content) {
			t.Fatalf("%s: a batch that ended with %v changed the file", c.name, mm.err)
		}
		if mm.err == nil && !bytes.Contains(got, []byte("v00099 ")) {
			t.Fatalf("%s: a batch answered %q but the file lacks its last replacement", c.name, mm.out)
		}
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
