package tools

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

func TestFileInfo(t *testing.T) {
	forEach(t, func(t *testing.T, fx fixture) {
		fx.put(t, "f.txt", "one\ntwo")
		fx.put(t, "b.bin", "a\x00b")
		fx.mkdir(t, "d")
		for _, opts := range []Options{{}, {NoContentHashes: true}} {
			s := newSet(t, fx.b, opts)
			wantEqual(t, ok(t, s, "file_info", "path", "f.txt"),
				"path: f.txt\ntype: file\nsize: 7 bytes\nbinary: false\nlines: 2\nhash: "+h12("one\ntwo"))
			wantEqual(t, ok(t, s, "file_info", "path", "./f.txt"),
				"path: ./f.txt\ntype: file\nsize: 7 bytes\nbinary: false\nlines: 2\nhash: "+h12("one\ntwo"))
			wantEqual(t, ok(t, s, "file_info", "path", "b.bin"), "path: b.bin\ntype: file\nsize: 3 bytes\nbinary: true")
			got := ok(t, s, "file_info", "path", "d")
			if !strings.HasPrefix(got, "path: d\ntype: directory\nsize: ") {
				t.Errorf("directory info %q", got)
			}
			wantEqual(t, retry(t, s, "file_info", "path", "nope"), "Path not found: nope")
			wantEqual(t, retry(t, s, "file_info", "path", "f.txt/x"), "Path not found: f.txt/x")
		}
	})
}

func TestFileInfoSizeUnknown(t *testing.T) {
	m := newMemFS()
	m.put("d/x", "")
	s := newSet(t, m, Options{})
	wantEqual(t, ok(t, s, "file_info", "path", "d"), "path: d\ntype: directory\nsize: unknown")
}

func TestFileInfoLocal(t *testing.T) {
	fx := localFixture(t)
	fx.put(t, "real.txt", "x\n")
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o644)
	for name, target := range map[string]string{"link": "real.txt", "abs-link": filepath.Join(fx.dir, "real.txt"),
		"out": filepath.Join(outside, "secret"), "dangling": "missing.txt"} {
		if err := os.Symlink(target, filepath.Join(fx.dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	syscall.Mkfifo(filepath.Join(fx.dir, "fifo"), 0o644)
	s := newSet(t, fx.b, Options{})
	base := "\ntype: file\nsize: 2 bytes\nbinary: false\nlines: 1\nhash: " + h12("x\n")
	wantEqual(t, ok(t, s, "file_info", "path", "link"), "path: link"+base+"\nsymlink_target: real.txt")
	wantEqual(t, ok(t, s, "file_info", "path", "abs-link"), "path: abs-link"+base+"\nsymlink_target: real.txt")
	wantEqual(t, retry(t, s, "file_info", "path", "out"), "Path 'out' resolves outside the root directory.")
	wantEqual(t, retry(t, s, "file_info", "path", "dangling"), "Path not found: dangling")
	wantEqual(t, retry(t, s, "file_info", "path", "fifo"), "Path 'fifo' is not a regular file or directory.")
}

func TestCreateDirectory(t *testing.T) {
	forEach(t, func(t *testing.T, fx fixture) {
		fx.put(t, "f.txt", "")
		rec := &recorder{}
		var requests []*ChangeRequest
		s := newSet(t, fx.b, Options{OnEvent: rec.on, OnChangeRequest: func(_ context.Context, r *ChangeRequest) error {
			requests = append(requests, r)
			return nil
		}})
		wantEqual(t, ok(t, s, "create_directory", "path", "a/b/c"), "Created directory: a/b/c")
		wantEqual(t, ok(t, s, "list_directory", "path", "a/b"), "a/b/c/")
		// An existing directory: same text, no request, no event.
		wantEqual(t, ok(t, s, "create_directory", "path", "a/b"), "Created directory: a/b")
		wantEqual(t, ok(t, s, "create_directory", "path", "."), "Created directory: .")
		wantEqual(t, retry(t, s, "create_directory", "path", "f.txt"), "Path 'f.txt' exists and is not a directory.")
		wantEqual(t, retry(t, s, "create_directory", "path", "f.txt/x"), "Path 'f.txt/x' has a parent that is not a directory.")
		wantEqual(t, retry(t, s, "create_directory", "path", ".git/hooks"), "Path '.git/hooks' is protected (matches '**/.git').")
		wantEqual(t, rec.kinds(), "directory_created,directory_listed")
		if rec.events[0] != (DirectoryCreated{Path: "a/b/c"}) {
			t.Errorf("event %+v", rec.events[0])
		}
		if len(requests) != 1 || !reflect.DeepEqual(*requests[0], ChangeRequest{Path: "a/b/c", Operation: "create_directory", Sizes: []SizeChange{
			{Path: "a", Before: -1, Dir: true}, {Path: "a/b", Before: -1, Dir: true}, {Path: "a/b/c", Before: -1, Dir: true}}}) {
			t.Errorf("requests %+v", requests)
		}
	})
}
