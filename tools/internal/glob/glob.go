// Package glob compiles the path patterns of the find_files tool.
//
// A pattern is matched one path component at a time: `*`, `?` and `[...]`
// (negated by a leading `!` or `^`) stay inside one component, a component
// that is exactly `**` spans zero or more directories, `{a,b}` lists
// alternatives (expanded before matching, so an alternative may contain
// `/`), and `\` quotes the next character. A trailing `/` makes the pattern
// match directories only. Component matching is done by doublestar; the
// component structure, `**` and pruning are done here, so a walker can ask
// [Pattern.CanDescend] before listing a directory.
package glob

import (
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
)

// Errors returned by [Compile]. The tool turns them into the contract's
// messages, which name the pattern as the caller wrote it.
var (
	// ErrAbsolute: the pattern starts at a root ("/x", "C:/x").
	ErrAbsolute = errors.New("glob: pattern is absolute")
	// ErrInvalid: the pattern is empty, malformed, climbs with "..", or
	// expands to too many alternatives.
	ErrInvalid = errors.New("glob: pattern is not valid")
)

// maxAlternatives bounds brace expansion, so "{a,b}{c,d}..." cannot make a
// pattern exponentially expensive.
const maxAlternatives = 256

// Pattern is a compiled glob. It is immutable and safe for concurrent use.
type Pattern struct {
	alts    [][]component // each alternative as components
	base    []int         // the index of each alternative's first position in a State
	words   int           // the uint64 words of a State's position set
	dirOnly bool
}

// component is one compiled path component of a pattern.
type component struct {
	kind compKind
	// text is the literal, prefix or suffix, or the doublestar pattern.
	text string
	// bytewise is set when a literal, prefix or suffix holds no U+FFFD:
	// then no name, valid UTF-8 or not, compares otherwise by bytes than
	// by runes as doublestar decodes them (an invalid byte decodes to
	// U+FFFD and ends where a valid rune of text starts).
	bytewise bool
}

type compKind uint8

const (
	compSpan    compKind = iota // "**": zero or more components
	compAny                     // "*": any one component
	compLiteral                 // no metacharacter: the component itself
	compSuffix                  // "*" then a literal
	compPrefix                  // a literal then "*"
	compGlob                    // anything else, matched by doublestar
)

// Compile parses a glob pattern relative to the search path.
func Compile(pattern string) (*Pattern, error) {
	if pattern == "" {
		return nil, ErrInvalid
	}
	if strings.HasPrefix(pattern, "/") || isDrive(pattern) {
		return nil, ErrAbsolute
	}
	if strings.IndexByte(pattern, 0) >= 0 {
		return nil, ErrInvalid
	}
	expanded, err := expandBraces(pattern)
	if err != nil {
		return nil, err
	}
	p := &Pattern{dirOnly: strings.HasSuffix(pattern, "/")}
	positions := 0
	for _, alt := range expanded {
		comps, err := components(alt)
		if err != nil {
			return nil, err
		}
		p.alts = append(p.alts, comps)
		p.base = append(p.base, positions)
		positions += len(comps) + 1
	}
	p.words = (positions + 63) / 64
	return p, nil
}

// components splits one brace-free alternative into validated, compiled
// components.
func components(alt string) ([]component, error) {
	if strings.HasPrefix(alt, "/") {
		return nil, ErrAbsolute
	}
	var comps []component
	for _, c := range strings.Split(alt, "/") {
		switch {
		case c == "" || c == ".":
			continue
		case c == "..":
			return nil, ErrInvalid
		case c == "**":
			// Consecutive "**" components mean the same as one.
			if len(comps) > 0 && comps[len(comps)-1].kind == compSpan {
				continue
			}
		case !doublestar.ValidatePattern(c):
			return nil, ErrInvalid
		}
		comps = append(comps, compile(c))
	}
	if len(comps) == 0 {
		return nil, ErrInvalid
	}
	return comps, nil
}

