package conformance

import (
	"context"
	"embed"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/tools"
)

// patchCorpus holds the apply_patch fixtures: each txtar archive has a
// description (and "error: <text>", "tolerance: whitespace" lines) as its
// comment, the patch, the files before (in/) and, for a patch that
// applies, every file after (out/). <CR>, <BOM> and <NOEOL> (which drops
// the line break after it) stand for what txtar cannot hold.
//
//go:embed testdata/patches/*.txtar
var patchCorpus embed.FS

func (s *toolSuite) applyPatchTests() []testCase {
	names, err := fs.Glob(patchCorpus, "testdata/patches/*.txtar")
	if err != nil {
		panic(err)
	}
	var cases []testCase
	for _, n := range names {
		name := strings.TrimSuffix(path.Base(n), ".txtar")
		cases = append(cases, testCase{name, func(t *testing.T) { s.testPatchFixture(t, n) }})
	}
	return append(cases, testCase{"ChangeRequestAndEvents", s.testPatchEvents}, testCase{"EditPainPoints", s.testEditPainPoints})
}

// testEditPainPoints runs one edit_file case per reported class of failed
// edit, each naming its report, on this backend: the refusal says where
// the text nearly is and how it differs.
func (s *toolSuite) testEditPainPoints(t *testing.T) {
	e := s.setup(t)
	e.writable()
	ts := e.tools(tools.Options{})
	for _, c := range []struct{ source, content, old, hint string }{
		{"anthropics/claude-code #9163", "func f() {\n\tif x {\n\t\treturn 1\n\t}\n}\n", "    if x {\n        return 1\n    }",
			"Lines 2-4 match if indentation is ignored: the file indents with tabs, old_text with spaces."},
		{"google-gemini/gemini-cli #6835", "a = 1  \nb = 2\n", "a = 1\nb = 2", "Lines 1-2 match if trailing whitespace is ignored."},
		{"anthropics/claude-code #23945 (as issue 15 cites it)", "say(\u201chello\u201d)\n", `say("hello")`,
			"Line 1 matches if curly and straight quotes are taken as equal: the file has curly quotes (\u201c \u201d \u2018 \u2019)."},
		{"google-gemini/gemini-cli #2137, modelcontextprotocol/servers #2034 (as issue 15 cites them)", "first\nsecond\n", `first\nsecond`,
			`old_text contains a literal \n (a backslash and an n); with line breaks instead it matches lines 1-2. Send real line breaks.`},
		{"google-gemini/gemini-cli #1497", "one\ntwo\n", "one\r\ntwo", `With \n line endings it matches lines 1-2: the file has \n line endings, old_text has \r\n.`},
		{"google-gemini/gemini-cli #18370", "func c(total int) int {\n\treturn total * 2\n}\n", "return totl * 2",
			"The closest line is line 2 (1 character differs): '\treturn total * 2'."},
	} {
		e.put("p.txt", c.content)
		msg := e.retry(ts, "edit_file", args{"path": "p.txt", "old_text": c.old, "new_text": "z"})
		if want := "old_text not found in p.txt. " + c.hint + " No changes were written."; msg != "" && msg != want {
			t.Errorf("%s:\ngot  %q\nwant %q", c.source, msg, want)
		}
		e.wantContent("p.txt", c.content)
	}
}

// unescapeFixture turns the fixture tokens into the bytes they stand for.
func unescapeFixture(b []byte) string {
	return strings.NewReplacer("<NOEOL>\n", "", "<CR>", "\r", "<BOM>", "\ufeff").Replace(string(b))
}

