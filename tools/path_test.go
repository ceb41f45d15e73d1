package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/policy"
)

func TestPathRefusals(t *testing.T) {
	forEach(t, func(t *testing.T, fx fixture) {
		fx.put(t, "ab:c", "colon\n")
		s := newSet(t, fx.b, Options{})
		long := strings.Repeat("n", 256)
		tests := []struct{ path, want string }{
			{"", "Path is empty. Name a file or directory, or '.' for the working directory."},
			{"a\x00b", `Path "a\x00b" contains a control character; names with control characters are not allowed.`},
			{"a\nb", `Path "a\nb" contains a control character; names with control characters are not allowed.`},
			{"a\x7fb", `Path "a\x7fb" contains a control character; names with control characters are not allowed.`},
			{`a\b`, `Path 'a\b' contains a backslash; separate directories with '/'.`},
			{"C:/x", "Path 'C:/x' starts with a drive prefix; paths are relative to the working directory or start with '/'."},
			{"c:foo", "Path 'c:foo' starts with a drive prefix; paths are relative to the working directory or start with '/'."},
			{"~/x", "Path '~/x' has a name starting with '~'; home directories are not expanded. Use a path relative to the working directory."},
			{"a/~b", "Path 'a/~b' has a name starting with '~'; home directories are not expanded. Use a path relative to the working directory."},
			{long, "Path '" + long + "' is too long: a name or the whole path exceeds the storage limit."},
			{"..", "Path '..' resolves outside the root directory."},
			{"a/../../x", "Path 'a/../../x' resolves outside the root directory."},
		}
		for _, tt := range tests {
			wantEqual(t, retry(t, s, "read_file", "path", tt.path), tt.want)
		}
		// A colon after the first character is ordinary.
		if got := ok(t, s, "read_file", "path", "ab:c"); !strings.HasSuffix(got, "\tcolon\n") {
			t.Errorf("ab:c read %q", got)
		}
		// Lexical cleaning: ".", "..", "//" and a trailing "/".
		fx.put(t, "x/y.txt", "y\n")
		for _, p := range []string{"x//y.txt", "./x/./y.txt", "x/z/../y.txt"} {
			if got := ok(t, s, "read_file", "path", p); !strings.HasPrefix(got, "["+p+" | 1 line") {
				t.Errorf("%s: %q", p, got)
			}
		}
	})
}

func TestPathsFromCwd(t *testing.T) {
	forEach(t, func(t *testing.T, fx fixture) {
		fx.put(t, "top.txt", "t\n")
		fx.put(t, "sub/in.txt", "i\n")
		s := newSet(t, fx.b, Options{Cwd: "sub"})
		ok(t, s, "read_file", "path", "in.txt")
		ok(t, s, "read_file", "path", "../top.txt")
		wantEqual(t, retry(t, s, "read_file", "path", "../../top.txt"), "Path '../../top.txt' resolves outside the root directory.")
		root := "/top.txt"
		if fx.dir != "" {
			root = filepath.Join(fx.dir, "top.txt")
		}
		ok(t, s, "read_file", "path", root)
	})
}

func TestLocalAbsolutePaths(t *testing.T) {
	fx := localFixture(t)
	fx.put(t, "sub/in.txt", "i\n")
	s := newSet(t, fx.b, Options{Cwd: filepath.Join(fx.dir, "sub")})
	ok(t, s, "read_file", "path", "in.txt")
	for _, p := range []string{"/etc/passwd", "/", filepath.Dir(fx.dir)} {
		wantEqual(t, retry(t, s, "read_file", "path", p), "Path '"+p+"' resolves outside the root directory.")
	}
	if _, err := New(fx.b, Options{Cwd: "/etc"}); err == nil {
		t.Error("a Cwd outside the root was accepted")
	}
	if _, err := New(fx.b, Options{Cwd: ".."}); err == nil {
		t.Error("a Cwd above the root was accepted")
	}
	outside := t.TempDir()
	os.Symlink(outside, filepath.Join(fx.dir, "escape"))
	if _, err := New(fx.b, Options{Cwd: "escape"}); err == nil {
		t.Error("a Cwd linking outside the root was accepted")
	}
}

