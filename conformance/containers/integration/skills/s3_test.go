// Package skills holds the tests of package skills that need an S3 server
// in a container. They live in the containers module so that the root
// module's tests import nothing outside its go.mod, and a library user's
// go mod tidy works.
package skills_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance/containers"
	"github.com/fencefs/fencefs/local"
	"github.com/fencefs/fencefs/mounted"
	"github.com/fencefs/fencefs/skills"
	"github.com/fencefs/fencefs/tools"
)

func TestMain(m *testing.M) {
	containers.SetTestcontainersDefaults()
	os.Exit(m.Run())
}

// TestS3 runs discovery and activation against a real S3 server, alone and
// mounted beside local disk. It skips loudly without Docker or the image.
func TestS3(t *testing.T) {
	ctx := context.Background()
	srv := containers.StartS3(ctx, t)
	s3 := srv.NewBackend(t, "skills-test")
	put(t, s3, map[string]string{
		"skills/pdf-forms/SKILL.md":   manifest("pdf-forms", "Fill in PDF forms.", "Read fields.md.\n"),
		"skills/pdf-forms/fields.md":  "# Fields\n",
		"skills/shared/SKILL.md":      manifest("shared", "S3 copy.", ""),
		"skills/no-manifest/notes.md": "only a resource\n",
		"skills/bad-yaml/SKILL.md":    "---\nname: bad-yaml\ndescription: [\n---\n",
		"skills/big/SKILL.md":         manifest("big", "d", strings.Repeat("x", 200)),
		"extra/shared/SKILL.md":       manifest("shared", "Second S3 root.", ""),
		"extra/only-extra/SKILL.md":   manifest("only-extra", "d", ""),
		"deep/dir/placeholder.txt":    "x\n",
	})

	t.Run("plain", func(t *testing.T) {
		l := newLoader(t, s3, []string{"skills", "/extra"}, skills.Options{MaxManifestBytes: 128})
		cat := discover(t, l)
		wantLines(t, summary(cat), []string{
			"skill only-extra extra/only-extra (root extra): d",
			"skill pdf-forms skills/pdf-forms (root skills): Fill in PDF forms.",
			"skill shared skills/shared (root skills): S3 copy.",
			"shadowed shared extra/shared by skills/shared",
			"problem skills/bad-yaml/SKILL.md (root skills): front matter is not valid YAML: line 3: did not find expected node content",
			"problem skills/big/SKILL.md (root skills): manifest is 233 bytes, limit is 128",
			"problem skills/no-manifest (root skills): no SKILL.md in the skill directory",
		})
		a, err := l.Activate(ctx, "pdf-forms")
		if err != nil {
			t.Fatal(err)
		}
		if a.ReadPath != "/skills/pdf-forms" || a.Instructions != "Read fields.md." {
			t.Errorf("activation = %+v", a)
		}
		for _, cwd := range []string{"", "deep/dir"} {
			if out := readWithTools(t, s3, cwd, a.ReadPath+"/fields.md"); !strings.Contains(out, "     1\t# Fields\n") {
				t.Errorf("read_file from %q: %s", cwd, out)
			}
		}
	})

	t.Run("mounted beside local", func(t *testing.T) {
		ws, _ := newLocal(t)
		put(t, ws, map[string]string{
			"skills/shared/SKILL.md":  manifest("shared", "Workspace copy.", ""),
			"skills/ws-only/SKILL.md": manifest("ws-only", "d", ""),
			"sessions/s1/notes.md":    "x\n",
		})
		m, err := mounted.New(map[string]backend.Backend{"tenant": backend.ReadOnly(s3), "workspace": ws})
		if err != nil {
			t.Fatal(err)
		}
		l := newLoader(t, m, []string{"/workspace/skills", "/tenant/extra", "/tenant/skills"}, skills.Options{})
		cat := discover(t, l)
		wantLines(t, summary(cat), []string{
			"skill big /tenant/skills/big (root /tenant/skills): d",
			"skill only-extra /tenant/extra/only-extra (root /tenant/extra): d",
			"skill pdf-forms /tenant/skills/pdf-forms (root /tenant/skills): Fill in PDF forms.",
			"skill shared /workspace/skills/shared (root /workspace/skills): Workspace copy.",
			"skill ws-only /workspace/skills/ws-only (root /workspace/skills): d",
			"shadowed shared /tenant/extra/shared by /workspace/skills/shared",
			"shadowed shared /tenant/skills/shared by /workspace/skills/shared",
			"problem /tenant/skills/bad-yaml/SKILL.md (root /tenant/skills): front matter is not valid YAML: line 3: did not find expected node content",
			"problem /tenant/skills/no-manifest (root /tenant/skills): no SKILL.md in the skill directory",
		})
		a, err := l.Activate(ctx, "pdf-forms")
		if err != nil {
			t.Fatal(err)
		}
		if out := readWithTools(t, m, "/workspace/sessions/s1", a.ReadPath+"/fields.md"); !strings.Contains(out, "# Fields") {
			t.Errorf("read_file: %s", out)
		}
	})
}

// The helpers below are those of package skills's own tests.

// manifest returns a valid SKILL.md for name.
func manifest(name, description, body string) string {
	return fmt.Sprintf("---\nname: %s\ndescription: %s\n---\n%s", name, description, body)
}

// put writes files into b: each key is a storage path, each value its
// content.
func put(t *testing.T, b backend.Backend, files map[string]string) {
	t.Helper()
	for name, data := range files {
		if err := backend.WriteFile(context.Background(), b, name, []byte(data), backend.WriteOptions{}); err != nil {
			t.Fatalf("write %s: %v", name, err)
		}
	}
}

// newLocal returns a local backend over a fresh directory, and the
// directory.
func newLocal(t *testing.T) (*local.FS, string) {
	t.Helper()
	dir := t.TempDir()
	b, err := local.New(dir)
	if err != nil {
		t.Fatalf("local.New: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	return b, dir
}

func newLoader(t *testing.T, b backend.Backend, roots []string, opts skills.Options) *skills.Loader {
	t.Helper()
	l, err := skills.New(b, roots, opts)
	if err != nil {
		t.Fatalf("New(%q): %v", roots, err)
	}
	return l
}

func discover(t *testing.T, l *skills.Loader) *skills.Catalog {
	t.Helper()
	cat, err := l.Discover(context.Background())
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	return cat
}

// summary renders a catalog one fact per line, for exact comparisons.
func summary(cat *skills.Catalog) []string {
	var out []string
	for _, s := range cat.Skills {
		out = append(out, fmt.Sprintf("skill %s %s (root %s): %s", s.Name, s.Path, s.Root, s.Description))
	}
	for _, s := range cat.Shadowed {
		out = append(out, fmt.Sprintf("shadowed %s %s by %s", s.Skill.Name, s.Skill.Path, s.By.Path))
	}
	for _, p := range cat.Problems {
		name := ""
		if p.Name != "" {
			name = " [" + p.Name + "]"
		}
		out = append(out, fmt.Sprintf("problem%s %s (root %s): %s", name, p.Path, p.Root, p.Reason))
	}
	return out
}

func wantLines(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

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
