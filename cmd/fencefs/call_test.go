//go:build !fencefs_oneshot

package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/tools"
)

// result is what one run of the binary printed and returned.
type result struct {
	stdout, stderr string
	code           int
}

// runFencefs runs the binary with args, stdin and extra environment
// variables, in dir.
func runFencefs(t *testing.T, dir, stdin string, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), exitDeadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && ctx.Err() == nil:
	default:
		t.Fatalf("fencefs %q: %v\nstderr:\n%s", args, err, stderr.String())
	}
	return result{stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()}
}

func hash12(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:12]
}

func TestCall(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	missingDir := filepath.Join(f.root, "missing")
	tests := []struct {
		name   string
		stdin  string
		args   []string
		want   result
		prefix bool // want.stdout and want.stderr are prefixes
	}{
		{"success", "", []string{"call", "read_file", `{"path": "a.txt"}`},
			result{stdout: "[a.txt | 2 lines | hash:" + hash12("hello\nworld\n") + "]\n     1\thello\n     2\tworld\n"}, false},
		{"arguments from stdin", `{"path": "a.txt", "limit": 1}`, []string{"call", "read_file"},
			result{stdout: "[a.txt | 2 lines | hash:" + hash12("hello\nworld\n") + "]\n     1\thello\n... (1 more line. Use offset=1 to continue reading.)\n"}, false},
		{"no arguments", "", []string{"call", "list_directory"}, result{stdout: "a.txt  (12 bytes)\nsub/"}, false},
		{"flags shape the tools", "", []string{"call", "--no-hashes", "--cwd", "sub", "read_file", `{"path":"b.go"}`},
			result{stdout: "[b.go | 1 line]\n     1\tpackage sub\n"}, false},
		{"opt-in tool", "", []string{"call", "--tools", "grep", "grep", `{"pattern":"wor"}`}, result{stdout: "a.txt:2:world"}, false},
		{"missing file", "", []string{"call", "read_file", `{"path":"nope.txt"}`}, result{stdout: "File not found: nope.txt", code: 2}, false},
		{"outside the root", "", []string{"call", "write_file", `{"path":"../outside/x","content":"x"}`},
			result{stdout: "Path '../outside/x' resolves outside the root directory.", code: 2}, false},
		{"malformed JSON", "", []string{"call", "read_file", `{"path":`},
			result{stdout: "Invalid arguments: ", code: 2}, true},
		{"malformed JSON on stdin", "[1,2]", []string{"call", "read_file"},
			result{stdout: "Invalid arguments: ", code: 2}, true},
		{"missing field", "", []string{"call", "read_file", `{}`}, result{stdout: "Missing required argument 'path'.", code: 2}, false},
		{"unknown field", "", []string{"call", "read_file", `{"path":"a.txt","bogus":1}`},
			result{stdout: "Unknown argument 'bogus'. Valid arguments: ", code: 2}, true},
		{"wrong type", "", []string{"call", "read_file", `{"path":1}`}, result{stdout: "Argument 'path' must be a string.", code: 2}, false},
		{"read-only tool set", "", []string{"call", "--read-only", "write_file", `{"path":"x","content":""}`},
			result{stderr: `fencefs: unknown tool "write_file"; configured tools: read_file, list_directory,`, code: 1}, true},
		{"unknown tool", "", []string{"call", "rm", `{}`}, result{stderr: `fencefs: unknown tool "rm"; configured tools: read_file, write_file,`, code: 1}, true},
		{"bad limit", "", []string{"call", "--max-list", "0", "list_directory"}, result{stderr: "fencefs: --max-list: must be > 0, got 0\n", code: 1}, false},
		{"unknown flag", "", []string{"call", "--bogus", "read_file"}, result{stderr: "fencefs: --bogus: unknown flag (see fencefs help call)\n", code: 1}, false},
		{"bad mount", "", []string{"call", "--mount", "ws=s3://", "list_directory"},
			result{stderr: "fencefs: mount \"ws\": s3: the bucket name is empty (s3://BUCKET/PREFIX)\n", code: 1}, false},
		{"missing root", "", []string{"call", "--root", missingDir, "list_directory"}, result{stderr: "fencefs: --root: open ", code: 1}, true},
		{"no tool", "", []string{"call"}, result{stderr: "fencefs: usage: fencefs call [flags] TOOL [JSON]", code: 1}, true},
		{"too many arguments", "", []string{"call", "read_file", "{}", "{}"}, result{stderr: "fencefs: usage: ", code: 1}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			before := snapshot(t, filepath.Dir(f.root))
			got := runFencefs(t, f.root, tt.stdin, nil, tt.args...)
			ok := got.code == tt.want.code
			if tt.prefix {
				ok = ok && strings.HasPrefix(got.stdout, tt.want.stdout) && strings.HasPrefix(got.stderr, tt.want.stderr)
				ok = ok && (tt.want.stdout != "" || got.stdout == "") && (tt.want.stderr != "" || got.stderr == "")
			} else {
				ok = ok && got == tt.want
			}
			if !ok {
				t.Fatalf("fencefs %q:\n got exit %d stdout %q stderr %q\nwant exit %d stdout %q stderr %q",
					tt.args, got.code, got.stdout, got.stderr, tt.want.code, tt.want.stdout, tt.want.stderr)
			}
			if got.code != 0 {
				if after := snapshot(t, filepath.Dir(f.root)); len(after) != len(before) {
					t.Fatalf("a refused call changed the files:\n%q\n%q", before, after)
				}
			}
		})
	}
}

