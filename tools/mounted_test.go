package tools

import (
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

// mountedFixture is a rooted namespace: /work on local disk, /tenant in
// memory, /docs read-only.
func mountedFixture(t *testing.T) (*mounted.FS, string) {
	t.Helper()
	dir := t.TempDir()
	lb, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lb.Close() })
	docs := afero.NewMemMapFs()
	afero.WriteFile(docs, "/guide.md", []byte("read me\n"), 0o644)
	m, err := mounted.New(map[string]backend.Backend{
		"work":   lb,
		"tenant": aferoadapter.New(afero.NewMemMapFs()),
		"docs":   backend.ReadOnly(aferoadapter.New(docs)),
	})
	if err != nil {
		t.Fatal(err)
	}
	return m, dir
}

func TestMountedNamespace(t *testing.T) {
	m, dir := mountedFixture(t)
	rec := &recorder{}
	s := newSet(t, m, Options{Cwd: "/tenant", OnEvent: rec.on})
	if !s.Rooted() {
		t.Fatal("a mount table is not a rooted namespace")
	}
	ok(t, s, "create_directory", "path", "sessions/s1")
	wantEqual(t, ok(t, s, "write_file", "path", "sessions/s1/notes.md", "content", "a\r\nb\r\n"),
		"Wrote 6 chars (2 lines) to sessions/s1/notes.md. [hash:"+h12("a\r\nb\r\n")+"]")
	wantEqual(t, ok(t, s, "edit_file", "path", "/tenant/sessions/s1/notes.md", "old_text", "b", "new_text", "c"),
		"Edited /tenant/sessions/s1/notes.md (line 2). [hash:"+h12("a\r\nc\r\n")+"]")
	wantEqual(t, ok(t, s, "read_file", "path", "sessions/s1/notes.md"),
		"[sessions/s1/notes.md | 2 lines | hash:"+h12("a\r\nc\r\n")+" | CRLF line endings (each line's \\r is shown before its line break)]\n     1\ta\r\n     2\tc\r\n")
	wantEqual(t, ok(t, s, "list_directory", "path", "/"), "/docs/\n/tenant/\n/work/")
	wantEqual(t, ok(t, s, "list_directory", "path", "sessions/s1"), "/tenant/sessions/s1/notes.md  (6 bytes)")
	wantEqual(t, ok(t, s, "file_info", "path", "../docs/guide.md"),
		"path: ../docs/guide.md\ntype: file\nsize: 8 bytes\nbinary: false\nlines: 1\nhash: "+h12("read me\n"))

	// Writes to a read-only mount are retries naming the path.
	wantEqual(t, retry(t, s, "write_file", "path", "/docs/guide.md", "content", "x"),
		"Path '/docs/guide.md' is on read-only storage and cannot be changed. Write somewhere else.")
	wantEqual(t, retry(t, s, "edit_file", "path", "/docs/guide.md", "old_text", "read", "new_text", "x"),
		"Path '/docs/guide.md' is on read-only storage and cannot be changed. Write somewhere else.")
	wantEqual(t, retry(t, s, "create_directory", "path", "/docs/new"),
		"Path '/docs/new' is on read-only storage and cannot be changed. Write somewhere else.")
	// Unknown mounts and host paths are simply not found.
	wantEqual(t, retry(t, s, "read_file", "path", "/etc/passwd"), "File not found: /etc/passwd")
	wantEqual(t, retry(t, s, "file_info", "path", "/nope"), "Path not found: /nope")
	wantEqual(t, retry(t, s, "read_file", "path", "/"), "'/' is a directory, not a file.")
	wantEqual(t, retry(t, s, "read_file", "path", "/work"), "'/work' is a directory, not a file.")
	wantEqual(t, retry(t, s, "write_file", "path", "/work", "content", ""), "Path '/work' exists and is not a regular file.")
	wantEqual(t, retry(t, s, "read_file", "path", "../../x"), "Path '../../x' resolves outside the root directory.")

	// The local mount keeps its symlink containment.
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "s"), []byte("s"), 0o644)
	os.Symlink(filepath.Join(outside, "s"), filepath.Join(dir, "escape"))
	wantEqual(t, retry(t, s, "read_file", "path", "/work/escape"), "Path '/work/escape' resolves outside the root directory.")

	var paths []string
	for _, ev := range rec.events {
		switch e := ev.(type) {
		case DirectoryCreated:
			paths = append(paths, e.Path)
		case FileWritten:
			paths = append(paths, e.Path)
		case FileEdited:
			paths = append(paths, e.Path)
		case FileRead:
			paths = append(paths, e.Path)
		case DirectoryListed:
			paths = append(paths, e.Path)
		}
	}
	wantEqual(t, strings.Join(paths, " "),
		"/tenant/sessions/s1 /tenant/sessions/s1/notes.md /tenant/sessions/s1/notes.md /tenant/sessions/s1/notes.md / /tenant/sessions/s1")
}

// Patterns match storage paths, and refusals name the path rooted, as the
// model can pass it back.
func TestMountedPolicyUsesStoragePaths(t *testing.T) {
	m, _ := mountedFixture(t)
	s := newSet(t, m, Options{Denied: []string{"tenant/private"}, Cwd: "/tenant"})
	wantEqual(t, retry(t, s, "write_file", "path", "/tenant/private/x", "content", ""),
		"Path '/tenant/private/x' is denied by pattern 'tenant/private'.")
	wantEqual(t, retry(t, s, "read_file", "path", "private/x"),
		"Path '/tenant/private/x' is denied by pattern 'tenant/private'.")
	wantEqual(t, retry(t, s, "write_file", "path", "/work/.env", "content", ""),
		"Path '/work/.env' is protected (matches '**/.env').")
}