func (s *toolSuite) testPatchFixture(t *testing.T, name string) {
	raw, err := patchCorpus.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	a := txtar.Parse(raw)
	var opts tools.Options
	opts.Tools = []string{"apply_patch"}
	var wantErr string
	for _, l := range strings.Split(string(a.Comment), "\n") {
		switch {
		case strings.HasPrefix(l, "error: "):
			wantErr = strings.TrimPrefix(l, "error: ")
		case l == "tolerance: whitespace":
			opts.EditTolerance = tools.ToleranceWhitespace
		}
	}
	var patch string
	in, out := map[string]string{}, map[string]string{}
	hasOut := false
	for _, f := range a.Files {
		data := unescapeFixture(f.Data)
		switch {
		case f.Name == "patch":
			patch = data
		case strings.HasPrefix(f.Name, "in/"):
			in[strings.TrimPrefix(f.Name, "in/")] = data
		case strings.HasPrefix(f.Name, "out/"):
			out[strings.TrimPrefix(f.Name, "out/")], hasOut = data, true
		}
	}
	if (wantErr == "") != hasOut {
		t.Fatalf("%s: a fixture has either an error line or out/ files", name)
	}
	e := s.setup(t)
	e.writable()
	if !implements[backend.Remover](e.b) || !implements[backend.Renamer](e.b) {
		t.Skip("skipped: the backend cannot remove or rename")
	}
	e.putAll(in)
	ts := e.tools(opts)
	if wantErr != "" {
		msg := e.retry(ts, "apply_patch", args{"patch": patch})
		if msg != "" && !strings.Contains(msg, wantErr) {
			t.Errorf("apply_patch refusal:\ngot  %q\nwant it to contain %q", msg, wantErr)
		}
		out = in
	} else {
		e.ok(ts, "apply_patch", args{"patch": patch})
	}
	e.wantTree(out)
}

// wantTree fails unless the files below the working directory are
// exactly want (directories left empty do not count).
func (e *toolEnv) wantTree(want map[string]string) {
	e.t.Helper()
	got := map[string]string{}
	e.collect(".", got)
	if !maps.Equal(got, want) {
		e.t.Errorf("files after the patch:\ngot  %q\nwant %q", got, want)
	}
}

func (e *toolEnv) collect(rel string, into map[string]string) {
	e.t.Helper()
	entries, err := e.b.List(e.ctx, e.store(rel))
	if err != nil {
		e.t.Fatalf("listing %q: %v", e.store(rel), err)
	}
	for _, ent := range entries {
		child := path.Join(rel, ent.Name)
		if ent.Type.IsDir() {
			e.collect(child, into)
			continue
		}
		into[child] = e.content(child)
	}
}

// testPatchEvents checks that a patch is announced once with the combined
// diff, and reported by an event per file.
func (s *toolSuite) testPatchEvents(t *testing.T) {
	e := s.setup(t)
	e.writable()
	if !implements[backend.Remover](e.b) || !implements[backend.Renamer](e.b) {
		t.Skip("skipped: the backend cannot remove or rename")
	}
	e.putAll(map[string]string{"a.txt": "a\n", "gone.txt": "g\n"})
	var reqs []tools.ChangeRequest
	var kinds []string
	ts := e.tools(tools.Options{Tools: []string{"apply_patch"}, NoContentHashes: true,
		OnChangeRequest: func(_ context.Context, r *tools.ChangeRequest) error { reqs = append(reqs, *r); return nil },
		OnEvent:         func(_ context.Context, ev tools.Event) { kinds = append(kinds, ev.Kind()) }})
	e.want(ts, "apply_patch", args{"patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** Delete File: gone.txt\n*** Add File: n.txt\n+n\n*** End Patch\n"},
		"Applied the patch to 3 files:\nM a.txt (line 1)\nD gone.txt\nA n.txt (1 line)")
	wantDiff := "--- a/" + e.diffPath("a.txt") + "\n+++ b/" + e.diffPath("a.txt") + "\n@@ -1 +1 @@\n-a\n+A\n" +
		"--- a/" + e.diffPath("gone.txt") + "\n+++ /dev/null\n@@ -1 +0,0 @@\n-g\n" +
		"--- /dev/null\n+++ b/" + e.diffPath("n.txt") + "\n@@ -0,0 +1 @@\n+n"
	if len(reqs) != 1 || reqs[0].Operation != tools.OpApplyPatch || reqs[0].Diff != wantDiff || reqs[0].Path != e.canon("a.txt") {
		t.Errorf("change requests %+v, want one apply_patch request with diff\n%s", reqs, wantDiff)
	}
	if want := []string{"file_edited", "file_deleted", "file_written"}; !slices.Equal(kinds, want) {
		t.Errorf("events %q, want %q", kinds, want)
	}
	// A cancelled patch changes nothing.
	ts = e.tools(tools.Options{Tools: []string{"apply_patch"}, OnChangeRequest: func(_ context.Context, r *tools.ChangeRequest) error {
		r.Cancel("not now")
		return nil
	}})
	e.want(ts, "apply_patch", args{"patch": "*** Begin Patch\n*** Delete File: a.txt\n*** End Patch\n"}, "[The patch was not applied: not now]")
	e.wantContent("a.txt", "A\n")
}
