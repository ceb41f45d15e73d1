//go:build !fencefs_oneshot

package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
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
		Frontmatter map[string]any `json:"frontmatter"`
		Resources   []struct {
			URI    string `json:"uri"`
			Digest string `json:"digest"`
			Size   int64  `json:"size"`
		} `json:"resources"`
	} `json:"skill"`
}

type dirReadParams struct {
	mcp.ParamsBase
	URI string `json:"uri"`
}

type dirReadResult struct {
	mcp.ResultBase
	Resources []*mcp.Resource `json:"resources"`
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
	if err := mcp.AddSendingCustomMethod[*dirReadParams, *dirReadResult](c, "resources/directory/read"); err != nil {
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
			auditFile := filepath.Join(t.TempDir(), "audit.jsonl")
			args := append([]string{"--root", f.root, "--approve", "changes", "--deny", "secret", "--skills", "skills", "--log-level", "debug", "--audit", auditFile}, tt.args...)
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
				digests[r.URI] = r.Digest
			}
			if got.Skill.Frontmatter["name"] != "demo" || digests["skill://demo/SKILL.md"] != sha256Digest(demoSkill) || digests["skill://demo/notes.md"] != sha256Digest("the notes\n") {
				t.Errorf("skills/get: %+v", got.Skill)
			}

			dir, err := mcp.CallCustomMethod[*dirReadParams, *dirReadResult](ctx, cs, "resources/directory/read", &dirReadParams{URI: "skill://demo"})
			if err != nil || len(dir.Resources) != 2 || dir.Resources[0].URI != "skill://demo/SKILL.md" || dir.Resources[1].URI != "skill://demo/notes.md" {
				t.Errorf("resources/directory/read skill://demo: %+v, %v", dir, err)
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
			// The audit log has a line per answered call, none for the
			// round that asked, and tells the declined change apart; the
			// accepted change has its write-ahead line before it.
			want := []string{"write_file pending ", "write_file ok ", "write_file refused the user declined the change"}
			if watcher != cs {
				text := callRefused(t, ctx, watcher, "write_file", map[string]any{"path": "a.txt", "content": "unasked\n"})
				if !strings.Contains(text, "does not support MCP elicitation") {
					t.Errorf("a change from a client without elicitation: %q", text)
				}
				want = append(want, "write_file refused "+text)
			}
			assertSnapshot(t, f.root, before)
			var logged []string
			for _, line := range strings.Split(strings.TrimSpace(readFile(t, auditFile)), "\n") {
				var rec struct{ Tool, Outcome, Reason string }
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatalf("audit line %q: %v", line, err)
				}
				logged = append(logged, rec.Tool+" "+rec.Outcome+" "+rec.Reason)
			}
			if strings.Join(logged, "\n") != strings.Join(want, "\n") {
				t.Errorf("audit log:\n%s\nwant:\n%s", strings.Join(logged, "\n"), strings.Join(want, "\n"))
			}
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

// TestServeMCPHostMore drives the rest of what `fencefs serve` offers a
// host, over stdio: a dismissed approval and one answered after the file
// changed leave the file as it is; a skill added on storage is found by
// --skills-refresh and announced; path completion; a walk's progress
// counts its entries; a search's structured content.
func TestServeMCPHostMore(t *testing.T) {
	t.Parallel()
	f := mcpFixture(t)
	ctx := t.Context()
	cmd := exec.Command(binary, "serve", "--root", f.root, "--tools", allTools(), "--approve", "changes", "--skills", "skills", "--skills-refresh", "100ms")
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	changed := make(chan string, 16)
	progress := make(chan *mcp.ProgressNotificationParams, 64)
	// answer is what the user does with the next approval.
	answer := make(chan func() string, 1)
	c := mcp.NewClient(&mcp.Implementation{Name: "fencefs-e2e-host", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: (<-answer)()}, nil
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { changed <- "resources" },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { changed <- "prompts" },
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			progress <- req.Params
		},
	})
	if err := mcp.AddSendingCustomMethod[*skillsListParams, *skillsListResult](c, "skills/list"); err != nil {
		t.Fatal(err)
	}
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * exitDeadline}, nil)
	if err != nil {
		t.Fatalf("connect: %v\nstderr:\n%s", err, stderr.String())
	}
	t.Cleanup(func() { cs.Close() })

	// Approvals the user does not accept.
	a := filepath.Join(f.root, "a.txt")
	for _, tt := range []struct {
		name, want, file string
		answer           func() string
	}{
		{"dismissed", "['a.txt' was not written: the user dismissed the approval without accepting]", "hello\nworld\n", func() string { return "cancel" }},
		{"changed while the user looked", "['a.txt' was not written: the file changed while the user was looking at the change, so the answer is not for this change. Re-read the file and retry]", "theirs\n",
			func() string { writeFile(t, a, "theirs\n"); return "accept" }},
	} {
		answer <- tt.answer
		if text := callOK(t, ctx, cs, "write_file", map[string]any{"path": "a.txt", "content": "mine\n"}); text != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, text, tt.want)
		}
		if got := readFile(t, a); got != tt.file {
			t.Errorf("%s: a.txt holds %q, want %q", tt.name, got, tt.file)
		}
	}

	// A skill added on storage.
	writeFile(t, filepath.Join(f.root, "skills", "extra", "SKILL.md"), "---\nname: extra\ndescription: Added later.\n---\nBody.\n")
	heard := map[string]bool{}
	for !heard["resources"] || !heard["prompts"] {
		select {
		case what := <-changed:
			heard[what] = true
		case <-time.After(exitDeadline):
			t.Fatalf("heard %v within %v of a new skill, want the resource and prompt lists changed\nstderr:\n%s", heard, exitDeadline, stderr.String())
		}
	}
	list, err := mcp.CallCustomMethod[*skillsListParams, *skillsListResult](ctx, cs, "skills/list", &skillsListParams{})
	if err != nil || len(list.Skills) != 2 || list.Skills[1].URI != "skill://extra/SKILL.md" {
		t.Errorf("skills/list after the new skill: %+v, %v", list, err)
	}

	// Completion of a resource path.
	comp, err := cs.Complete(ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: "fencefs:///{+path}"},
		Argument: mcp.CompleteParamsArgument{Name: "path", Value: "sk"},
	})
	if err != nil || strings.Join(comp.Completion.Values, ",") != "skills/" {
		t.Errorf("completion of sk: %+v, %v", comp, err)
	}

	// Progress of a walk, and its structured content. The walk visits
	// a.txt, secret/, skills/, sub/, secret/k.txt, the two skills'
	// directories and three files, and sub/b.go: 11 entries.
	params := &mcp.CallToolParams{Name: "find_files", Arguments: map[string]any{"pattern": "**/*.md"}}
	params.SetProgressToken("walk")
	res, err := cs.CallTool(ctx, params)
	if err != nil || res.IsError {
		t.Fatalf("find_files: %+v, %v", res, err)
	}
	var found struct {
		Paths []string `json:"paths"`
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &found); err != nil || strings.Join(found.Paths, ",") != "skills/demo/SKILL.md,skills/demo/notes.md,skills/extra/SKILL.md" {
		t.Errorf("find_files structured content %s (%v)", raw, err)
	}
	for last := -1.0; last != 11; {
		select {
		case p := <-progress:
			if p.ProgressToken != "walk" || p.Progress <= last {
				t.Fatalf("progress %+v after %v", p, last)
			}
			last = p.Progress
		case <-time.After(exitDeadline):
			t.Fatalf("the last progress was %v, want the 11 entries walked", last)
		}
	}
}

