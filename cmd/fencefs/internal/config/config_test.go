package config

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fencefs/fencefs/mountspec"
	"github.com/fencefs/fencefs/tools"
)

// settings returns serve's defaults changed by fn.
func settings(fn func(s *Settings)) *Settings {
	s := Defaults()
	fn(&s)
	return &s
}

func TestParse(t *testing.T) {
	ws := Mount{Name: "ws", Spec: mountspec.Spec{Kind: mountspec.KindLocal, Dir: "/w"}}
	ref := Mount{Name: "ref", Spec: mountspec.Spec{Kind: mountspec.KindLocal, Dir: "/r", ReadOnly: true}}
	// perSession are the flags of a server whose tenant mount names
	// {session}, and sessions what they set.
	perSession := []string{"--http", "127.0.0.1:0", "--auth", "tokens", "--token-file", "t.yaml", "--tenant-mount", "w=local:/w/{tenant}/{session}"}
	sessions := func(s *Settings) {
		s.HTTP, s.Auth, s.TokenFile, s.TenantMounts = "127.0.0.1:0", "tokens", "t.yaml", []string{"w=local:/w/{tenant}/{session}"}
	}
	tests := []struct {
		name string
		cmd  string
		args []string
		want *Settings
		rest []string
	}{
		{"defaults", "serve", nil, settings(func(s *Settings) {}), []string{}},
		{"root and cwd", "call", []string{"--root", "/srv", "-cwd=sub", "read_file", "{}"},
			settings(func(s *Settings) { s.Root, s.rootGiven, s.Cwd = "/srv", true, "sub" }), []string{"read_file", "{}"}},
		{"explicit dot root", "call", []string{"--root", "."},
			settings(func(s *Settings) { s.rootGiven = true }), []string{}},
		{"patterns repeat", "tools", []string{"--allow", "src/*", "--allow", "*.md", "--deny", "private", "--protect", "*.lock"},
			settings(func(s *Settings) {
				s.Allow, s.Deny, s.Protect = []string{"src/*", "*.md"}, []string{"private"}, []string{"*.lock"}
			}), []string{}},
		{"booleans", "serve", []string{"--no-default-protect", "--read-only", "--no-hashes", "--require-read=true"},
			settings(func(s *Settings) { s.NoDefaultProtect, s.ReadOnly, s.NoHashes, s.RequireRead = true, true, true, true }), []string{}},
		{"limits", "serve", []string{"--max-read-lines", "10", "--max-read-chars", "0", "--max-list", "5", "--max-search", "6", "--max-find", "7"},
			settings(func(s *Settings) { s.MaxReadLines, s.MaxList, s.MaxSearch, s.MaxFind = 10, 5, 6, 7 }), []string{}},
		{"tools", "serve", []string{"--tools", "grep, read_file,,"},
			settings(func(s *Settings) { s.Tools = []string{"grep", "read_file"} }), []string{}},
		{"all tools", "serve", []string{"--tools", "all"},
			settings(func(s *Settings) { s.Tools, s.toolsAll = tools.AllTools(), true }), []string{}},
		{"all tools read-only", "serve", []string{"--tools", "all", "--read-only"},
			settings(func(s *Settings) { s.Tools, s.toolsAll, s.ReadOnly = tools.AllTools(), true, true }), []string{}},
		{"read-only tools read-only", "serve", []string{"--tools", "grep,read_file", "--read-only"},
			settings(func(s *Settings) { s.Tools, s.ReadOnly = []string{"grep", "read_file"}, true }), []string{}},
		{"mounts sorted", "serve", []string{"--mount", "ws=local:/w", "--mount", "ref=local:/r:ro"},
			settings(func(s *Settings) { s.Mounts = []Mount{ref, ws} }), []string{}},
		{"longest mount name", "serve", []string{"--mount", strings.Repeat("a", 64) + "=local:/w", "--mount", "A-b_c.1=local:/r:ro"},
			settings(func(s *Settings) {
				s.Mounts = []Mount{{Name: "A-b_c.1", Spec: ref.Spec}, {Name: strings.Repeat("a", 64), Spec: ws.Spec}}
			}), []string{}},
		{"deadlines and sessions", "serve", []string{"--call-timeout", "2m", "--storage-timeout", "5s", "--session-timeout", "1h", "--max-sessions", "3", "--http-timeout", "7s"},
			settings(func(s *Settings) {
				s.CallTimeout, s.StorageTimeout, s.SessionTimeout, s.MaxSessions, s.HTTPTimeout = 2*time.Minute, 5*time.Second, time.Hour, 3, 7*time.Second
			}), []string{}},
		{"session retention never", "serve", append(perSession, "--session-retention", "never"),
			settings(func(s *Settings) { sessions(s); s.SessionRetention = -1 }), []string{}},
		{"session retention at once", "serve", append(perSession, "--session-retention", "0"),
			settings(func(s *Settings) { sessions(s); s.SessionRetention = 0 }), []string{}},
		{"session retention", "serve", append(perSession, "--session-retention", "168h"),
			settings(func(s *Settings) { sessions(s); s.SessionRetention = 7 * 24 * time.Hour }), []string{}},
		{"session leftovers", "serve", append(perSession, "--session-collect-leftovers"),
			settings(func(s *Settings) { sessions(s); s.SessionCollectLeftovers = true }), []string{}},
		{"log level and http", "serve", []string{"--log-level", "DEBUG", "--http", "127.0.0.1:0"},
			settings(func(s *Settings) { s.LogLevel, s.HTTP = slog.LevelDebug, "127.0.0.1:0" }), []string{}},
		{"skills in order", "serve", []string{"--mount", "ws=local:/w", "--skills", "/ws/team", "--skills", "/ws/skills"},
			settings(func(s *Settings) { s.Mounts, s.Skills = []Mount{ws}, []string{"/ws/team", "/ws/skills"} }), []string{}},
		{"skills command", "skills", []string{"--root", "/srv", "--skills", "skills", "--cwd", "sub"},
			settings(func(s *Settings) { s.Root, s.rootGiven, s.Cwd, s.Skills = "/srv", true, "sub", []string{"skills"} }), []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, rest, err := Parse(tt.cmd, tt.args)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.args, err)
			}
			if tt.cmd != "serve" {
				tt.want.LogLevel = slog.LevelWarn
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse(%q) =\n%+v, want\n%+v", tt.args, got, tt.want)
			}
			if !slices.Equal(rest, tt.rest) {
				t.Errorf("Parse(%q) rest = %q, want %q", tt.args, rest, tt.rest)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		cmd  string
		args []string
		want string
	}{
		{"serve", []string{"--max-list", "0"}, "--max-list: must be > 0, got 0"},
		{"serve", []string{"--session-retention", "1h"}, "--session-retention: applies to sessions' own storage, and no --tenant-mount names {session}"},
		{"serve", []string{"--http", "127.0.0.1:0", "--auth", "tokens", "--token-file", "t.yaml", "--tenant-mount", "w=local:/w/{tenant}", "--session-collect-leftovers"},
			"--session-collect-leftovers: applies to sessions' own storage, and no --tenant-mount names {session}"},
		{"serve", []string{"--max-read-lines=-3"}, "--max-read-lines: must be > 0, got -3"},
		{"serve", []string{"--max-read-chars", "-1"}, "--max-read-chars: must be >= 0, got -1"},
		{"serve", []string{"--max-find", "ten"}, `--max-find: "ten" is not an integer`},
		{"serve", []string{"--read-only=maybe"}, `--read-only: "maybe" is not a boolean`},
		{"serve", []string{"--tools", "read_file,rm"}, `--tools: unknown tool "rm"; valid tools are all, read_file,`},
		{"serve", []string{"--tools", ","}, "--tools: names no tool"},
		{"serve", []string{"--deny", ""}, `--deny: invalid pattern "": empty pattern`},
		{"serve", []string{"--allow", "a\x00"}, "--allow: invalid pattern"},
		{"serve", []string{"--deny", "/"}, `--deny: invalid pattern "/": it names the namespace root, which patterns do not match: write '*' for every path`},
		{"serve", []string{"--protect", "src/../x"}, `--protect: invalid pattern "src/../x": a '..' component can match nothing`},
		{"serve", []string{"--root", ""}, "--root: must not be empty"},
		{"serve", []string{"--log-level", "loud"}, `--log-level: "loud" is not a log level`},
		{"serve", []string{"--http", "8080"}, `--http: "8080" is not HOST:PORT`},
		{"call", []string{"--http", "127.0.0.1:1"}, "--http: unknown flag (see fencefs help call)"},
		{"skills", []string{"--http", "127.0.0.1:1"}, "--http: unknown flag (see fencefs help skills)"},
		{"call", []string{"--skills", "skills"}, "--skills: unknown flag (see fencefs help call)"},
		{"tools", []string{"--skills", "skills"}, "--skills: unknown flag (see fencefs help tools)"},
		{"serve", []string{"--skills", ""}, "--skills: must not be empty"},
		{"skills", []string{"--skills"}, "missing value for -skills"},
		{"serve", []string{"--bogus"}, "--bogus: unknown flag (see fencefs help serve)"},
		{"serve", []string{"--max-list"}, "missing value for -max-list"},
		{"serve", []string{"--mount", "ws"}, `--mount: "ws" is not NAME=SPEC`},
		{"serve", []string{"--mount", "ws=s3://"}, `mount "ws": s3: the bucket name is empty`},
		{"serve", []string{"--mount", "a/b=local:/x"}, `mount "a/b": the name must be 1 to 64 ASCII letters`},
		{"serve", []string{"--mount", "..=local:/x"}, `mount "..": the name must be`},
		{"serve", []string{"--mount", "=local:/x"}, `mount "": the name must be`},
		{"serve", []string{"--mount", ".=local:/x"}, `mount ".": the name must be`},
		{"serve", []string{"--mount", "ws=local:/x", "--mount", "ws=local:/y"}, `mount "ws": given twice`},
		{"serve", []string{"--mount", "my ws=local:/x"}, `mount "my ws": the name must be 1 to 64 ASCII letters`},
		{"serve", []string{"--mount", "w\ns=local:/x"}, `mount "w\ns": the name must be`},
		{"serve", []string{"--mount", "café=local:/x"}, `mount "café": the name must be`},
		{"serve", []string{"--mount", "a:b=local:/x"}, `mount "a:b": the name must be`},
		{"serve", []string{"--mount", strings.Repeat("a", 65) + "=local:/x"}, `mount "aaaa`},
		{"serve", []string{"--call-timeout", "5"}, `--call-timeout: "5" is not a duration`},
		{"serve", []string{"--call-timeout", "0s"}, "--call-timeout: must be > 0, got 0s"},
		{"call", []string{"--session-timeout", "1m"}, "--session-timeout: unknown flag"},
		{"serve", []string{"--session-retention", "-1h"}, `--session-retention: "-1h" is not a duration (such as 24h or 0) or never`},
		{"serve", []string{"--session-retention", "forever"}, `--session-retention: "forever" is not a duration`},
		{"serve", []string{"--max-sessions", "0"}, "--max-sessions: must be > 0"},
		{"serve", []string{"--http-timeout", "-1s"}, "--http-timeout: must be > 0"},
		{"call", []string{"--require-read"}, "--require-read: not for call: each call is a new process"},
		{"serve", []string{"--read-only", "--tools", "write_file"}, "--read-only: contradicts --tools: write_file changes storage, which a read-only server does not offer; drop it from --tools, or drop --read-only"},
		{"call", []string{"--tools", "read_file,edit_file,create_directory", "--read-only"}, "--read-only: contradicts --tools: edit_file, create_directory change storage"},
		{"call", []string{"--http-timeout", "1s"}, "--http-timeout: unknown flag"},
		{"serve", []string{"--root", "/x", "--mount", "ws=local:/x"}, "--root: cannot be combined with --mount"},
		{"serve", []string{"--config", filepath.Join(t.TempDir(), "missing.yaml")}, "--config: open "},
		{"serve", []string{"--otlp-endpoint", "127.0.0.1:4318"}, `--otlp-endpoint: "127.0.0.1:4318": want the base URL of an OTLP/HTTP receiver`},
		{"serve", []string{"--otlp-endpoint", "grpc://collector:4317"}, `--otlp-endpoint: "grpc://collector:4317": want the base URL`},
		{"serve", []string{"--otlp-endpoint", "http://collector:4318/?x=1"}, `--otlp-endpoint: "http://collector:4318/?x=1": want the base URL`},
		{"serve", []string{"--otlp-paths"}, "--otlp-paths: needs --otlp-endpoint"},
		{"call", []string{"--otlp-endpoint", "http://127.0.0.1:4318"}, "--otlp-endpoint: unknown flag (see fencefs help call)"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			s, _, err := Parse(tt.cmd, tt.args)
			if err == nil {
				t.Fatalf("Parse(%q) = %+v, want an error", tt.args, s)
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("Parse(%q) error %q, want it to start with %q", tt.args, err, tt.want)
			}
		})
	}
}

