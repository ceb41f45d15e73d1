package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SEP-2640 methods as a client sends them.
type skillsListParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

type skillsListResult struct {
	mcp.ResultBase
	Skills []struct {
		URI string `json:"uri"`
	} `json:"skills"`
	NextCursor string `json:"nextCursor,omitempty"`
}

type skillsGetParams struct {
	mcp.ParamsBase
	URI string `json:"uri"`
}

type skillsGetResult struct {
	mcp.ResultBase
	Skill struct {
		Frontmatter map[string]any      `json:"frontmatter"`
		Resources   []map[string]string `json:"resources"`
	} `json:"skill"`
}

const demoSkill = "---\nname: demo\ndescription: Shows the way.\n---\nRead notes.md.\n"

// mcpFixture is a root with a file to change, a denied directory and a
// skill.
func mcpFixture(t *testing.T) fixture {
	t.Helper()
	f := newFixture(t)
	writeFile(t, filepath.Join(f.root, "secret", "k.txt"), "the key\n")
	writeFile(t, filepath.Join(f.root, "skills", "demo", "SKILL.md"), demoSkill)
	writeFile(t, filepath.Join(f.root, "skills", "demo", "notes.md"), "the notes\n")
	return f
}

// host is an MCP client whose user accepts a change when its approval
// message says accept does, and declines every other; it records what it
// was shown and the updates it was sent.
type host struct {
	accept  func(message string) bool
	shown   chan string
	updated chan string
}

func newHost(accept func(string) bool) *host {
	return &host{accept: accept, shown: make(chan string, 16), updated: make(chan string, 16)}
}

// next returns the next approval message the user was shown.
func (h *host) next(t *testing.T) string {
	t.Helper()
	select {
	case m := <-h.shown:
		return m
	case <-time.After(exitDeadline):
		t.Fatalf("the user was asked nothing within %v", exitDeadline)
		return ""
	}
}

func (h *host) client(t *testing.T, elicit bool) *mcp.Client {
	t.Helper()
	opts := &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
		h.updated <- req.Params.URI
	}}
	if elicit {
		opts.ElicitationHandler = func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			h.shown <- req.Params.Message
			if h.accept(req.Params.Message) {
				return &mcp.ElicitResult{Action: "accept"}, nil
			}
			return &mcp.ElicitResult{Action: "decline"}, nil
		}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "fencefs-e2e-host", Version: "1"}, opts)
	if err := mcp.AddSendingCustomMethod[*skillsListParams, *skillsListResult](c, "skills/list"); err != nil {
		t.Fatal(err)
	}
	if err := mcp.AddSendingCustomMethod[*skillsGetParams, *skillsGetResult](c, "skills/get"); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestServeMCPHost drives `fencefs serve --approve changes` with the
