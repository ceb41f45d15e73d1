package policy

import (
	"context"
	"errors"
	"testing"
)

func TestDefaultProtectedPatterns(t *testing.T) {
	r, err := NewRules(nil, nil, DefaultProtectedPatterns())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path      string
		protected bool
	}{
		{".git/config", true},
		{".git/hooks/x", true},
		{".git", true}, // a worktree's .git file
		{".env", true},
		{"apps/.env", true},
		{".env.local", true},
		{"apps/.env.production", true},
		{"sub/.git/config", true},
		{"x.pem", true},
		{"a/b.key", true},
		{"secrets.txt", true},
		{"conf/secrets/x", true},
		{"src/app.go", false},
		{".gitignore", false},
		{"sub/.gitignore", false},
		{"environment.md", false},
		{".envrc", false},
		{"keys/readme.md", false},
		{".", false},
	}
	for _, tt := range tests {
		err := r.CheckWrite(tt.path, tt.path)
		if got := err != nil; got != tt.protected {
			t.Errorf("CheckWrite(%q) = %v, want protected=%v", tt.path, err, tt.protected)
		}
		if err := r.CheckRead(tt.path, tt.path); err != nil {
			t.Errorf("CheckRead(%q) = %v; protection must not stop reads", tt.path, err)
		}
		if !r.Visible(tt.path, tt.path) {
			t.Errorf("Visible(%q) = false; protection must not hide entries", tt.path)
		}
	}
	a, b := DefaultProtectedPatterns(), DefaultProtectedPatterns()
	a[0] = "changed"
	if b[0] != "**/.git" {
		t.Error("DefaultProtectedPatterns shares its slice between calls")
	}
}

type checkKind int

const (
	read checkKind = iota
	write
	walkRoot
)