// TestServeApprovalAcrossReplicas runs two stateless `fencefs serve
// --http --approve changes` replicas behind a proxy that sends the round
// carrying the user's answer to the replica that did not ask. With one
// --approval-key-file the answer stands and the user is asked once.
func TestServeApprovalAcrossReplicas(t *testing.T) {
	t.Parallel()
	f := mcpFixture(t)
	keyFile := filepath.Join(t.TempDir(), "approval.key")
	writeFile(t, keyFile, strings.Repeat("k", 64)+"\n")
	var replicas [2]*url.URL
	for i := range replicas {
		srv := startServe(t, "serve", "--http", "127.0.0.1:0", "--root", f.root, "--approve", "changes", "--approval-key-file", keyFile)
		u, err := url.Parse(srv.url)
		if err != nil {
			t.Fatal(err)
		}
		replicas[i] = u
	}
	proxy := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		body, _ := io.ReadAll(r.In.Body)
		r.Out.Body = io.NopCloser(bytes.NewReader(body))
		to := replicas[0]
		if bytes.Contains(body, []byte(`"inputResponses"`)) {
			to = replicas[1]
		}
		r.SetURL(to)
		r.Out.URL.Path = to.Path
	}})
	t.Cleanup(proxy.Close)
	h := newHost(func(string) bool { return true })
	cs, err := h.client(t, true).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: proxy.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if text := callOK(t, t.Context(), cs, "write_file", map[string]any{"path": "a.txt", "content": "accepted\n"}); !strings.HasPrefix(text, "Wrote 9 chars") {
		t.Errorf("write through two replicas: %q", text)
	}
	h.next(t)
	select {
	case m := <-h.shown:
		t.Errorf("the user was asked again: %q", m)
	default:
	}
	if got := readFile(t, filepath.Join(f.root, "a.txt")); got != "accepted\n" {
		t.Errorf("a.txt holds %q", got)
	}
}

