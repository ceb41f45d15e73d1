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
	alts    [][]string // each alternative as components; "**" spans directories
	dirOnly bool
}

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
	for _, alt := range expanded {
		comps, err := components(alt)
		if err != nil {
			return nil, err
		}
		p.alts = append(p.alts, comps)
	}
	return p, nil
}

// components splits one brace-free alternative into validated components.
func components(alt string) ([]string, error) {
	if strings.HasPrefix(alt, "/") {
		return nil, ErrAbsolute
	}
	var comps []string
	for _, c := range strings.Split(alt, "/") {
		switch {
		case c == "" || c == ".":
			continue
		case c == "..":
			return nil, ErrInvalid
		case c == "**":
			// Consecutive "**" components mean the same as one.
			if len(comps) > 0 && comps[len(comps)-1] == "**" {
				continue
			}
		case !doublestar.ValidatePattern(c):
			return nil, ErrInvalid
		}
		comps = append(comps, c)
	}
	if len(comps) == 0 {
		return nil, ErrInvalid
	}
	return comps, nil
}

// DirOnly reports whether the pattern ended with "/" and so matches
// directories only.
func (p *Pattern) DirOnly() bool { return p.dirOnly }

// Match reports whether the slash-separated path name, relative to the
// search path, matches the pattern. It does not look at DirOnly.
func (p *Pattern) Match(name string) bool {
	parts := strings.Split(name, "/")
	for _, comps := range p.alts {
		if matchAll(comps, parts) {
			return true
		}
	}
	return false
}

// CanDescend reports whether some path below the directory dir (relative to
// the search path) could match, so a walker may skip dir's contents when it
// returns false.
func (p *Pattern) CanDescend(dir string) bool {
	parts := strings.Split(dir, "/")
	for _, comps := range p.alts {
		if live(comps, parts) {
			return true
		}
	}
	return false
}

// states runs the component automaton over parts and returns the set of
// pattern positions reached (index len(comps) means the whole pattern
// matched), or nil when no position is left.
func states(comps, parts []string) []bool {
	cur := make([]bool, len(comps)+1)
	next := make([]bool, len(comps)+1)
	cur[0] = true
	closeEpsilon(comps, cur)
	for _, part := range parts {
		clear(next)
		alive := false
		for i, on := range cur {
			if !on || i == len(comps) {
				continue
			}
			if comps[i] == "**" {
				next[i] = true
				alive = true
				continue
			}
			if ok, _ := doublestar.Match(comps[i], part); ok {
				next[i+1] = true
				alive = true
			}
		}
		if !alive {
			return nil
		}
		closeEpsilon(comps, next)
		cur, next = next, cur
	}
	return cur
}

// closeEpsilon lets every "**" match zero components.
func closeEpsilon(comps []string, set []bool) {
	for i := range comps {
		if set[i] && comps[i] == "**" {
			set[i+1] = true
		}
	}
}

func matchAll(comps, parts []string) bool {
	s := states(comps, parts)
	return s != nil && s[len(comps)]
}

func live(comps, parts []string) bool {
	s := states(comps, parts)
	for i, on := range s {
		if on && i < len(comps) {
			return true
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
