package config

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fencefs/fencefs/mounted"
	"github.com/fencefs/fencefs/mountspec/spec"
	"github.com/fencefs/fencefs/policy"
	"github.com/fencefs/fencefs/tools"
)

// The flag.Value types of the settings. Each Set validates its value, so
// that a bad value is refused where it is given, with the setting's name.

type stringValue struct{ p *string }

func (v stringValue) String() string {
	if v.p == nil {
		return ""
	}
	return *v.p
}

func (v stringValue) Set(s string) error {
	if s == "" {
		return errors.New("must not be empty")
	}
	*v.p = s
	return nil
}

// intValue is a limit that must be at least min.
type intValue struct {
	p   *int
	min int
}

func (v intValue) String() string {
	if v.p == nil {
		return "0"
	}
	return strconv.Itoa(*v.p)
}

func (v intValue) Set(s string) error {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("%q is not an integer", s)
	}
	if n < v.min {
		if v.min == 1 {
			return fmt.Errorf("must be > 0, got %d", n)
		}
		return fmt.Errorf("must be >= %d, got %d", v.min, n)
	}
	*v.p = n
	return nil
}

// durationValue is a positive time.Duration ("90s", "2m").
type durationValue struct{ p *time.Duration }

func (v durationValue) String() string {
	if v.p == nil {
		return "0s"
	}
	return v.p.String()
}

func (v durationValue) Set(s string) error {
	d, err := parseDuration(s)
	if err != nil {
		return err
	}
	*v.p = d
	return nil
}

// retentionValue is a duration that may be 0, or "never" (negative).
type retentionValue struct{ p *time.Duration }

func (v retentionValue) String() string {
	switch {
	case v.p == nil:
		return "0s"
	case *v.p < 0:
		return "never"
	}
	return v.p.String()
}

func (v retentionValue) Set(s string) error {
	if strings.TrimSpace(s) == "never" {
		*v.p = -1
		return nil
	}
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || d < 0 {
		return fmt.Errorf("%q is not a duration (such as 24h or 0) or never", s)
	}
	*v.p = d
	return nil
}

// parseDuration parses a positive duration with its unit.
func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (such as 30s or 2m)", s)
	}
	if d <= 0 {
		return 0, fmt.Errorf("must be > 0, got %s", s)
	}
	return d, nil
}

type boolValue struct{ p *bool }

func (v boolValue) String() string   { return strconv.FormatBool(v.p != nil && *v.p) }
func (v boolValue) IsBoolFlag() bool { return true }

func (v boolValue) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("%q is not a boolean (true or false)", s)
	}
	*v.p = b
	return nil
}

// listValue is a repeatable flag. Values inherited from the config file
// are replaced, not extended, by the first value given on the command
// line.
type listValue struct {
	p         *[]string
	check     func(string) error
	inherited *bool
}

func (v listValue) String() string {
	if v.p == nil {
		return ""
	}
	return strings.Join(*v.p, ",")
}

func (v listValue) Set(s string) error {
	if err := v.check(s); err != nil {
		return err
	}
	if *v.inherited {
		*v.p, *v.inherited = nil, false
	}
	*v.p = append(*v.p, s)
	return nil
}

// checkNotEmpty refuses an empty value; the rest of a skills root's
// spelling depends on the namespace and is checked when it is opened.
func checkNotEmpty(s string) error {
	if s == "" {
		return errors.New("must not be empty")
	}
	return nil
}

// checkPattern returns the check of a pattern of kind k: the one the tools
// make, so that a pattern that can match nothing is refused here, naming
// the flag or the file's line, with the spelling to use. Patterns are kept
// as written: the tools rewrite the spellings they read as meant (a
// leading "/" or "./", a trailing "/") and log it, and refuse what depends
// on the namespace (a first component that names no mount).
func checkPattern(k policy.PatternKind) func(string) error {
	return func(p string) error {
		if _, err := policy.NormalizePattern(k, p); err != nil {
			var pe *policy.PatternError
			if errors.As(err, &pe) {
				return fmt.Errorf("invalid pattern %q: %s", p, pe.Reason)
			}
			return err
		}
		return nil
	}
}

// toolsValue is a comma-separated list of tool names, or "all".
type toolsValue struct {
	p   *[]string
	all *bool
}

func (v toolsValue) String() string {
	if v.p == nil || *v.p == nil {
		return ""
	}
	return strings.Join(*v.p, ",")
}

