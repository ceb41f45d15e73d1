package security

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fencefs/fencefs/tools"
)

// ignoreCase is one attack on the ignore files grep and list_files
// honour: a layout added to the base one (with ws/needle-a.txt,
// ws/needle-b.txt and ws/sub/needle-c.txt, each holding "needle"), and
// what it takes to arrange the rest once the world exists.
type ignoreCase struct {
	name  string
	kinds []string
	// add adds to the layout.
	add func(s secrets, l layout)
	// arrange runs once the world is built (files whose content names an
	// absolute path, a tree deeper than PATH_MAX).
	arrange func(t *testing.T, w *world)
	// noSnap: the storage cannot be snapshot (a tree deeper than
	// PATH_MAX), so the calls are checked for leaks only.
	noSnap bool
}

// ignoreLayout is the layout every ignoreCase starts from.
func ignoreLayout(s secrets) layout {
	l := baseLayout(s)
	for _, name := range []string{"needle-a.txt", "needle-b.txt", "sub/needle-c.txt"} {
		l["ws/"+name] = file("needle\n")
	}
	return l
}

// outsideRules is the content of the outside rule files: it names the
// inside files, so obeying it steers what is shown, and holds the canary
// in an invalid glob, so a parse error quoting it leaks.
func outsideRules(s secrets) node {
	return file("needle-a.txt\nneedle-b.txt\nneedle-c.txt\n" + s.tok + "[\n")
}

var ignoreCases = []ignoreCase{
	{
		name:  "links-to-outside-rules",
		kinds: []string{kindLocal, kindMounted, kindSFTP},
		add: func(s secrets, l layout) {
			l["ws/.git/HEAD"] = file("ref: refs/heads/main\n")
			l["outside/rules"] = outsideRules(s)
			l["ws/.ignore"] = link("@/outside/rules")
			l["ws/.rgignore"] = link("../outside/rules")
			l["ws/sub/.gitignore"] = link("@/outside/rules")
			l["ws/.git/info/exclude"] = link("@/outside/rules")
			// A link to a rule file inside is no ignore file either.
			l["ws/rules-inside.txt"] = file("needle-b.txt\n")
			l["ws/sub/.ignore"] = link("../rules-inside.txt")
		},
		// Some file rg cannot read makes it exit with status 2, which
		// is when its complaints about ignore files reached the model.
		arrange: func(t *testing.T, w *world) { deepTree(t, filepath.Join(w.hostRoot, "deep")) },
		noSnap:  true,
	},
	{
		name:  "gitdir-outside",
		kinds: []string{kindLocal, kindMounted},
		add: func(s secrets, l layout) {
			l["outside/wt/commondir"] = file("../repo\n")
			l["outside/repo/info/exclude"] = outsideRules(s)
		},
		arrange: func(t *testing.T, w *world) {
			gitdir := "gitdir: " + w.expand("@/outside/wt") + "\n"
			if err := os.WriteFile(filepath.Join(w.hostRoot, ".git"), []byte(gitdir), 0o644); err != nil {
				t.Fatal(err)
			}
		},
	},
	{
		name:  "git-repository-above-the-root",
		kinds: []string{kindLocal, kindMounted, kindSFTP},
		add: func(s secrets, l layout) {
			l[".git/HEAD"] = file("ref: refs/heads/main\n")
			l[".gitignore"] = outsideRules(s)
			l["ws/.gitignore"] = file("needle-a.txt\n")
		},
	},
	{
		name:  "special-files",
		kinds: []string{kindLocal, kindMounted, kindSFTP},
		add: func(s secrets, l layout) {
			l["ws/.git/HEAD"] = file("ref: refs/heads/main\n")
			for _, name := range []string{".gitignore", ".ignore", ".rgignore", "sub/.gitignore", "sub/.ignore", "sub/.rgignore", ".git/info/exclude", "needle-fifo.txt"} {
				l["ws/"+name] = fifo()
			}
			l["outside/wt/commondir"] = fifo()
			l["ws/sub/.git"] = file("")
		},
		arrange: func(t *testing.T, w *world) {
			// A .git file whose gitdir holds a FIFO as commondir.
			gitdir := "gitdir: " + w.expand("@/outside/wt") + "\n"
			if err := os.WriteFile(filepath.Join(w.hostRoot, "sub", ".git"), []byte(gitdir), 0o644); err != nil {
				t.Fatal(err)
			}
		},
	},
}

