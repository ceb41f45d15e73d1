package checkpointcli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/checkpoint"
	"github.com/fencefs/fencefs/checkpoint/checkpointcli"
	"github.com/fencefs/fencefs/memfs"
	"github.com/fencefs/fencefs/tools"
)

func run(t *testing.T, j *checkpoint.Journal, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := checkpointcli.Run(t.Context(), j, args, &out, &errOut)
	return out.String(), errOut.String(), code
}

// TestCommand: list, show, diff, a dry run, a refused restore, a forced
// one and its undo, as a person runs them.
func TestCommand(t *testing.T) {
	ctx := t.Context()
	ns := memfs.New()
	set, err := tools.New(ns, tools.Options{})
	if err != nil {
		t.Fatal(err)
	}
	clock := func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	j, err := checkpoint.Open(ctx, ns, memfs.New(), checkpoint.Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	j.Mark(ctx, "turn-1")
	for _, a := range []string{`{"path":"a.txt","content":"one\n"}`, `{"path":"a.txt","content":"two\n"}`} {
		if _, err := set.Call(j.Bind(context.Background()), "write_file", json.RawMessage(a)); err != nil {
			t.Fatal(err)
		}
	}
	out, _, code := run(t, j, "list")
	if want := "2\t2026-01-02T03:04:05Z\tturn-1\twrite a.txt, 1 path\n1\t2026-01-02T03:04:05Z\tturn-1\twrite a.txt, 1 path\noldest checkpoint kept: 0\n"; code != 0 || out != want {
		t.Errorf("list: %d\n%s\nwant\n%s", code, out, want)
	}
	out, _, code = run(t, j, "show", "2")
	if code != 0 || !strings.Contains(out, "a.txt: file ") || !strings.Contains(out, "-> file ") {
		t.Errorf("show: %d\n%s", code, out)
	}
	out, _, code = run(t, j, "diff", "1")
	if want := "--- a/a.txt\n+++ b/a.txt\n@@ -1,1 +1,1 @@\n-two\n+one\n"; code != 0 || out != want {
		t.Errorf("diff: %d\n%q\nwant\n%q", code, out, want)
	}
	if err := backend.WriteFile(ctx, ns, "a.txt", []byte("theirs\n"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	out, _, code = run(t, j, "restore", "0", "--dry-run")
	if code != 0 || !strings.Contains(out, "CONFLICT: changed by another writer") {
		t.Errorf("dry run: %d\n%s", code, out)
	}
	_, errOut, code := run(t, j, "restore", "0")
	if code != checkpointcli.ExitConflict || !strings.Contains(errOut, "a.txt: changed by another writer") {
		t.Errorf("refused restore: %d\n%s", code, errOut)
	}
	out, _, code = run(t, j, "restore", "--force", "0")
	if code != 0 || !strings.Contains(out, "restored a.txt\noverwrote a.txt") {
		t.Errorf("forced restore: %d\n%s", code, out)
	}
	if _, err := backend.Stat(ctx, ns, "a.txt"); err == nil {
		t.Error("a.txt is still there after the restore to 0")
	}
	if _, _, code := run(t, j, "restore", "0", "--force", "--skip-conflicts"); code != checkpointcli.ExitUsage {
		t.Errorf("--force with --skip-conflicts: exit %d", code)
	}
	if _, _, code := run(t, j, "show", "x"); code != checkpointcli.ExitUsage {
		t.Errorf("show x: exit %d", code)
	}
	if _, _, code := run(t, j, "frobnicate"); code != checkpointcli.ExitUsage {
		t.Errorf("unknown subcommand: exit %d", code)
	}
}