func (v toolsValue) Set(s string) error {
	var names []string
	all := false
	for _, n := range strings.Split(s, ",") {
		n = strings.TrimSpace(n)
		switch {
		case n == "":
		case n == "all":
			names, all = append(names, tools.AllTools()...), true
		case !slices.Contains(tools.AllTools(), n):
			return fmt.Errorf("unknown tool %q; valid tools are all, %s", n, strings.Join(tools.AllTools(), ", "))
		default:
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return errors.New("names no tool")
	}
	*v.p, *v.all = names, all
	return nil
}

// mountsValue is the repeatable --mount NAME=SPEC.
type mountsValue struct {
	p         *[]Mount
	schemes   *spec.Schemes
	inherited *bool
}

func (v mountsValue) String() string {
	if v.p == nil {
		return ""
	}
	var parts []string
	for _, m := range *v.p {
		parts = append(parts, m.Name+"="+m.Spec.String())
	}
	return strings.Join(parts, " ")
}

func (v mountsValue) Set(s string) error {
	name, spec, ok := strings.Cut(s, "=")
	if !ok {
		return fmt.Errorf("%q is not NAME=SPEC", s)
	}
	return v.add(name, spec)
}

// add parses and adds one mount; errors name the mount. On the command
// line (once the file's mounts are inherited) a mount of the same name as
// one of the file's replaces it; the file's other mounts stay.
func (v mountsValue) add(name, spec string) error {
	if *v.inherited {
		*v.p = slices.DeleteFunc(*v.p, func(m Mount) bool { return m.Name == name && m.fromFile })
	}
	if !validMountName(name) {
		return &namedError{fmt.Sprintf("mount %q", name), fmt.Errorf("the name must be 1 to %d ASCII letters, digits, '-', '_' and '.', and not . or ..", maxMountName)}
	}
	for _, m := range *v.p {
		if m.Name == name {
			return &namedError{fmt.Sprintf("mount %q", name), errors.New("given twice")}
		}
	}
	ms, err := (*v.schemes).Parse(spec)
	if err != nil {
		return &namedError{fmt.Sprintf("mount %q", name), err}
	}
	*v.p = append(*v.p, Mount{Name: name, Spec: ms})
	slices.SortFunc(*v.p, func(a, b Mount) int { return strings.Compare(a.Name, b.Name) })
	return nil
}

// maxMountName bounds a mount's name (see mounted.CheckName).
const maxMountName = mounted.MaxNameBytes

// validMountName reports whether name is what the mount name rule says;
// the library's namespace applies the same rule.
func validMountName(name string) bool { return mounted.CheckName(name) == nil }

// addFromFile adds a mount of the config file in base's directory: its
// relative host paths (a local directory, an SFTP key or known_hosts
// file) are taken from base.
func (v mountsValue) addFromFile(name, spec, base string) error {
	if err := v.add(name, spec); err != nil {
		return err
	}
	for i := range *v.p {
		if m := &(*v.p)[i]; m.Name == name {
			m.Spec.ResolveAgainst(base)
		}
	}
	return nil
}

// levelValue is a log level: debug, info, warn or error.
type levelValue struct{ p *slog.Level }

func (v levelValue) String() string {
	if v.p == nil {
		return "info"
	}
	return strings.ToLower(v.p.String())
}

func (v levelValue) Set(s string) error {
	levels := map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}
	l, ok := levels[strings.ToLower(s)]
	if !ok {
		return fmt.Errorf("%q is not a log level; use debug, info, warn or error", s)
	}
	*v.p = l
	return nil
}

// addrValue is a TCP listen address ("127.0.0.1:8080", ":0").
type addrValue struct{ p *string }

func (v addrValue) String() string {
	if v.p == nil {
		return ""
	}
	return *v.p
}

func (v addrValue) Set(s string) error {
	if err := checkAddr(s); err != nil {
		return err
	}
	*v.p = s
	return nil
}

// namedError is an error that names its own setting (a mount) instead of
// the flag it came from.
type namedError struct {
	label string
	err   error
}

func (e *namedError) Error() string { return e.label + ": " + e.err.Error() }
func (e *namedError) Unwrap() error { return e.err }

// choiceValue is one of a fixed set of words.
type choiceValue struct {
	p       *string
	choices []string
}

func (v choiceValue) String() string {
	if v.p == nil {
		return ""
	}
	return *v.p
}

func (v choiceValue) Set(s string) error {
	if !slices.Contains(v.choices, s) {
		return fmt.Errorf("%q is not one of %s", s, strings.Join(v.choices, ", "))
	}
	*v.p = s
	return nil
}

// int64Value is a size or count of at least 0.
type int64Value struct{ p *int64 }

func (v int64Value) String() string {
	if v.p == nil {
		return "0"
	}
	return strconv.FormatInt(*v.p, 10)
}

func (v int64Value) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("%q is not a whole number of at least 0", s)
	}
	*v.p = n
	return nil
}

// floatValue is a rate of at least 0.
type floatValue struct{ p *float64 }

func (v floatValue) String() string {
	if v.p == nil {
		return "0"
	}
	return strconv.FormatFloat(*v.p, 'g', -1, 64)
}

func (v floatValue) Set(s string) error {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f != f {
		return fmt.Errorf("%q is not a number of at least 0", s)
	}
	*v.p = f
	return nil
}
