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

func TestCleanReasons(t *testing.T) {
	tool := backend.Cleaner{RefuseControl: true, MaxNameBytes: 8, MaxPathBytes: 16}
	tests := []struct {
		in   string
		c    backend.Cleaner
		want backend.PathReason
	}{
		{"", backend.Cleaner{}, backend.ReasonEmpty},
		{"a\x00b", backend.Cleaner{}, backend.ReasonNUL},
		{"a\nb", tool, backend.ReasonControl},
		{"a\x7f", tool, backend.ReasonControl},
		{"a\\b", backend.Cleaner{}, backend.ReasonBackslash},
		{"/a", backend.Cleaner{}, backend.ReasonAbsolute},
		{"C:x", backend.Cleaner{}, backend.ReasonDrive},
		{"./C:", backend.Cleaner{}, backend.ReasonCleanedDrive},
		{"x/../c:", backend.Cleaner{}, backend.ReasonCleanedDrive},
		{"~", backend.Cleaner{}, backend.ReasonTilde},
		{"a/~b", backend.Cleaner{}, backend.ReasonTilde},
		{"\xff", backend.Cleaner{}, backend.ReasonInvalidUTF8},
		{"..", backend.Cleaner{}, backend.ReasonClimb},
		{"a/../..", backend.Cleaner{}, backend.ReasonClimb},
		{"123456789", tool, backend.ReasonTooLong},
		{"a/b/c/d/e/f/g/h/i", tool, backend.ReasonTooLong},
		// Several faults: the first of PathReason's order wins, whatever
		// comes first in the path.
		{"a\\b\x00", backend.Cleaner{}, backend.ReasonNUL},
		{"a\\b\n", tool, backend.ReasonControl},
		{"~\\", backend.Cleaner{}, backend.ReasonBackslash},
		{"C:~", backend.Cleaner{}, backend.ReasonDrive},
		{"../~x", backend.Cleaner{}, backend.ReasonTilde},
		{"../123456789", tool, backend.ReasonTooLong},
		{"123456789/~", tool, backend.ReasonTooLong},
		{"~/123456789", tool, backend.ReasonTilde},
		{"../\xff", backend.Cleaner{}, backend.ReasonInvalidUTF8},
		{"~\xff", backend.Cleaner{}, backend.ReasonTilde},
		// Without RefuseControl or limits these are ordinary names.
		{"a\nb", backend.Cleaner{}, 0},
		{"123456789", backend.Cleaner{}, 0},
	}
	for _, tt := range tests {
		_, err := tt.c.Relative(tt.in)
		if got := backend.ReasonOf(err); got != tt.want {
			t.Errorf("%+v.Relative(%q) = %v (%v), want reason %v", tt.c, tt.in, got, err, tt.want)
		}
		if tt.want == 0 {
			continue
		}
		checkInvalid(t, err)
		if tt.want == backend.ReasonTooLong && !errors.Is(err, backend.ErrNameTooLong) {
			t.Errorf("%q: %v does not match ErrNameTooLong", tt.in, err)
		}
		if tt.want != backend.ReasonAbsolute {
			_, verr := tt.c.Virtual(tt.in, "/")
			if got := backend.ReasonOf(verr); got != tt.want {
				t.Errorf("%+v.Virtual(%q, /) reason %v, want %v", tt.c, tt.in, got, tt.want)
			}
		}
	}
	if backend.ReasonOf(errors.New("other")) != 0 || backend.ReasonOf(nil) != 0 {
		t.Error("ReasonOf found a reason in an error without one")
	}
}

func TestPathReasonString(t *testing.T) {
	seen := map[string]bool{}
	for r := backend.ReasonEmpty; r <= backend.ReasonCleanedDrive; r++ {
		s := r.String()
		if strings.HasPrefix(s, "PathReason(") || seen[s] {
			t.Errorf("reason %d has text %q", r, s)
		}
		seen[s] = true
	}
	if got := backend.PathReason(200).String(); got != "PathReason(200)" {
		t.Errorf("unknown reason: %q", got)
	}
}

