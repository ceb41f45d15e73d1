package skills

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/mounted"
)

func TestDiscoverLocal(t *testing.T) {
	b, dir := newLocal(t)
	put(t, b, map[string]string{
		"skills/pdf-forms/SKILL.md":     manifest("pdf-forms", "Fill in PDF forms.", "Read forms.md.\n"),
		"skills/pdf-forms/forms.md":     "# Forms\n",
		"skills/commit-msg/SKILL.md":    manifest("commit-msg", "Write commit messages.", ""),
		"skills/README.md":              "not a skill\n",
		"skills/.git/config":            "[core]\n",
		"skills/.hidden/SKILL.md":       manifest("hidden", "d", ""),
		"skills/empty/":                 "",
		"skills/wrong-name/SKILL.md":    manifest("other-name", "d", ""),
		"skills/Bad Name/SKILL.md":      manifest("bad-name", "d", ""),
		"skills/no-front/SKILL.md":      "# Just markdown\n",
		"skills/dir-manifest/SKILL.md/": "",
	})
	symlink(t, filepath.Join(dir, "skills", "pdf-forms"), filepath.Join(dir, "skills", "linked"))
	symlink(t, filepath.Join(dir, "elsewhere.md"), filepath.Join(dir, "skills", "link-md", "SKILL.md"))
	put(t, b, map[string]string{"elsewhere.md": manifest("link-md", "d", "")})

	cat := discover(t, newLoader(t, b, []string{"skills"}, Options{}))
	wantLines(t, summary(cat), []string{
		"skill commit-msg skills/commit-msg (root skills): Write commit messages.",
		"skill pdf-forms skills/pdf-forms (root skills): Fill in PDF forms.",
		`problem skills/Bad Name (root skills): directory name "Bad Name" is not valid: use lowercase letters, digits and hyphens`,
		"problem skills/dir-manifest/SKILL.md (root skills): SKILL.md is a directory",
		"problem skills/empty (root skills): no SKILL.md in the skill directory",
		"problem skills/link-md/SKILL.md (root skills): SKILL.md is not a regular file; links are not followed",
		"problem skills/linked (root skills): skill directory is a symbolic link; links are not followed",
		"problem skills/no-front/SKILL.md (root skills): no YAML front matter: the file must start with a line '---'",
		`problem [other-name] skills/wrong-name/SKILL.md (root skills): name "other-name" does not match the directory name "wrong-name"`,
	})
	if got := cat.Roots; len(got) != 1 || got[0] != "skills" {
		t.Errorf("Roots = %q", got)
	}
	if s, ok := cat.Lookup("pdf-forms"); !ok || s.Manifest != "skills/pdf-forms/SKILL.md" {
		t.Errorf("Lookup(pdf-forms) = %+v, %v", s, ok)
	}
	if _, ok := cat.Lookup("linked"); ok {
		t.Error("Lookup found the symlinked copy")
	}
}

func TestDiscoverMounted(t *testing.T) {
	m, tenant, workspace, _ := newMounted(t)
	put(t, tenant, map[string]string{
		"skills/shared/SKILL.md":      manifest("shared", "Tenant copy.", ""),
		"skills/tenant-only/SKILL.md": manifest("tenant-only", "Only in the tenant.", ""),
		"skills/broken/SKILL.md":      manifest("broken", "", ""),
	})
	put(t, workspace, map[string]string{
		"skills/shared/SKILL.md":  manifest("shared", "Workspace copy.", ""),
		"skills/broken/SKILL.md":  manifest("broken", "Valid in the workspace.", ""),
		"skills/ws-only/SKILL.md": manifest("ws-only", "Only in the workspace.", ""),
	})
	cat := discover(t, newLoader(t, m, []string{"/tenant/skills", "/workspace/skills"}, Options{}))
	wantLines(t, summary(cat), []string{
		"skill broken /workspace/skills/broken (root /workspace/skills): Valid in the workspace.",
		"skill shared /tenant/skills/shared (root /tenant/skills): Tenant copy.",
		"skill tenant-only /tenant/skills/tenant-only (root /tenant/skills): Only in the tenant.",
		"skill ws-only /workspace/skills/ws-only (root /workspace/skills): Only in the workspace.",
		"shadowed shared /workspace/skills/shared by /tenant/skills/shared",
		"problem [broken] /tenant/skills/broken/SKILL.md (root /tenant/skills): description is empty",
	})
	if s, _ := cat.Lookup("shared"); s.Manifest != "/tenant/skills/shared/SKILL.md" {
		t.Errorf("Manifest = %q", s.Manifest)
	}
}

