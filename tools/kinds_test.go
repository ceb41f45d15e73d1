package tools

import (
	"context"
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/backend"
)

// TestRefusalSitesHaveKinds reads the package's source: every
// RetryError it builds names its Kind, and no retryf passes KindUnknown,
// so that a refusal added later cannot reach a host without a kind.
func TestRefusalSitesHaveKinds(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	sites := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CompositeLit:
				if id, ok := n.Type.(*ast.Ident); !ok || id.Name != "RetryError" {
					return true
				}
				sites++
				if !slices.ContainsFunc(n.Elts, func(e ast.Expr) bool {
					kv, ok := e.(*ast.KeyValueExpr)
					id, _ := kv.Key.(*ast.Ident)
					return ok && id != nil && id.Name == "Kind"
				}) {
					t.Errorf("%s: a RetryError without a Kind", fset.Position(n.Pos()))
				}
			case *ast.CallExpr:
				if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "retryf" {
					sites++
					if k, ok := n.Args[0].(*ast.Ident); ok && k.Name == "KindUnknown" {
						t.Errorf("%s: retryf with KindUnknown", fset.Position(n.Pos()))
					}
					// Kind is a string type: a format passed first, as
					// before kinds, would compile as the kind.
					if _, ok := n.Args[0].(*ast.BasicLit); ok {
						t.Errorf("%s: retryf with a literal for its kind", fset.Position(n.Pos()))
					}
				}
			}
			return true
		})
	}
	if sites < 100 {
		t.Errorf("found %d refusal sites; the package has more than 100, so the source was not read", sites)
	}
}

// TestRefusalKinds drives one refusal of every kind the tools give and
// tells it apart with errors.Is alone, as a host does; the texts are the
// contract's and do not change.
func TestRefusalKinds(t *testing.T) {
	fx := localFixture(t)
	fx.put(t, "f.txt", "one\ntwo\n")
	fx.put(t, "bin.dat", "a\x00b")
	fx.put(t, "d/x.txt", "x\n")
	fx.put(t, "secret/k.txt", "k\n")
	fx.put(t, "keep/a.txt", "a\n")
	all := Options{Tools: []string{"read_file", "write_file", "edit_file", "list_directory", "create_directory",
		"file_info", "apply_patch", "delete_file", "move_file", "copy_file", "find_files", "search_files"}}
	withDeny := all
	withDeny.Denied = []string{"secret"}
	withDeny.Protected = []string{"keep"}
	withRead := all
	withRead.RequireRead = true
	readOnly := Options{ReadOnly: true}
	s, ds, rs, ros := newSet(t, fx.b, all), newSet(t, fx.b, withDeny), newSet(t, fx.b, withRead), newSet(t, fx.b, readOnly)

	tests := []struct {
		set  *Set
		tool string
		kv   []any
		want Kind
	}{
		{s, "read_file", []any{"path", "f.txt", "bogus", 1}, KindInvalid},
		{s, "read_file", []any{"path", "f.txt", "offset", -1}, KindInvalid},
		{s, "read_file", []any{"path", "a\\b"}, KindInvalid},
		{s, "search_files", []any{"pattern", "("}, KindInvalid},
		{s, "move_file", []any{"source", "f.txt", "destination", "f.txt"}, KindInvalid},
		{s, "edit_file", []any{"path", "f.txt", "old_text", "three", "new_text", "3"}, KindNoMatch},
		{s, "edit_file", []any{"path", "f.txt", "old_text", "o", "new_text", "0"}, KindNoMatch},
		{s, "read_file", []any{"path", "missing.txt"}, KindNotFound},
		{s, "write_file", []any{"path", "no/such/dir/f.txt", "content", "x"}, KindNotFound},
		{s, "move_file", []any{"source", "f.txt", "destination", "d/x.txt"}, KindExists},
		{s, "read_file", []any{"path", "d"}, KindIsDir},
		{s, "list_directory", []any{"path", "f.txt"}, KindNotDir},
		{s, "delete_file", []any{"path", "d"}, KindNotEmpty},
		{s, "edit_file", []any{"path", "bin.dat", "old_text", "a", "new_text", "b"}, KindNotText},
		{ds, "read_file", []any{"path", "secret/k.txt"}, KindDenied},
		{ds, "write_file", []any{"path", "keep/a.txt", "content", "x"}, KindProtected},
		{s, "delete_file", []any{"path", "."}, KindProtected},
		{ros, "write_file", []any{"path", "f.txt", "content", "x"}, KindReadOnly},
		{rs, "edit_file", []any{"path", "f.txt", "old_text", "one", "new_text", "1"}, KindNotRead},
		{s, "write_file", []any{"path", "f.txt", "content", "x", "expected_hash", strings.Repeat("0", 12)}, KindConflict},
		{s, "read_file", []any{"path", "../outside.txt"}, KindOutside},
	}
	for _, tt := range tests {
		_, err := tt.set.Call(context.Background(), tt.tool, args(t, tt.kv...))
		if !errors.Is(err, tt.want) || KindOf(err) != tt.want || OutcomeOf(err) != OutcomeRefused {
			t.Errorf("%s(%v): %v is of kind %q (outcome %s), want %q", tt.tool, tt.kv, err, KindOf(err), OutcomeOf(err), tt.want)
		}
		for _, k := range Kinds {
			if k != tt.want && errors.Is(err, k) {
				t.Errorf("%s(%v): %v is also %q", tt.tool, tt.kv, err, k)
			}
		}
	}
	if got := fx.mustGet(t, "f.txt"); got != "one\ntwo\n" {
		t.Errorf("f.txt holds %q after refusals", got)
	}
}