func TestRootedPaths(t *testing.T) {
	m := newMemFS()
	m.put("tenant/sessions/s1/notes.md", "n\n")
	m.put("tenant/shared.md", "s\n")
	var reqs []policy.Request
	rec := &recorder{}
	s := newSet(t, memRooted{m}, Options{Cwd: "/tenant/sessions/s1", OnEvent: rec.on,
		Permission: policy.CheckerFunc(func(_ context.Context, r policy.Request) error {
			reqs = append(reqs, r)
			return nil
		})})
	wantEqual(t, ok(t, s, "read_file", "path", "notes.md"), "[notes.md | 1 line | hash:"+h12("n\n")+"]\n     1\tn\n")
	ok(t, s, "read_file", "path", "/tenant/shared.md")
	ok(t, s, "read_file", "path", "../../shared.md")
	wantEqual(t, retry(t, s, "read_file", "path", "/etc/passwd"), "File not found: /etc/passwd")
	wantEqual(t, retry(t, s, "read_file", "path", "/../x"), "Path '/../x' resolves outside the root directory.")
	ok(t, s, "write_file", "path", "out.md", "content", "o")
	if ev := rec.events[0].(FileRead); ev.Path != "/tenant/sessions/s1/notes.md" {
		t.Errorf("rooted event path %q", ev.Path)
	}
	want := []policy.Request{
		{Tool: "read_file", Operation: policy.OpRead, Path: "/tenant/sessions/s1/notes.md"},
		{Tool: "read_file", Operation: policy.OpRead, Path: "/tenant/shared.md"},
		{Tool: "read_file", Operation: policy.OpRead, Path: "/tenant/shared.md"},
		{Tool: "read_file", Operation: policy.OpRead, Path: "/etc/passwd"},
		{Tool: "write_file", Operation: policy.OpModify, Path: "/tenant/sessions/s1/out.md"},
	}
	if len(reqs) != len(want) {
		t.Fatalf("requests %+v", reqs)
	}
	for i := range want {
		if !reflect.DeepEqual(reqs[i], want[i]) {
			t.Errorf("request %d: %+v, want %+v", i, reqs[i], want[i])
		}
	}
	// A scope over one session refuses its siblings.
	scope, err := policy.NewScope("/tenant/sessions/s1")
	if err != nil {
		t.Fatal(err)
	}
	s = newSet(t, memRooted{m}, Options{Cwd: "/tenant/sessions/s1", Permission: scope})
	ok(t, s, "read_file", "path", "notes.md")
	if msg := retry(t, s, "read_file", "path", "/tenant/shared.md"); !strings.Contains(msg, "/tenant/shared.md") {
		t.Errorf("scope refusal %q", msg)
	}
}

func TestPermissionHook(t *testing.T) {
	m := newMemFS()
	m.put("f.txt", "x\n")
	var reqs []policy.Request
	hook := policy.CheckerFunc(func(_ context.Context, r policy.Request) error {
		reqs = append(reqs, r)
		if r.Path == "f.txt" && r.Operation == policy.OpModify {
			return &policy.Denied{Message: "Not today."}
		}
		if r.Path == "boom" {
			return errors.New("hook broke")
		}
		return nil
	})
	rec := &recorder{}
	s := newSet(t, m, Options{Permission: hook, OnEvent: rec.on})
	ok(t, s, "read_file", "path", "f.txt")
	ok(t, s, "file_info", "path", "f.txt")
	ok(t, s, "list_directory")
	ok(t, s, "find_files", "pattern", "*.txt")
	wantEqual(t, retry(t, s, "write_file", "path", "f.txt", "content", "y"), "Not today.")
	wantEqual(t, retry(t, s, "edit_file", "path", "f.txt", "old_text", "x", "new_text", "y"), "Not today.")
	ok(t, s, "create_directory", "path", "d")
	if _, err := s.Call(context.Background(), "read_file", args(t, "path", "boom")); err == nil || IsRetry(err) {
		t.Errorf("hook error %v: want fatal", err)
	}
	want := []policy.Request{
		{Tool: "read_file", Operation: policy.OpRead, Path: "f.txt"},
		{Tool: "file_info", Operation: policy.OpRead, Path: "f.txt"},
		{Tool: "list_directory", Operation: policy.OpRead, Path: "."},
		{Tool: "find_files", Operation: policy.OpSearch, Path: "."},
		{Tool: "write_file", Operation: policy.OpModify, Path: "f.txt"},
		{Tool: "edit_file", Operation: policy.OpModify, Path: "f.txt"},
		{Tool: "create_directory", Operation: policy.OpModify, Path: "d"},
		{Tool: "read_file", Operation: policy.OpRead, Path: "boom"},
	}
	if len(reqs) != len(want) {
		t.Fatalf("requests %+v", reqs)
	}
	for i := range want {
		if !reflect.DeepEqual(reqs[i], want[i]) {
			t.Errorf("request %d: %+v, want %+v", i, reqs[i], want[i])
		}
	}
	wantEqual(t, mustMem(t, m, "f.txt"), "x\n")
}

func TestScrub(t *testing.T) {
	s := &Set{hostRoot: "/srv/root"}
	tests := []struct{ in, want string }{
		{"open /srv/root/a/b: denied", "open a/b: denied"},
		{"stat /srv/root: busy", "stat .: busy"},
		{"open /etc/passwd: denied", "open <outside-workspace>: denied"},
		{"rename '/tmp/x' '/srv/root/y'", "rename '<outside-workspace>' 'y'"},
		{"no paths here", "no paths here"},
	}
	for _, tt := range tests {
		if got := s.scrub(tt.in); got != tt.want {
			t.Errorf("scrub(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
