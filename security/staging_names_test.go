package security

import (
	"fmt"
	"slices"
	"testing"

	"github.com/fencefs/fencefs/tools"
)

// stagingNames are names of the shape each world's storage gives the
// temporary file of a pending write (local disk: 8 hex digits; afero and
// SFTP: 16). S3 stages nothing beside the target, so it has none.
var stagingNames = map[string]string{
	kindLocal:   ".fencefs-0123abcd.tmp",
	kindMounted: ".fencefs-0123abcd.tmp",
	kindAfero:   ".fencefs-0123456789abcdef.tmp",
	kindSFTP:    ".fencefs-0123456789abcdef.tmp",
}

// stagingCalls are the calls that name p, one per tool that takes a path
// to read, change or create.
func stagingCalls(p string) map[string][]map[string]any {
	return map[string][]map[string]any{
		"write_file":       {{"path": p, "content": "planted\n"}},
		"read_file":        {{"path": p}},
		"file_info":        {{"path": p}},
		"edit_file":        {{"path": p, "old_text": "a", "new_text": "b"}},
		"create_directory": {{"path": p}},
		"list_directory":   {{"path": p}},
		"delete_file":      {{"path": p}},
		"move_file":        {{"source": p, "destination": "moved.txt"}, {"source": "a.txt", "destination": p}},
		"copy_file":        {{"source": p, "destination": "copied.txt"}, {"source": "a.txt", "destination": p}},
	}
}

// TestStagingNamesRefused names the temporary file of a pending write the
// way the storage names it, in every position. Accepted, such a name would
// let a model keep a file that no listing shows, or replace another
// write's staged bytes so that its commit publishes the model's; every
// tool refuses it as an invalid name, and nothing changes.
func TestStagingNamesRefused(t *testing.T) {
	kinds := []string{kindLocal, kindMounted, kindAfero, kindSFTP}
	forWorlds(t, kinds, baseLayout, func(t *testing.T, w *world) {
		s := w.set(t, tools.Options{})
		before := w.snap(t)
		name := stagingNames[w.kind]
		for _, p := range []string{name, "sub/" + name, name + "/x"} {
			want := fmt.Sprintf("Path '%s' is not a valid name on this storage.", p)
			for tool, calls := range stagingCalls(p) {
				if !slices.Contains(tools.AllTools(), tool) {
					continue
				}
				for _, args := range calls {
					out, err := call(t, s, tool, args)
					switch {
					case err == nil:
						t.Errorf("%s %v: succeeded with %q; want %q", tool, args, clip(out), want)
					case !tools.IsRetry(err) || err.Error() != want:
						t.Errorf("%s %v: %v (retry %v); want %q", tool, args, err, tools.IsRetry(err), want)
					}
				}
			}
		}
		w.checkChanges(t, "refused calls", before, w.snap(t), true)
	})
}
