package security

import (
	"strings"
	"testing"

	"github.com/fencefs/fencefs/tools"
)

// protectedLayout adds to the base layout what the default protected
// patterns guard: a ".git" file (a worktree), a nested ".git" directory
// with hooks, nested ".env" files, secrets, keys and certificates, and
// their case variants, which the patterns do not match.
func protectedLayout(s secrets) layout {
	l := baseLayout(s)
	for name, data := range map[string]string{
		".git":                      "gitdir: /elsewhere/.git/worktrees/ws\n",
		"sub/.git/config":           "[core]\n",
		"sub/.git/hooks/pre-commit": "#!/bin/sh\n",
		"apps/.env":                 "APP=1\n",
		"apps/deep/.env.local":      "LOCAL=1\n",
		"x/secrets.json":            "{}\n",
		"secrets/inner.txt":         "inner\n",
		"key.pem":                   "pem\n",
		"deep/dir/id.key":           "key\n",
		".ENV":                      "UPPER=1\n",
		".Git/config":               "[core]\n",
		"KEY.PEM":                   "upper pem\n",
	} {
		l["ws/"+name] = file(data)
	}
	return l
}

const protectedWant = "is protected (matches '"

// protectedCases name protected paths by every spelling, and the case
// variants that the (case-sensitive) patterns leave writable.
var protectedCases = []pathCase{
	{".git", protectedWrite, protectedWant},
	{"./.git", protectedWrite, protectedWant},
	{"sub/../.git", protectedWrite, protectedWant},
	{".git/hooks/pre-commit", protectedWrite, protectedWant},
	{".git/config", protectedWrite, protectedWant},
	{"sub/.git", protectedWrite, protectedWant},
	{"sub/.git/config", protectedWrite, protectedWant},
	{"sub/.git/hooks/pre-commit", protectedWrite, protectedWant},
	{"sub/.git/hooks/post-checkout", protectedWrite, protectedWant},
	{"new/.git/hooks/pre-commit", protectedWrite, protectedWant},
	{".env", protectedWrite, protectedWant},
	{"apps/.env", protectedWrite, protectedWant},
	{"apps//.env", protectedWrite, protectedWant},
	{"apps/./.env", protectedWrite, protectedWant},
	{"apps/deep/.env.local", protectedWrite, protectedWant},
	{".env.production", protectedWrite, protectedWant},
	{"x/secrets.json", protectedWrite, protectedWant},
	{"secrets", protectedWrite, protectedWant},
	{"secrets/inner.txt", protectedWrite, protectedWant},
	{"secrets/new/dir", protectedWrite, protectedWant},
	{"key.pem", protectedWrite, protectedWant},
	{"sub/new.pem", protectedWrite, protectedWant},
	{"deep/dir/id.key", protectedWrite, protectedWant},
	{"@/ws/.env", protectedWrite, protectedWant},
	{"@/ws/sub/.git/config", protectedWrite, protectedWant},
	{".ENV", contained, ""},
	{".Git/config", contained, ""},
	{"KEY.PEM", contained, ""},
	{".Env.local", contained, ""},
}

// TestProtectedPaths writes, edits and creates directories at protected
// paths by every spelling, on every backend: each is refused with the
// protected message and leaves storage untouched, while reads stay
// allowed. Case variants (".ENV", ".Git") are other names on the
// case-sensitive storage tested here, and stay writable.
func TestProtectedPaths(t *testing.T) {
	forWorlds(t, allKinds, protectedLayout, func(t *testing.T, w *world) {
		s := w.set(t, tools.Options{})
		for _, p := range []string{".env", "apps/.env", ".git", "sub/.git/config", "key.pem"} {
			out, err := call(t, s, readFile, map[string]any{"path": p})
			if err != nil || !strings.Contains(out, "     1\t") {
				t.Errorf("%s read_file %s: %q, %v; want its content", w.kind, p, out, err)
			}
		}
		w.attackPaths(t, s, protectedCases)
		for _, p := range []string{".ENV", ".Git/config", "KEY.PEM"} {
			data, err := call(t, s, readFile, map[string]any{"path": p})
			if err != nil || !strings.Contains(data, writtenContent) {
				t.Errorf("%s %s: %q, %v; want it written (patterns are case-sensitive)", w.kind, p, data, err)
			}
		}
		for _, p := range []string{".env", "apps/.env"} {
			data, err := call(t, s, readFile, map[string]any{"path": p})
			if err != nil || strings.Contains(data, writtenContent) {
				t.Errorf("%s %s: %q, %v; want it unchanged", w.kind, p, data, err)
			}
		}
	})
}
