package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/fencefs/fencefs/backend"
)

// quietCall marks a context whose tool call is a probe made to word a
// hint: it emits no events.
type quietCall struct{}

// hinted runs the named tool so that a path that is not found names the
// entry it was probably meant as (the same name under Unicode
// normalization, or in another case), a unique match under normalization
// is used instead (unless Options.NoUnicodePathMatch), and a find_files
// pattern that matches nothing says when `**/` would have matched.
func (s *Set) hinted(ctx context.Context, name string, raw json.RawMessage) (string, error) {
	if name == nameWriteFile && !s.opts.NoUnicodePathMatch {
		raw = s.normalizedTarget(ctx, name, raw)
	}
	out, err := s.run(ctx, name, raw)
	switch {
	case err == nil && name == nameFindFiles && firstLine(out) == noMatches:
		hint := s.findHint(ctx, raw)
		if _, rest, ok := strings.Cut(out, "\n"); ok {
			hint += "\n" + rest
		}
		return hint, nil
	case err == nil || !IsRetry(err) || !isNotFound(err.Error()):
		return out, err
	}
	p := stringArg(raw, "path")
	cands := s.nearNames(ctx, name, p)
	if len(cands) == 0 {
		return out, err
	}
	if c := cands[0]; len(cands) == 1 && c.sameForm && !s.opts.NoUnicodePathMatch {
		out, err := s.run(ctx, name, withArg(raw, "path", c.display))
		if err != nil {
			return out, err
		}
		return out + fmt.Sprintf("\n[Path '%s' was not found; '%s', the same name in another Unicode normalization, was used.]", p, c.display), nil
	}
	names := make([]string, len(cands))
	for i, c := range cands {
		names[i] = "'" + c.display + "'"
	}
	return "", retryf(KindOf(err), "%s. Did you mean %s?", strings.TrimSuffix(err.Error(), "."), strings.Join(names, " or "))
}

// noMatches is the result of a name search that found nothing.
const noMatches = "No matches found."

// isNotFound reports a refusal for a missing path.
func isNotFound(msg string) bool {
	for _, p := range []string{"File not found: ", "Path not found: ", "Directory not found: "} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// nameCandidate is an existing entry a missing path may have meant.
type nameCandidate struct {
	// display is the path as written, with its last name replaced.
	display string
	// sameForm: the names are equal under Unicode normalization (NFC),
	// not only in another case.
	sameForm bool
}

// maxCandidates is how many entries a "did you mean" names.
const maxCandidates = 3

// nearNames lists the entries of p's parent directory whose name equals
// p's last name under NFC normalization or case folding, and that the
// tool may access; an entry the policy hides is never named.
func (s *Set) nearNames(ctx context.Context, tool, p string) []nameCandidate {
	if p == "" {
		return nil
	}
	written, err := s.lexical(p, s.cwd)
	if err != nil || written == "." {
		return nil
	}
	parent, base := backend.Split(written)
	entries, err := s.b.List(ctx, parent)
	if err != nil {
		return nil
	}
	trimmed := strings.TrimRight(p, "/")
	prefix := trimmed[:strings.LastIndex(trimmed, "/")+1]
	want := norm.NFC.String(base)
	var out []nameCandidate
	for _, e := range entries {
		if e.Name == base {
			continue
		}
		got := norm.NFC.String(e.Name)
		same := got == want
		if !same && !strings.EqualFold(got, want) {
			continue
		}
		c := nameCandidate{display: prefix + e.Name, sameForm: same}
		if _, err := s.resolve(ctx, tool, c.display, levelRead); err != nil {
			continue
		}
		if out = append(out, c); len(out) == maxCandidates {
			break
		}
	}
	return out
}

// normalizedTarget returns raw with its path replaced by the one existing
// entry of the same name in another Unicode normalization, when the path
// as written is missing; so a write replaces that file instead of making
// a second one that looks the same.
func (s *Set) normalizedTarget(ctx context.Context, tool string, raw json.RawMessage) json.RawMessage {
	p := stringArg(raw, "path")
	if isASCII(p) {
		return raw
	}
	t, err := s.resolve(ctx, tool, p, levelWrite)
	if err != nil {
		return raw
	}
	if _, err := backend.Stat(ctx, s.b, t.resolved); err == nil {
		return raw
	}
	if c := s.nearNames(ctx, tool, p); len(c) == 1 && c[0].sameForm {
		return withArg(raw, "path", c[0].display)
	}
	return raw
}

// findHint words find_files' empty result when the pattern would have
// matched below the search path with `**/` before it.
func (s *Set) findHint(ctx context.Context, raw json.RawMessage) string {
	pat := stringArg(raw, "pattern")
	if pat == "" || strings.Contains(pat, "/") || strings.HasPrefix(pat, "**") {
		return noMatches
	}
	deep := "**/" + pat
	out, err := s.run(context.WithValue(ctx, quietCall{}, true), nameFindFiles, withArg(raw, "pattern", deep))
	if err != nil || firstLine(out) == noMatches {
		return noMatches
	}
	var found []string
	for _, l := range strings.Split(out, "\n") {
		if l != "" && !strings.HasPrefix(l, "[") {
			found = append(found, l)
		}
	}
	if len(found) == 0 {
		return noMatches
	}
	more := ""
	if strings.Contains(out, "[... truncated") {
		more = " or more"
	}
	return fmt.Sprintf("No matches found. '%s' matches names directly in the search path only; '%s' matches %d%s %s below it, such as '%s'.",
		pat, deep, len(found), more, plural(len(found), "path", "paths"), found[0])
}

// firstLine is s up to its first line break.
func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// stringArg returns the string argument key of raw, "" when absent. It
// looks at that one value, so write_file's content is not decoded twice.
func stringArg(raw json.RawMessage, key string) string {
	var found []byte
	if scanObject(raw, func(name, value []byte) bool {
		if string(name) == key {
			found = value
		}
		return true
	}) {
		v, _ := unquoteJSON(found)
		return v
	}
	var m map[string]json.RawMessage
	var v string
	if json.Unmarshal(raw, &m) != nil || json.Unmarshal(m[key], &v) != nil {
		return ""
	}
	return v
}

// withArg returns raw with the string argument key set to v.
func withArg(raw json.RawMessage, key, v string) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return raw
	}
	b, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	m[key] = b
	out, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return out
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
