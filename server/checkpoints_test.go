package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/audit"
	"github.com/fencefs/fencefs/checkpoint"
	"github.com/fencefs/fencefs/mountspec"
	"github.com/fencefs/fencefs/overlay/overlayspec"
	"github.com/fencefs/fencefs/quota"
	"github.com/fencefs/fencefs/server"
	"github.com/fencefs/fencefs/tenant"
	"github.com/fencefs/fencefs/tools"
)

// caller sends the headers the checkpoint tests' authenticator trusts:
// the tenant, its scopes, and a turn when set.
type caller struct {
	tenant, scopes, turn string
}

func (c caller) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Tenant", c.tenant)
	r.Header.Set("X-Scopes", c.scopes)
	if c.turn != "" {
		r.Header.Set(server.TurnHeader, c.turn)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// headerIdentity trusts X-Tenant and X-Scopes.
var headerIdentity = server.AuthenticatorFunc(func(r *http.Request) (*tenant.Identity, error) {
	id, err := tenant.ParseID(r.Header.Get("X-Tenant"))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", server.ErrUnauthenticated, err)
	}
	return &tenant.Identity{Subject: "agent", Tenant: id, Scopes: strings.Fields(r.Header.Get("X-Scopes"))}, nil
})

// readWriteByHeader trusts X-Tenant, with read and write scopes.
var readWriteByHeader = server.AuthenticatorFunc(func(r *http.Request) (*tenant.Identity, error) {
	id, err := tenant.ParseID(r.Header.Get("X-Tenant"))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", server.ErrUnauthenticated, err)
	}
	return &tenant.Identity{Subject: "agent", Tenant: id, Scopes: []string{tenant.ScopeRead, tenant.ScopeWrite}}, nil
})

