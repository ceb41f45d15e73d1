package servebench

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/tenant"
)

// TestTokenLine: the token file made of TokenLine's entries is one the
// server loads, and each token is its tenant's with both scopes.
func TestTokenLine(t *testing.T) {
	tokens := []string{NewToken(), NewToken()}
	if tokens[0] == tokens[1] || len(tokens[0]) != 32 {
		t.Fatalf("tokens %q", tokens)
	}
	file := filepath.Join(t.TempDir(), "tokens.yaml")
	if err := os.WriteFile(file, []byte("tokens:\n"+TokenLine("t0", tokens[0])+TokenLine("t1", tokens[1])), 0o600); err != nil {
		t.Fatal(err)
	}
	v, err := tenant.NewStatic(file)
	if err != nil {
		t.Fatal(err)
	}
	for i, tok := range tokens {
		id, err := v.Verify(t.Context(), tok)
		if err != nil {
			t.Fatal(err)
		}
		want := "t" + string(rune('0'+i))
		if string(id.Tenant) != want || !slices.Contains(id.Scopes, tenant.ScopeRead) || !slices.Contains(id.Scopes, tenant.ScopeWrite) {
			t.Errorf("token %d: %+v, want tenant %s with read and write", i, id, want)
		}
	}
}

// TestCPU: the CPU time /proc gives for this process grows with work,
// and an unknown process has none.
func TestCPU(t *testing.T) {
	before := CPU(os.Getpid())
	grew := false
	// Each round reads /proc: a million of them take far more than the
	// 10 ms a tick counts.
	for i := 0; i < 1_000_000 && !grew; i++ {
		grew = CPU(os.Getpid()) > before
	}
	if !grew {
		t.Errorf("CPU stayed %v through a million reads of /proc", before)
	}
	if got := CPU(1 << 30); got != 0 {
		t.Errorf("CPU of no process: %v", got)
	}
}

// TestContent: the file read_file reads is 4 KiB, the edited one 80
// lines with line 40 "line 40 x".
func TestContent(t *testing.T) {
	if len(ReadContent) != 4096 {
		t.Errorf("ReadContent is %d bytes", len(ReadContent))
	}
	lines := strings.Split(strings.TrimSuffix(EditContent(), "\n"), "\n")
	if len(lines) != 80 || lines[39] != "line 40 x" {
		t.Errorf("EditContent: %d lines:\n%s", len(lines), EditContent())
	}
}