func TestCallWrites(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	got := runFencefs(t, f.root, `{"path":"n.txt","content":"new\n"}`, nil, "call", "write_file")
	want := "Wrote 4 chars (1 line) to n.txt. [hash:" + hash12("new\n") + "]"
	if got.code != 0 || got.stdout != want {
		t.Fatalf("write_file: %+v, want stdout %q", got, want)
	}
	if s := readFile(t, filepath.Join(f.root, "n.txt")); s != "new\n" {
		t.Fatalf("n.txt holds %q", s)
	}
	// The read-before-write guard would work within one call only, so
	// that every change would be refused: call refuses the flag.
	got = runFencefs(t, f.root, "", nil, "call", "--require-read", "write_file", `{"path":"a.txt","content":"x"}`)
	if got.code != 1 || !strings.HasPrefix(got.stderr, "fencefs: --require-read: not for call") || readFile(t, filepath.Join(f.root, "a.txt")) != "hello\nworld\n" {
		t.Fatalf("--require-read with call: %+v", got)
	}
}

// mountFixture is a workspace and a reference directory to mount.
func mountFixture(t *testing.T) (base string) {
	t.Helper()
	base = t.TempDir()
	writeFile(t, filepath.Join(base, "ws", "notes.md"), "# notes\n")
	writeFile(t, filepath.Join(base, "ref", "r.txt"), "reference\n")
	return base
}

