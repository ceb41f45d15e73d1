package glob

import (
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Decision is what a set of ignore rules says about a path.
type Decision int

// Decisions of [IgnoreRules.Match].
const (
	// None: no rule matched.
	None Decision = iota
	// Ignore: the path is left out.
	Ignore
	// Allow: the path is kept, whatever later (lower-precedence) rules say.
	Allow
)

// IgnoreRules are the rules of one ignore file (.gitignore, .ignore,
// .rgignore, .git/info/exclude) in gitignore syntax: "#" comments, "!"
// re-includes, a trailing "/" matches directories only, a pattern with a
// "/" before its end is anchored to the file's directory and one without
// matches a name at any depth; "*" and "?" stay within a component, "**"
// spans components, "[...]" and "{a,b}" work as in ripgrep's globs. The
// last matching rule decides.
type IgnoreRules struct {
	rules      []ignoreRule
	whitelists int
}

type ignoreRule struct {
	pattern string
	negate  bool
	dirOnly bool
}

// ParseIgnore compiles the content of an ignore file. Lines that are not
// valid globs are skipped, as ripgrep skips them.
func ParseIgnore(data string) *IgnoreRules {
	r := &IgnoreRules{}
	for _, line := range strings.Split(data, "\n") {
		if rule, ok := parseRule(line); ok {
			r.rules = append(r.rules, rule)
		}
	}
	return r
}

// ParseOverrides compiles ripgrep --glob values: a glob keeps the files it
// matches (and, when there is at least one such glob, only those), a glob
// starting with "!" leaves out what it matches. They use the syntax of
// ignore files, relative to the search root. It returns the first glob that
// is not valid.
func ParseOverrides(globs []string) (*IgnoreRules, string, bool) {
	r := &IgnoreRules{}
	for _, g := range globs {
		rule, ok := parseRule(g)
		if !ok {
			return nil, g, false
		}
		// An override glob keeps what it matches: the reverse of an
		// ignore rule.
		rule.negate = !rule.negate
		if rule.negate {
			r.whitelists++
		}
		r.rules = append(r.rules, rule)
	}
	return r, "", true
}

func parseRule(line string) (ignoreRule, bool) {
	line = strings.TrimSuffix(line, "\r")
	line = trimTrailingSpaces(line)
	if line == "" || strings.HasPrefix(line, "#") {
		return ignoreRule{}, false
	}
	var rule ignoreRule
	switch {
	case strings.HasPrefix(line, "!"):
		rule.negate = true
		line = line[1:]
	case strings.HasPrefix(line, `\!`), strings.HasPrefix(line, `\#`):
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		rule.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if line == "" {
		return ignoreRule{}, false
	}
	if strings.Contains(line, "/") {
		line = strings.TrimPrefix(line, "/")
	} else {
		line = "**/" + line
	}
	if !doublestar.ValidatePattern(line) {
		return ignoreRule{}, false
	}
	rule.pattern = line
	return rule, true
}

// trimTrailingSpaces removes trailing spaces that are not escaped.
func trimTrailingSpaces(s string) string {
	for strings.HasSuffix(s, " ") && !strings.HasSuffix(s, `\ `) {
		s = s[:len(s)-1]
	}
	return s
}

// Match judges rel, a slash-separated path relative to the directory of
// the ignore file (or the search root, for overrides).
func (r *IgnoreRules) Match(rel string, isDir bool) Decision {
	for i := len(r.rules) - 1; i >= 0; i-- {
		rule := r.rules[i]
		if rule.dirOnly && !isDir {
			continue
		}
		if ok, _ := doublestar.Match(rule.pattern, rel); ok {
			if rule.negate {
				return Allow
			}
			return Ignore
		}
	}
	return None
}

// MatchOverride judges rel with override rules: a file no keeping glob
// matches is left out when there is at least one keeping glob.
func (r *IgnoreRules) MatchOverride(rel string, isDir bool) Decision {
	d := r.Match(rel, isDir)
	if d == None && r.whitelists > 0 && !isDir {
		return Ignore
	}
	return d
}

// Empty reports whether there are no rules.
func (r *IgnoreRules) Empty() bool { return len(r.rules) == 0 }
