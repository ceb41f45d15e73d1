package aferoadapter_test

import (
	"context"
	"testing"
	"testing/fstest"

	"github.com/spf13/afero"

	"github.com/fencefs/fencefs/aferoadapter"
	"github.com/fencefs/fencefs/backend"
)

// sampleFiles is the tree most tests start from; a name ending in "/" is
// an empty directory.
var sampleFiles = map[string]string{
	"a.txt":         "A",
	"a/b.txt":       "AB",
	"a/c/d.txt":     "ACD",
	"empty/":        "",
	"z/deep/y.md":   "Z",
	"sp ace/ü.txt":  "unicode",
	"dot/.hidden":   "h",
	"colon/x:y.txt": "c",
}

// memFS returns a MemMapFs holding files (see sampleFiles) and the
// backend over it.
func memFS(t testing.TB, files map[string]string) (afero.Fs, *aferoadapter.FS) {
	t.Helper()
	mem := afero.NewMemMapFs()
	for name, content := range files {
		if name[len(name)-1] == '/' {
			if err := mem.MkdirAll("/"+name, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := afero.WriteFile(mem, "/"+name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return mem, aferoadapter.New(mem)
}

func sampleNames() []string {
	var names []string
	for name := range sampleFiles {
		if name[len(name)-1] == '/' {
			name = name[:len(name)-1]
		}
		names = append(names, name)
	}
	return names
}

func TestIOFSView(t *testing.T) {
	_, b := memFS(t, sampleFiles)
	if err := fstest.TestFS(backend.FS(context.Background(), b), sampleNames()...); err != nil {
		t.Fatal(err)
	}
}

func TestIOFSViewEmpty(t *testing.T) {
	_, b := memFS(t, nil)
	if err := fstest.TestFS(backend.FS(context.Background(), b)); err != nil {
		t.Fatal(err)
	}
}

func TestIOFSViewOfToAfero(t *testing.T) {
	_, b := memFS(t, sampleFiles)
	view := afero.NewIOFS(aferoadapter.ToAfero(context.Background(), b))
	if err := fstest.TestFS(view, sampleNames()...); err != nil {
		t.Fatal(err)
	}
}