// compile picks the cheapest exact way to match the component c: most
// components are a literal, "*", or "*" with a literal suffix ("*.go").
func compile(c string) component {
	const meta = "*?[\\{}"
	switch {
	case c == "**":
		return component{kind: compSpan}
	case c == "*":
		return component{kind: compAny}
	case !utf8.ValidString(c):
		// doublestar compares runes, so invalid bytes match alike.
		return component{kind: compGlob, text: c}
	case !strings.ContainsAny(c, meta):
		return component{kind: compLiteral, text: c, bytewise: !strings.ContainsRune(c, utf8.RuneError)}
	case c[0] == '*' && !strings.ContainsAny(c[1:], meta):
		return component{kind: compSuffix, text: c[1:], bytewise: !strings.ContainsRune(c, utf8.RuneError)}
	case c[len(c)-1] == '*' && !strings.ContainsAny(c[:len(c)-1], meta):
		return component{kind: compPrefix, text: c[:len(c)-1], bytewise: !strings.ContainsRune(c, utf8.RuneError)}
	}
	return component{kind: compGlob, text: c}
}

// match reports whether the single path component name matches c (not a
// span). Names that are not valid UTF-8 go to doublestar, which decodes
// each invalid byte as U+FFFD, so that they match as they always did.
func (c component) match(name string) bool {
	if c.kind != compGlob && c.kind != compAny && !c.bytewise && !utf8.ValidString(name) {
		ok, _ := doublestar.Match(c.pattern(), name)
		return ok
	}
	switch c.kind {
	case compAny:
		return true
	case compLiteral:
		return name == c.text
	case compSuffix:
		return strings.HasSuffix(name, c.text)
	case compPrefix:
		return strings.HasPrefix(name, c.text)
	}
	ok, _ := doublestar.Match(c.text, name)
	return ok
}

// pattern returns the component as a doublestar pattern.
func (c component) pattern() string {
	switch c.kind {
	case compAny:
		return "*"
	case compSuffix:
		return "*" + c.text
	case compPrefix:
		return c.text + "*"
	}
	return c.text
}

// DirOnly reports whether the pattern ended with "/" and so matches
// directories only.
func (p *Pattern) DirOnly() bool { return p.dirOnly }

// Match reports whether the slash-separated path name, relative to the
// search path, matches the pattern. It does not look at DirOnly.
func (p *Pattern) Match(name string) bool {
	st, ok := p.walk(name)
	return ok && st.Matched()
}

// CanDescend reports whether some path below the directory dir (relative to
// the search path) could match, so a walker may skip dir's contents when it
// returns false.
func (p *Pattern) CanDescend(dir string) bool {
	st, ok := p.walk(dir)
	return ok && st.Alive()
}

// walk steps a State through the components of name.
func (p *Pattern) walk(name string) (State, bool) {
	st := p.Start()
	for {
		part, rest, more := strings.Cut(name, "/")
		if st = st.Step(part); st.empty() {
			return st, false
		}
		if !more {
			return st, true
		}
		name = rest
	}
}

// State is where a walk stands in a pattern: the pattern positions the
// components walked so far can reach. A walker keeps the State of each
// directory and steps it by one name per entry, so a match costs one
// component comparison rather than a match of the whole path. The zero
// State matches nothing.
type State struct {
	p *Pattern
	// w0 holds the first 64 positions, rest the others.
	w0   uint64
	rest []uint64
}

// Start returns the State of the search path itself.
func (p *Pattern) Start() State {
	st := State{p: p}
	if p.words > 1 {
		st.rest = make([]uint64, p.words-1)
	}
	for i := range p.alts {
		st.set(p.base[i])
	}
	st.closeSpans()
	return st
}

func (st *State) has(pos int) bool {
	if pos < 64 {
		return st.w0&(1<<pos) != 0
	}
	return st.rest[pos/64-1]&(1<<(pos%64)) != 0
}

func (st *State) set(pos int) {
	if pos < 64 {
		st.w0 |= 1 << pos
		return
	}
	st.rest[pos/64-1] |= 1 << (pos % 64)
}

