package skills

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/tools"
)

// readWithTools reads path with the read_file tool of a tool set working
// in cwd, and returns the result text.
func readWithTools(t *testing.T, b backend.Backend, cwd, path string) string {
	t.Helper()
	set, err := tools.New(b, tools.Options{Cwd: cwd})
	if err != nil {
		t.Fatalf("tools.New(Cwd %q): %v", cwd, err)
	}
	args, err := json.Marshal(map[string]string{"path": path})
	if err != nil {
		t.Fatal(err)
	}
	out, err := set.Call(context.Background(), "read_file", args)
	if err != nil {
		t.Fatalf("read_file %q from cwd %q: %v", path, cwd, err)
	}
	return out
}

func TestActivationPathWorksWithTools(t *testing.T) {
	const resource = "resource text"
	skill := map[string]string{
		"SKILL.md":     manifest("pdf-forms", "Fill in forms.", "Read resource.txt.\n"),
		"resource.txt": resource + "\n",
	}
	in := func(dir string) map[string]string {
		out := map[string]string{}
		for k, v := range skill {
			out[dir+"/"+k] = v
		}
		return out
	}

	m, tenant, workspace, _ := newMounted(t)
	put(t, tenant, in("skills/pdf-forms"))
	put(t, workspace, map[string]string{"sessions/s1/notes.md": "x\n"})

	lb, ldir := newLocal(t)
	put(t, lb, in("skills/pdf-forms"))
	put(t, lb, map[string]string{"sub/deeper/notes.md": "x\n"})

	mem := newMem()
	put(t, mem, in("team/skills/pdf-forms"))
	put(t, mem, map[string]string{"deep/dir/notes.md": "x\n"})

	tests := []struct {
		name     string
		b        backend.Backend
		root     string
		loadCwd  string // Options.Cwd of the loader
		toolCwds []string
		want     string
	}{
		{"mounted", m, "/tenant/skills", "", []string{"", "/", "/workspace", "/workspace/sessions/s1", "/tenant/skills/pdf-forms"}, "/tenant/skills/pdf-forms"},
		{"local at the root", lb, "skills", "", []string{""}, "skills/pdf-forms"},
		{"local in a subdirectory", lb, "skills", "sub/deeper", []string{"sub/deeper"}, "../../skills/pdf-forms"},
		{"local with a host-path cwd", lb, filepath.Join(ldir, "skills"), filepath.Join(ldir, "sub"), []string{filepath.Join(ldir, "sub"), "sub"}, "../skills/pdf-forms"},
		{"local inside the skill", lb, "skills", "skills/pdf-forms", []string{"skills/pdf-forms"}, "."},
		{"afero", mem, "team/skills", "", []string{"", "deep", "deep/dir", "/team"}, "/team/skills/pdf-forms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLoader(t, tt.b, []string{tt.root}, Options{Cwd: tt.loadCwd})
			a, err := l.Activate(context.Background(), "pdf-forms")
			if err != nil {
				t.Fatalf("Activate: %v", err)
			}
			if a.ReadPath != tt.want {
				t.Errorf("ReadPath = %q, want %q", a.ReadPath, tt.want)
			}
			if a.Instructions != "Read resource.txt." {
				t.Errorf("Instructions = %q", a.Instructions)
			}
			for _, cwd := range tt.toolCwds {
				out := readWithTools(t, tt.b, cwd, a.ReadPath+"/resource.txt")
				if !strings.Contains(out, "     1\t"+resource+"\n") {
					t.Errorf("read_file from cwd %q:\n%s", cwd, out)
				}
			}
		})
	}
}

