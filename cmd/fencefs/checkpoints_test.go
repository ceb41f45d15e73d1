//go:build !fencefs_oneshot

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/checkpoint"
	"github.com/fencefs/fencefs/local"
	"github.com/fencefs/fencefs/tenant/tenanttest"
	"github.com/fencefs/fencefs/tools"
)

// TestCheckpoints: a host journals two changes in a store on local disk;
// fencefs checkpoints lists them, refuses a restore over another
// writer's change (exit 3, the path named), and restores with --force.
func TestCheckpoints(t *testing.T) {
	t.Parallel()
	root, storeDir := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("start\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ns, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	store, err := local.New(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	set, err := tools.New(ns, tools.Options{})
	if err != nil {
		t.Fatal(err)
	}
	j, err := checkpoint.Open(t.Context(), ns, store, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{`{"path":"a.txt","content":"agent\n"}`, `{"path":"b.txt","content":"new\n"}`} {
		if _, err := set.Call(j.Bind(context.Background()), "write_file", json.RawMessage(a)); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	storeSpec := "local:" + storeDir
	got := runFencefs(t, root, "", nil, "checkpoints", "--root", root, storeSpec, "list")
	if got.code != 0 || !strings.Contains(got.stdout, "write a.txt, 1 path") || !strings.Contains(got.stdout, "write b.txt, 1 path") {
		t.Fatalf("list: %+v", got)
	}
	if err := os.WriteFile(filepath.Join(root, "b.txt"), []byte("theirs\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got = runFencefs(t, root, "", nil, "checkpoints", "--root", root, storeSpec, "restore", "0")
	if got.code != 3 || !strings.Contains(got.stderr, "b.txt: changed by another writer") {
		t.Fatalf("restore over a conflict: %+v", got)
	}
	got = runFencefs(t, root, "", nil, "checkpoints", "--root", root, storeSpec, "restore", "--force", "0")
	if got.code != 0 || !strings.Contains(got.stdout, "overwrote b.txt") {
		t.Fatalf("forced restore: %+v", got)
	}
	if data, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(data) != "start\n" {
		t.Errorf("a.txt after the restore: %q", data)
	}
	if _, err := os.Stat(filepath.Join(root, "b.txt")); !os.IsNotExist(err) {
		t.Errorf("b.txt after the restore: %v", err)
	}
	got = runFencefs(t, root, "", nil, "checkpoints", "--root", root, storeSpec)
	if got.code != 1 || !strings.Contains(got.stderr, "usage: fencefs checkpoints") {
		t.Errorf("no subcommand: %+v", got)
	}
}

// TestCallCheckpoints: fencefs call --checkpoints journals each change;
// fencefs checkpoints restores the start, and a change the journal
// cannot keep (its store is a file, not a directory) is not made.
func TestCallCheckpoints(t *testing.T) {
	t.Parallel()
	root, storeDir := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("start\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	store := "local:" + storeDir
	for _, a := range []string{`{"path":"a.txt","old_text":"start","new_text":"edited"}`, `{"path":"a.txt","old_text":"edited","new_text":"twice"}`} {
		if got := runFencefs(t, root, "", nil, "call", "--root", root, "--checkpoints", store, "edit_file", a); got.code != 0 {
			t.Fatalf("call: %+v", got)
		}
	}
	if got := runFencefs(t, root, "", nil, "call", "--root", root, "--checkpoints", store, "write_file", `{"path":"new.txt","content":"n\n"}`); got.code != 0 {
		t.Fatalf("call: %+v", got)
	}
	got := runFencefs(t, root, "", nil, "checkpoints", "--root", root, store, "list")
	if got.code != 0 || strings.Count(got.stdout, "edit a.txt") != 2 || !strings.Contains(got.stdout, "write new.txt") {
		t.Fatalf("list: %+v", got)
	}
	got = runFencefs(t, root, "", nil, "checkpoints", "--root", root, store, "restore", "0")
	if got.code != 0 || !strings.Contains(got.stdout, "restored a.txt\nrestored new.txt") {
		t.Fatalf("restore: %+v", got)
	}
	if data, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(data) != "start\n" {
		t.Errorf("a.txt: %q", data)
	}
	if _, err := os.Stat(filepath.Join(root, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("new.txt: %v", err)
	}
	// A store that cannot hold the journal: the change is refused.
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got = runFencefs(t, root, "", nil, "call", "--root", root, "--checkpoints", "local:"+file, "write_file", `{"path":"a.txt","content":"x"}`)
	if got.code != 1 {
		t.Errorf("call with a store that is a file: %+v", got)
	}
	if data, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(data) != "start\n" {
		t.Errorf("a.txt after a refused change: %q", data)
	}
}

// TestServeCheckpoints: a whole agent run through fencefs serve
// --checkpoints (edits, a delete, a move, an apply_patch, a new
// directory), then fencefs checkpoints restores the start byte for byte,
// modes included, and reports the file another writer changed meanwhile
// instead of overwriting it.
func TestServeCheckpoints(t *testing.T) {
	t.Parallel()
	root, storeDir := t.TempDir(), t.TempDir()
	seed := map[string]string{"main.go": "package main\n\nfunc main() {}\n", "run.sh": "#!/bin/sh\necho run\n", "lib/a.go": "package lib\n", "notes.txt": "notes\n"}
	for name, data := range seed {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(root, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	tree := func() map[string]string {
		out := map[string]string{}
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || p == root {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			fi, _ := d.Info()
			if d.IsDir() {
				out[rel] = "dir"
				return nil
			}
			data, _ := os.ReadFile(p)
			out[rel] = fi.Mode().String() + " " + string(data)
			return nil
		})
		return out
	}
	start := tree()
	store := "local:" + storeDir
	cmd := exec.Command(binary, "serve", "--root", root, "--tools", "all", "--checkpoints", store)
	ctx := t.Context()
	cs, err := newClient().Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * exitDeadline}, nil)
	if err != nil {
		t.Fatal(err)
	}
	call := func(name string, args map[string]any) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
	}
	for i := range 5 {
		call("write_file", map[string]any{"path": "notes.txt", "content": strings.Repeat("note\n", i+2)})
	}
	call("edit_file", map[string]any{"path": "main.go", "old_text": "func main() {}", "new_text": "func main() { println() }"})
	call("delete_file", map[string]any{"path": "run.sh"})
	call("move_file", map[string]any{"source": "lib/a.go", "destination": "a.go"})
	call("create_directory", map[string]any{"path": "made"})
	call("apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Update File: main.go\n@@\n-func main() { println() }\n+func main() { println(1) }\n*** Add File: made/new.txt\n+new\n*** End Patch\n"})
	cs.Close()
	// Another writer changes a file the run changed too.
	if err := os.WriteFile(filepath.Join(root, "main.go"), []byte("theirs\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := runFencefs(t, root, "", nil, "checkpoints", "--root", root, store, "restore", "0")
	if got.code != 3 || !strings.Contains(got.stderr, "main.go: changed by another writer") {
		t.Fatalf("restore over another writer's change: %+v", got)
	}
	got = runFencefs(t, root, "", nil, "checkpoints", "--root", root, store, "restore", "--skip-conflicts", "0")
	if got.code != 0 || !strings.Contains(got.stdout, "left main.go") {
		t.Fatalf("restore: %+v", got)
	}
	want := start
	want["main.go"] = "-rw-r--r-- theirs\n"
	wantTree := tree()
	for k, v := range want {
		if wantTree[k] != v {
			t.Errorf("%s: %q, want %q", k, wantTree[k], v)
		}
	}
	for k, v := range wantTree {
		if _, ok := want[k]; !ok {
			t.Errorf("%s left over: %q", k, v)
		}
	}
}

// TestServeCheckpointTools: with --checkpoint-tools restore the model
// lists its checkpoints and restores one over MCP; without it neither
// tool is offered, and --checkpoint-tools needs --checkpoints.
func TestServeCheckpointTools(t *testing.T) {
	t.Parallel()
	root, storeDir := t.TempDir(), t.TempDir()
	ctx := t.Context()
	connect := func(args ...string) *mcp.ClientSession {
		cmd := exec.Command(binary, append([]string{"serve", "--root", root, "--checkpoints", "local:" + storeDir}, args...)...)
		cs, err := newClient().Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * exitDeadline}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	text := func(cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res.Content[0].(*mcp.TextContent).Text, res.IsError
	}
	cs := connect()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if strings.Contains(tool.Name, "checkpoint") {
			t.Errorf("%s offered without --checkpoint-tools", tool.Name)
		}
	}
	cs.Close()

	cs = connect("--checkpoint-tools", "restore")
	defer cs.Close()
	if out, isErr := text(cs, "write_file", map[string]any{"path": "a.txt", "content": "one\n"}); isErr {
		t.Fatal(out)
	}
	if out, isErr := text(cs, "list_checkpoints", nil); isErr || !strings.HasPrefix(out, "1  ") || !strings.Contains(out, "write a.txt  (1 path)") {
		t.Errorf("list_checkpoints: %v %q", isErr, out)
	}
	out, isErr := text(cs, "restore_checkpoint", map[string]any{"checkpoint": 0})
	if isErr || !strings.HasPrefix(out, "Restored 1 path to checkpoint 0: a.txt.") {
		t.Errorf("restore_checkpoint: %v %q", isErr, out)
	}
	if _, err := os.Stat(filepath.Join(root, "a.txt")); !os.IsNotExist(err) {
		t.Errorf("a.txt after the restore: %v", err)
	}

	got := runFencefs(t, root, "", nil, "serve", "--root", root, "--checkpoint-tools", "list")
	if got.code != 1 || !strings.Contains(got.stderr, "--checkpoint-tools needs --checkpoints") {
		t.Errorf("--checkpoint-tools alone: %+v", got)
	}
	got = runFencefs(t, root, "", nil, "serve", "--root", root, "--checkpoint-keep", "3")
	if got.code != 1 || !strings.Contains(got.stderr, "need --checkpoints") {
		t.Errorf("--checkpoint-keep alone: %+v", got)
	}
	// A store the tools could reach is refused before anything is served.
	got = runFencefs(t, root, "", nil, "serve", "--root", root, "--checkpoints", "local:"+filepath.Join(root, ".checkpoints"))
	if got.code != 1 || !strings.Contains(got.stderr, "lies inside or around mount root") {
		t.Errorf("a store inside the root: %+v", got)
	}
}

// TestServeTenantCheckpoints drives serve --http --auth jwt
// --tenant-mount --checkpoints with a {tenant} store and
// --checkpoint-tools restore over the SDK client: t1's edits in a turn
// its calls' _meta marks are journaled in t1's own store, the model
// restores them through the server's scopes and audit, a files:read
// token is offered list_checkpoints only, and a person reads the same
// journal with fencefs checkpoints.
func TestServeTenantCheckpoints(t *testing.T) {
	t.Parallel()
	iss := tenanttest.NewIssuer(t)
	base := t.TempDir()
	auditFile := filepath.Join(base, "audit.jsonl")
	h := startTenantServe(t, iss, base, "--audit", auditFile,
		"--checkpoints", "local:"+filepath.Join(base, "ckpt", "{tenant}"), "--checkpoint-tools", "restore")
	ctx := t.Context()
	t1, err := connectAs(t, h.url, iss.Sign(t, tenanttest.Claims{Subject: "t1"}), "")
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, h.stderr.String())
	}
	defer t1.Close()
	inTurn := func(tool string, args map[string]any) {
		t.Helper()
		res, err := t1.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args, Meta: mcp.Meta{"fencefs/turn": "turn-a"}})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", tool, err, res)
		}
	}
	inTurn("write_file", map[string]any{"path": "/ws/a.txt", "content": "0\n"})
	for i := 1; i <= 5; i++ {
		inTurn("edit_file", map[string]any{"path": "/ws/a.txt", "old_text": fmt.Sprintf("%d\n", i-1), "new_text": fmt.Sprintf("%d\n", i)})
	}
	inTurn("edit_file", map[string]any{"path": "/ws/secret.txt", "old_text": "secret", "new_text": "public"})
	if out := callOK(t, ctx, t1, "list_checkpoints", nil); strings.Count(out, "[turn-a]") != 7 {
		t.Errorf("list_checkpoints:\n%s", out)
	}
	if out := callOK(t, ctx, t1, "restore_checkpoint", map[string]any{"checkpoint": 0}); !strings.HasPrefix(out, "Restored 2 paths to checkpoint 0") {
		t.Errorf("restore_checkpoint: %q", out)
	}
	if data, err := os.ReadFile(filepath.Join(base, "tenants", "t1", "secret.txt")); string(data) != "secret of t1\n" {
		t.Errorf("secret.txt after the restore: %q %v", data, err)
	}
	if _, err := os.Stat(filepath.Join(base, "tenants", "t1", "a.txt")); !os.IsNotExist(err) {
		t.Errorf("a.txt after the restore: %v", err)
	}
	audit, _ := os.ReadFile(auditFile)
	if !strings.Contains(string(audit), `"tenant":"t1","subject":"t1","tool":"restore_checkpoint","paths":["/ws/`) {
		t.Errorf("no audit line of the restore:\n%s", audit)
	}

	reader, err := connectAs(t, h.url, iss.Sign(t, tenanttest.Claims{Subject: "t2", Scope: "files:read"}), "")
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	list, err := reader.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	if !slices.Contains(names, "list_checkpoints") || slices.Contains(names, "restore_checkpoint") {
		t.Errorf("files:read tools: %q", names)
	}

	got := runFencefs(t, base, "", nil, "checkpoints", "--mount", "ws=local:"+filepath.Join(base, "tenants", "t1"), "local:"+filepath.Join(base, "ckpt", "t1"), "list")
	if got.code != 0 || !strings.Contains(got.stdout, "restore to 0, 2 paths") || !strings.Contains(got.stdout, "turn-a\tedit ws/secret.txt") {
		t.Errorf("fencefs checkpoints list: %+v", got)
	}
}