// closeSpans lets every reached "**" match zero components.
func (st *State) closeSpans() {
	for i, comps := range st.p.alts {
		for j, c := range comps {
			if c.kind == compSpan && st.has(st.p.base[i]+j) {
				st.set(st.p.base[i] + j + 1)
			}
		}
	}
}

// Step returns the State after the path component name.
func (st State) Step(name string) State {
	if st.p == nil {
		return st
	}
	next := State{p: st.p}
	if st.rest != nil {
		next.rest = make([]uint64, len(st.rest))
	}
	for i, comps := range st.p.alts {
		base := st.p.base[i]
		for j, c := range comps {
			if !st.has(base + j) {
				continue
			}
			if c.kind == compSpan {
				next.set(base + j)
			} else if c.match(name) {
				next.set(base + j + 1)
			}
		}
	}
	next.closeSpans()
	return next
}

// empty reports whether no position is reached: nothing at or below the
// path walked so far matches.
func (st State) empty() bool {
	if st.w0 != 0 {
		return false
	}
	for _, w := range st.rest {
		if w != 0 {
			return false
		}
	}
	return true
}

// Matched reports whether the path walked so far matches the pattern.
func (st State) Matched() bool {
	if st.p == nil {
		return false
	}
	for i, comps := range st.p.alts {
		if st.has(st.p.base[i] + len(comps)) {
			return true
		}
	}
	return false
}

// Alive reports whether a path below the one walked so far could match,
// so a walker may skip a directory whose State is not alive.
func (st State) Alive() bool {
	if st.p == nil {
		return false
	}
	for i, comps := range st.p.alts {
		for j := range comps {
			if st.has(st.p.base[i] + j) {
				return true
			}
		}
	}
	return false
}

// expandBraces turns "{a,b}" alternatives into separate patterns, quoting
// and character classes respected, up to maxAlternatives results.
func expandBraces(p string) ([]string, error) {
	open := -1
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '[':
			j := classEnd(p, i)
			if j < 0 {
				return nil, ErrInvalid
			}
			i = j
		case '{':
			open = i
		case '}':
			return nil, ErrInvalid
		}
		if open >= 0 {
			break
		}
	}
	if open < 0 {
		return []string{p}, nil
	}
	closeIdx, parts, err := splitAlternatives(p, open)
	if err != nil {
		return nil, err
	}
	prefix, suffix := p[:open], p[closeIdx+1:]
	var out []string
	for _, part := range parts {
		more, err := expandBraces(prefix + part + suffix)
		if err != nil {
			return nil, err
		}
		out = append(out, more...)
		if len(out) > maxAlternatives {
			return nil, ErrInvalid
		}
	}
	return out, nil
}

// splitAlternatives returns the index of the "}" matching the "{" at open
// and the top-level comma-separated parts between them.
func splitAlternatives(p string, open int) (int, []string, error) {
	depth := 0
	start := open + 1
	var parts []string
	for i := open; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '[':
			j := classEnd(p, i)
			if j < 0 {
				return 0, nil, ErrInvalid
			}
			i = j
		case '{':
			depth++
		case ',':
			if depth == 1 {
				parts = append(parts, p[start:i])
				start = i + 1
			}
		case '}':
			depth--
			if depth == 0 {
				return i, append(parts, p[start:i]), nil
			}
		}
	}
	return 0, nil, ErrInvalid
}

// classEnd returns the index of the "]" closing the class opening at i, or
// -1 when it does not close.
func classEnd(p string, i int) int {
	j := i + 1
	if j < len(p) && (p[j] == '!' || p[j] == '^') {
		j++
	}
	if j < len(p) && p[j] == ']' {
		j++ // a leading "]" is a member, not the end
	}
	for ; j < len(p); j++ {
		switch p[j] {
		case '\\':
			j++
		case ']':
			return j
		}
	}
	return -1
}

// isDrive reports whether p starts with a drive prefix such as "C:".
func isDrive(p string) bool {
	if len(p) < 2 || p[1] != ':' {
		return false
	}
	c := p[0] | 0x20
	return c >= 'a' && c <= 'z'
}
