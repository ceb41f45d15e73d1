//go:build !fencefs_oneshot

package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneshotBuild builds the command with -tags fencefs_oneshot and
// checks that it is the default build for what it has: version, help on
// every topic, completion, and call on --root and local: mounts give the
// same stdout, stderr, exit code and files. Everything else is refused,
// exit 1, naming the default build, having changed nothing. The build
// links none of the packages it exists to leave out.
func TestOneshotBuild(t *testing.T) {
	t.Parallel()
	oneshot := filepath.Join(t.TempDir(), "fencefs-oneshot")
	if out, err := exec.Command("go", "build", "-tags", "fencefs_oneshot", "-o", oneshot, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build -tags fencefs_oneshot: %v\n%s", err, out)
	}
	out, err := exec.Command("go", "list", "-deps", "-tags", "fencefs_oneshot", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		for _, left := range []string{"github.com/aws/", "github.com/prometheus/", "github.com/modelcontextprotocol/", "go.opentelemetry.io/",
			"cloud.google.com/", "github.com/Azure/", "google.golang.org/grpc", "github.com/coreos/go-oidc/", "github.com/pkg/sftp"} {
			if strings.HasPrefix(p, left) {
				t.Errorf("the one-shot build links %s", p)
			}
		}
		switch strings.TrimPrefix(p, "github.com/fencefs/fencefs/") {
		case "server", "mcpserver", "tenant", "mountspec", "s3adapter", "sftpadapter", "telemetry", "gcsadapter", "azureadapter", "golang.org/x/crypto/ssh",
			"net", "runtime/cgo": // without them the binary is static, cgo on or off
			t.Errorf("the one-shot build links %s", p)
		}
	}

	same := func(t *testing.T, stdin string, args ...string) {
		t.Helper()
		// Each build works on a fixture of its own, written alike; its
		// path is ROOT in what is compared.
		var got [2]result
		var trees [2]map[string]string
		for i, bin := range []string{binary, oneshot} {
			f := newFixture(t)
			a := make([]string, len(args))
			for j, s := range args {
				a[j] = strings.ReplaceAll(s, "ROOT", f.root)
			}
			r := runBinary(t, bin, f.root, stdin, a...)
			r.stdout = strings.ReplaceAll(r.stdout, f.root, "ROOT")
			r.stderr = strings.ReplaceAll(r.stderr, f.root, "ROOT")
			got[i] = r
			trees[i] = map[string]string{}
			for p, c := range snapshot(t, f.root) {
				trees[i][strings.TrimPrefix(p, f.root)] = c
			}
		}
		if got[0] != got[1] {
			t.Errorf("fencefs %q:\ndefault:  %+v\none-shot: %+v", args, got[0], got[1])
		}
		if len(trees[0]) != len(trees[1]) {
			t.Errorf("fencefs %q: files %v, one-shot %v", args, trees[0], trees[1])
		}
		for p, c := range trees[0] {
			if trees[1][p] != c {
				t.Errorf("fencefs %q: %s is %q, one-shot %q", args, p, c, trees[1][p])
			}
		}
	}
	t.Run("same", func(t *testing.T) {
		t.Parallel()
		for _, args := range [][]string{
			{"version"}, {"--version"}, {"version", "x"}, {}, {"nosuch"}, {"help"}, {"help", "nosuch"},
			{"completion", "bash"}, {"completion", "zsh"}, {"completion", "fish"}, {"completion"}, {"completion", "tcsh"},
			{"call", "--help"}, {"serve", "--help"}, {"call"},
			{"call", "--root", "ROOT", "read_file", `{"path":"a.txt"}`},
			{"call", "--root", "ROOT", "--cwd", "sub", "list_directory", `{}`},
			{"call", "--root", "ROOT", "read_file", `{"path":"missing.txt"}`},
			{"call", "--root", "ROOT", "read_file", `{bad`},
			{"call", "--root", "ROOT", "nosuch"},
			{"call", "--root", "ROOT", "--cwd", "nope", "read_file", `{"path":"a.txt"}`},
			{"call", "--root", "ROOT", "--deny", "a.txt", "read_file", `{"path":"a.txt"}`},
			{"call", "--root", "ROOT", "--protect", "a.txt", "write_file", `{"path":"a.txt","content":"x"}`},
			{"call", "--root", "ROOT/missing", "read_file", `{"path":"a.txt"}`},
			{"call", "--root", "ROOT", "--tools", "all", "write_file", `{"path":"new/c.txt","content":"c\n"}`},
			{"call", "--mount", "ws=local:ROOT", "--mount", "ro=local:ROOT/sub:ro", "--cwd", "/ws", "edit_file", `{"path":"a.txt","old_string":"world","new_string":"there"}`},
			{"call", "--mount", "ro=local:ROOT:ro", "write_file", `{"path":"/ro/a.txt","content":"x"}`},
			{"call", "--mount", "ws=local:ROOT/missing", "list_directory", `{}`},
			{"call", "--mount", "ws=nosuch:ROOT", "list_directory", `{}`},
			{"call", "--root", "ROOT", "--mount", "ws=local:ROOT", "list_directory", `{}`},
		} {
			same(t, "", args...)
		}
		for _, topic := range helpTopics() {
			same(t, "", "help", topic)
		}
		same(t, `{"path":"sub/b.go"}`, "call", "--root", "ROOT", "read_file")
	})
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		before := snapshot(t, filepath.Dir(f.root))
		for _, args := range [][]string{
			{"serve", "--root", f.root}, {"tools"}, {"skills", "--skills", "/x"}, {"checkpoints", "local:" + f.outside, "list"},
			{"audit", "verify", "x"}, {"overlay", "changes", "overlay:local:" + f.root + "+local:" + f.outside},
			{"call", "--mount", "x=s3://bucket/p", "read_file", `{"path":"/x/a"}`},
			{"call", "--mount", "x=sftp://u@127.0.0.1/d?password_env=PW", "read_file", `{"path":"/x/a"}`},
			{"call", "--mount", "x=sftp://u@127.0.0.1/d?password_env=PW&host_key=AAAA", "read_file", `{"path":"/x/a"}`},
			{"call", "--mount", "x=gs://bucket/p", "read_file", `{"path":"/x/a"}`},
			{"call", "--mount", "x=azblob://container/p", "read_file", `{"path":"/x/a"}`},
			{"call", "--mount", "x=overlay:local:" + f.root + "+local:" + f.outside, "read_file", `{"path":"/x/a.txt"}`},
			{"call", "--root", f.root, "--checkpoints", "local:" + f.outside, "write_file", `{"path":"a.txt","content":"x"}`},
		} {
			got := runBinary(t, oneshot, f.root, "", args...)
			if got.code != 1 || got.stdout != "" || !strings.Contains(got.stderr, "not in this build of fencefs (built with -tags fencefs_oneshot") ||
				!strings.Contains(got.stderr, "the default build has every command and mount kind: go install github.com/fencefs/fencefs/cmd/fencefs@latest\n") {
				t.Errorf("one-shot fencefs %q: %+v, want exit 1 naming the default build", args, got)
			}
		}
		after := snapshot(t, filepath.Dir(f.root))
		if len(after) != len(before) {
			t.Errorf("the refusals changed files: %v, before %v", after, before)
		}
		for p, c := range before {
			if after[p] != c {
				t.Errorf("the refusals changed %s", p)
			}
		}
	})
}

// runBinary runs the fencefs executable bin in dir with stdin.
func runBinary(t *testing.T, bin, dir, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), exitDeadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = os.Environ()
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && (!errors.As(err, &exit) || ctx.Err() != nil) {
		t.Fatalf("%s %q: %v\nstderr:\n%s", bin, args, err, stderr.String())
	}
	return result{stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()}
}
