package skills

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/fencefs/fencefs/aferoadapter"
	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/local"
	"github.com/fencefs/fencefs/mounted"
)

// manifest returns a valid SKILL.md for name.
func manifest(name, description, body string) string {
	return fmt.Sprintf("---\nname: %s\ndescription: %s\n---\n%s", name, description, body)
}

// put writes files into b: each key is a storage path, each value its
// content; a key ending in "/" makes a directory.
func put(t *testing.T, b backend.Backend, files map[string]string) {
	t.Helper()
	ctx := context.Background()
	for name, data := range files {
		if dir, ok := strings.CutSuffix(name, "/"); ok {
			if err := backend.MkdirAll(ctx, b, dir); err != nil {
				t.Fatalf("mkdir %s: %v", dir, err)
			}
			continue
		}
		if err := backend.WriteFile(ctx, b, name, []byte(data), backend.WriteOptions{}); err != nil {
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

// newMem returns a backend over a fresh afero.MemMapFs.
func newMem() *aferoadapter.FS {
	return aferoadapter.New(afero.NewMemMapFs())
}

// newMounted mounts a MemMapFs as "tenant" and a local directory as
// "workspace", and returns the namespace and its children.
func newMounted(t *testing.T) (m *mounted.FS, tenant *aferoadapter.FS, workspace *local.FS, workspaceDir string) {
	t.Helper()
	tenant = newMem()
	workspace, workspaceDir = newLocal(t)
	m, err := mounted.New(map[string]backend.Backend{"tenant": tenant, "workspace": workspace})
	if err != nil {
		t.Fatalf("mounted.New: %v", err)
	}
	return m, tenant, workspace, workspaceDir
}

func newLoader(t *testing.T, b backend.Backend, roots []string, opts Options) *Loader {
	t.Helper()
	l, err := New(b, roots, opts)
	if err != nil {
		t.Fatalf("New(%q): %v", roots, err)
	}
	return l
}

func discover(t *testing.T, l *Loader) *Catalog {
	t.Helper()
	cat, err := l.Discover(context.Background())
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	return cat
}

// summary renders a catalog one fact per line, for exact comparisons.
func summary(cat *Catalog) []string {
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

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// newLocalAt opens a local backend over dir, for benchmarks that manage
// their own cleanup.
func newLocalAt(dir string) (*local.FS, error) { return local.New(dir) }