// TestIgnoreFilesObeyTheFence attacks the ignore files grep and
// list_files honour: links to rule files outside the root (and inside
// it), a .git file whose gitdir leads outside, a git repository around
// the root, and FIFOs as every kind of ignore file, as the commondir a
// gitdir names and as a file to search. Only regular files inside the
// root are ignore files: every needle file is shown, nothing outside
// steers the result or appears in it (a parse error of an outside rule
// file included), and every call answers at once, well before ripgrep's
// timeout, with the result the built-in engine gives.
func TestIgnoreFilesObeyTheFence(t *testing.T) {
	for _, c := range ignoreCases {
		t.Run(c.name, func(t *testing.T) {
			mk := func(s secrets) layout {
				l := ignoreLayout(s)
				c.add(s, l)
				return l
			}
			forWorlds(t, c.kinds, mk, func(t *testing.T, w *world) {
				if c.arrange != nil && w.kind != kindSFTP {
					c.arrange(t, w)
				}
				// A short timeout makes a call that waits on a FIFO fail
				// quickly instead of holding the test.
				s := w.set(t, tools.Options{RipgrepTimeout: 5 * time.Second})
				prefix := ""
				if w.rooted {
					prefix = "/ws/"
				}
				var state snapshot
				if !c.noSnap {
					state = w.snap(t)
				}
				for _, tool := range []string{grepTool, listFiles} {
					args := map[string]any{}
					if tool == grepTool {
						args["pattern"] = "needle"
					}
					var out string
					var err error
					state, out, err = w.attack(t, s, probe{tool: tool, args: args}, state)
					if err != nil {
						t.Errorf("%s %s: %v", w.kind, tool, err)
						continue
					}
					for _, name := range []string{"needle-a.txt", "needle-b.txt", "sub/needle-c.txt"} {
						want := prefix + name
						if tool == grepTool {
							want += ":1:needle"
						}
						if !hasLine(out, want) {
							t.Errorf("%s %s: no line %q:\n%s", w.kind, tool, want, clip(out))
						}
					}
					if strings.Contains(out, "fifo") {
						t.Errorf("%s %s shows a FIFO:\n%s", w.kind, tool, clip(out))
					}
				}
			})
		})
	}
}

// TestDeepTree walks a root holding a tree deeper than PATH_MAX: every
// walker answers for the part the storage can reach, and the walkers
// that walk through the backend say that a directory was left out.
func TestDeepTree(t *testing.T) {
	forWorlds(t, []string{kindLocal, kindMounted}, ignoreLayout, func(t *testing.T, w *world) {
		deepTree(t, filepath.Join(w.hostRoot, "deep"))
		s := w.set(t, tools.Options{})
		prefix := ""
		if w.rooted {
			prefix = "/ws/"
		}
		const notice = "[1 directory omitted: its path is longer than the storage allows]"
		for _, c := range []struct {
			tool   string
			args   map[string]any
			want   string
			notice bool
		}{
			{searchFiles, map[string]any{"pattern": "needle"}, prefix + "needle-a.txt:1:needle", true},
			{findFiles, map[string]any{"pattern": "**/*.txt"}, prefix + "needle-a.txt", true},
			{listFiles, map[string]any{}, prefix + "needle-a.txt", true},
			{grepTool, map[string]any{"pattern": "needle"}, prefix + "needle-a.txt:1:needle", false},
		} {
			_, out, err := w.attack(t, s, probe{tool: c.tool, args: c.args}, nil)
			if err != nil {
				t.Errorf("%s %s: %v", w.kind, c.tool, err)
				continue
			}
			if !hasLine(out, c.want) {
				t.Errorf("%s %s: no line %q:\n%s", w.kind, c.tool, c.want, clip(out))
			}
			if c.notice && !hasLine(out, notice) {
				t.Errorf("%s %s: no notice of the directory left out:\n%s", w.kind, c.tool, clip(out))
			}
		}
	})
}

// hasLine reports whether out has the line want.
func hasLine(out, want string) bool {
	for _, line := range strings.Split(out, "\n") {
		if line == want {
			return true
		}
	}
	return false
}

// deepTree makes dir and below it a chain of directories whose path is
// longer than PATH_MAX, with a file holding "needle" at its bottom. It
// goes down by descriptors, since no path can name the bottom.
func deepTree(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(dir, unix.O_DIRECTORY|unix.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.Repeat("d", 200)
	for range 25 {
		if err := unix.Mkdirat(fd, name, 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := unix.Openat(fd, name, unix.O_DIRECTORY|unix.O_RDONLY, 0)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		fd = next
	}
	defer unix.Close(fd)
	f, err := unix.Openat(fd, "needle-deep.txt", unix.O_CREAT|unix.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(f)
	if _, err := unix.Write(f, []byte("needle\n")); err != nil {
		t.Fatal(err)
	}
}
