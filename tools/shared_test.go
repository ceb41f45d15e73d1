package tools

import (
	"context"
	"log/slog"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/local"
	"github.com/fencefs/fencefs/policy"
)

// TestSharedTextsMatchBuilt checks that the texts a Set takes from the
// process's cache are the ones its own options build: every option is
// varied alone, and the options the texts read in every combination, in
// a plain and in a rooted namespace. An option a builder reads but
// textKey leaves out makes a Set take the texts of other options.
func TestSharedTextsMatchBuilt(t *testing.T) {
	ctx := context.Background()
	alone := map[string]func(o *Options){
		"Cwd":              func(o *Options) { o.Cwd = "work" },
		"Allowed":          func(o *Options) { o.Allowed = []string{"work/**"} },
		"Denied":           func(o *Options) { o.Denied = []string{"*/secret"} },
		"Protected":        func(o *Options) { o.Protected = []string{"*/keep"} },
		"Logger":           func(o *Options) { o.Logger = slog.New(slog.DiscardHandler) },
		"NoDefaultProtect": func(o *Options) { o.NoDefaultProtect = true },
		"MaxReadLines":     func(o *Options) { o.MaxReadLines = 77 },
		"MaxReadChars":     func(o *Options) { o.MaxReadChars = 999 },
		"MaxListResults":   func(o *Options) { o.MaxListResults = 11 },
		"MaxSearchResults": func(o *Options) { o.MaxSearchResults = 12 },
		"MaxFindResults":   func(o *Options) { o.MaxFindResults = 13 },
		"ReadOnly":         func(o *Options) { o.ReadOnly = true },
		"NoContentHashes":  func(o *Options) { o.NoContentHashes = true },
		"Tools":            func(o *Options) { o.Tools = []string{nameReadFile, nameMoveFile} },
		"RequireRead":      func(o *Options) { o.RequireRead = true },
		"Permission": func(o *Options) {
			o.Permission = policy.CheckerFunc(func(context.Context, policy.Request) error { return nil })
		},
		"OnChangeRequest":     func(o *Options) { o.OnChangeRequest = func(context.Context, *ChangeRequest) error { return nil } },
		"OnEvent":             func(o *Options) { o.OnEvent = func(context.Context, Event) {} },
		"ListenersReadNoDiff": func(o *Options) { o.ListenersReadNoDiff = true },
		"CallTimeout":         func(o *Options) { o.CallTimeout = time.Minute },
		"RipgrepPath":         func(o *Options) { o.RipgrepPath = "/nonexistent/rg" },
		"RipgrepTimeout":      func(o *Options) { o.RipgrepTimeout = time.Minute },
		"RipgrepMaxMemory":    func(o *Options) { o.RipgrepMaxMemory = 1 << 20 },
		"EditTolerance":       func(o *Options) { o.EditTolerance = ToleranceWhitespace },
		"RipgrepSlots":        func(o *Options) { o.RipgrepSlots = NewRipgrepSlots(2) },
		"NoUnicodePathMatch":  func(o *Options) { o.NoUnicodePathMatch = true },
	}
	for f := range reflect.TypeFor[Options]().Fields() {
		if alone[f.Name] == nil {
			t.Errorf("Options.%s is not varied here: add it (and to textKey if a tool's texts read it)", f.Name)
		}
	}
	combined := []func(o *Options){alone["ReadOnly"], alone["NoContentHashes"], alone["RequireRead"],
		alone["NoUnicodePathMatch"], alone["EditTolerance"], alone["MaxReadChars"]}
	var variants []func(o *Options)
	for _, v := range alone {
		variants = append(variants, v)
	}
	for mask := range 1 << len(combined) {
		variants = append(variants, func(o *Options) {
			for i, v := range combined {
				if mask&(1<<i) != 0 {
					v(o)
				}
			}
		})
	}
	rooted, _ := mountedFixture(t)
	plain := newMemFS()
	if err := backend.MkdirAll(ctx, plain, "work"); err != nil {
		t.Fatal(err)
	}
	for _, b := range []backend.Backend{plain, rooted} {
		for _, v := range variants {
			var o Options
			v(&o)
			o.Tools = AllTools()
			if o.ReadOnly {
				o.Tools = nil
			}
			v(&o) // the Tools variant again
			s, err := New(b, o)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if want, err := s.buildRules(s.opts); err != nil || !reflect.DeepEqual(s.rules, want) {
				t.Errorf("%T, options %+v: policy %+v, its options build %+v (%v)", b, o, s.rules, want, err)
			}
			for _, got := range s.Tools() {
				want := s.build(got.Name)
				if got.Description != want.Description || string(got.InputSchema) != string(want.InputSchema) || got.Annotations != want.Annotations {
					t.Errorf("%T, options %+v: %s's texts are not the ones its options build", b, o, got.Name)
				}
			}
		}
	}
}

// TestSharedRulesOfHostPaths checks that a policy naming host paths is
// each root's own: the same pattern is the root's subtree in one plain
// namespace and a path of the tree in another.
func TestSharedRulesOfHostPaths(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	opts := Options{Denied: []string{a + "/secret"}, NoDefaultProtect: true}
	for _, tt := range []struct {
		root, want string
	}{{a, "secret"}, {b, "secret"}, {a, "secret"}} {
		lb, err := local.New(tt.root)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { lb.Close() })
		s := newSet(t, lb, opts)
		want, err := s.buildRules(s.opts)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(s.rules, want) {
			t.Errorf("root %s: policy %+v, its options build %+v", tt.root, s.rules, want)
		}
		if tt.root == a && !slices.Equal(s.rules.Denied, []string{tt.want}) {
			t.Errorf("root %s: denied %q, want [%q]", tt.root, s.rules.Denied, tt.want)
		}
		if tt.root == b && slices.Equal(s.rules.Denied, []string{tt.want}) {
			t.Errorf("root %s: another root's host path %q denied its own %q", tt.root, a+"/secret", tt.want)
		}
	}
}
