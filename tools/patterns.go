package tools

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/fencefs/fencefs/policy"
)

// mountLister is the part of a rooted namespace (mounted.FS) that names
// its mounts, so that a pattern naming no mount can be refused.
type mountLister interface {
	Mounts() []string
}

// policyRules builds the policy of the Set from opts, each pattern normalized
// to the spelling that matches what the operator meant: in a plain
// namespace on local disk a host path inside the root is read relative to
// it; then policy.NormalizePattern; and in a rooted namespace a pattern
// whose first component names no mount, which can match nothing, is an
// error showing the spellings that can. Every pattern rewritten is logged
// at debug level, when the process builds the policy: Sets whose
// policies are the same share one (rulesKey).
func (s *Set) policyRules(opts Options) (*policy.Rules, error) {
	k, ok := s.rulesKey(opts)
	if ok {
		shared.mu.RLock()
		r, found := shared.rules[k]
		shared.mu.RUnlock()
		if found {
			return r, nil
		}
	}
	r, err := s.buildRules(opts)
	if err == nil && ok {
		shared.mu.Lock()
		if _, found := shared.rules[k]; !found && len(shared.rules) < maxSharedTexts {
			shared.rules[k] = r
		}
		shared.mu.Unlock()
	}
	return r, err
}

// rulesKey is what a Set's policy depends on, when Sets can share it:
// the patterns, whether the defaults are protected, and the mounts of a
// rooted namespace. A plain namespace's host root matters only to a
// pattern spelled with it, and such a policy is not shared (each root
// is its own). There is no key when it would not tell its lists apart
// (a NUL in a pattern).
type rulesKey struct {
	rooted, noDefaultProtect   bool
	mounts                     string
	allowed, denied, protected string // joined by NUL
	// nAllowed, nDenied and nProtected are the lengths of the lists:
	// with them the joined lists tell [] from [""].
	nAllowed, nDenied, nProtected int
}

// rulesKey returns the key of opts' policy in this Set, or false when the
// policy is not to be shared.
func (s *Set) rulesKey(opts Options) (rulesKey, bool) {
	k := rulesKey{noDefaultProtect: opts.NoDefaultProtect,
		nAllowed: len(opts.Allowed), nDenied: len(opts.Denied), nProtected: len(opts.Protected)}
	for _, l := range [...]struct {
		in  []string
		out *string
	}{{opts.Allowed, &k.allowed}, {opts.Denied, &k.denied}, {opts.Protected, &k.protected}} {
		for _, p := range l.in {
			if strings.Contains(p, "\x00") || (s.hostRoot != "" && strings.HasPrefix(p, s.hostRoot+"/")) {
				return k, false
			}
		}
		*l.out = strings.Join(l.in, "\x00")
	}
	if ml, ok := s.b.(mountLister); ok && s.rooted {
		k.rooted = true
		k.mounts = strings.Join(ml.Mounts(), "\x00")
	}
	return k, true
}

// buildRules is policyRules without the process's shared copy.
func (s *Set) buildRules(opts Options) (*policy.Rules, error) {
	protected := slices.Clone(opts.Protected)
	if !opts.NoDefaultProtect {
		protected = append(policy.DefaultProtectedPatterns(), protected...)
	}
	lists := []struct {
		kind policy.PatternKind
		in   []string
		out  []string
	}{{kind: policy.AllowedPattern, in: opts.Allowed}, {kind: policy.DeniedPattern, in: opts.Denied}, {kind: policy.ProtectedPattern, in: protected}}
	for i := range lists {
		l := &lists[i]
		for _, p := range l.in {
			n, err := s.normalizePattern(l.kind, p)
			var pe *policy.PatternError
			if errors.As(err, &pe) {
				return nil, &optionPatternError{kind: l.kind, err: pe}
			}
			if err != nil {
				return nil, fmt.Errorf("tools: %w", err)
			}
			if n != p && opts.Logger != nil {
				opts.Logger.LogAttrs(context.Background(), slog.LevelDebug, "pattern normalized",
					slog.String("kind", l.kind.String()), slog.String("pattern", p), slog.String("normalized", n))
			}
			l.out = append(l.out, n)
		}
	}
	r, err := policy.NewRules(lists[0].out, lists[1].out, lists[2].out)
	if err != nil {
		return nil, fmt.Errorf("tools: %w", err)
	}
	return r, nil
}

// normalizePattern returns what the pattern p of kind k means in this
// Set's namespace, or an error when it can match nothing there.
func (s *Set) normalizePattern(k policy.PatternKind, p string) (string, error) {
	if s.hostRoot != "" {
		if rest, ok := strings.CutPrefix(p, s.hostRoot+"/"); ok {
			p = rest
		}
	}
	n, err := policy.NormalizePattern(k, p)
	if err != nil {
		return "", err
	}
	ml, ok := s.b.(mountLister)
	if !s.rooted || !ok {
		return n, nil
	}
	first, _, _ := strings.Cut(n, "/")
	mounts := ml.Mounts()
	if strings.ContainsAny(first, "*?[") || slices.Contains(mounts, first) || len(mounts) == 0 {
		return n, nil
	}
	// Suggest the mount of the working directory, the one the operator
	// most likely means.
	suggest := mounts[0]
	if m, _, _ := strings.Cut(s.cwd, "/"); slices.Contains(mounts, m) {
		suggest = m
	}
	return "", &policy.PatternError{Pattern: p, Reason: fmt.Sprintf("it can match nothing: every path of this namespace "+
		"starts with a mount name (%s); write '%s/%s' for one mount, or '*/%s' for every mount",
		strings.Join(mounts, ", "), suggest, n, n)}
}

// optionPatternError is a refused pattern, worded with the option it came
// from ("deny pattern 'x': ..."), as --deny, deny: in a config file and
// Options.Denied all are, so that an operator reading it at start-up
// knows which list to fix.
type optionPatternError struct {
	kind policy.PatternKind
	err  *policy.PatternError
}

func (e *optionPatternError) Error() string {
	option := "protect"
	switch e.kind {
	case policy.AllowedPattern:
		option = "allow"
	case policy.DeniedPattern:
		option = "deny"
	}
	return "tools: " + option + " pattern '" + e.err.Pattern + "': " + e.err.Reason
}

func (e *optionPatternError) Unwrap() error { return e.err }
