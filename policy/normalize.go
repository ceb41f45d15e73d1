package policy

import "strings"

// PatternKind says which list a pattern belongs to, which decides what a
// directory spelling such as "build/" means.
type PatternKind uint8

const (
	// AllowedPattern is a pattern of [Rules.Allowed].
	AllowedPattern PatternKind = iota
	// DeniedPattern is a pattern of [Rules.Denied].
	DeniedPattern
	// ProtectedPattern is a pattern of [Rules.Protected].
	ProtectedPattern
)

// String returns "allowed", "denied" or "protected".
func (k PatternKind) String() string {
	switch k {
	case AllowedPattern:
		return "allowed"
	case DeniedPattern:
		return "denied"
	}
	return "protected"
}

// NormalizePattern returns the pattern that p, of kind k, means, or an
// error for a pattern that could match nothing, whose message shows the
// spelling to use. Patterns match canonical paths from the namespace
// root, which have no leading "/", no "." or ".." component, no empty
// component and no trailing "/"; so the spellings operators write for
// such paths are read as they mean them:
//
//   - a leading "/" (the namespace root, as paths are printed in a rooted
//     namespace) and a leading "./" are dropped: "/ws/private" is
//     "ws/private", "./private" is "private";
//   - runs of "/" are one: "a//b" is "a/b";
//   - a trailing "/" names a directory: a denied or protected "private/"
//     is "private", which covers everything below it; an allowed "src/"
//     is "src/**", the files below it, since allowed patterns match
//     files themselves, not their ancestors.
//
// Refused are the patterns [ValidatePattern] refuses, a pattern that names
// only the namespace root ("/", "."), and one with a "." or ".."
// component elsewhere ("a/../b"), which no canonical path has. A pattern
// that is already canonical is returned unchanged.
func NormalizePattern(k PatternKind, p string) (string, error) {
	if err := ValidatePattern(p); err != nil {
		return "", err
	}
	dir := strings.HasSuffix(p, "/")
	var parts []string
	for i, c := range strings.Split(p, "/") {
		switch {
		case c == "":
			continue
		case c == "." && len(parts) == 0 && i == 0:
			continue
		case c == "." || c == "..":
			return "", &PatternError{Pattern: p, Reason: "a '" + c + "' component can match nothing: " +
				"patterns match clean paths from the namespace root, such as 'src/app' or '**/build'"}
		}
		parts = append(parts, c)
	}
	if len(parts) == 0 {
		return "", &PatternError{Pattern: p, Reason: "it names the namespace root, which patterns do not match: " +
			"write '*' for every path"}
	}
	out := strings.Join(parts, "/")
	if dir && k == AllowedPattern {
		out += "/**"
	}
	return out, nil
}