func TestActivateAgreesWithDiscover(t *testing.T) {
	m, tenant, workspace, wdir := newMounted(t)
	put(t, tenant, map[string]string{
		"skills/shared/SKILL.md":      manifest("shared", "Tenant copy.", "tenant body"),
		"skills/fixed-later/SKILL.md": manifest("fixed-later", "", ""),
		"skills/tenant-only/SKILL.md": manifest("tenant-only", "d", "t"),
		"skills/mismatch/SKILL.md":    manifest("other", "d", ""),
	})
	put(t, workspace, map[string]string{
		"skills/shared/SKILL.md":      manifest("shared", "Workspace copy.", "workspace body"),
		"skills/fixed-later/SKILL.md": manifest("fixed-later", "Valid here.", "later body"),
		"skills/mismatch/SKILL.md":    manifest("mismatch", "Matches here.", ""),
		"real/linked/SKILL.md":        manifest("linked", "d", ""),
	})
	symlink(t, filepath.Join(wdir, "real", "linked"), filepath.Join(wdir, "skills", "linked"))
	l := newLoader(t, m, []string{"/tenant/skills", "/workspace/skills"}, Options{})
	cat := discover(t, l)
	if len(cat.Skills) != 4 {
		t.Fatalf("skills: %v", summary(cat))
	}
	for _, s := range cat.Skills {
		a, err := l.Activate(context.Background(), s.Name)
		if err != nil {
			t.Fatalf("Activate(%s): %v", s.Name, err)
		}
		if !reflect.DeepEqual(a.Skill, s) {
			t.Errorf("Activate(%s).Skill = %+v\ndiscovered %+v", s.Name, a.Skill, s)
		}
		if a.ReadPath != s.Path {
			t.Errorf("Activate(%s).ReadPath = %q, want %q", s.Name, a.ReadPath, s.Path)
		}
	}
	a, _ := l.Activate(context.Background(), "shared")
	if a.Instructions != "tenant body" {
		t.Errorf("shared: Instructions = %q, want the earlier root's", a.Instructions)
	}
	a, _ = l.Activate(context.Background(), "fixed-later")
	if a.Instructions != "later body" || a.Skill.Root != "/workspace/skills" {
		t.Errorf("fixed-later: %+v; want the valid copy of the later root", a)
	}
	if _, ok := cat.Lookup("linked"); ok {
		t.Error("a symlinked skill directory was discovered")
	}
}

func TestActivateNotFound(t *testing.T) {
	b, dir := newLocal(t)
	put(t, b, map[string]string{
		"a/broken/SKILL.md": manifest("broken", "", ""),
		"b/broken/SKILL.md": "no front matter\n",
		"a/file-not-dir":    "x\n",
		"real/x/SKILL.md":   manifest("linked", "d", ""),
	})
	symlink(t, filepath.Join(dir, "real", "x"), filepath.Join(dir, "a", "linked"))
	l := newLoader(t, b, []string{"a", "b", "missing"}, Options{})
	tests := []struct{ name, want string }{
		{"nothing", `skills: skill not found: "nothing"`},
		{"broken", `skills: skill not found: "broken" (passed over a/broken/SKILL.md: description is empty; ` +
			`b/broken/SKILL.md: no YAML front matter: the file must start with a line '---')`},
		{"file-not-dir", `skills: skill not found: "file-not-dir"`},
		{"linked", `skills: skill not found: "linked" (passed over a/linked: skill directory is a symbolic link; links are not followed)`},
		{"../real/x", `skills: skill not found: "../real/x" is not a valid skill name`},
		{"", `skills: skill not found: "" is not a valid skill name`},
	}
	for _, tt := range tests {
		_, err := l.Activate(context.Background(), tt.name)
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("Activate(%q) = %v, want ErrNotFound", tt.name, err)
			continue
		}
		if err.Error() != tt.want {
			t.Errorf("Activate(%q) error:\n%s\nwant\n%s", tt.name, err, tt.want)
		}
	}
}

func TestActivateCancelled(t *testing.T) {
	b := newMem()
	put(t, b, map[string]string{"s/a/SKILL.md": manifest("a", "d", "")})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := newLoader(t, b, []string{"s"}, Options{}).Activate(ctx, "a"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Activate with a cancelled context: %v, want context.Canceled", err)
	}
}

func TestToolPathOption(t *testing.T) {
	b := newMem()
	put(t, b, map[string]string{"s/a/SKILL.md": manifest("a", "d", "")})
	l := newLoader(t, b, []string{"s"}, Options{ToolPath: func(p string) string { return "skills-volume:" + p }})
	a, err := l.Activate(context.Background(), "a")
	if err != nil {
		t.Fatal(err)
	}
	if a.ReadPath != "skills-volume:s/a" {
		t.Errorf("ReadPath = %q", a.ReadPath)
	}
}

func TestPromptText(t *testing.T) {
	tests := []struct {
		a    Activation
		want string
	}{
		{
			Activation{Skill: Skill{Name: "pdf-forms"}, Instructions: "Read forms.md.", ReadPath: "/tenant/skills/pdf-forms"},
			"Read forms.md.\n\nThe files of the skill \"pdf-forms\" are in the directory /tenant/skills/pdf-forms. " +
				"Paths in these instructions are relative to it: read them with the file tools as /tenant/skills/pdf-forms/<path>.\n",
		},
		{
			Activation{Skill: Skill{Name: "x"}, ReadPath: "skills/x"},
			"The files of the skill \"x\" are in the directory skills/x. " +
				"Paths in these instructions are relative to it: read them with the file tools as skills/x/<path>.\n",
		},
	}
	for _, tt := range tests {
		if got := PromptText(tt.a); got != tt.want {
			t.Errorf("PromptText =\n%q\nwant\n%q", got, tt.want)
		}
	}
}