func TestParseHelp(t *testing.T) {
	for _, arg := range []string{"-h", "--help"} {
		if _, _, err := Parse("serve", []string{arg}); !errors.Is(err, ErrHelp) {
			t.Errorf("Parse(%s) error %v, want ErrHelp", arg, err)
		}
	}
}

// writeConfig writes a YAML config file and returns its path.
func writeConfig(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fencefs.yaml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParseConfigFile(t *testing.T) {
	file := writeConfig(t, `
cwd: sub
allow: [src/*, docs/*]
deny: private
protect:
  - "*.lock"
no_default_protect: true
max_read_lines: 50
max_read_chars: 4000
max_list: 10
max_search: 20
max_find: 30
read_only: false
no_hashes: true
tools: [read_file, grep]
skills: [/ws/team, /ws/skills]
require_read: true
log_level: warn
http: 127.0.0.1:9000
mounts:
  ws: local:/w
  data: s3://bucket/tenants/t1?region=eu-west-1&ro=1
`)
	want := settings(func(s *Settings) {
		s.ConfigFile = file
		s.Cwd = "sub"
		s.Allow, s.Deny, s.Protect = []string{"src/*", "docs/*"}, []string{"private"}, []string{"*.lock"}
		s.NoDefaultProtect, s.NoHashes, s.RequireRead = true, true, true
		s.MaxReadLines, s.MaxReadChars, s.MaxList, s.MaxSearch, s.MaxFind = 50, 4000, 10, 20, 30
		s.Tools = []string{"read_file", "grep"}
		s.LogLevel = slog.LevelWarn
		s.HTTP = "127.0.0.1:9000"
		s.Skills = []string{"/ws/team", "/ws/skills"}
		s.Mounts = []Mount{
			{Name: "data", Spec: mountspec.Spec{Kind: mountspec.KindS3, ReadOnly: true, S3: mountspec.S3Spec{Bucket: "bucket", Prefix: "tenants/t1", Region: "eu-west-1"}}},
			{Name: "ws", Spec: mountspec.Spec{Kind: mountspec.KindLocal, Dir: "/w"}},
		}
	})
	got, _, err := Parse("serve", []string{"--config", file})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%+v\nwant\n%+v", got, want)
	}

	// Flags override the file; a repeatable flag replaces its whole list.
	got, _, err = Parse("skills", []string{"--config", file, "--skills", "/only/skills", "--skills", "/ws/skills"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"/only/skills", "/ws/skills"}; !slices.Equal(got.Skills, want) || got.HTTP != "" {
		t.Fatalf("skills command with --skills over the file: Skills %q, HTTP %q", got.Skills, got.HTTP)
	}
	got, rest, err := Parse("call", []string{"--max-list", "99", "--config", file, "--allow", "x", "--mount", "only=local:/o", "--log-level", "error", "file_info"})
	if err != nil {
		t.Fatal(err)
	}
	want.MaxList, want.Allow, want.LogLevel, want.HTTP, want.Skills = 99, []string{"x"}, slog.LevelError, "", nil
	want.RequireRead = false // serve's setting: call takes none of it
	// --mount adds to the file's mounts, and replaces one of the same name.
	want.Mounts = []Mount{want.Mounts[0], {Name: "only", Spec: mountspec.Spec{Kind: mountspec.KindLocal, Dir: "/o"}}, want.Mounts[1]}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("with flags: got\n%+v\nwant\n%+v", got, want)
	}
	if !reflect.DeepEqual(rest, []string{"file_info"}) {
		t.Fatalf("rest = %q", rest)
	}
}