func TestRulesMessagesAndOrder(t *testing.T) {
	tests := []struct {
		name                     string
		allowed, denied, protect []string
		kind                     checkKind
		written, resolved        string
		want                     string // "" means allowed
	}{
		{
			name: "protected write", protect: DefaultProtectedPatterns(), kind: write,
			written: ".git/config", resolved: ".git/config",
			want: "Path '.git/config' is protected (matches '**/.git').",
		},
		{
			name: "protected read is fine", protect: []string{"*.key"}, kind: read,
			written: "a.key", resolved: "a.key",
		},
		{
			name: "protected before denied", protect: []string{"*.key"}, denied: []string{"*.key"}, kind: write,
			written: "a.key", resolved: "a.key",
			want: "Path 'a.key' is protected (matches '*.key').",
		},
		{
			name: "denied before allowed", allowed: []string{"*.py"}, denied: []string{"private"}, kind: read,
			written: "private/x.md", resolved: "private/x.md",
			want: "Path 'private/x.md' is denied by pattern 'private'.",
		},
		{
			name: "denied ancestor", denied: []string{"private"}, kind: read,
			written: "private/a/b", resolved: "private/a/b",
			want: "Path 'private/a/b' is denied by pattern 'private'.",
		},
		{
			name: "denied middle ancestor", denied: []string{"*/build"}, kind: write,
			written: "src/build/out.o", resolved: "src/build/out.o",
			want: "Path 'src/build/out.o' is denied by pattern '*/build'.",
		},
		{
			name: "denied prefix is not an ancestor", denied: []string{"private"}, kind: read,
			written: "privateer/x", resolved: "privateer/x",
		},
		{
			name: "not allowed", allowed: []string{"*.py"}, kind: read,
			written: "notes.md", resolved: "notes.md",
			want: "Path 'notes.md' does not match any allowed pattern.",
		},
		{
			name: "allowed", allowed: []string{"*.md", "*.py"}, kind: read,
			written: "src/x.py", resolved: "src/x.py",
		},
		{
			name: "not allowed write", allowed: []string{"*.py"}, kind: write,
			written: "notes.md", resolved: "notes.md",
			want: "Path 'notes.md' does not match any allowed pattern.",
		},
		{
			name: "allowed does not apply to ancestors", allowed: []string{"src/*"}, kind: read,
			written: "src/a/b", resolved: "src/a/b",
		},
		{
			name: "link to denied target names the link, not the target", denied: []string{"private"}, kind: read,
			written: "link.txt", resolved: "private/x",
			want: "Path 'link.txt' is denied by pattern 'private'.",
		},
		{
			name: "denied name of a link to a public target", denied: []string{"private"}, kind: read,
			written: "private/link", resolved: "public/x",
			want: "Path 'private/link' is denied by pattern 'private'.",
		},
		{
			name: "both denied names the written path", denied: []string{"secret"}, kind: read,
			written: "secret/a", resolved: "secret/b",
			want: "Path 'secret/a' is denied by pattern 'secret'.",
		},
		{
			name: "written checked before resolved even for a later pattern", denied: []string{"r*", "w*"}, kind: read,
			written: "w", resolved: "r",
			want: "Path 'w' is denied by pattern 'w*'.",
		},
		{
			name: "protected link target", protect: []string{"**/.env"}, kind: write,
			written: "config.txt", resolved: "apps/.env",
			want: "Path 'config.txt' is protected (matches '**/.env').",
		},
		{
			name: "allowed name, target not allowed", allowed: []string{"*.py"}, kind: read,
			written: "a.py", resolved: "a.txt",
			want: "Path 'a.py' does not match any allowed pattern.",
		},
		{
			name: "allowed target, name not allowed", allowed: []string{"*.py"}, kind: read,
			written: "a.txt", resolved: "a.py",
			want: "Path 'a.txt' does not match any allowed pattern.",
		},
		{
			name: "first pattern in order decides", denied: []string{"x", "*b"}, kind: read,
			written: "x/b", resolved: "x/b",
			want: "Path 'x/b' is denied by pattern 'x'.",
		},
		{
			name: "first pattern in order decides, reversed", denied: []string{"*b", "x"}, kind: read,
			written: "x/b", resolved: "x/b",
			want: "Path 'x/b' is denied by pattern '*b'.",
		},
		{
			name: "walk root ignores allowed", allowed: []string{"*.py"}, kind: walkRoot,
			written: ".", resolved: ".",
		},
		{
			name: "walk root ignores protected", protect: []string{"**/.git"}, kind: walkRoot,
			written: ".git", resolved: ".git",
		},
		{
			name: "walk root denied", denied: []string{"vendor"}, kind: walkRoot,
			written: "vendor/lib", resolved: "vendor/lib",
			want: "Path 'vendor/lib' is denied by pattern 'vendor'.",
		},
		{
			name: "root denied by star", denied: []string{"*"}, kind: walkRoot,
			written: ".", resolved: ".",
			want: "Path '.' is denied by pattern '*'.",
		},
		{
			name: "unknown resolved path uses the written one", denied: []string{"d"}, kind: read,
			written: "d/x", resolved: "",
			want: "Path 'd/x' is denied by pattern 'd'.",
		},
		{
			name: "unknown written path uses the resolved one", denied: []string{"d"}, kind: read,
			written: "", resolved: "d/x",
			want: "Path 'd/x' is denied by pattern 'd'.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewRules(tt.allowed, tt.denied, tt.protect)
			if err != nil {
				t.Fatal(err)
			}
			var got error
			switch tt.kind {
			case read:
				got = r.CheckRead(tt.written, tt.resolved)
				if vis := r.Visible(tt.written, tt.resolved); vis != (got == nil) {
					t.Errorf("Visible = %v but CheckRead = %v", vis, got)
				}
			case write:
				got = r.CheckWrite(tt.written, tt.resolved)
			case walkRoot:
				got = r.CheckWalkRoot(tt.written, tt.resolved)
			}
			assertDenied(t, got, tt.want)
		})
	}
}

// assertDenied checks that err is nil when want is empty and otherwise a
// *Denied whose message is want.
func assertDenied(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("got %v, want nil", err)
		}
		return
	}
	var d *Denied
	if !errors.As(err, &d) {
		t.Fatalf("got %v (%T), want *Denied %q", err, err, want)
	}
	if d.Error() != want || d.Message != want {
		t.Fatalf("got %q, want %q", d.Error(), want)
	}
}

