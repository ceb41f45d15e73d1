//go:build !fencefs_oneshot

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// manifest returns the text of a SKILL.md.
func manifest(name, description, body string) string {
	return "---\nname: " + name + "\ndescription: " + description + "\n---\n" + body
}

// skillsFixture lays out two skill roots: team/ holds pdf-forms (with a
// resource) and commit-msg; ws/skills holds a second pdf-forms, which the
// first shadows when team comes first, and a skill with a broken
// manifest.
func skillsFixture(t *testing.T) (base string) {
	t.Helper()
	base = t.TempDir()
	writeFile(t, filepath.Join(base, "team", "pdf-forms", "SKILL.md"), manifest("pdf-forms", "Fill in PDF forms.", "Read fields.md first.\n"))
	writeFile(t, filepath.Join(base, "team", "pdf-forms", "fields.md"), "# Fields\nname, date\n")
	writeFile(t, filepath.Join(base, "team", "commit-msg", "SKILL.md"), manifest("commit-msg", "Write commit messages.", "Use the imperative mood.\n"))
	writeFile(t, filepath.Join(base, "ws", "skills", "pdf-forms", "SKILL.md"), manifest("pdf-forms", "A shadowed copy.", "Never shown.\n"))
	writeFile(t, filepath.Join(base, "ws", "skills", "broken", "SKILL.md"), "no front matter here\n")
	writeFile(t, filepath.Join(base, "ws", "notes.md"), "# notes\n")
	return base
}

// startServer starts `fencefs serve` with args and connects a client; the
// returned buffer collects the server's stderr.
func startServer(t *testing.T, dir string, args ...string) (*mcp.ClientSession, *syncBuffer) {
	t.Helper()
	return startServerEnv(t, dir, nil, args...)
}

// startServerEnv is startServer with extra environment variables.
func startServerEnv(t *testing.T, dir string, env []string, args ...string) (*mcp.ClientSession, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"serve"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	cs, err := newClient().Connect(t.Context(), &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * exitDeadline}, nil)
	if err != nil {
		t.Fatalf("fencefs serve %q: %v\nstderr:\n%s", args, err, stderr.String())
	}
	t.Cleanup(func() { cs.Close() })
	return cs, stderr
}

// listPrompts returns "name: description" of every prompt.
func listPrompts(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	list, err := cs.ListPrompts(t.Context(), nil)
	if err != nil {
		t.Fatalf("prompts/list: %v", err)
	}
	var out []string
	for _, p := range list.Prompts {
		out = append(out, p.Name+": "+p.Description)
	}
	return out
}

// getPrompt gets a prompt and returns its single user message's text.
func getPrompt(t *testing.T, cs *mcp.ClientSession, name string) (description, text string) {
	t.Helper()
	res, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: name})
	if err != nil {
		t.Fatalf("prompts/get %s: %v", name, err)
	}
	if len(res.Messages) != 1 || res.Messages[0].Role != "user" {
		t.Fatalf("prompts/get %s: messages %+v, want one user message", name, res.Messages)
	}
	tc, ok := res.Messages[0].Content.(*mcp.TextContent)
	if !ok {
		t.Fatalf("prompts/get %s: content %T, want text", name, res.Messages[0].Content)
	}
	return res.Description, tc.Text
}