// TestParseConfigFileRelative resolves the file's relative host paths
// against its directory, and --mount replaces the file's mount of the same
// name while keeping the others.
func TestParseConfigFileRelative(t *testing.T) {
	file := writeConfig(t, "root: ./project\n")
	dir := filepath.Dir(file)
	s, _, err := Parse("serve", []string{"--config", file})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "project"); s.Root != want {
		t.Errorf("root %q, want %q", s.Root, want)
	}
	// A file named by a relative path gives absolute paths too.
	t.Chdir(filepath.Dir(dir))
	s, _, err = Parse("serve", []string{"--config", filepath.Join(filepath.Base(dir), "fencefs.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "project"); s.Root != want {
		t.Errorf("root %q with a relative --config, want %q", s.Root, want)
	}
	if err := os.WriteFile(file, []byte("mounts:\n  ref: local:./ref:ro\n  abs: local:/srv/x\n  box: sftp://u@h/d?key=keys/id&known_hosts=kh\n  ws: local:ws\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, _, err = Parse("serve", []string{"--config", file, "--mount", "ws=local:flag-ws", "--mount", "extra=local:/e"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Mount{
		{Name: "abs", Spec: mountspec.Spec{Kind: mountspec.KindLocal, Dir: "/srv/x"}},
		{Name: "box", Spec: mountspec.Spec{Kind: mountspec.KindSFTP, SFTP: mountspec.SFTPSpec{User: "u", Host: "h", Root: "/d", KeyFile: filepath.Join(dir, "keys/id"), KnownHostsFile: filepath.Join(dir, "kh")}}},
		{Name: "extra", Spec: mountspec.Spec{Kind: mountspec.KindLocal, Dir: "/e"}},
		{Name: "ref", Spec: mountspec.Spec{Kind: mountspec.KindLocal, Dir: filepath.Join(dir, "ref"), ReadOnly: true}},
		// The command line's path is the process's, as for every flag.
		{Name: "ws", Spec: mountspec.Spec{Kind: mountspec.KindLocal, Dir: "flag-ws"}},
	}
	if !reflect.DeepEqual(s.Mounts, want) {
		t.Fatalf("mounts\n%+v\nwant\n%+v", s.Mounts, want)
	}
	if _, _, err := Parse("serve", []string{"--config", file, "--mount", "n=local:/a", "--mount", "n=local:/b"}); err == nil || !strings.Contains(err.Error(), `mount "n": given twice`) {
		t.Fatalf("a flag mount given twice: %v", err)
	}
}

func TestParseConfigFileErrors(t *testing.T) {
	tests := []struct{ text, want string }{
		{"max_list: 0\n", ":1: max_list: must be > 0, got 0"},
		{"\nmax_list: [1]\n", ":2: max_list: expected a single value"},
		{"bogus: 1\n", ":1: bogus: unknown setting; valid settings: root, mounts, cwd,"},
		{"max-list: 3\n", ":1: max-list: unknown setting"},
		{"config: other.yaml\n", ":1: config: unknown setting"},
		{"mount: ws=local:/x\n", ":1: mount: unknown setting"},
		{"read_only: yes\n", `:1: read_only: "yes" is not a boolean`},
		{"tools: [read_file, rm]\n", `:1: tools: unknown tool "rm"`},
		{"allow:\n  - ok\n  - \"\"\n", `:3: allow: invalid pattern "": empty pattern`},
		{"deny:\n  - ok\n  - ./a/./b\n", `:3: deny: invalid pattern "./a/./b": a '.' component can match nothing`},
		{"allow: {a: b}\n", ":1: allow: expected a string or a list of strings"},
		{"skills:\n  - /ws/skills\n  - \"\"\n", ":3: skills: must not be empty"},
		{"skills: {a: b}\n", ":1: skills: expected a string or a list of strings"},
		{"mounts:\n  ws: s3://\n", `:2: mount "ws": s3: the bucket name is empty`},
		{"mounts: [a]\n", ":1: mounts: expected a mapping of mount name to spec"},
		{"mounts:\n  ws: {a: b}\n", ":2: mounts: expected NAME: SPEC"},
		{"root: /x\nmounts:\n  ws: local:/w\n", "--root: cannot be combined with --mount"},
		{"cwd: a\ncwd: b\n", ":2: cwd: given twice"},
		{"- a\n", ":1: expected a mapping of settings"},
		{"a: [\n", "line"},
		{"max_list: ten\n", `:1: max_list: "ten" is not an integer`},
		{"\n\nno_hashes: [true]\n", ":3: no_hashes: expected a single value"},
		{"read_only: true\ntools: [write_file]\n", "--read-only: contradicts --tools: write_file"},
		{"http: 127.0.0.1:0\nauth: tokens\ntoken_file: t.yaml\nscopes:\n  files:read: [read, lsit_directory, greb]\n", `:5: scopes: scope "files:read": unknown tool "lsit_directory", "greb"`},
		{"http: 127.0.0.1:0\nauth: tokens\ntoken_file: t.yaml\nscopes:\n  files read: [read]\n", `scopes: scope "files read": a scope is one word`},
		{"http: 127.0.0.1:0\nauth: tokens\ntoken_file: t.yaml\nscopes: [read]\n", ":4: scopes: expected a mapping of scope"},
		{"scopes:\n  files:read: [read]\n", "scopes: needs --auth"},
		{"http: 127.0.0.1:0\nauth: tokens\ntoken_file: t.yaml\ntenant_mount:\n  - ws=local:/t/{tenant}\ntenant_policy:\n  ../t2: {deny: [a]}\n", `:7: tenant_policy: policy of "../t2": not a safe tenant id`},
		{"http: 127.0.0.1:0\nauth: tokens\ntoken_file: t.yaml\ntenant_mount:\n  - ws=local:/t/{tenant}\ntenant_policy:\n  t1: {tools: [rm]}\n", `tenant_policy: policy of "t1": tools: unknown tool "rm"`},
		{"http: 127.0.0.1:0\nauth: tokens\ntoken_file: t.yaml\ntenant_mount:\n  - ws=local:/t/{tenant}\ntenant_policy:\n  t1: {allow: [a]}\n", "tenant_policy: expected a mapping of tenant to deny, protect and tools lists"},
		{"http: 127.0.0.1:0\nauth: tokens\ntoken_file: t.yaml\ntenant_mount:\n  - ws=local:/t/{tenant}\ntenant_policy:\n  t1: {deny: [\"a/../b\"]}\n", `tenant_policy: policy of "t1": deny: policy: invalid pattern 'a/../b'`},
		{"http: 127.0.0.1:0\nauth: tokens\ntoken_file: t.yaml\nroot: /x\ntenant_policy:\n  t1: {deny: [a]}\n", "tenant_policy: needs --tenant-mount"},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			file := writeConfig(t, tt.text)
			s, _, err := Parse("serve", []string{"--config", file})
			if err == nil {
				t.Fatalf("got %+v, want an error", s)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestParseConfigFileServeKeysElsewhere(t *testing.T) {
	// One file configures every command: a key of another command is
	// ignored instead of refused.
	file := writeConfig(t, "http: 127.0.0.1:1\nmax_find: 3\nskills: [a, b]\n")
	s, _, err := Parse("call", []string{"--config", file})
	if err != nil {
		t.Fatal(err)
	}
	if s.HTTP != "" || s.MaxFind != 3 || s.Skills != nil {
		t.Fatalf("got HTTP %q MaxFind %d Skills %q", s.HTTP, s.MaxFind, s.Skills)
	}
	s, _, err = Parse("skills", []string{"--config", file})
	if err != nil {
		t.Fatal(err)
	}
	if s.HTTP != "" || s.MaxFind != 3 || !slices.Equal(s.Skills, []string{"a", "b"}) || s.LogLevel != slog.LevelWarn {
		t.Fatalf("skills command: got HTTP %q MaxFind %d Skills %q LogLevel %v", s.HTTP, s.MaxFind, s.Skills, s.LogLevel)
	}
	s, _, err = Parse("serve", []string{"--config", writeConfig(t, "skills: one\n")})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Skills, []string{"one"}) {
		t.Fatalf("a single skills root as a string: %q", s.Skills)
	}
}

func TestParseConfigFileEmpty(t *testing.T) {
	for _, text := range []string{"", "# nothing\n", "~\n", "cwd:\n"} {
		file := writeConfig(t, text)
		s, _, err := Parse("serve", []string{"--config", file})
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		want := settings(func(s *Settings) { s.ConfigFile = file })
		if !reflect.DeepEqual(s, want) {
			t.Fatalf("%q: got %+v", text, s)
		}
	}
}

func TestToolOptions(t *testing.T) {
	s := settings(func(s *Settings) {
		s.Cwd, s.Allow, s.Deny, s.Protect = "c", []string{"a"}, []string{"d"}, []string{"p"}
		s.NoDefaultProtect, s.ReadOnly, s.NoHashes, s.RequireRead = true, true, true, true
		s.MaxReadLines, s.MaxReadChars, s.MaxList, s.MaxSearch, s.MaxFind = 1, 2, 3, 4, 5
		s.Tools = []string{"grep"}
		s.CallTimeout = 5 * time.Second
		s.EditTolerance = tools.ToleranceWhitespace
		s.RipgrepSlots = tools.NewRipgrepSlots(2)
	})
	want := tools.Options{CallTimeout: 5 * time.Second, EditTolerance: tools.ToleranceWhitespace, RipgrepSlots: s.RipgrepSlots, Cwd: "c", Allowed: []string{"a"}, Denied: []string{"d"}, Protected: []string{"p"},
		NoDefaultProtect: true, ReadOnly: true, NoContentHashes: true, RequireRead: true,
		MaxReadLines: 1, MaxReadChars: 2, MaxListResults: 3, MaxSearchResults: 4, MaxFindResults: 5, Tools: []string{"grep"}}
	if got := s.ToolOptions(); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

func TestUsage(t *testing.T) {
	var serve, call, skills bytes.Buffer
	Usage("serve", &serve)
	Usage("call", &call)
	Usage("skills", &skills)
	for _, flag := range []string{"--root DIR", "--mount NAME=SPEC", "--max-list N", "--no-hashes", "--config FILE"} {
		if !strings.Contains(call.String(), flag) {
			t.Errorf("call usage lacks %q:\n%s", flag, call.String())
		}
	}
	if !strings.Contains(serve.String(), "--http ADDR") || strings.Contains(call.String(), "--http") {
		t.Errorf("--http must be listed for serve only:\nserve:\n%s\ncall:\n%s", serve.String(), call.String())
	}
	const skillsFlag = "--skills ROOT              offer the skills under ROOT as MCP prompts and resources (repeatable; earlier roots win)"
	if !strings.Contains(serve.String(), skillsFlag) || !strings.Contains(skills.String(), skillsFlag) || strings.Contains(call.String(), "--skills") {
		t.Errorf("--skills must be listed for serve and skills only:\nserve:\n%s\nskills:\n%s\ncall:\n%s", serve.String(), skills.String(), call.String())
	}
	if strings.Contains(skills.String(), "--http") || !strings.Contains(skills.String(), "--mount NAME=SPEC") {
		t.Errorf("skills usage:\n%s", skills.String())
	}
}

// FuzzConfigFile checks that no config file makes Parse panic, and that
// an accepted file yields valid limits.
func FuzzConfigFile(f *testing.F) {
	for _, s := range []string{"max_list: 3\n", "mounts:\n  ws: local:/w\n", "allow: [a, b]\ntools: grep\n", "a: &x [1]\nb: *x\n", "- 1\n"} {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, text string) {
		file := filepath.Join(dir, "c.yaml")
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		s, _, err := Parse("serve", []string{"--config", file})
		if err != nil {
			return
		}
		if s.MaxReadLines < 1 || s.MaxList < 1 || s.MaxSearch < 1 || s.MaxFind < 1 || s.MaxReadChars < 0 {
			t.Fatalf("accepted invalid limits: %+v", s)
		}
	})
}

// TestParseOTLPKeys reads the OTLP settings from the file, as flags.
func TestParseOTLPKeys(t *testing.T) {
	file := writeConfig(t, "otlp_endpoint: https://collector.example.com/otlp\notlp_paths: true\n")
	got, _, err := Parse("serve", []string{"--config", file})
	if err != nil {
		t.Fatal(err)
	}
	if got.OTLPEndpoint != "https://collector.example.com/otlp" || !got.OTLPPaths {
		t.Fatalf("OTLPEndpoint %q, OTLPPaths %v", got.OTLPEndpoint, got.OTLPPaths)
	}
}
