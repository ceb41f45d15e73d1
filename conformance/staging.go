package conformance

import (
	"context"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/backend"
)

// stagingSample returns a final component that the backend's declared
// Capabilities.StagingPattern matches, built from the pattern itself, or
// "" when it declares none. A pattern that does not compile or whose
// sample it does not match fails the test: the fact would be unusable.
func (e *env) stagingSample() string {
	e.t.Helper()
	pat := e.caps.StagingPattern
	if pat == "" {
		return ""
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		e.t.Fatalf("Capabilities.StagingPattern %q does not compile: %v", pat, err)
	}
	tree, err := syntax.Parse(pat, syntax.Perl)
	if err != nil {
		e.t.Fatalf("Capabilities.StagingPattern %q: %v", pat, err)
	}
	var b strings.Builder
	sample(&b, tree.Simplify())
	if s := b.String(); re.MatchString(s) && backend.ValidPath(s) && !strings.Contains(s, "/") {
		return s
	}
	e.t.Fatalf("Capabilities.StagingPattern %q: no usable name derived from it (got %q)", pat, b.String())
	return ""
}

// sample writes the shortest plain string re matches, taking the first
// choice of every alternation and class.
func sample(b *strings.Builder, re *syntax.Regexp) {
	switch re.Op {
	case syntax.OpLiteral:
		b.WriteString(string(re.Rune))
	case syntax.OpCharClass:
		if len(re.Rune) > 0 {
			b.WriteRune(re.Rune[0])
		}
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.WriteByte('x')
	case syntax.OpCapture:
		sample(b, re.Sub[0])
	case syntax.OpPlus:
		sample(b, re.Sub[0])
	case syntax.OpRepeat:
		for range re.Min {
			sample(b, re.Sub[0])
		}
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			sample(b, sub)
		}
	case syntax.OpAlternate:
		sample(b, re.Sub[0])
	}
	// Star, Quest, empty width and the anchors add nothing.
}

// reservedNames returns the paths naming a staged write's temporary file
// that the backend must refuse, in every position, when it declares a
// staging pattern.
func (e *env) reservedNames() []string {
	s := e.stagingSample()
	if s == "" {
		return nil
	}
	return []string{e.p(s), e.p("d/" + s), e.p(s + "/x")}
}

// testInvalidChanges checks that Remove, Rename and Copy refuse every
// invalid spelling and reserved name, as source and as target, and leave
// what is stored alone.
func (s *suite) testInvalidChanges(t *testing.T) {
	e := s.setup(t)
	arranged := e.arrangeForInvalid()
	src := e.p("x")
	ops := []struct {
		name string
		call func(ctx context.Context, name string) error
	}{
		{"Remove", func(ctx context.Context, name string) error {
			return backend.Remove(ctx, e.b, name, backend.RemoveOptions{})
		}},
		{"Rename from", func(ctx context.Context, name string) error {
			return backend.Rename(ctx, e.b, name, e.p("moved"), backend.RenameOptions{})
		}},
		{"Rename to", func(ctx context.Context, name string) error {
			return backend.Rename(ctx, e.b, src, name, backend.RenameOptions{})
		}},
		{"Copy from", func(ctx context.Context, name string) error {
			return backend.Copy(ctx, e.b, name, e.p("copied"), backend.CopyOptions{})
		}},
		{"Copy to", func(ctx context.Context, name string) error {
			return backend.Copy(ctx, e.b, src, name, backend.CopyOptions{})
		}},
	}
	for _, op := range ops {
		for _, name := range e.invalidNames() {
			if err := op.call(e.ctx, name); !matchesAny(err, e.refusedWrite()) {
				t.Errorf("%s %q: error = %v; want an error matching fs.ErrInvalid", op.name, name, err)
			}
		}
	}
	if arranged {
		for _, name := range arrangedForInvalid {
			e.wantContent(e.p(name), []byte("arranged "+name))
		}
		e.wantNames(e.p("."), "a", "b", "x")
	}
}

// checkStagedNames checks, while writes are pending, that every entry the
// harness's RawLister shows below the working directory besides the
// stored files is named as the declared staging pattern says, so the
// fact covers what the backend really stages. It checks nothing without a
// RawLister or a declared pattern.
func (e *env) checkStagedNames(stored ...string) {
	e.t.Helper()
	rl, ok := e.s.h.(RawLister)
	if !ok || e.caps.StagingPattern == "" {
		return
	}
	re, err := regexp.Compile(e.caps.StagingPattern)
	if err != nil {
		e.t.Fatalf("Capabilities.StagingPattern %q does not compile: %v", e.caps.StagingPattern, err)
	}
	for _, n := range rl.ListRaw(e.ctx, e.t, e.b) {
		if !backend.IsWithin(n, e.s.opts.Dir) || slices.Contains(stored, n) {
			continue
		}
		if _, base := backend.Split(n); !re.MatchString(base) {
			e.t.Errorf("a pending write stages %q, which Capabilities.StagingPattern %q does not match", n, e.caps.StagingPattern)
		}
	}
}