// TestServeResourcesRateLimited: resources/read and completion count
// against --rate-limit as tool calls do, so they are no way around it.
func TestServeResourcesRateLimited(t *testing.T) {
	t.Parallel()
	f := mcpFixture(t)
	ctx := t.Context()
	srv := startServe(t, "serve", "--http", "127.0.0.1:0", "--root", f.root, "--rate-limit", "0.001", "--rate-burst", "2")
	cs, err := newClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	read := &mcp.ReadResourceParams{URI: "fencefs:///a.txt"}
	if _, err := cs.ReadResource(ctx, read); err != nil {
		t.Fatalf("first read: %v", err)
	}
	callOK(t, ctx, cs, "read_file", map[string]any{"path": "a.txt"})
	if _, err := cs.ReadResource(ctx, read); err == nil || !strings.Contains(err.Error(), "calls per second") {
		t.Errorf("a read beyond the rate: %v, want a refusal naming the rate", err)
	}
	comp := &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "fencefs:///{+path}"}, Argument: mcp.CompleteParamsArgument{Name: "path", Value: "a"}}
	if _, err := cs.Complete(ctx, comp); err == nil || !strings.Contains(err.Error(), "calls per second") {
		t.Errorf("a completion beyond the rate: %v, want a refusal naming the rate", err)
	}
}

// TestServeResourceReadsAudited: with --audit-reads a resources/read gets
// an audit line as read_file does, a refused one with its reason.
func TestServeResourceReadsAudited(t *testing.T) {
	t.Parallel()
	f := mcpFixture(t)
	ctx := t.Context()
	auditFile := filepath.Join(t.TempDir(), "audit.jsonl")
	cmd := exec.Command(binary, "serve", "--root", f.root, "--deny", "secret", "--audit", auditFile, "--audit-reads")
	cs, err := newClient().Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * exitDeadline}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "fencefs:///a.txt"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "fencefs:///secret/k.txt"}); err == nil {
		t.Fatal("a denied resource was read")
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(readFile(t, auditFile)), "\n") {
		var rec struct {
			Tool, Outcome string
			Paths         []string
			Bytes         int
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		got = append(got, fmt.Sprint(rec.Tool, " ", rec.Outcome, " ", rec.Paths, " ", rec.Bytes))
	}
	want := "resources/read ok [fencefs:///a.txt] 12\nresources/read refused [fencefs:///secret/k.txt] 0"
	if strings.Join(got, "\n") != want {
		t.Errorf("audit log:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}
	if out := runFencefs(t, f.root, "", nil, "audit", "verify", auditFile); out.code != 0 {
		t.Errorf("audit verify: %+v", out)
	}
}

// TestServeSkillsNeedRead: skills are files of the namespace, so a server
// whose tools cannot read files offers neither their prompts nor their
// resources.
func TestServeSkillsNeedRead(t *testing.T) {
	t.Parallel()
	f := mcpFixture(t)
	for _, tt := range []struct {
		tools string
		want  bool
	}{{"write_file", false}, {"read_file,write_file", true}} {
		cmd := exec.Command(binary, "serve", "--root", f.root, "--tools", tt.tools, "--skills", "skills")
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "skills-host", Version: "1"}, nil).Connect(t.Context(), &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * exitDeadline}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var prompts, skillFiles int
		if res, err := cs.ListPrompts(t.Context(), nil); err == nil {
			prompts = len(res.Prompts)
		}
		if res, err := cs.ListResourceTemplates(t.Context(), nil); err == nil {
			for _, rt := range res.ResourceTemplates {
				if strings.HasPrefix(rt.URITemplate, "skill://") {
					skillFiles++
				}
			}
		}
		cs.Close()
		if got := prompts > 0 || skillFiles > 0; got != tt.want {
			t.Errorf("--tools %s: %d skill prompts, %d skill templates; want skills offered %v", tt.tools, prompts, skillFiles, tt.want)
		}
	}
}
