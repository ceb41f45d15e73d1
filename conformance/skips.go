package conformance

import (
	"flag"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Ability names an optional harness ability, for
// RunOptions.RequireAbilities.
type Ability string

// The optional harness abilities, named after their interfaces.
const (
	AbilitySymlinker        Ability = "Symlinker"
	AbilitySpecialFileMaker Ability = "SpecialFileMaker"
	AbilityRawLister        Ability = "RawLister"
	AbilityChmoder          Ability = "Chmoder"
	AbilitySeeder           Ability = "Seeder"
	AbilityReopener         Ability = "Reopener"
)

// has reports whether h has the ability a; an unknown ability is never
// there.
func (a Ability) has(h Harness) bool {
	switch a {
	case AbilitySymlinker:
		_, ok := h.(Symlinker)
		return ok
	case AbilitySpecialFileMaker:
		_, ok := h.(SpecialFileMaker)
		return ok
	case AbilityRawLister:
		_, ok := h.(RawLister)
		return ok
	case AbilityChmoder:
		_, ok := h.(Chmoder)
		return ok
	case AbilitySeeder:
		_, ok := h.(Seeder)
		return ok
	case AbilityReopener:
		_, ok := h.(Reopener)
		return ok
	}
	return false
}

// requireAbilities fails t unless h has every ability in want, so a
// harness that loses one stops the run instead of weakening it.
func requireAbilities(t *testing.T, h Harness, want []Ability) {
	t.Helper()
	for _, a := range want {
		if !a.has(h) {
			t.Fatalf("the options require the harness ability conformance.%s, which %T does not implement", a, h)
		}
	}
}

// skipCheck runs subtests and holds every skip against the list of
// expected ones, so that a run cannot turn green by quietly testing less.
type skipCheck struct {
	root     string   // name of the test the suite runs in
	expected []string // path.Match patterns of test names below root
	checked  bool     // whether expected was given at all

	mu      sync.Mutex
	matched map[string]bool // patterns that matched a skip
}

func newSkipCheck(t *testing.T, expected []string) *skipCheck {
	return &skipCheck{root: t.Name(), expected: expected, checked: expected != nil, matched: map[string]bool{}}
}

// run runs fn as the subtest name of t and judges a skip when it ends.
func (c *skipCheck) run(t *testing.T, name string, fn func(t *testing.T)) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		defer c.judge(t)
		fn(t)
	})
}

// judge fails t when it skipped although no expected pattern names it.
func (c *skipCheck) judge(t *testing.T) {
	if !t.Skipped() || !c.checked {
		return
	}
	name := strings.TrimPrefix(t.Name(), c.root+"/")
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.expected {
		if matchTest(p, name) {
			c.matched[p] = true
			return
		}
	}
	t.Errorf("%s skipped, and the run's ExpectedSkips does not name it: the harness or the backend lost an ability, or the list needs %q", name, name)
}

// matchTest reports whether the pattern p matches the test name or one of
// its ancestors, so a pattern naming a test covers its subtests too.
func matchTest(p, name string) bool {
	for {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
		i := strings.LastIndexByte(name, '/')
		if i < 0 {
			return false
		}
		name = name[:i]
	}
}

// finish fails t for every expected pattern that matched no skip, unless
// the run was narrowed with -run or -skip (then some tests never ran).
func (c *skipCheck) finish(t *testing.T) {
	t.Helper()
	if !c.checked || narrowed() || t.Failed() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var unused []string
	for _, p := range c.expected {
		if !c.matched[p] {
			unused = append(unused, p)
		}
	}
	slices.Sort(unused)
	if len(unused) > 0 {
		t.Errorf("ExpectedSkips names %q, which did not skip: the backend or harness gained an ability; remove them from the list", unused)
	}
}

// narrowed reports whether go test was told to run only some of the
// suite's tests: a -run pattern that selects subtests, or any -skip.
func narrowed() bool {
	if f := flag.Lookup("test.run"); f != nil && strings.Contains(f.Value.String(), "/") {
		return true
	}
	f := flag.Lookup("test.skip")
	return f != nil && f.Value.String() != ""
}

// runGroups runs the groups of a suite as subtests of t, judging skips
// with c.
func runGroups(t *testing.T, c *skipCheck, groups []group) {
	t.Helper()
	for _, g := range groups {
		c.run(t, g.name, func(t *testing.T) {
			for _, tc := range g.cases {
				c.run(t, tc.name, tc.fn)
			}
		})
	}
	c.finish(t)
}