func TestDiscoverPrecedence(t *testing.T) {
	b := newMem()
	for _, root := range []string{"a", "b", "c"} {
		put(t, b, map[string]string{
			root + "/same/SKILL.md":              manifest("same", "From "+root+".", ""),
			root + "/only-" + root + "/SKILL.md": manifest("only-"+root, "d", ""),
		})
	}
	tests := []struct {
		roots       []string
		wantWinner  string
		wantShadows []string
	}{
		{[]string{"a", "b", "c"}, "From a.", []string{"shadowed same b/same by a/same", "shadowed same c/same by a/same"}},
		{[]string{"c", "b", "a"}, "From c.", []string{"shadowed same b/same by c/same", "shadowed same a/same by c/same"}},
		{[]string{"b"}, "From b.", nil},
		{[]string{"missing", "b", "a"}, "From b.", []string{"shadowed same a/same by b/same"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.roots, ","), func(t *testing.T) {
			cat := discover(t, newLoader(t, b, tt.roots, Options{}))
			s, ok := cat.Lookup("same")
			if !ok || s.Description != tt.wantWinner {
				t.Errorf("same = %+v, %v; want %q", s, ok, tt.wantWinner)
			}
			var shadows []string
			for _, line := range summary(cat) {
				if strings.HasPrefix(line, "shadowed ") {
					shadows = append(shadows, line)
				}
			}
			wantLines(t, shadows, tt.wantShadows)
			if len(cat.Skills) != 1+len(tt.roots)-countMissing(tt.roots) {
				t.Errorf("skills = %v", summary(cat))
			}
		})
	}
}

func countMissing(roots []string) int {
	n := 0
	for _, r := range roots {
		if r == "missing" {
			n++
		}
	}
	return n
}

func TestDiscoverMalformed(t *testing.T) {
	tests := []struct {
		name, manifest, want string
	}{
		{"no front matter", "Just text.\n", "no YAML front matter: the file must start with a line '---'"},
		{"unclosed", "---\nname: x\n", "front matter is not closed: no line '---' after the opening one"},
		{"bad yaml", "---\nname: [x\n---\n", "front matter is not valid YAML: line 1: did not find expected ',' or ']'"},
		{"missing name", "---\ndescription: d\n---\n", "name is missing"},
		{"missing description", "---\nname: x\n---\n", "[x] description is missing"},
		{"wrong type", "---\nname: x\ndescription: [a, b]\n---\n", "[x] line 3: description must be a string, not a list"},
		{"wrong type of name", "---\nname: 7\ndescription: d\n---\n", "line 2: name must be a string, not an integer"},
		{"invalid name", "---\nname: X\ndescription: d\n---\n", `name "X" is not valid: use lowercase letters, digits and hyphens`},
		{"oversized", "---\nname: x\ndescription: d\n---\n" + strings.Repeat("x", 200), "manifest is 231 bytes, limit is 100"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newMem()
			put(t, b, map[string]string{
				"skills/x/SKILL.md":    tt.manifest,
				"skills/good/SKILL.md": manifest("good", "Still found.", ""),
				"more/after/SKILL.md":  manifest("after", "Later root still read.", ""),
			})
			cat := discover(t, newLoader(t, b, []string{"/skills", "more"}, Options{MaxManifestBytes: 100}))
			// A name the manifest gave is shown in brackets.
			name, reason, known := strings.Cut(tt.want, "] ")
			problem := "problem skills/x/SKILL.md (root skills): " + tt.want
			if known {
				problem = "problem " + name + "] skills/x/SKILL.md (root skills): " + reason
			}
			wantLines(t, summary(cat), []string{
				"skill after more/after (root more): Later root still read.",
				"skill good skills/good (root skills): Still found.",
				problem,
			})
		})
	}
}

func TestDiscoverManifestLimit(t *testing.T) {
	const limit = 64 << 10
	b := newMem()
	head := "---\nname: %s\ndescription: d\n---\n"
	exact := fmt.Sprintf(head, "exact")
	over := fmt.Sprintf(head, "over")
	put(t, b, map[string]string{
		"s/exact/SKILL.md": exact + strings.Repeat("x", limit-len(exact)),
		"s/over/SKILL.md":  over + strings.Repeat("x", limit+1-len(over)),
	})
	cat := discover(t, newLoader(t, b, []string{"s"}, Options{}))
	wantLines(t, summary(cat), []string{
		"skill exact s/exact (root s): d",
		"problem s/over/SKILL.md (root s): manifest is 65537 bytes, limit is 65536",
	})
}

// sizelessFS hides file sizes, as a backend that cannot tell them.
type sizelessFS struct{ backend.Backend }

