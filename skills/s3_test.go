package skills

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance/containers"
	"github.com/fencefs/fencefs/mounted"
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
		l := newLoader(t, s3, []string{"skills", "/extra"}, Options{MaxManifestBytes: 128})
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
		l := newLoader(t, m, []string{"/workspace/skills", "/tenant/extra", "/tenant/skills"}, Options{})
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