func TestCallMounted(t *testing.T) {
	t.Parallel()
	base := mountFixture(t)
	flags := []string{"--mount", "ws=local:ws", "--mount", "ref=local:ref:ro"}
	configFile := filepath.Join(base, "fencefs.yaml")
	writeFile(t, configFile, "mounts:\n  ws: local:ws\n  ref: local:ref:ro\ncwd: /ws\n")
	tests := []struct {
		name string
		args []string
		want result
	}{
		{"list the mounts", []string{"list_directory", `{"path":"/"}`}, result{stdout: "/ref/\n/ws/"}},
		{"read a read-only mount", []string{"read_file", `{"path":"/ref/r.txt"}`},
			result{stdout: "[/ref/r.txt | 1 line | hash:" + hash12("reference\n") + "]\n     1\treference\n"}},
		{"write to a read-only mount", []string{"write_file", `{"path":"/ref/new.txt","content":"x"}`},
			result{stdout: "Path '/ref/new.txt' is on read-only storage and cannot be changed. Write somewhere else.", code: 2}},
		{"edit on a read-only mount", []string{"edit_file", `{"path":"/ref/r.txt","old_text":"reference","new_text":"x"}`},
			result{stdout: "Path '/ref/r.txt' is on read-only storage and cannot be changed. Write somewhere else.", code: 2}},
		{"write to the root", []string{"write_file", `{"path":"/top.txt","content":"x"}`}, result{code: 2}},
		{"write to a writable mount", []string{"write_file", `{"path":"/ws/out.txt","content":"ok\n"}`},
			result{stdout: "Wrote 3 chars (1 line) to /ws/out.txt. [hash:" + hash12("ok\n") + "]"}},
		{"find across mounts", []string{"find_files", `{"pattern":"**/*.txt","path":"/ref"}`}, result{stdout: "/ref/r.txt"}},
	}
	for _, source := range []struct {
		name  string
		flags []string
	}{{"flags", flags}, {"config", []string{"--config", configFile}}} {
		for _, tt := range tests {
			t.Run(source.name+"/"+tt.name, func(t *testing.T) {
				args := append(append([]string{"call"}, source.flags...), tt.args...)
				got := runFencefs(t, base, "", nil, args...)
				if got.code != tt.want.code || tt.want.stdout != "" && got.stdout != tt.want.stdout || got.stderr != "" {
					t.Fatalf("fencefs %q:\n got %+v\nwant %+v", args, got, tt.want)
				}
			})
		}
	}
	if _, err := os.Stat(filepath.Join(base, "ref", "new.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the write to the read-only mount created a file: %v", err)
	}
	if s := readFile(t, filepath.Join(base, "ref", "r.txt")); s != "reference\n" {
		t.Errorf("the read-only file changed: %q", s)
	}
	if s := readFile(t, filepath.Join(base, "ws", "out.txt")); s != "ok\n" {
		t.Errorf("out.txt holds %q", s)
	}
	// The config file's cwd makes relative paths start in /ws.
	got := runFencefs(t, base, "", nil, "call", "--config", configFile, "read_file", `{"path":"notes.md","limit":1}`)
	if got.code != 0 || !strings.HasPrefix(got.stdout, "[notes.md | 1 line") {
		t.Errorf("relative read with cwd /ws: %+v", got)
	}
	got = runFencefs(t, base, "", nil, "call", "--root", ".", "--mount", "ws=local:ws", "list_directory")
	if got.code != 1 || !strings.HasPrefix(got.stderr, "fencefs: --root: cannot be combined with --mount") {
		t.Errorf("--root with --mount: %+v", got)
	}
}

