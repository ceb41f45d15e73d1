package tools

import (
	"context"
	"testing"

	"github.com/spf13/afero"

	"github.com/fencefs/fencefs/aferoadapter"
	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/mounted"
)

// TestWalkersMounted runs the walkers in a rooted namespace: a local mount
// (ripgrep for list_files and grep) beside a memory mount (built-in
// engine). Output paths are rooted; both mounts print alike.
func TestWalkersMounted(t *testing.T) {
	needRG(t)
	lfx := localFixture(t)
	mem := fixture{name: "afero", b: aferoadapter.New(afero.NewMemMapFs())}
	for _, fx := range []fixture{lfx, mem} {
		fx.put(t, "src/a.go", "package a // needle\n")
		fx.put(t, "notes.md", "needle\n")
		fx.put(t, ".env", "needle\n")
	}
	m, err := mounted.New(map[string]backend.Backend{"disk": lfx.b, "mem": mem.b})
	if err != nil {
		t.Fatal(err)
	}
	var events []FilesSearched
	s := newSet(t, m, Options{Tools: AllTools(), Cwd: "/disk", OnEvent: func(_ context.Context, ev Event) {
		events = append(events, ev.(FilesSearched))
	}})
	notice := "\n[1 hidden entry omitted; name a hidden path explicitly to include it]"
	for _, mount := range []string{"/disk", "/mem"} {
		wantEqual(t, ok(t, s, nameGrep, "pattern", "needle", "path", mount), mount+"/notes.md:1:needle\n"+mount+"/src/a.go:1:package a // needle"+notice)
		wantEqual(t, ok(t, s, nameListFiles, "path", mount), mount+"/notes.md\n"+mount+"/src/a.go"+notice)
		wantEqual(t, ok(t, s, nameSearchFiles, "pattern", "needle", "path", mount), mount+"/notes.md:1:needle\n"+mount+"/src/a.go:1:package a // needle"+notice)
		// .env could not have been found by the pattern: no notice.
		wantEqual(t, ok(t, s, nameFindFiles, "pattern", "**/*.go", "path", mount), mount+"/src/a.go")
		wantEqual(t, ok(t, s, nameFindFiles, "pattern", "**/.env", "path", mount), "No matches found."+notice)
	}
	wantEqual(t, ok(t, s, nameGrep, "pattern", "needle", "path", "src/a.go"), "/disk/src/a.go:1:package a // needle")
	wantEqual(t, ok(t, s, nameFindFiles, "pattern", "*/*.md", "path", "/"), "/disk/notes.md\n/mem/notes.md")
	if len(events) == 0 || events[0].Path != "/disk" {
		t.Fatalf("events %+v", events)
	}
}
