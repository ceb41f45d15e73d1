package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	dir := t.TempDir()
	met := filepath.Join(dir, "met.txt")
	os.WriteFile(met, []byte("BenchmarkFindFiles-2 1 1 ns/op 100 fencefs-ns/op 0.9 ratio 111 ref-ns/op\n"), 0o644)
	missed := filepath.Join(dir, "missed.txt")
	os.WriteFile(missed, []byte("BenchmarkFindFiles-2 1 1 ns/op 300 fencefs-ns/op 2.7 ratio 111 ref-ns/op\n"), 0o644)
	tests := []struct {
		args    []string
		wantErr string
		wantOut string
	}{
		{nil, "usage", ""},
		{[]string{"nonsense"}, "unknown command", ""},
		{[]string{"table", filepath.Join(dir, "none.txt")}, "no such file", ""},
		{[]string{"table", met}, "", "| 0.90x | <= 1x "},
		{[]string{"table", missed}, "a goal was not met", "| 2.70x | <= 1x "},
	}
	for _, tt := range tests {
		var out strings.Builder
		err := run(tt.args, &out)
		if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("run(%q) error = %v, want %q", tt.args, err, tt.wantErr)
		}
		if !strings.Contains(out.String(), tt.wantOut) {
			t.Errorf("run(%q) printed:\n%s\nwant it to hold %q", tt.args, out.String(), tt.wantOut)
		}
	}
}