// fakeS3 answers HeadBucket and refuses every other request with an S3
// error the adapter does not map, so that reads fail as storage failures.
func fakeS3(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead && r.URL.Path == "/bucket" {
			return
		}
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>InvalidRequest</Code><Message>storage is broken</Message></Error>`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// s3Env gives the AWS SDK static credentials and keeps it away from the
// machine's configuration.
var s3Env = []string{
	"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_SESSION_TOKEN=",
	"AWS_CONFIG_FILE=/nonexistent", "AWS_SHARED_CREDENTIALS_FILE=/nonexistent",
	"AWS_EC2_METADATA_DISABLED=true", "AWS_PROFILE=",
}

func TestCallFatal(t *testing.T) {
	t.Parallel()
	mount := "s3=s3://bucket/tenant?endpoint=" + fakeS3(t) + "&region=us-east-1&path_style=1"
	got := runFencefs(t, t.TempDir(), "", s3Env, "call", "--mount", mount, "read_file", `{"path":"/s3/a.txt"}`)
	// stderr is the operator's log: the clean message, and the whole
	// error logged before it.
	if got.code != 1 || got.stdout != "" || !strings.Contains(got.stderr, "\nfencefs: read_file: Storage failure: the storage failed.") {
		t.Fatalf("read on broken storage: %+v, want exit 1 with a message on stderr", got)
	}
	if !strings.Contains(got.stderr, "InvalidRequest") {
		t.Errorf("the log does not say what failed: %q", got.stderr)
	}
}

func TestServeFatal(t *testing.T) {
	t.Parallel()
	mount := "s3=s3://bucket/tenant?endpoint=" + fakeS3(t) + "&region=us-east-1&path_style=1"
	cmd := exec.Command(binary, "serve", "--mount", mount)
	cmd.Env = append(os.Environ(), s3Env...)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	ctx := t.Context()
	cs, err := newClient().Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	// A storage failure is a tool result with isError set, whose text
	// names nothing of the storage (its endpoint, the S3 error); the
	// server's log has the whole error.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "/s3/a.txt"}})
	if err != nil {
		t.Fatalf("read on broken storage: %v; want a tool result with isError", err)
	}
	if want := "Storage failure: the storage failed. Details are in the server's log."; !res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != want {
		t.Errorf("read on broken storage: %+v; want isError with %q", res, want)
	}
	// A retryable error on the same storage stays a tool result.
	text := callRefused(t, ctx, cs, "read_file", map[string]any{})
	if text != "Missing required argument 'path'." {
		t.Errorf("missing argument: %q", text)
	}
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	if log := stderr.String(); !strings.Contains(log, `level=ERROR msg="tool call failed" tool=read_file`) || !strings.Contains(log, "InvalidRequest") {
		t.Errorf("the fatal error was not logged whole:\n%s", log)
	}
}

func TestToolsCommand(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	got := runFencefs(t, f.root, "", nil, "tools", "--tools", "grep,read_file,write_file", "--no-hashes")
	if got.code != 0 || got.stderr != "" {
		t.Fatalf("tools: %+v", got)
	}
	var list []struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		InputSchema map[string]any `json:"inputSchema"`
		Annotations map[string]any `json:"annotations"`
	}
	if err := json.Unmarshal([]byte(got.stdout), &list); err != nil {
		t.Fatalf("tools printed invalid JSON: %v\n%s", err, got.stdout)
	}
	var names []string
	for _, tool := range list {
		names = append(names, tool.Name)
		if tool.Description == "" || tool.InputSchema["type"] != "object" {
			t.Errorf("%s: description %q, schema %v", tool.Name, tool.Description, tool.InputSchema)
		}
	}
	if strings.Join(names, ",") != "read_file,write_file,grep" {
		t.Fatalf("names %q", names)
	}
	if list[0].Annotations["readOnlyHint"] != true || list[1].Annotations["readOnlyHint"] != false || list[1].Annotations["destructiveHint"] != true {
		t.Errorf("annotations: %v / %v", list[0].Annotations, list[1].Annotations)
	}
	if props := list[1].InputSchema["properties"].(map[string]any); props["expected_hash"] != nil {
		t.Errorf("--no-hashes left expected_hash in write_file's schema")
	}
	if got := runFencefs(t, f.root, "", nil, "tools", "extra"); got.code != 1 {
		t.Errorf("tools with an argument: %+v", got)
	}
}

func TestVersionAndHelp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{[]string{"version"}, 0, "fencefs ", ""},
		{[]string{"help"}, 0, "fencefs gives AI agents", ""},
		{[]string{"help", "serve"}, 0, "Usage: fencefs serve", ""},
		{[]string{"call", "--help"}, 0, "Usage: fencefs call", ""},
		{[]string{"help", "version"}, 0, "Usage: fencefs version", ""},
		{[]string{"help", "completion"}, 0, "Usage: fencefs completion bash|zsh|fish", ""},
		{[]string{"help", "patterns"}, 0, "Patterns (--allow, --deny, --protect", ""},
		{[]string{"help", "paths"}, 0, "Tool paths", ""},
		{[]string{"help", "help"}, 0, "fencefs gives AI agents", ""},
		{[]string{"version", "x"}, 1, "", "fencefs: version takes no arguments"},
		{[]string{"completion"}, 1, "", "fencefs: usage: fencefs completion bash|zsh|fish"},
		{[]string{"completion", "tcsh"}, 1, "", `fencefs: completion: unknown shell "tcsh"`},
		{[]string{"help", "nope"}, 1, "", "fencefs: unknown help topic"},
		{[]string{"nope"}, 1, "", "fencefs: unknown command"},
		{nil, 1, "", "fencefs gives AI agents"},
	}
	for _, tt := range tests {
		got := runFencefs(t, dir, "", nil, tt.args...)
		if got.code != tt.code || !strings.HasPrefix(got.stdout, tt.stdout) || !strings.HasPrefix(got.stderr, tt.stderr) ||
			tt.stdout == "" && got.stdout != "" {
			t.Errorf("fencefs %q: %+v", tt.args, got)
		}
	}
	serve := runFencefs(t, dir, "", nil, "help", "serve").stdout
	for _, want := range []string{"--http ADDR", "--max-read-lines N         default number of lines read_file returns (default 2000)",
		"(default 0: no cap)", "cap on list_directory entries (default 1000)", "--call-timeout DURATION    stop a tool call that runs longer (default 60s)",
		"(still readable)", "--max-sessions N"} {
		if !strings.Contains(serve, want) {
			t.Errorf("serve's help lacks %q:\n%s", want, serve)
		}
	}
	// The default tools are named as tools.DefaultTools has them; the
	// opt-in ones (apply_patch, delete_file, move_file, copy_file,
	// list_files, grep) are not said to be among them.
	for _, cmd := range []string{"serve", "call"} {
		help := runFencefs(t, dir, "", nil, "help", cmd).stdout
		if want := "(default: " + strings.Join(tools.DefaultTools(), ","); !strings.Contains(help, want) || strings.Contains(help, "all but") {
			t.Errorf("%s's help of --tools lacks %q or says \"all but\":\n%s", cmd, want, help)
		}
	}
	overview := runFencefs(t, dir, "", nil, "help").stdout
	for _, want := range []string{"can be READ\nbut not changed", "--deny '**/.env'", "timeout=D", "replaces the file's mount of the same name"} {
		if !strings.Contains(overview, want) {
			t.Errorf("the overview lacks %q:\n%s", want, overview)
		}
	}
	patterns := runFencefs(t, dir, "", nil, "help", "patterns").stdout
	for _, want := range []string{"without a leading /", `"/" included`, "**/x", "covers everything below", "--deny '*/private'"} {
		if !strings.Contains(patterns, want) {
			t.Errorf("help patterns lacks %q:\n%s", want, patterns)
		}
	}
}

// TestVersion prints what the build recorded: the module version, or
// devel with the commit's digits, and the commit with its state.
func TestVersion(t *testing.T) {
	rev := "553ce81eb28dd430948e882710a090013673ae61"
	tests := []struct {
		name  string
		info  debug.BuildInfo
		short string
		lines []string
	}{
		{"release", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/fencefs/fencefs", Version: "v1.2.0"}},
			"v1.2.0", []string{"fencefs v1.2.0", "module: github.com/fencefs/fencefs v1.2.0", "go: go1.26.8 "}},
		{"clone", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/fencefs/fencefs", Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.time", Value: "2026-12-01T21:49:11Z"}, {Key: "vcs.modified", Value: "true"}}},
			"devel-553ce81eb28d-dirty", []string{"fencefs devel-553ce81eb28d-dirty", "commit: " + rev + " (2026-12-01T21:49:11Z, with uncommitted changes)"}},
		{"clean clone", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "false"}}},
			"devel-553ce81eb28d", []string{"commit: " + rev + "\n"}},
		{"no vcs", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}},
			"devel", []string{"commit: unknown (built with -buildvcs=false or outside a clone)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := versionOf(&tt.info)
			if got := v.short(); got != tt.short {
				t.Errorf("short %q, want %q", got, tt.short)
			}
			for _, l := range tt.lines {
				if !strings.Contains(v.String(), l) {
					t.Errorf("version text lacks %q:\n%s", l, v)
				}
			}
		})
	}
}

func TestServeRefusesBadSettings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	start := time.Now()
	got := runFencefs(t, dir, "", nil, "serve", "--max-find", "-1")
	if got.code != 1 || got.stderr != "fencefs: --max-find: must be > 0, got -1\n" || got.stdout != "" {
		t.Fatalf("serve with a bad limit: %+v", got)
	}
	got = runFencefs(t, dir, "", nil, "serve", "--mount", "x=sftp://u@127.0.0.1:1/d?password_env=FENCEFS_TEST_UNSET_VAR&insecure=1")
	if got.code != 1 || got.stderr != "fencefs: mount \"x\": password_env: the environment variable FENCEFS_TEST_UNSET_VAR is not set\n" {
		t.Fatalf("serve with an unset password variable: %+v", got)
	}
	got = runFencefs(t, dir, "", nil, "serve", "--http", "127.0.0.1:0", "--cwd", "../x")
	if got.code != 1 || got.stderr != "fencefs: --cwd: Path '../x' resolves outside the root directory.\n" {
		t.Fatalf("serve with a cwd outside the root: %+v", got)
	}
	t.Logf("three refusals took %v", time.Since(start))
}