func TestNilRulesAllowEverything(t *testing.T) {
	var r *Rules
	if err := r.CheckWrite(".git/config", ".git/config"); err != nil {
		t.Errorf("nil Rules: CheckWrite = %v", err)
	}
	if err := r.CheckRead("x", "y"); err != nil {
		t.Errorf("nil Rules: CheckRead = %v", err)
	}
	if err := r.CheckWalkRoot(".", "."); err != nil {
		t.Errorf("nil Rules: CheckWalkRoot = %v", err)
	}
	if !r.Visible("x", "x") {
		t.Error("nil Rules: Visible = false")
	}
}

func TestNewRules(t *testing.T) {
	tests := []struct {
		name                     string
		allowed, denied, protect []string
		wantErr                  bool
	}{
		{name: "all empty"},
		{name: "valid", allowed: []string{"*.py"}, denied: []string{"[", "a"}, protect: DefaultProtectedPatterns()},
		{name: "empty allowed pattern", allowed: []string{""}, wantErr: true},
		{name: "NUL in denied pattern", denied: []string{"a\x00"}, wantErr: true},
		{name: "empty protected pattern", protect: []string{"*.key", ""}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewRules(tt.allowed, tt.denied, tt.protect)
			if (err != nil) != tt.wantErr {
				t.Fatalf("NewRules error = %v, wantErr %v", err, tt.wantErr)
			}
			var pe *PatternError
			if err != nil && !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *PatternError", err)
			}
			if err == nil && r == nil {
				t.Fatal("nil Rules without an error")
			}
		})
	}

	denied := []string{"private"}
	r, err := NewRules(nil, denied, nil)
	if err != nil {
		t.Fatal(err)
	}
	denied[0] = "public"
	if err := r.CheckRead("private/x", "private/x"); err == nil {
		t.Error("NewRules kept the caller's slice instead of a copy")
	}
}

func TestHiddenBelow(t *testing.T) {
	tests := []struct {
		root, name string
		want       bool
	}{
		{".", "a/b", false},
		{".", ".git", true},
		{".", "a/.cache/x", true},
		{".", "a/b.txt", false},
		{".", ".", false},
		{".git", ".git/config", false}, // naming a hidden root walks it
		{".git", ".git/.hidden", true},
		{"a/.d", "a/.d/x/y", false},
		{"a", "a", false},
		{"a", "ab/.x", true}, // not below the root: every component counts
		{"/", "/mnt/.env", true},
		{"/", "/mnt/env", false},
		{"/mnt/.cfg", "/mnt/.cfg/a", false},
		{"/mnt", "/mnt/x/.y", true},
	}
	for _, tt := range tests {
		if got := HiddenBelow(tt.root, tt.name); got != tt.want {
			t.Errorf("HiddenBelow(%q, %q) = %v, want %v", tt.root, tt.name, got, tt.want)
		}
	}
}

func BenchmarkVisible(b *testing.B) {
	r, err := NewRules([]string{"*.go", "*.md"}, []string{"vendor", "**/testdata"}, DefaultProtectedPatterns())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		r.Visible("services/payments/internal/handlers/refund.go", "services/payments/internal/handlers/refund.go")
	}
}

func TestDeniedNaming(t *testing.T) {
	r, err := NewRules(nil, []string{"tenant/private"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	scope, err := NewScope("/tenant")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"denied", r.CheckRead("tenant/private/x", ""), "Path '/tenant/private/x' is denied by pattern 'tenant/private'."},
		{"scope", scope.Check(context.Background(), Request{Path: "other/x"}), "Path '/tenant/private/x' is outside the allowed scope."},
		{"foreign", &Denied{Message: "no", Path: "a"}, "no"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d *Denied
			if !errors.As(tt.err, &d) {
				t.Fatalf("got %v, want a *Denied", tt.err)
			}
			got := d.Naming("/tenant/private/x")
			if got.Message != tt.want || got.Path != "/tenant/private/x" {
				t.Errorf("Naming: got %q naming %q, want %q", got.Message, got.Path, tt.want)
			}
			if d.Path == got.Path {
				t.Errorf("Naming changed the original")
			}
		})
	}
}
