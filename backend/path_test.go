package backend_test

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/backend"
)

func TestCleanRelative(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{".", "."},
		{"./", "."},
		{".//./", "."},
		{"a", "a"},
		{"a//b/", "a/b"},
		{"./x/../y", "y"},
		{"a/b/../../c", "c"},
		{"a/b/..", "a"},
		{"a/..", "."},
		{"a/./b/./c", "a/b/c"},
		{"a/C:", "a/C:"},
		{"a/c:foo", "a/c:foo"},
		{"ab:c", "ab:c"}, // not a drive: the colon is not the second byte
		{"1:", "1:"},     // not a drive: the first byte is not a letter
		{"a~", "a~"},
		{"a/b~c", "a/b~c"},
		{"...", "..."},
		{"..a", "..a"},
		{"a b/ c", "a b/ c"},
		{"héllo/wörld", "héllo/wörld"},
	}
	for _, tt := range tests {
		got, err := backend.CleanRelative(tt.in)
		if err != nil {
			t.Errorf("CleanRelative(%q) error: %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("CleanRelative(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCleanRelativeRejects(t *testing.T) {
	tests := []struct {
		in, why string
	}{
		{"", "empty"},
		{"a\x00b", "NUL"},
		{"\x00", "NUL alone"},
		{`a\b`, "backslash"},
		{`\`, "backslash alone"},
		{"/", "absolute root"},
		{"/a", "absolute"},
		{"//a", "absolute double slash"},
		{"C:", "drive"},
		{"c:foo", "drive lower case"},
		{"Z:/x", "drive with path"},
		{"./C:", "drive after cleaning"},
		{"x/../c:foo", "drive after climbing back"},
		{"~", "tilde"},
		{"~user/x", "tilde user"},
		{"a/~b", "tilde inside"},
		{"..", "climb"},
		{"../a", "climb first"},
		{"a/../..", "climb after descent"},
		{"a/../../b", "climb through"},
		{"./..", "climb after dot"},
		{"\xff", "invalid UTF-8"},
		{"a/\xc3", "truncated UTF-8"},
	}
	for _, tt := range tests {
		got, err := backend.CleanRelative(tt.in)
		if err == nil {
			t.Errorf("CleanRelative(%q) (%s) = %q, want an error", tt.in, tt.why, got)
			continue
		}
		checkInvalid(t, err)
	}
}

func TestCleanVirtual(t *testing.T) {
	tests := []struct {
		in, cwd, want string
	}{
		{"notes.md", "/sessions/current", "/sessions/current/notes.md"},
		{"/one//two/./../three/", "/", "/one/three"},
		{"/one//two/./../three/", "/ignored", "/one/three"},
		{"/", "/x", "/"},
		{".", "/", "/"},
		{".", "", "/"},
		{"a", "", "/a"},
		{".", "/a/b", "/a/b"},
		{"..", "/a/b", "/a"},
		{"../..", "/a/b", "/"},
		{"../c", "/a/b", "/a/c"},
		{"/workspace/../tenant/f", "/", "/tenant/f"},
		{"x/", "/a//b/", "/a/b/x"},
		{"./C:", "/a", "/a/C:"},
		{"b/c:", "/", "/b/c:"},
	}
	for _, tt := range tests {
		got, err := backend.CleanVirtual(tt.in, tt.cwd)
		if err != nil {
			t.Errorf("CleanVirtual(%q, %q) error: %v", tt.in, tt.cwd, err)
			continue
		}
		if got != tt.want {
			t.Errorf("CleanVirtual(%q, %q) = %q, want %q", tt.in, tt.cwd, got, tt.want)
		}
	}
}

func TestCleanVirtualRejects(t *testing.T) {
	tests := []struct {
		in, cwd, why string
	}{
		{"", "/", "empty"},
		{"a\x00", "/", "NUL"},
		{`a\b`, "/", "backslash"},
		{"C:", "/", "drive"},
		{"c:foo", "/a", "drive relative to cwd"},
		{"/C:", "/", "rooted drive"},
		{"./c:x", "/", "drive after cleaning at the root"},
		{"~", "/", "tilde"},
		{"/a/~b", "/", "tilde inside"},
		{"..", "/", "climb above the root"},
		{"/..", "/", "rooted climb"},
		{"../../..", "/a/b", "climb through cwd"},
		{"a", "relative", "cwd not rooted"},
		{"a", "/x/../..", "cwd climbs"},
		{"a", "/~x", "cwd with tilde"},
		{"a", "/x\\y", "cwd with backslash"},
		{"/\xff", "/", "invalid UTF-8"},
	}
	for _, tt := range tests {
		got, err := backend.CleanVirtual(tt.in, tt.cwd)
		if err == nil {
			t.Errorf("CleanVirtual(%q, %q) (%s) = %q, want an error", tt.in, tt.cwd, tt.why, got)
			continue
		}
		checkInvalid(t, err)
	}
}

// checkInvalid asserts that err is an *fs.PathError matching both
// ErrInvalidPath and fs.ErrInvalid.
func checkInvalid(t *testing.T, err error) {
	t.Helper()
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		t.Errorf("error %v (%T) is not an *fs.PathError", err, err)
	}
	if !errors.Is(err, backend.ErrInvalidPath) || !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("error %v does not match ErrInvalidPath and fs.ErrInvalid", err)
	}
}

func TestValidPath(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{".", true},
		{"a", true},
		{"a/b/c", true},
		{"a/C:", true},
		{"ab:c", true},
		{"a~", true},
		{"", false},
		{"/", false},
		{"/a", false},
		{"a/", false},
		{"a//b", false},
		{"./a", false},
		{"a/.", false},
		{"a/..", false},
		{"..", false},
		{`a\b`, false},
		{"a\x00", false},
		{"C:", false},
		{"c:foo", false},
		{"~", false},
		{"a/~b", false},
		{"\xff", false},
	}
	for _, tt := range tests {
		if got := backend.ValidPath(tt.in); got != tt.want {
			t.Errorf("ValidPath(%q) = %v, want %v", tt.in, got, tt.want)
		}
		err := backend.CheckPath("op", tt.in)
		if (err == nil) != tt.want {
			t.Errorf("CheckPath(%q) = %v, want valid=%v", tt.in, err, tt.want)
		}
		if err != nil {
			checkInvalid(t, err)
		}
	}
}

func TestVirtualStorageConversion(t *testing.T) {
	tests := []struct{ virtual, storage string }{
		{"/", "."},
		{"/a", "a"},
		{"/a/b", "a/b"},
	}
	for _, tt := range tests {
		if got := backend.VirtualToStorage(tt.virtual); got != tt.storage {
			t.Errorf("VirtualToStorage(%q) = %q, want %q", tt.virtual, got, tt.storage)
		}
		if got := backend.StorageToVirtual(tt.storage); got != tt.virtual {
			t.Errorf("StorageToVirtual(%q) = %q, want %q", tt.storage, got, tt.virtual)
		}
	}
	if got := backend.StorageToVirtual(""); got != "/" {
		t.Errorf(`StorageToVirtual("") = %q, want "/"`, got)
	}
}

func TestJoinSplit(t *testing.T) {
	tests := []struct{ dir, name, joined string }{
		{".", "a", "a"},
		{"a", "b", "a/b"},
		{"a/b", "c", "a/b/c"},
	}
	for _, tt := range tests {
		if got := backend.Join(tt.dir, tt.name); got != tt.joined {
			t.Errorf("Join(%q, %q) = %q, want %q", tt.dir, tt.name, got, tt.joined)
		}
		dir, base := backend.Split(tt.joined)
		if dir != tt.dir || base != tt.name {
			t.Errorf("Split(%q) = %q, %q, want %q, %q", tt.joined, dir, base, tt.dir, tt.name)
		}
	}
	if got := backend.Join("", "a"); got != "a" {
		t.Errorf(`Join("", "a") = %q, want "a"`, got)
	}
}

func TestIsWithin(t *testing.T) {
	tests := []struct {
		name, dir string
		want      bool
	}{
		{".", ".", true},
		{"a", ".", true},
		{"a/b", ".", true},
		{"a", "a", true},
		{"a/b", "a", true},
		{"a/b/c", "a/b", true},
		{"ab", "a", false},
		{"ab/c", "a", false},
		{"a", "a/b", false},
		{".", "a", false},
		{"b/a", "a", false},
	}
	for _, tt := range tests {
		if got := backend.IsWithin(tt.name, tt.dir); got != tt.want {
			t.Errorf("IsWithin(%q, %q) = %v, want %v", tt.name, tt.dir, got, tt.want)
		}
	}
}

// seedPaths are shared by the fuzz targets: the contract's examples and
// the spellings the normalizers must refuse.
var seedPaths = []string{
	".", "", "a", "a//b/", "./x/../y", "/one//two/./../three/", "notes.md",
	"..", "../a", "a/../..", "C:", "c:foo", "./C:", "~", "a/~b", "a\\b",
	"a\x00b", "/", "//", "\xff", "a/C:", "héllo",
}

func FuzzCleanRelative(f *testing.F) {
	for _, s := range seedPaths {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		out, err := backend.CleanRelative(p)
		if err != nil {
			if !errors.Is(err, backend.ErrInvalidPath) {
				t.Fatalf("CleanRelative(%q) error %v does not wrap ErrInvalidPath", p, err)
			}
			return
		}
		if !backend.ValidPath(out) {
			t.Fatalf("CleanRelative(%q) = %q, not canonical", p, out)
		}
		if strings.HasPrefix(out, "/") || out == ".." || strings.HasPrefix(out, "../") {
			t.Fatalf("CleanRelative(%q) = %q, not contained", p, out)
		}
		again, err := backend.CleanRelative(out)
		if err != nil || again != out {
			t.Fatalf("CleanRelative(%q) = %q, cleaning again gives %q, %v", p, out, again, err)
		}
	})
}

func FuzzCleanVirtual(f *testing.F) {
	for _, s := range seedPaths {
		f.Add(s, "/")
		f.Add(s, "/sessions/current")
	}
	f.Add("x", "")
	f.Add("x", "rel")
	f.Fuzz(func(t *testing.T, p, cwd string) {
		out, err := backend.CleanVirtual(p, cwd)
		if err != nil {
			if !errors.Is(err, backend.ErrInvalidPath) {
				t.Fatalf("CleanVirtual(%q, %q) error %v does not wrap ErrInvalidPath", p, cwd, err)
			}
			return
		}
		if !strings.HasPrefix(out, "/") {
			t.Fatalf("CleanVirtual(%q, %q) = %q, not rooted", p, cwd, out)
		}
		if s := backend.VirtualToStorage(out); !backend.ValidPath(s) {
			t.Fatalf("CleanVirtual(%q, %q) = %q, storage form %q not canonical", p, cwd, out, s)
		}
		if out != "/" && strings.HasSuffix(out, "/") {
			t.Fatalf("CleanVirtual(%q, %q) = %q, trailing slash", p, cwd, out)
		}
		if again, err := backend.CleanVirtual(out, "/elsewhere"); err != nil || again != out {
			t.Fatalf("CleanVirtual(%q, %q) = %q, cleaning again gives %q, %v", p, cwd, out, again, err)
		}
		// A rooted output is itself a valid cwd that resolves "." to itself.
		if same, err := backend.CleanVirtual(".", out); err != nil || same != out {
			t.Fatalf("CleanVirtual(\".\", %q) = %q, %v", out, same, err)
		}
	})
}

func BenchmarkCleanRelative(b *testing.B) {
	for b.Loop() {
		if _, err := backend.CleanRelative("./src/pkg//module/../internal/file.go"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCleanVirtual(b *testing.B) {
	for b.Loop() {
		if _, err := backend.CleanVirtual("../notes/./today.md", "/tenant/sessions/current"); err != nil {
			b.Fatal(err)
		}
	}
}