// seedPaths are shared by the fuzz targets: the contract's examples and
// the spellings the normalizers must refuse.
var seedPaths = []string{
	".", "", "a", "a//b/", "./x/../y", "/one//two/./../three/", "notes.md",
	"..", "../a", "a/../..", "C:", "c:foo", "./C:", "~", "a/~b", "a\\b",
	"a\x00b", "/", "//", "\xff", "a/C:", "héllo", "a\nb", "../~x", "x/../c:",
	"123456789/a", "a/123456789",
}

// fuzzCleaner has limits small enough for the fuzzer to reach.
var fuzzCleaner = backend.Cleaner{RefuseControl: true, MaxNameBytes: 8, MaxPathBytes: 32}

// checkCleaned asserts what every normalizer promises of p's outcome: a
// refusal has a reason and wraps ErrInvalidPath; an accepted path is
// canonical and contained; cleaning it again changes nothing.
func checkCleaned(t *testing.T, c backend.Cleaner, p, out string, err error) {
	t.Helper()
	if err != nil {
		if !errors.Is(err, backend.ErrInvalidPath) || backend.ReasonOf(err) == 0 {
			t.Fatalf("%+v.Relative(%q) error %v has no reason or does not wrap ErrInvalidPath", c, p, err)
		}
		return
	}
	if !backend.ValidPath(out) {
		t.Fatalf("%+v.Relative(%q) = %q, not canonical", c, p, out)
	}
	if strings.HasPrefix(out, "/") || out == ".." || strings.HasPrefix(out, "../") {
		t.Fatalf("%+v.Relative(%q) = %q, not contained", c, p, out)
	}
	if again, err := c.Relative(out); err != nil || again != out {
		t.Fatalf("%+v.Relative(%q) = %q, cleaning again gives %q, %v", c, p, out, again, err)
	}
}

func FuzzCleanRelative(f *testing.F) {
	for _, s := range seedPaths {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		for _, c := range []backend.Cleaner{{}, fuzzCleaner} {
			out, err := c.Relative(p)
			checkCleaned(t, c, p, out, err)
			r := backend.ReasonOf(err)
			// The reason is stable: asking again, or asking Virtual the
			// same of the rooted spelling, gives it again.
			if _, again := c.Relative(p); backend.ReasonOf(again) != r {
				t.Fatalf("%+v.Relative(%q): reason %v, then %v", c, p, r, backend.ReasonOf(again))
			}
			if r == backend.ReasonAbsolute {
				continue
			}
			v, verr := c.Virtual(p, "/")
			if vr := backend.ReasonOf(verr); vr != r || (err == nil && backend.VirtualToStorage(v) != out) {
				t.Fatalf("%+v: Relative(%q) = %q, %v; Virtual = %q, %v", c, p, out, r, v, vr)
			}
			// Check judges the spelling alone: it agrees with every
			// reason but those only cleaning can show.
			cr := backend.ReasonOf(c.Check(p))
			if r != backend.ReasonClimb && r != backend.ReasonCleanedDrive && cr != r {
				t.Fatalf("%+v: Relative(%q) reason %v, Check reason %v", c, p, r, cr)
			}
			// The zero Cleaner refuses a subset of what a stricter one
			// refuses.
			if c == fuzzCleaner {
				if _, zerr := (backend.Cleaner{}).Relative(p); zerr != nil && err == nil {
					t.Fatalf("Relative(%q) refused by the zero Cleaner (%v), accepted by %+v", p, zerr, c)
				}
			}
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
		for _, c := range []backend.Cleaner{{}, fuzzCleaner} {
			out, err := c.Virtual(p, cwd)
			if err != nil {
				if !errors.Is(err, backend.ErrInvalidPath) || backend.ReasonOf(err) == 0 {
					t.Fatalf("Virtual(%q, %q) error %v has no reason or does not wrap ErrInvalidPath", p, cwd, err)
				}
				if _, again := c.Virtual(p, cwd); backend.ReasonOf(again) != backend.ReasonOf(err) {
					t.Fatalf("Virtual(%q, %q): reason %v, then %v", p, cwd, backend.ReasonOf(err), backend.ReasonOf(again))
				}
				continue
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