// official SDK client, over stdio (latest and 2025-11-25 protocols) and
// streamable HTTP (stateful and stateless): an approved write happens and
// a declined one leaves the file as it was, a client without elicitation
// changes nothing, files and a denied file through resources/read, the
// skills through skills/list and skills/get, and a subscribed session is
// told of the write.
func TestServeMCPHost(t *testing.T) {
	tests := []struct {
		name      string
		transport string // stdio or http
		args      []string
		version   string
		// subscribe: the transport carries server notifications.
		subscribe bool
	}{
		{name: "stdio", transport: "stdio", subscribe: true},
		{name: "stdio 2025-11-25", transport: "stdio", version: "2025-11-25", subscribe: true},
		{name: "http stateful", transport: "http", args: []string{"--stateful"}, subscribe: true},
		{name: "http stateless", transport: "http"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := mcpFixture(t)
			ctx := t.Context()
			args := append([]string{"--root", f.root, "--approve", "changes", "--deny", "secret", "--skills", "skills", "--log-level", "debug"}, tt.args...)
			h := newHost(func(msg string) bool {
				return strings.HasPrefix(msg, "Allow writing a.txt?") && strings.Contains(msg, "+accepted")
			})
			var stderr func() string
			var connect func(c *mcp.Client) *mcp.ClientSession
			switch tt.transport {
			case "stdio":
				cmd := exec.Command(binary, append([]string{"serve"}, args...)...)
				buf := &syncBuffer{}
				cmd.Stderr = buf
				stderr = buf.String
				started := false
				connect = func(c *mcp.Client) *mcp.ClientSession {
					t.Helper()
					if started {
						t.Fatal("a stdio server has one session")
					}
					started = true
					cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * exitDeadline}, &mcp.ClientSessionOptions{ProtocolVersion: tt.version})
					if err != nil {
						t.Fatalf("connect: %v\nstderr:\n%s", err, buf.String())
					}
					t.Cleanup(func() { cs.Close() })
					return cs
				}
			case "http":
				srv := startServe(t, append([]string{"serve", "--http", "127.0.0.1:0"}, args...)...)
				stderr = srv.stderr.String
				connect = func(c *mcp.Client) *mcp.ClientSession {
					t.Helper()
					cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.url}, &mcp.ClientSessionOptions{ProtocolVersion: tt.version})
					if err != nil {
						t.Fatalf("connect: %v\nstderr:\n%s", err, srv.stderr.String())
					}
					t.Cleanup(func() { cs.Close() })
					return cs
				}
			}
			cs := connect(h.client(t, true))
			if tt.version != "" && cs.InitializeResult().ProtocolVersion != tt.version {
				t.Fatalf("negotiated %s, want %s", cs.InitializeResult().ProtocolVersion, tt.version)
			}
			// The watcher is another session where there can be one.
			watcher, watch := cs, h
			if tt.transport == "http" {
				watch = newHost(func(string) bool { return false })
				watcher = connect(watch.client(t, false))
			}
			if tt.subscribe {
				if err := watcher.Subscribe(ctx, &mcp.SubscribeParams{URI: "fencefs:///a.txt"}); err != nil {
					t.Fatalf("subscribe: %v", err)
				}
			}

			// Resources: a file, and a denied one.
			res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "fencefs:///a.txt"})
			if err != nil || len(res.Contents) != 1 || res.Contents[0].Text != "hello\nworld\n" || !strings.HasPrefix(res.Contents[0].MIMEType, "text/plain") {
				t.Fatalf("resources/read a.txt: %+v, %v", res, err)
			}
			var werr *jsonrpc.Error
			if res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "fencefs:///secret/k.txt"}); err == nil {
				t.Errorf("resources/read of a denied file gave %+v", res.Contents)
			} else if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams || strings.Contains(werr.Message, "the key") {
				t.Errorf("resources/read of a denied file: %v", err)
			}

			// Skills as SEP-2640 resources.
			list, err := mcp.CallCustomMethod[*skillsListParams, *skillsListResult](ctx, cs, "skills/list", &skillsListParams{})
			if err != nil || len(list.Skills) != 1 || list.Skills[0].URI != "skill://demo/SKILL.md" {
				t.Fatalf("skills/list: %+v, %v", list, err)
			}
			got, err := mcp.CallCustomMethod[*skillsGetParams, *skillsGetResult](ctx, cs, "skills/get", &skillsGetParams{URI: "skill://demo/SKILL.md"})
			if err != nil {
				t.Fatalf("skills/get: %v", err)
			}
			digests := map[string]string{}
			for _, r := range got.Skill.Resources {
				digests[r["uri"]] = r["digest"]
			}
			if got.Skill.Frontmatter["name"] != "demo" || digests["skill://demo/SKILL.md"] != sha256Digest(demoSkill) || digests["skill://demo/notes.md"] != sha256Digest("the notes\n") {
				t.Errorf("skills/get: %+v", got.Skill)
			}

			// An approved write, with the diff shown to the user.
			text := callOK(t, ctx, cs, "write_file", map[string]any{"path": "a.txt", "content": "accepted\n"})
			if !strings.HasPrefix(text, "Wrote 9 chars (1 line) to a.txt.") {
				t.Errorf("approved write: %q", text)
			}
			if shown := h.next(t); !strings.Contains(shown, "-hello") || !strings.Contains(shown, "+accepted") {
				t.Errorf("the user was shown %q", shown)
			}
			if got := readFile(t, filepath.Join(f.root, "a.txt")); got != "accepted\n" {
				t.Fatalf("a.txt holds %q after an approved write", got)
			}
			if tt.subscribe {
				select {
				case uri := <-watch.updated:
					if uri != "fencefs:///a.txt" {
						t.Errorf("updated %s", uri)
					}
				case <-time.After(exitDeadline):
					t.Fatalf("the subscribed session was not told of the write within %v\nstderr:\n%s", exitDeadline, stderr())
				}
			}

			// A declined write, and one from a client that cannot ask.
			before := snapshot(t, f.root)
			text = callOK(t, ctx, cs, "write_file", map[string]any{"path": "a.txt", "content": "declined\n"})
			if text != "['a.txt' was not written: the user declined the change]" {
				t.Errorf("declined write: %q", text)
			}
			h.next(t)
			if watcher != cs {
				text := callRefused(t, ctx, watcher, "write_file", map[string]any{"path": "a.txt", "content": "unasked\n"})
				if !strings.Contains(text, "does not support MCP elicitation") {
					t.Errorf("a change from a client without elicitation: %q", text)
				}
			}
			assertSnapshot(t, f.root, before)
		})
	}
}

func sha256Digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// assertSnapshot fails unless dir is as before.
func assertSnapshot(t *testing.T, dir string, before map[string]string) {
	t.Helper()
	after := snapshot(t, dir)
	for p, v := range before {
		if after[p] != v {
			t.Errorf("%s changed: %q", p, after[p])
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s appeared", p)
		}
	}
}