func (s sizelessFS) Stat(ctx context.Context, name string) (backend.FileInfo, error) {
	fi, err := backend.Stat(ctx, s.Backend, name)
	fi.Size = -1
	return fi, err
}

func TestDiscoverManifestLimitUnknownSize(t *testing.T) {
	b := newMem()
	put(t, b, map[string]string{"s/big/SKILL.md": manifest("big", "d", strings.Repeat("x", 100))})
	cat := discover(t, newLoader(t, sizelessFS{b}, []string{"s"}, Options{MaxManifestBytes: 10}))
	wantLines(t, summary(cat), []string{"problem s/big/SKILL.md (root s): manifest is over 10 bytes, limit is 10"})
}

func TestDiscoverMaxSkills(t *testing.T) {
	b := newMem()
	for i := range 3 {
		put(t, b, map[string]string{fmt.Sprintf("a/s%d/SKILL.md", i): manifest(fmt.Sprintf("s%d", i), "d", "")})
		put(t, b, map[string]string{fmt.Sprintf("b/t%d/SKILL.md", i): manifest(fmt.Sprintf("t%d", i), "d", "")})
	}
	put(t, b, map[string]string{"a/README.md": "files do not count\n", "a/.git/": ""})
	cat := discover(t, newLoader(t, b, []string{"a", "b"}, Options{MaxSkills: 6}))
	if len(cat.Skills) != 6 {
		t.Fatalf("at the cap: %v", summary(cat))
	}
	_, err := newLoader(t, b, []string{"a", "b"}, Options{MaxSkills: 5}).Discover(context.Background())
	if !errors.Is(err, ErrTooManySkills) {
		t.Fatalf("past the cap: err = %v, want ErrTooManySkills", err)
	}
	const want = "skills: too many skills: 6 skill directories in b and the roots before it, limit is 5"
	if err.Error() != want {
		t.Errorf("error = %q\nwant    %q", err, want)
	}
}

func TestDiscoverRootProblems(t *testing.T) {
	b, dir := newLocal(t)
	put(t, b, map[string]string{
		"file":                     "a file\n",
		"real/skills/ok/SKILL.md":  manifest("ok", "Through a linked root.", ""),
		"ws/skills/other/SKILL.md": manifest("other", "d", ""),
		"through/placeholder":      "",
	})
	symlink(t, filepath.Join(dir, "real", "skills"), filepath.Join(dir, "linked"))
	symlink(t, "/", filepath.Join(dir, "escape"))
	symlink(t, "loop2", filepath.Join(dir, "loop1"))
	symlink(t, "loop1", filepath.Join(dir, "loop2"))
	cat := discover(t, newLoader(t, b, []string{"missing", "file", "escape", "loop1", "linked", "ws/skills"}, Options{}))
	wantLines(t, summary(cat), []string{
		"skill ok linked/ok (root linked): Through a linked root.",
		"skill other ws/skills/other (root ws/skills): d",
		"problem missing (root missing): root does not exist",
		"problem file (root file): root is not a directory",
		"problem escape (root escape): root resolves outside the namespace",
		"problem loop1 (root loop1): root resolves through a symlink loop",
	})
}

func TestDiscoverRootForms(t *testing.T) {
	b, dir := newLocal(t)
	put(t, b, map[string]string{"a/b/s/SKILL.md": manifest("s", "d", "")})
	for _, root := range []string{"a/b", "./a//b/", "x/../a/b", filepath.Join(dir, "a", "b"), filepath.Join(dir, "a", "b") + "/"} {
		cat := discover(t, newLoader(t, b, []string{root}, Options{}))
		wantLines(t, summary(cat), []string{"skill s a/b/s (root a/b): d"})
	}
	mem := newMem()
	put(t, mem, map[string]string{"a/b/s/SKILL.md": manifest("s", "d", "")})
	for _, root := range []string{"a/b", "/a/b", "//a/./b"} {
		cat := discover(t, newLoader(t, mem, []string{root}, Options{}))
		wantLines(t, summary(cat), []string{"skill s a/b/s (root a/b): d"})
	}
	m, tenant, _, _ := newMounted(t)
	put(t, tenant, map[string]string{"a/s/SKILL.md": manifest("s", "d", "")})
	for _, root := range []string{"/tenant/a", "tenant/a", "/workspace/../tenant/a/"} {
		cat := discover(t, newLoader(t, m, []string{root}, Options{}))
		wantLines(t, summary(cat), []string{"skill s /tenant/a/s (root /tenant/a): d"})
	}
}

