package security

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fencefs/fencefs/local"
	"github.com/fencefs/fencefs/tools"
)

// TestMCPApprovalBindsHiddenEntries (class 7, hidden entries): the
// approval of a recursive delete binds every entry the delete takes
// along, not only those a listing shows. An entry the policy's listing
// hides (dot-named, a name with a control character, a special file)
// that appears while the user looks voids the answer and nothing is
// deleted (it was deleted with the rest); one already there is shown and
// counted. And the delete removes only the entries it announced: one that
// appears after its walk, while its change listener runs, makes it refuse
// with storage as it was (it was deleted too).
func TestMCPApprovalBindsHiddenEntries(t *testing.T) {
	hidden := map[string]func(t *testing.T, dir string){
		"dot-named": func(t *testing.T, dir string) { putFile(t, filepath.Join(dir, ".late"), "x\n") },
		"control character": func(t *testing.T, dir string) {
			putFile(t, filepath.Join(dir, "sub", "ctl\x01name"), "x\n")
		},
		"special file": func(t *testing.T, dir string) {
			if err := unix.Mkfifo(filepath.Join(dir, "late.fifo"), 0o644); err != nil {
				t.Fatal(err)
			}
		},
	}
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		for kind, appear := range hidden {
			t.Run(version+"/"+kind+" while the user looks", func(t *testing.T) {
				root := cmdRoot(t)
				for _, f := range []string{"d/a.txt", "d/sub/b.txt", "d/.keep"} {
					putFile(t, filepath.Join(root, f), "x\n")
				}
				var shown string
				cs := approvingServer(t, root, 0, version, func(m string) {
					shown = m
					appear(t, filepath.Join(root, "d"))
				})
				before := treeNames(t, root)
				text, _ := callTenantTool(t, cs, "delete_file", map[string]any{"path": "d", "recursive": true})
				if !strings.Contains(shown, "the 4 entries") || !strings.Contains(shown, "d/.keep") {
					t.Errorf("the user was shown %q, want the hidden d/.keep among 4 entries", shown)
				}
				if !strings.Contains(text, "not deleted") {
					t.Errorf("delete_file after a hidden entry appeared: %q, want nothing deleted", text)
				}
				after := treeNames(t, root)
				for p := range before {
					if _, ok := after[p]; !ok {
						t.Errorf("%s was deleted although the answer was for other entries", p)
					}
				}
				if len(after) <= len(before) {
					t.Errorf("the entry that appeared is gone: %v", after)
				}
			})
		}
	}

	for kind, appear := range hidden {
		t.Run(kind+" after the walk", func(t *testing.T) {
			root := cmdRoot(t)
			for _, f := range []string{"d/a.txt", "d/sub/b.txt"} {
				putFile(t, filepath.Join(root, f), "x\n")
			}
			b, err := local.New(root)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			set, err := tools.New(b, tools.Options{Tools: tools.AllTools()})
			if err != nil {
				t.Fatal(err)
			}
			var entries []string
			ctx := tools.WithChangeListener(context.Background(), func(_ context.Context, r *tools.ChangeRequest) error {
				// An approver that accepts what it was shown, while the
				// entry appears behind its back.
				entries = r.Entries
				appear(t, filepath.Join(root, "d"))
				return nil
			})
			before := treeNames(t, root)
			text, err := set.Call(ctx, "delete_file", []byte(`{"path":"d","recursive":true}`))
			if !strings.Contains(strings.Join(entries, " "), "d/sub/b.txt") {
				t.Errorf("the change request named entries %q, want every entry walked", entries)
			}
			if tools.KindOf(err) != tools.KindConflict {
				t.Errorf("delete_file with an entry that appeared after its walk: %q, %v; want a conflict", text, err)
			}
			after := treeNames(t, root)
			for p := range before {
				if _, ok := after[p]; !ok {
					t.Errorf("%s was deleted although an entry outside the announced ones was met", p)
				}
			}
		})
	}
}

// treeNames lists every path below dir without reading any (a FIFO would
// block a read).
func treeNames(t *testing.T, dir string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	err := filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		out[p] = true
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