// tree reads every file and directory below dir: path -> content, or
// "/" for a directory.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			out[rel] = "/"
			return nil
		}
		data, err := os.ReadFile(p)
		out[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

type ckptEnv struct {
	dir   string
	url   string
	audit *syncBuffer
}

// ckptServer serves tenants over HTTP, each with the mount ws at
// dir/ws/<tenant> and a checkpoint journal at dir/ckpt/<tenant>,
// offering every tool and both checkpoint tools.
func ckptServer(t *testing.T, stateless bool, limits map[string]quota.Limits, cache int, opts ...checkpoint.Options) ckptEnv {
	t.Helper()
	e := ckptEnv{dir: t.TempDir(), audit: &syncBuffer{}}
	ws, _ := tenant.ParseTemplate("local:" + filepath.Join(e.dir, "ws", tenant.Placeholder))
	store, _ := tenant.ParseTemplate("local:" + filepath.Join(e.dir, "ckpt", tenant.Placeholder))
	for _, id := range []string{"t1", "t2", "t3"} {
		if err := os.MkdirAll(filepath.Join(e.dir, "ws", id), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	srv, err := server.New(t.Context(), server.Config{
		Namespace:    server.NamespaceConfig{Tools: tools.Options{Tools: tools.AllTools()}},
		TenantMounts: []server.TenantMount{{Name: "ws", Template: ws}},
		Checkpoints:  &server.Checkpoints{Store: store, List: true, Restore: true, Options: append(opts, checkpoint.Options{})[0]},
		Identity:     headerIdentity,
		Stateless:    stateless,
		Audit:        server.Audit{Log: audit.New(e.audit, audit.Genesis)},
		QuotaTenants: limits,
		TenantCache:  cache,
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		hs.Close()
		srv.Close()
	})
	e.url = hs.URL + "/mcp"
	return e
}

// session connects to e as c.
func (e ckptEnv) session(t *testing.T, c caller) *mcp.ClientSession {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: e.url, HTTPClient: &http.Client{Transport: c}, MaxRetries: -1}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// callTool calls name with args under the _meta turn (none when empty)
// and returns its text and whether it is an error.
func callTool(t *testing.T, cs *mcp.ClientSession, turn, name string, args map[string]any) (string, bool) {
	t.Helper()
	p := &mcp.CallToolParams{Name: name, Arguments: args}
	if turn != "" {
		p.Meta = mcp.Meta{server.MetaTurn: turn}
	}
	res, err := cs.CallTool(t.Context(), p)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res.Content[0].(*mcp.TextContent).Text, res.IsError
}

func mustCall(t *testing.T, cs *mcp.ClientSession, turn, name string, args map[string]any) string {
	t.Helper()
	out, isErr := callTool(t, cs, turn, name, args)
	if isErr {
		t.Fatalf("%s %v: %s", name, args, out)
	}
	return out
}

// TestTenantCheckpoints drives two tenants' agents through the server
// over HTTP with the MCP SDK client: many edits, writes, a delete, a
// move, an apply_patch in turns marked by _meta and by header, each
// tenant journaled in its own store. Restoring t1 to the start is
// refused over a file another writer changed, naming it; forced, it
// brings t1's tree back byte for byte, leaves t2's alone, writes an audit
// line naming the paths; restoring to just before the restore redoes
// the run. A caller with files:read only is offered list_checkpoints and
// not restore_checkpoint.
func TestTenantCheckpoints(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		t.Run(fmt.Sprintf("stateless=%v", stateless), func(t *testing.T) {
			e := ckptServer(t, stateless, nil, 0)
			rw := tenant.ScopeRead + " " + tenant.ScopeWrite
			seed := map[string]string{"main.go": "package main\n\nfunc main() {}\n", "lib/a.go": "package lib\n", "notes.txt": "notes\n"}
			for _, id := range []string{"t1", "t2"} {
				for p, c := range seed {
					if err := os.MkdirAll(filepath.Join(e.dir, "ws", id, filepath.Dir(p)), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join(e.dir, "ws", id, p), []byte(c), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			start1, start2 := tree(t, filepath.Join(e.dir, "ws", "t1")), tree(t, filepath.Join(e.dir, "ws", "t2"))

			t1 := e.session(t, caller{tenant: "t1", scopes: rw})
			t2 := e.session(t, caller{tenant: "t2", scopes: rw, turn: "h-1"})
			// t1's run: turn-1 by _meta.
			mustCall(t, t1, "turn-1", "write_file", map[string]any{"path": "/ws/log.txt", "content": "0\n"})
			for i := 1; i <= 12; i++ {
				mustCall(t, t1, "turn-1", "edit_file", map[string]any{"path": "/ws/log.txt", "old_text": fmt.Sprintf("%d\n", i-1), "new_text": fmt.Sprintf("%d\n", i)})
				// t2 edits its own tree meanwhile, in the turn its header
				// names.
				mustCall(t, t2, "", "write_file", map[string]any{"path": fmt.Sprintf("/ws/t2-%d.txt", i), "content": "t2\n"})
			}
			mustCall(t, t1, "turn-2", "edit_file", map[string]any{"path": "/ws/main.go", "old_text": "func main() {}", "new_text": "func main() { println() }"})
			mustCall(t, t1, "turn-2", "delete_file", map[string]any{"path": "/ws/notes.txt"})
			mustCall(t, t1, "turn-2", "move_file", map[string]any{"source": "/ws/lib/a.go", "destination": "/ws/lib/b.go"})
			mustCall(t, t1, "turn-2", "apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Update File: /ws/main.go\n@@\n-func main() { println() }\n+func main() { println(1) }\n*** Add File: /ws/made/new.txt\n+new\n*** End Patch\n"})
			mustCall(t, t1, "turn-2", "write_file", map[string]any{"path": "/ws/other.txt", "content": "mine\n"})
			end1 := tree(t, filepath.Join(e.dir, "ws", "t1"))

			list := mustCall(t, t1, "", "list_checkpoints", map[string]any{"limit": 100})
			if !strings.Contains(list, "[turn-1]  edit /ws/log.txt") || !strings.Contains(list, "[turn-2]  apply_patch") || strings.Contains(list, "t2-") {
				t.Errorf("t1's checkpoints:\n%s", list)
			}
			if l2 := mustCall(t, t2, "", "list_checkpoints", map[string]any{"label": "h-1", "limit": 100}); strings.Count(l2, "[h-1]  write /ws/t2-") != 12 || strings.Contains(l2, "log.txt") {
				t.Errorf("t2's checkpoints:\n%s", l2)
			}

			// Another writer changes a file t1's agent wrote.
			other := filepath.Join(e.dir, "ws", "t1", "other.txt")
			if err := os.WriteFile(other, []byte("someone else\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			out, isErr := callTool(t, t1, "", "restore_checkpoint", map[string]any{"checkpoint": 0})
			if !isErr || !strings.Contains(out, "refused") || !strings.Contains(out, "/ws/other.txt") {
				t.Fatalf("restore over a conflict: %v %q", isErr, out)
			}
			if got := tree(t, filepath.Join(e.dir, "ws", "t1")); got["main.go"] != end1["main.go"] {
				t.Fatalf("a refused restore changed main.go: %q", got["main.go"])
			}
			out = mustCall(t, t1, "", "restore_checkpoint", map[string]any{"checkpoint": 0, "force": true})
			if !strings.Contains(out, "Overwrote changes by someone else to: /ws/other.txt.") {
				t.Errorf("forced restore: %q", out)
			}
			if got := tree(t, filepath.Join(e.dir, "ws", "t1")); !maps.Equal(got, start1) {
				t.Errorf("t1 after the restore:\n%q\nwant\n%q", got, start1)
			}
			if got := tree(t, filepath.Join(e.dir, "ws", "t2")); len(got) != len(start2)+12 {
				t.Errorf("t2 after t1's restore: %q", got)
			}
			// The audit line of the restore names the tenant and paths.
			var line audit.Record
			for l := range strings.Lines(e.audit.String()) {
				var r audit.Record
				if json.Unmarshal([]byte(l), &r) == nil && r.Tool == tenant.ToolRestoreCheckpoint && r.Outcome == audit.OutcomeOK {
					line = r
				}
			}
			if line.Tenant != "t1" || !slices.Contains(line.Paths, "/ws/log.txt") || !slices.Contains(line.Paths, "/ws/notes.txt") {
				t.Errorf("the restore's audit line: %+v", line)
			}
			// Its pending line came first, with the same paths.
			var pending audit.Record
			for l := range strings.Lines(e.audit.String()) {
				var r audit.Record
				if json.Unmarshal([]byte(l), &r) == nil && r.Tool == tenant.ToolRestoreCheckpoint {
					if r.Outcome == audit.OutcomeOK {
						break
					}
					pending = r
				}
			}
			if pending.Outcome != audit.OutcomePending || pending.Tenant != "t1" || len(pending.Paths) != len(line.Paths) {
				t.Errorf("the restore's pending line: %+v", pending)
			}

			// Redo: restore to the checkpoint before the restore.
			var seq uint64
			fmt.Sscanf(out[strings.Index(out, "This restore is checkpoint "):], "This restore is checkpoint %d", &seq)
			mustCall(t, t1, "", "restore_checkpoint", map[string]any{"checkpoint": seq - 1})
			end1["other.txt"] = "someone else\n" // the forced restore took the other writer's content
			if got := tree(t, filepath.Join(e.dir, "ws", "t1")); !maps.Equal(got, end1) {
				t.Errorf("t1 after the redo:\n%q\nwant\n%q", got, end1)
			}

			// Each tenant's store is its own, outside its namespace.
			for _, id := range []string{"t1", "t2"} {
				if recs, err := os.ReadDir(filepath.Join(e.dir, "ckpt", id, "journal")); err != nil || len(recs) < 12 {
					t.Errorf("%s's journal: %d records, %v", id, len(recs), err)
				}
			}

			// files:read offers list_checkpoints, not restore_checkpoint.
			ro := e.session(t, caller{tenant: "t1", scopes: tenant.ScopeRead})
			res, err := ro.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range res.Tools {
				names = append(names, tool.Name)
			}
			if !slices.Contains(names, tenant.ToolListCheckpoints) || slices.Contains(names, tenant.ToolRestoreCheckpoint) {
				t.Errorf("tools of files:read: %q", names)
			}
			if res, err := ro.CallTool(t.Context(), &mcp.CallToolParams{Name: tenant.ToolRestoreCheckpoint, Arguments: map[string]any{"checkpoint": 0}}); err == nil && !res.IsError {
				t.Errorf("restore_checkpoint with files:read: %+v", res)
			}
		})
	}
}

// TestTenantCheckpointsQuota: the store's bytes count against the
// tenant's quota: a change whose pre-image would not fit is refused,
// naming the quota, and the file keeps its content.
func TestTenantCheckpointsQuota(t *testing.T) {
	e := ckptServer(t, true, map[string]quota.Limits{"t3": {MaxBytes: 3000}}, 0)
	cs := e.session(t, caller{tenant: "t3", scopes: tenant.ScopeRead + " " + tenant.ScopeWrite})
	big := strings.Repeat("x", 1500) + "\n"
	mustCall(t, cs, "", "write_file", map[string]any{"path": "/ws/a.txt", "content": big})
	out, isErr := callTool(t, cs, "", "edit_file", map[string]any{"path": "/ws/a.txt", "old_text": "x\n", "new_text": "y\n"})
	if !isErr || !strings.Contains(out, "checkpoint does not fit in the quota") || !strings.Contains(out, quota.LimitBytes) {
		t.Errorf("an edit whose checkpoint is over the quota: %v %q", isErr, out)
	}
	if data, _ := os.ReadFile(filepath.Join(e.dir, "ws", "t3", "a.txt")); string(data) != big {
		t.Errorf("a.txt after the refused edit: %d bytes", len(data))
	}
	// A tenant at its quota can still delete: the pre-image moves from
	// the namespace to the store, and the delete is journaled.
	mustCall(t, cs, "", "delete_file", map[string]any{"path": "/ws/a.txt"})
	if out := mustCall(t, cs, "", "list_checkpoints", nil); !strings.Contains(out, "delete /ws/a.txt") {
		t.Errorf("the delete is not journaled:\n%s", out)
	}
	// Undoing it would grow the tenant (the store keeps the pre-image for
	// a redo) past its quota: refused, nothing changed. The usage is
	// scanned again after the delete (the journal's bytes included);
	// a scan while the journal records must not wait on it.
	out, isErr = callTool(t, cs, "", "restore_checkpoint", map[string]any{"checkpoint": 1})
	if !isErr || !strings.Contains(out, "does not fit in the quota") {
		t.Errorf("restoring the delete over the quota: %v %q", isErr, out)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "ws", "t3", "a.txt")); !os.IsNotExist(err) {
		t.Errorf("a.txt after the refused restore: %v", err)
	}
}

// TestCheckpointStoreDisjoint: a store the tools of some tenant could
// reach is refused when the server starts, naming the mount.
func TestCheckpointStoreDisjoint(t *testing.T) {
	dir := t.TempDir()
	ws, _ := tenant.ParseTemplate("local:" + filepath.Join(dir, "ws", tenant.Placeholder))
	for _, tc := range []struct{ store, want string }{
		{filepath.Join(dir, "ws", tenant.Placeholder, ".ckpt"), "lies inside or around mount ws"},
		{filepath.Join(dir, "ws", tenant.Placeholder), "lies inside or around mount ws"},
		{filepath.Join(dir, tenant.Placeholder), "reach the same storage"},
		{filepath.Join(dir, "ckpt"), "must name the tenant"},
		{"ckpt/" + tenant.Placeholder, "relative"},
	} {
		store, err := tenant.ParseTemplate("local:" + tc.store)
		if err != nil {
			t.Fatal(err)
		}
		_, err = server.New(t.Context(), server.Config{
			TenantMounts: []server.TenantMount{{Name: "ws", Template: ws}},
			Checkpoints:  &server.Checkpoints{Store: store},
			Identity:     headerIdentity,
		})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("store %s: %v, want %q", tc.store, err, tc.want)
		}
	}
	// S3: the bucket is the authority, the prefix the path.
	s3ws, _ := tenant.ParseTemplate("s3://bucket/ws/" + tenant.Placeholder + "?region=eu-west-1")
	for _, tc := range []struct {
		store string
		ok    bool
	}{
		{"s3://bucket/ws/" + tenant.Placeholder + "/ckpt?region=eu-west-1", false},
		{"s3://bucket/ckpt/" + tenant.Placeholder + "?region=eu-west-1", true},
		{"s3://other/ws/" + tenant.Placeholder + "?region=eu-west-1", true},
	} {
		store, err := tenant.ParseTemplate(tc.store)
		if err != nil {
			t.Fatal(err)
		}
		srv, err := server.New(t.Context(), server.Config{
			TenantMounts: []server.TenantMount{{Name: "ws", Template: s3ws}},
			Checkpoints:  &server.Checkpoints{Store: store},
			Identity:     headerIdentity,
		})
		if err == nil {
			srv.Close()
		}
		if (err == nil) != tc.ok {
			t.Errorf("store %s: %v, want ok %v", tc.store, err, tc.ok)
		}
	}
	// An overlay mount is compared by its layers: a store beside both is
	// served, one inside the upper layer or the base is refused.
	ss := mountspec.Schemes{}
	ss[overlayspec.Prefix] = overlayspec.New(mountspec.Options{Schemes: ss})
	ov, _ := tenant.ParseTemplate("overlay:local:" + filepath.Join(dir, "base") + ":ro+local:" + filepath.Join(dir, "up", tenant.Placeholder))
	if err := os.MkdirAll(filepath.Join(dir, "base"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ store, want string }{
		{filepath.Join(dir, "ckpt", tenant.Placeholder), ""},
		{filepath.Join(dir, "up", tenant.Placeholder, ".ckpt"), "lies inside or around mount ws (layer 2 of 2)"},
		{filepath.Join(dir, "base", "ckpt", tenant.Placeholder), "ws (layer 1 of 2)"},
	} {
		store, _ := tenant.ParseTemplate("local:" + tc.store)
		srv, err := server.New(t.Context(), server.Config{
			TenantMounts: []server.TenantMount{{Name: "ws", Template: ov}},
			Schemes:      ss,
			Checkpoints:  &server.Checkpoints{Store: store},
			Identity:     headerIdentity,
		})
		if err == nil {
			srv.Close()
		}
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("store %s beside an overlay mount: %v, want %q", tc.store, err, tc.want)
		}
	}
	// A store made of layers names no one place: refused.
	layered, _ := tenant.ParseTemplate("overlay:local:" + filepath.Join(dir, "base") + ":ro+local:" + filepath.Join(dir, "ckpt2", tenant.Placeholder))
	if _, err := server.New(t.Context(), server.Config{
		TenantMounts: []server.TenantMount{{Name: "ws", Template: ws}},
		Schemes:      ss,
		Checkpoints:  &server.Checkpoints{Store: layered},
		Identity:     headerIdentity,
	}); err == nil || !strings.Contains(err.Error(), "is made of layers") {
		t.Errorf("a layered store: %v", err)
	}
	// The one namespace: a store inside its root.
	root := t.TempDir()
	store, _ := tenant.ParseTemplate("local:" + filepath.Join(root, "sub", ".ckpt"))
	_, err := server.New(t.Context(), server.Config{Namespace: server.NamespaceConfig{Root: root}, Checkpoints: &server.Checkpoints{Store: store}})
	if err == nil || !strings.Contains(err.Error(), "lies inside or around mount root") {
		t.Errorf("a store inside the root: %v", err)
	}
}

// TestTenantCheckpointsEviction: a tenant's journal is closed with its
// namespace when the cache evicts it, its last after-states saved, so
// that once opened again a restore to the start finds no conflict.
func TestTenantCheckpointsEviction(t *testing.T) {
	e := ckptServer(t, true, nil, 1)
	rw := tenant.ScopeRead + " " + tenant.ScopeWrite
	t1, t2 := e.session(t, caller{tenant: "t1", scopes: rw}), e.session(t, caller{tenant: "t2", scopes: rw})
	for i := range 3 {
		// Each call of one evicts the other's namespace.
		mustCall(t, t1, "", "write_file", map[string]any{"path": fmt.Sprintf("/ws/%d.txt", i), "content": "t1\n"})
		mustCall(t, t2, "", "write_file", map[string]any{"path": fmt.Sprintf("/ws/%d.txt", i), "content": "t2\n"})
	}
	out := mustCall(t, t1, "", "restore_checkpoint", map[string]any{"checkpoint": 0})
	if !strings.HasPrefix(out, "Restored 3 paths to checkpoint 0") {
		t.Errorf("t1's restore: %q", out)
	}
	if got := tree(t, filepath.Join(e.dir, "ws", "t1")); len(got) != 0 {
		t.Errorf("t1 after the restore: %q", got)
	}
	if got := tree(t, filepath.Join(e.dir, "ws", "t2")); len(got) != 3 {
		t.Errorf("t2 after t1's restore: %q", got)
	}
}

// TestTurnRefused: a turn that is not a string, or too long, or not
// printable, refuses the call naming where it came from, and nothing is
// written.
func TestTurnRefused(t *testing.T) {
	e := ckptServer(t, true, nil, 0)
	rw := tenant.ScopeRead + " " + tenant.ScopeWrite
	cs := e.session(t, caller{tenant: "t1", scopes: rw})
	for _, turn := range []any{5, strings.Repeat("t", server.MaxTurnBytes+1), "a\nb"} {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": "/ws/a.txt", "content": "x"}, Meta: mcp.Meta{server.MetaTurn: turn}})
		if err != nil {
			t.Fatal(err)
		}
		if text := res.Content[0].(*mcp.TextContent).Text; !res.IsError || !strings.HasPrefix(text, "_meta "+server.MetaTurn+": a turn is") {
			t.Errorf("turn %q: %v %q", turn, res.IsError, text)
		}
	}
	hdr := e.session(t, caller{tenant: "t1", scopes: rw, turn: strings.Repeat("h", server.MaxTurnBytes+1)})
	if out, isErr := callTool(t, hdr, "", "write_file", map[string]any{"path": "/ws/a.txt", "content": "x"}); !isErr || !strings.HasPrefix(out, "header "+server.TurnHeader+": a turn is") {
		t.Errorf("a long header turn: %v %q", isErr, out)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "ws", "t1", "a.txt")); !os.IsNotExist(err) {
		t.Errorf("a.txt after refused calls: %v", err)
	}
}

// TestTenantCheckpointsRetention: a journal bounded to its last 3
// changes drops the older ones at a new turn, and again when it opens.
func TestTenantCheckpointsRetention(t *testing.T) {
	e := ckptServer(t, true, nil, 1, checkpoint.Options{KeepCount: 3})
	rw := tenant.ScopeRead + " " + tenant.ScopeWrite
	t1 := e.session(t, caller{tenant: "t1", scopes: rw})
	for i := range 6 {
		mustCall(t, t1, "turn-1", "write_file", map[string]any{"path": fmt.Sprintf("/ws/%d.txt", i), "content": "x"})
	}
	mustCall(t, t1, "turn-2", "write_file", map[string]any{"path": "/ws/last.txt", "content": "x"})
	out := mustCall(t, t1, "", "list_checkpoints", map[string]any{"limit": 100})
	if strings.Contains(out, "/ws/0.txt") || !strings.Contains(out, "/ws/last.txt") || strings.Contains(out, "The oldest checkpoint kept is 0.") {
		t.Errorf("after a new turn:\n%s", out)
	}
	// A restore to a dropped checkpoint is refused.
	if out, isErr := callTool(t, t1, "", "restore_checkpoint", map[string]any{"checkpoint": 0}); !isErr || !strings.Contains(out, "is no longer kept") {
		t.Errorf("restore to a dropped checkpoint: %v %q", isErr, out)
	}
	// More changes in the same turn, then the cache evicts t1 and the
	// journal is bounded again when it opens.
	for i := range 4 {
		mustCall(t, t1, "turn-2", "write_file", map[string]any{"path": fmt.Sprintf("/ws/more-%d.txt", i), "content": "x"})
	}
	mustCall(t, e.session(t, caller{tenant: "t2", scopes: rw}), "", "write_file", map[string]any{"path": "/ws/t2.txt", "content": "x"})
	out = mustCall(t, t1, "", "list_checkpoints", map[string]any{"limit": 100})
	if n := strings.Count(out, "write /ws/"); n != 3 || !strings.Contains(out, "/ws/more-3.txt") {
		t.Errorf("after the journal opened again (%d changes):\n%s", n, out)
	}
}

// TestRestoreNotifiesSubscribers: a session subscribed to a file hears
// of a restore that brings the file back, as it hears of a tool's change.
func TestRestoreNotifiesSubscribers(t *testing.T) {
	e := ckptServer(t, false, nil, 0)
	rw := tenant.ScopeRead + " " + tenant.ScopeWrite
	w := e.session(t, caller{tenant: "t1", scopes: rw})
	mustCall(t, w, "", "write_file", map[string]any{"path": "/ws/a.txt", "content": "one\n"})
	heard := make(chan string, 8)
	tr := &mcp.StreamableClientTransport{Endpoint: e.url, HTTPClient: &http.Client{Transport: caller{tenant: "t1", scopes: rw}}, MaxRetries: -1}
	listener, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { heard <- req.Params.URI },
	}).Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { listener.Close() })
	if err := listener.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "fencefs:///ws/a.txt"}); err != nil {
		t.Fatal(err)
	}
	mustCall(t, w, "", "write_file", map[string]any{"path": "/ws/a.txt", "content": "two\n"})
	if uri := <-heard; uri != "fencefs:///ws/a.txt" {
		t.Fatalf("after the write heard %q", uri)
	}
	mustCall(t, w, "", "restore_checkpoint", map[string]any{"checkpoint": 1})
	if data, err := os.ReadFile(filepath.Join(e.dir, "ws", "t1", "a.txt")); err != nil || string(data) != "one\n" {
		t.Fatalf("a.txt after the restore: %q, %v", data, err)
	}
	select {
	case uri := <-heard:
		if uri != "fencefs:///ws/a.txt" {
			t.Errorf("after the restore heard %q", uri)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no update for the restored file")
	}
}