func TestDiscoverWholeMountedNamespace(t *testing.T) {
	// With "/" as the root, each mount is a skill directory candidate.
	tenant := newMem()
	put(t, tenant, map[string]string{"SKILL.md": manifest("tenant", "The mount itself.", "")})
	m, err := mounted.New(map[string]backend.Backend{"tenant": tenant, "Other": newMem()})
	if err != nil {
		t.Fatal(err)
	}
	cat := discover(t, newLoader(t, m, []string{"/"}, Options{}))
	wantLines(t, summary(cat), []string{
		"skill tenant /tenant (root /): The mount itself.",
		`problem /Other (root /): directory name "Other" is not valid: use lowercase letters, digits and hyphens`,
	})
}

func TestNewErrors(t *testing.T) {
	b, dir := newLocal(t)
	m, _, _, _ := newMounted(t)
	tests := []struct {
		name  string
		b     backend.Backend
		roots []string
		opts  Options
		want  string
	}{
		{"nil backend", nil, []string{"s"}, Options{}, "skills: nil backend"},
		{"no roots", b, nil, Options{}, "skills: no roots given"},
		{"empty root", b, []string{""}, Options{}, `skills: root "": empty path`},
		{"climbing root", b, []string{"../x"}, Options{}, `skills: root "../x": normalize ../x: invalid path: path climbs above the root`},
		{"host path outside", b, []string{"/etc"}, Options{}, `skills: root "/etc": `},
		{"duplicate", b, []string{"s", "./s/"}, Options{}, `skills: root "./s/" names the same directory as "s"`},
		{"duplicate host form", b, []string{"s", filepath.Join(dir, "s")}, Options{}, `skills: root "` + filepath.Join(dir, "s") + `" names the same directory as "s"`},
		{"mounted climbing", m, []string{"/../x"}, Options{}, `skills: root "/../x": `},
		{"negative bytes", b, []string{"s"}, Options{MaxManifestBytes: -1}, "skills: Options.MaxManifestBytes is -1; it must not be negative"},
		{"negative skills", b, []string{"s"}, Options{MaxSkills: -2}, "skills: Options.MaxSkills is -2; it must not be negative"},
		{"negative concurrency", b, []string{"s"}, Options{Concurrency: -3}, "skills: Options.Concurrency is -3; it must not be negative"},
		{"bad cwd", b, []string{"s"}, Options{Cwd: "../up"}, `skills: Cwd "../up": `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := New(tt.b, tt.roots, tt.opts)
			if err == nil {
				t.Fatalf("New succeeded: %v", l.Roots())
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error = %q\nwant prefix %q", err, tt.want)
			}
		})
	}
}

func TestDiscoverCancelled(t *testing.T) {
	b := newMem()
	put(t, b, map[string]string{"s/a/SKILL.md": manifest("a", "d", "")})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if cat, err := newLoader(t, b, []string{"s"}, Options{}).Discover(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Discover with a cancelled context = %v, %v; want context.Canceled", cat, err)
	}
}

// failingFS fails reads of one path with an error of its own.
type failingFS struct {
	backend.Backend
	path string
	err  error
}

func (f failingFS) OpenRead(ctx context.Context, name string) (backend.FileReader, error) {
	if name == f.path {
		return nil, &fs.PathError{Op: "open", Path: name, Err: f.err}
	}
	return f.Backend.OpenRead(ctx, name)
}

func TestDiscoverReadErrorIsAProblem(t *testing.T) {
	b := newMem()
	put(t, b, map[string]string{
		"s/a/SKILL.md": manifest("a", "d", ""),
		"s/b/SKILL.md": manifest("b", "d", ""),
	})
	f := failingFS{Backend: b, path: "s/a/SKILL.md", err: errors.New("connection reset")}
	cat := discover(t, newLoader(t, f, []string{"s"}, Options{}))
	wantLines(t, summary(cat), []string{
		"skill b s/b (root s): d",
		"problem s/a/SKILL.md (root s): open s/a/SKILL.md: connection reset",
	})
}

func TestDiscoverConcurrencyKeepsOrder(t *testing.T) {
	b := newMem()
	var want []string
	for i := range 50 {
		name := fmt.Sprintf("s%02d", i)
		put(t, b, map[string]string{"r/" + name + "/SKILL.md": manifest(name, "d", "")})
		want = append(want, fmt.Sprintf("skill %s r/%s (root r): d", name, name))
	}
	for _, n := range []int{1, 3, 64} {
		cat := discover(t, newLoader(t, b, []string{"r"}, Options{Concurrency: n}))
		wantLines(t, summary(cat), want)
	}
}