// TestOutcomeOf: how calls that really ended each way are told apart.
func TestOutcomeOf(t *testing.T) {
	fx := localFixture(t)
	fx.put(t, "f.txt", "x\n")
	s := newSet(t, fx.b, Options{})
	ctx := context.Background()
	if _, err := s.Call(ctx, "read_file", args(t, "path", "f.txt")); OutcomeOf(err) != OutcomeOK {
		t.Errorf("a read that succeeded: %s", OutcomeOf(err))
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Call(cctx, "read_file", args(t, "path", "f.txt")); OutcomeOf(err) != OutcomeCancelled || KindOf(err) != KindUnknown {
		t.Errorf("a cancelled call: %v is %s, kind %q", err, OutcomeOf(err), KindOf(err))
	}
	boom := errors.New("listener down")
	ls := newSet(t, fx.b, Options{OnChangeRequest: func(context.Context, *ChangeRequest) error { return boom }})
	if _, err := ls.Call(ctx, "write_file", args(t, "path", "f.txt", "content", "y\n")); OutcomeOf(err) != OutcomeError || !errors.Is(err, boom) {
		t.Errorf("a failed listener: %v is %s", err, OutcomeOf(err))
	}
	// A listener that fails with a refusal of its own is fatal all the
	// same: the call failed, it was not refused.
	rs := newSet(t, fx.b, Options{OnChangeRequest: func(context.Context, *ChangeRequest) error {
		return Refusal(KindQuota, "over quota")
	}})
	if _, err := rs.Call(ctx, "write_file", args(t, "path", "f.txt", "content", "y\n")); OutcomeOf(err) != OutcomeError || KindOf(err) != KindUnknown {
		t.Errorf("a listener's refusal: %v is %s, kind %q", err, OutcomeOf(err), KindOf(err))
	}
	fatal := s.fatal(backend.ErrIO)
	if OutcomeOf(fatal) != OutcomeError || KindOf(fatal) != KindUnknown {
		t.Errorf("a storage failure is %s, kind %q", OutcomeOf(fatal), KindOf(fatal))
	}
	if r := Refusal(KindRateLimited, "slow down"); !errors.Is(r, KindRateLimited) || OutcomeOf(r) != OutcomeRefused || Message(r) != "slow down" {
		t.Errorf("a host's refusal: %v is %s, kind %q", r, OutcomeOf(r), KindOf(r))
	}
	if errors.Is(&RetryError{Message: "m"}, KindUnknown) {
		t.Error("a refusal without a kind matches KindUnknown")
	}
}

// FuzzRefusalKinds calls every tool with arbitrary arguments over a small
// tree: whatever the tools refuse, they refuse with a kind.
func FuzzRefusalKinds(f *testing.F) {
	names := []string{"read_file", "write_file", "edit_file", "list_directory", "search_files", "find_files",
		"create_directory", "file_info", "apply_patch", "delete_file", "move_file", "copy_file"}
	for i := range names {
		f.Add(uint8(i), `{"path":"f.txt"}`)
	}
	f.Add(uint8(2), `{"path":"f.txt","old_text":"one","new_text":"1"}`)
	f.Add(uint8(8), `{"patch":"*** Begin Patch\n*** Update File: f.txt\n@@\n-one\n+1\n*** End Patch"}`)
	f.Add(uint8(10), `{"source":"d","destination":"d/e"}`)
	f.Add(uint8(4), `{"pattern":"[","include":"**/{"}`)
	f.Fuzz(func(t *testing.T, tool uint8, raw string) {
		m := newMemFS()
		ctx := context.Background()
		for name, data := range map[string]string{"f.txt": "one\ntwo\n", "d/x.txt": "x\n", ".env": "k=v\n", "bin": "\x00"} {
			if dir, _ := backend.Split(name); dir != "." {
				if err := backend.MkdirAll(ctx, m, dir); err != nil {
					t.Fatal(err)
				}
			}
			if err := backend.WriteFile(ctx, m, name, []byte(data), backend.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		s, err := New(m, Options{Tools: names, RequireRead: tool&0x80 != 0, Denied: []string{"d/x.txt"}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Call(ctx, names[int(tool&0x7f)%len(names)], json.RawMessage(raw))
		if IsRetry(err) && (KindOf(err) == KindUnknown || !errors.Is(err, KindOf(err))) {
			t.Fatalf("%s(%s): refusal %q has no kind", names[int(tool&0x7f)%len(names)], raw, err)
		}
	})
}