func TestServeSkillsMounted(t *testing.T) {
	t.Parallel()
	base := skillsFixture(t)
	cs, stderr := startServer(t, base, "--mount", "ws=local:ws", "--mount", "team=local:team:ro",
		"--skills", "/team", "--skills", "/ws/skills", "--cwd", "/ws")
	ctx := t.Context()

	got := listPrompts(t, cs)
	want := []string{"commit-msg: Write commit messages.", "pdf-forms: Fill in PDF forms."}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("prompts/list = %q, want %q", got, want)
	}
	desc, text := getPrompt(t, cs, "pdf-forms")
	if desc != "Fill in PDF forms." || !strings.HasPrefix(text, "Read fields.md first.\n") || !strings.Contains(text, " /team/pdf-forms/<path>") {
		t.Fatalf("prompts/get pdf-forms = %q, %q; want the instructions and the read path /team/pdf-forms", desc, text)
	}
	// The read path works from the tools' working directory, /ws, through
	// the same server.
	if out := callOK(t, ctx, cs, "read_file", map[string]any{"path": "/team/pdf-forms/fields.md"}); !strings.Contains(out, "\tname, date\n") {
		t.Errorf("read_file of the skill's resource: %q", out)
	}
	if out := callOK(t, ctx, cs, "read_file", map[string]any{"path": "notes.md"}); !strings.Contains(out, "# notes") {
		t.Errorf("getting a prompt changed the working directory: %q", out)
	}

	// A skill broken after start-up fails its prompt with a JSON-RPC
	// error, which is logged.
	writeFile(t, filepath.Join(base, "team", "commit-msg", "SKILL.md"), "gone\n")
	res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "commit-msg"})
	if err == nil || !strings.Contains(err.Error(), `skill not found: "commit-msg"`) {
		t.Fatalf("prompts/get of a broken skill = %+v, %v; want an error", res, err)
	}
	if err := cs.Close(); err != nil {
		t.Fatalf("closing: %v\nstderr:\n%s", err, stderr.String())
	}
	logs := stderr.String()
	for _, want := range []string{
		`level=WARN msg="skill problem" root=/ws/skills path=/ws/skills/broken/SKILL.md reason="no YAML front matter`,
		`level=INFO msg="skill shadowed" skill=pdf-forms path=/ws/skills/pdf-forms in_use=/team/pdf-forms`,
		`level=INFO msg="skills offered as prompts and resources" roots="[/team /ws/skills]" skills="[commit-msg pdf-forms]" problems=1`,
		`level=WARN msg="skill activation failed" skill=commit-msg`,
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("stderr lacks %s\nstderr:\n%s", want, logs)
		}
	}
}

func TestServeSkillsPlain(t *testing.T) {
	t.Parallel()
	base := skillsFixture(t)
	root := filepath.Join(base, "ws")
	writeFile(t, filepath.Join(root, "skills", "pdf-forms", "form.txt"), "the form\n")
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		readPath string
	}{
		{"root", []string{"--root", root, "--skills", "skills"}, "skills/pdf-forms"},
		// Roots are spelt from the namespace root, read paths from --cwd.
		{"cwd", []string{"--root", root, "--cwd", "sub", "--skills", "skills"}, "../skills/pdf-forms"},
		{"host path", []string{"--root", root, "--cwd", "sub", "--skills", filepath.Join(root, "skills")}, "../skills/pdf-forms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cs, stderr := startServer(t, base, tt.args...)
			if got := listPrompts(t, cs); strings.Join(got, "\n") != "pdf-forms: A shadowed copy." {
				t.Fatalf("prompts/list = %q", got)
			}
			_, text := getPrompt(t, cs, "pdf-forms")
			if !strings.HasPrefix(text, "Never shown.\n") || !strings.Contains(text, " "+tt.readPath+"/<path>") {
				t.Fatalf("prompts/get = %q, want the instructions and the read path %s", text, tt.readPath)
			}
			out := callOK(t, t.Context(), cs, "read_file", map[string]any{"path": tt.readPath + "/form.txt"})
			if !strings.Contains(out, "\tthe form\n") {
				t.Errorf("read_file %s/form.txt: %q", tt.readPath, out)
			}
			if err := cs.Close(); err != nil {
				t.Errorf("closing: %v\nstderr:\n%s", err, stderr.String())
			}
		})
	}
}

