package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/audit"
	"github.com/fencefs/fencefs/server"
	"github.com/fencefs/fencefs/tools"
)

// TestAuditOutcomes: the audit line says how a call really ended, from the
// kind of the tool's error, not from the MCP result's isError alone: a
// refusal is refused with its kind, a call that ran out of its deadline timed out, and
// only a call that did what it was asked counts the
// bytes it wrote.
func TestAuditOutcomes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		path    string
		outcome string
		kind    tools.Kind
		reason  string
		bytes   int64
	}{
		{"ok", 0, "a.txt", audit.OutcomeOK, "", "", 3},
		{"refused", 0, "secret.txt", audit.OutcomeRefused, tools.KindDenied, "denied", 0},
		{"timed out", time.Nanosecond, "b.txt", audit.OutcomeTimedOut, tools.KindTimeout, "did not finish", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			var buf bytes.Buffer
			srv, err := server.New(ctx, server.Config{
				Namespace: server.NamespaceConfig{Root: t.TempDir(), Tools: tools.Options{Denied: []string{"secret*"}, CallTimeout: tc.timeout}},
				Audit:     server.Audit{Log: audit.New(&buf, audit.Genesis)},
				Stateless: true,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			hs := httptest.NewServer(srv.Handler())
			defer hs.Close()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": tc.path, "content": "abc"}}); err != nil {
				t.Fatal(err)
			}
			// The line of how the call ended is the last; a change that
			// commits has its pending line, appended before, just above.
			lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
			var rec, pending audit.Record
			if err := json.Unmarshal(lines[len(lines)-1], &rec); err != nil {
				t.Fatalf("the audit line %q: %v", buf.String(), err)
			}
			if tc.outcome == audit.OutcomeOK {
				if len(lines) != 2 || json.Unmarshal(lines[0], &pending) != nil || pending.Outcome != audit.OutcomePending || pending.RequestID != rec.RequestID {
					t.Errorf("the change's write-ahead line is missing: %q", buf.String())
				}
			}
			if rec.Outcome != tc.outcome || rec.Kind != string(tc.kind) || !strings.Contains(strings.ToLower(rec.Reason), tc.reason) || rec.Bytes != tc.bytes {
				t.Errorf("audit line %+v, want outcome %s, kind %q, reason with %q, %d bytes", rec, tc.outcome, tc.kind, tc.reason, tc.bytes)
			}
		})
	}
}

// TestAuditHugeArgument: a refused call whose argument is longer than
// an audit line once escaped (a path of 300 KiB of characters JSON
// escapes six times over: 1.8 MiB, over the 1 MiB line) still leaves its
// line, with the path summarized by length and hash, and the log
// verifies.
func TestAuditHugeArgument(t *testing.T) {
	ctx := context.Background()
	var buf bytes.Buffer
	srv, err := server.New(ctx, server.Config{
		Namespace: server.NamespaceConfig{Root: t.TempDir()},
		Audit:     server.Audit{Log: audit.New(&buf, audit.Genesis)},
		Stateless: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	huge := strings.Repeat("\x01", 300<<10) // 1.8 MiB escaped, over a line
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": huge, "content": "abc"}})
	if err != nil || !res.IsError {
		t.Fatalf("a 300 KiB path: %v, %+v", err, res)
	}
	var rec audit.Record
	if err := json.Unmarshal(bytes.TrimSpace(buf.Bytes()), &rec); err != nil {
		t.Fatalf("no audit line for the refused call (%d bytes logged): %v", buf.Len(), err)
	}
	if rec.Outcome != audit.OutcomeRefused || len(rec.Paths) != 1 || !strings.Contains(rec.Paths[0], "summarized: 307200 bytes") {
		t.Errorf("audit line %.300q", buf.String())
	}
	if _, err := audit.Verify(bytes.NewReader(buf.Bytes())); err != nil {
		t.Errorf("the log does not verify: %v", err)
	}
}
