package tools

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestListDirectory(t *testing.T) {
	forEach(t, func(t *testing.T, fx fixture) {
		fx.put(t, "b.txt", "bb")
		fx.put(t, "a.txt", "a")
		fx.put(t, "sub/x.go", "package x\n")
		fx.put(t, "other/y.txt", "")
		fx.put(t, ".env", "SECRET=1")
		fx.put(t, ".git/config", "[core]")
		fx.mkdir(t, "empty")
		rec := &recorder{}
		s := newSet(t, fx.b, Options{OnEvent: rec.on})
		wantEqual(t, ok(t, s, "list_directory"),
			"a.txt  (1 byte)\nb.txt  (2 bytes)\nempty/\nother/\nsub/\n[2 hidden entries omitted; name a hidden path explicitly to include it]")
		wantEqual(t, ok(t, s, "list_directory", "path", "sub"), "sub/x.go  (10 bytes)")
		wantEqual(t, ok(t, s, "list_directory", "path", ".git"), ".git/config  (6 bytes)")
		wantEqual(t, ok(t, s, "list_directory", "path", "empty"), "(empty directory)")
		wantEqual(t, retry(t, s, "list_directory", "path", "a.txt"), "Not a directory: a.txt")
		wantEqual(t, retry(t, s, "list_directory", "path", "nope"), "Directory not found: nope")
		wantEqual(t, retry(t, s, "list_directory", "path", ".."), "Path '..' resolves outside the root directory.")
		want := []Event{DirectoryListed{Path: ".", EntryCount: 5}, DirectoryListed{Path: "sub", EntryCount: 1},
			DirectoryListed{Path: ".git", EntryCount: 1}, DirectoryListed{Path: "empty", EntryCount: 0}}
		if len(rec.events) != len(want) {
			t.Fatalf("events %v, want %v", rec.events, want)
		}
		for i := range want {
			if rec.events[i] != want[i] {
				t.Errorf("event %d: %+v, want %+v", i, rec.events[i], want[i])
			}
		}

		// Paths are relative to the working directory, with ".." where needed.
		s = newSet(t, fx.b, Options{Cwd: "sub"})
		wantEqual(t, ok(t, s, "list_directory"), "x.go  (10 bytes)")
		wantEqual(t, ok(t, s, "list_directory", "path", "../other"), "../other/y.txt  (0 bytes)")
		// A leading "/" is the namespace root, or on local disk a host path.
		abs := "/other"
		if fx.dir != "" {
			abs = filepath.Join(fx.dir, "other")
		}
		wantEqual(t, ok(t, s, "list_directory", "path", abs), "../other/y.txt  (0 bytes)")
	})
}

func TestListDirectoryCap(t *testing.T) {
	forEach(t, func(t *testing.T, fx fixture) {
		for _, n := range []string{"a", "b", "c"} {
			fx.put(t, "d/"+n, "")
		}
		s := newSet(t, fx.b, Options{MaxListResults: 2})
		wantEqual(t, ok(t, s, "list_directory", "path", "d"), "d/a  (0 bytes)\nd/b  (0 bytes)\n[... truncated at 2 entries]")
		s = newSet(t, fx.b, Options{MaxListResults: 3})
		wantEqual(t, ok(t, s, "list_directory", "path", "d"), "d/a  (0 bytes)\nd/b  (0 bytes)\nd/c  (0 bytes)")
	})
}

func TestListDirectoryPolicy(t *testing.T) {
	forEach(t, func(t *testing.T, fx fixture) {
		fx.put(t, "main.py", "")
		fx.put(t, "notes.md", "")
		fx.put(t, "src/app.py", "")
		fx.put(t, "private/key.py", "")
		fx.put(t, "id.pem", "")
		s := newSet(t, fx.b, Options{Allowed: []string{"*.py"}, Denied: []string{"private"}})
		wantEqual(t, ok(t, s, "list_directory"), "main.py  (0 bytes)")
		wantEqual(t, ok(t, s, "list_directory", "path", "src"), "src/app.py  (0 bytes)")
		wantEqual(t, retry(t, s, "list_directory", "path", "private"), "Path 'private' is denied by pattern 'private'.")
		// Protected entries stay visible.
		s = newSet(t, fx.b, Options{})
		if got := ok(t, s, "list_directory"); !strings.Contains(got, "id.pem  (0 bytes)") {
			t.Errorf("protected entry hidden: %q", got)
		}
	})
}

func TestListDirectoryRooted(t *testing.T) {
	m := newMemFS()
	m.put("tenant/notes.md", "hi")
	m.put("tenant/sessions/s1/a.txt", "a")
	rec := &recorder{}
	s := newSet(t, memRooted{m}, Options{Cwd: "/tenant/sessions/s1", OnEvent: rec.on})
	wantEqual(t, ok(t, s, "list_directory"), "/tenant/sessions/s1/a.txt  (1 byte)")
	wantEqual(t, ok(t, s, "list_directory", "path", "/tenant"), "/tenant/notes.md  (2 bytes)\n/tenant/sessions/")
	wantEqual(t, ok(t, s, "list_directory", "path", "../.."), "/tenant/notes.md  (2 bytes)\n/tenant/sessions/")
	wantEqual(t, ok(t, s, "list_directory", "path", "/"), "/tenant/")
	wantEqual(t, retry(t, s, "list_directory", "path", "../../../.."), "Path '../../../..' resolves outside the root directory.")
	if ev := rec.events[1].(DirectoryListed); ev.Path != "/tenant" {
		t.Errorf("rooted event path %q", ev.Path)
	}
}

func TestListDirectorySizeUnknown(t *testing.T) {
	s := newSet(t, genFS{size: -1}, Options{})
	wantEqual(t, ok(t, s, "list_directory"), "big.txt  (size unknown)")
}

func TestListDirectoryLocalSpecials(t *testing.T) {
	fx := localFixture(t)
	fx.put(t, "real.txt", "12345")
	fx.put(t, "dir/inner.txt", "")
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o644)
	links := map[string]string{"file-link": "real.txt", "dir-link": "dir", "out-link": filepath.Join(outside, "secret"),
		"dangling": "missing", "loop": "loop"}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(fx.dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(fx.dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"bad\nname", "tab\there", "del\x7f"} {
		if err := os.WriteFile(filepath.Join(fx.dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := newSet(t, fx.b, Options{})
	wantEqual(t, ok(t, s, "list_directory"),
		"dir/\ndir-link/\nfile-link  (5 bytes)\nreal.txt  (5 bytes)\n[3 entries with control characters in their names omitted]")
	// A listed link to a directory can be listed by name.
	wantEqual(t, ok(t, s, "list_directory", "path", "dir-link"), "dir-link/inner.txt  (0 bytes)")
}