func TestServeSkillsRefused(t *testing.T) {
	t.Parallel()
	base := skillsFixture(t)
	many := filepath.Join(base, "many")
	for i := range 1001 {
		if err := os.MkdirAll(filepath.Join(many, fmt.Sprintf("s%04d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"climbs above the root", []string{"--root", "ws", "--skills", "../team"},
			"fencefs: --skills: root \"../team\": normalize ../team: invalid path: path climbs above the root\n"},
		{"given twice", []string{"--root", "ws", "--skills", "skills", "--skills", "./skills/"},
			"fencefs: --skills: root \"./skills/\" names the same directory as \"skills\"\n"},
		{"host path outside the root", []string{"--root", "ws", "--skills", filepath.Join(base, "team")},
			"fencefs: --skills: root " + `"` + filepath.Join(base, "team") + `": `},
		{"too many skills", []string{"--mount", "m=local:many", "--skills", "/m"},
			"fencefs: --skills: too many skills: 1001 skill directories in /m and the roots before it, limit is 1000\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := runFencefs(t, base, "", nil, append([]string{"serve"}, tt.args...)...)
			if got.code != 1 || got.stdout != "" || !strings.Contains(got.stderr, tt.want) {
				t.Fatalf("serve %q: %+v\nwant exit 1 and stderr containing %q", tt.args, got, tt.want)
			}
		})
	}
}

func TestSkillsCommand(t *testing.T) {
	t.Parallel()
	base := skillsFixture(t)
	writeFile(t, filepath.Join(base, "fencefs.yaml"), "mounts:\n  ws: local:ws\n  team: local:team:ro\nskills: [/team, /ws/skills, /ws/missing]\n")
	const listing = `NAME        PATH              DESCRIPTION
commit-msg  /team/commit-msg  Write commit messages.
pdf-forms   /team/pdf-forms   Fill in PDF forms.

Shadowed by an earlier root:
  pdf-forms  /ws/skills/pdf-forms  (in use: /team/pdf-forms)

Problems:
  /ws/skills/broken/SKILL.md: no YAML front matter: the file must start with a line '---'
  /ws/missing: root does not exist
`
	mounts := []string{"--mount", "ws=local:ws", "--mount", "team=local:team:ro"}
	const twoProblems = "fencefs: skills: 2 problems (listed above)\n"
	tests := []struct {
		name string
		args []string
		want result
	}{
		{"mounted, with problems", append(mounts, "--skills", "/team", "--skills", "/ws/skills", "--skills", "/ws/missing"), result{stdout: listing, stderr: twoProblems, code: 2}},
		{"config file", []string{"--config", "fencefs.yaml"}, result{stdout: listing, stderr: twoProblems, code: 2}},
		{"flags override the file", []string{"--config", "fencefs.yaml", "--skills", "/ws/skills"}, result{stdout: `NAME       PATH                  DESCRIPTION
pdf-forms  /ws/skills/pdf-forms  A shadowed copy.

Problems:
  /ws/skills/broken/SKILL.md: no YAML front matter: the file must start with a line '---'
`, stderr: "fencefs: skills: 1 problem (listed above)\n", code: 2}},
		{"plain root", []string{"--root", "team", "--skills", "."}, result{stdout: `NAME        PATH        DESCRIPTION
commit-msg  commit-msg  Write commit messages.
pdf-forms   pdf-forms   Fill in PDF forms.
`}},
		{"nothing found", []string{"--root", "ws", "--skills", "nowhere"}, result{stdout: "No skills found in nowhere.\n\nProblems:\n  nowhere: root does not exist\n", stderr: "fencefs: skills: 1 problem (listed above)\n", code: 2}},
		{"no roots", mounts, result{stderr: "fencefs: skills: no skill roots given; add --skills ROOT (repeatable), or a skills list to the config file\n", code: 1}},
		{"bad root", []string{"--root", "ws", "--skills", "../team"},
			result{stderr: "fencefs: --skills: root \"../team\": normalize ../team: invalid path: path climbs above the root\n", code: 1}},
		{"arguments", []string{"--root", "ws", "--skills", "skills", "pdf-forms"}, result{stderr: "fencefs: skills takes no arguments, got [\"pdf-forms\"]\n", code: 1}},
		{"serve's flag", []string{"--http", "127.0.0.1:0"}, result{stderr: "fencefs: --http: unknown flag (see fencefs help skills)\n", code: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"skills"}, tt.args...)
			if got := runFencefs(t, base, "", nil, args...); got != tt.want {
				t.Fatalf("fencefs %q:\n got exit %d stdout %q stderr %q\nwant exit %d stdout %q stderr %q",
					args, got.code, got.stdout, got.stderr, tt.want.code, tt.want.stdout, tt.want.stderr)
			}
		})
	}

	help := runFencefs(t, base, "", nil, "help", "skills")
	if help.code != 0 || !strings.HasPrefix(help.stdout, "Usage: fencefs skills [flags]") || !strings.Contains(help.stdout, "--skills ROOT") {
		t.Errorf("help skills: %+v", help)
	}
	got := runFencefs(t, base, "", nil, "call", "--skills", "/ws/skills", "list_directory")
	if got.code != 1 || got.stderr != "fencefs: --skills: unknown flag (see fencefs help call)\n" {
		t.Errorf("call --skills: %+v", got)
	}
}
