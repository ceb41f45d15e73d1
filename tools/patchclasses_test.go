package tools

import (
	"bytes"
	"context"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// patchCase is a patch applied to a tree of files on local disk: either
// it applies, giving the result text and the tree after, or it is
// refused with the refusal text and the tree stays as it was.
type patchCase struct {
	name   string
	before map[string]string
	patch  string
	// result is the whole result text, or the refusal.
	result string
	// after is the tree after an applied patch; nil for a refusal.
	after map[string]string
	// git: `git apply` takes the patch too and leaves the same tree (a
	// refusal here is a mode or binary change git could apply and this
	// storage cannot take whole).
	git bool
}

const (
	renameSection = "diff --git a/old.txt b/new.txt\nsimilarity index 100%\nrename from old.txt\nrename to new.txt\n"
	keepSection   = "diff --git a/keep.txt b/keep.txt\nindex 814f4a4..5626abf 100644\n--- a/keep.txt\n+++ b/keep.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n"
)

// gitSectionCases are the sections of a git patch that carry no hunk, as
// git itself prints them: each is applied, or the whole patch is refused
// naming it, so the answer never reports success for part of the patch.
var gitSectionCases = []patchCase{
	{name: "pure rename beside a hunk", before: map[string]string{"old.txt": "r\n", "keep.txt": "one\ntwo\n"},
		patch:  renameSection + keepSection,
		result: "Applied the patch to 2 files:\nR old.txt -> new.txt\nM keep.txt (line 2)",
		after:  map[string]string{"new.txt": "r\n", "keep.txt": "one\nTWO\n"}, git: true},
	{name: "pure rename of a binary file", before: map[string]string{"logo.bin": "\x00\x01PNG", "keep.txt": "one\ntwo\n"},
		patch:  "diff --git a/logo.bin b/img/logo.bin\nsimilarity index 100%\nrename from logo.bin\nrename to img/logo.bin\n" + keepSection,
		result: "Applied the patch to 2 files:\nR logo.bin -> img/logo.bin\nM keep.txt (line 2)",
		after:  map[string]string{"img/logo.bin": "\x00\x01PNG", "keep.txt": "one\nTWO\n"}, git: true},
	{name: "copy from a source the patch also changes", before: map[string]string{"src.txt": "copy me\nline2\n"},
		patch: "diff --git a/src.txt b/dst.txt\nsimilarity index 100%\ncopy from src.txt\ncopy to dst.txt\n" +
			"diff --git a/src.txt b/src.txt\nindex 7ffd324..4e29677 100644\n--- a/src.txt\n+++ b/src.txt\n@@ -1,2 +1,3 @@\n copy me\n line2\n+more\n",
		result: "Applied the patch to 2 files:\nC src.txt -> dst.txt\nM src.txt (line 3)",
		after:  map[string]string{"src.txt": "copy me\nline2\nmore\n", "dst.txt": "copy me\nline2\n"}, git: true},
	{name: "copy with a hunk", before: map[string]string{"a.txt": "x\ny\n"},
		patch:  "diff --git a/a.txt b/b.txt\nsimilarity index 50%\ncopy from a.txt\ncopy to b.txt\nindex 1..2 100644\n--- a/a.txt\n+++ b/b.txt\n@@ -1,2 +1,2 @@\n x\n-y\n+z\n",
		result: "Applied the patch to 1 file:\nC a.txt -> b.txt (line 2)",
		after:  map[string]string{"a.txt": "x\ny\n", "b.txt": "x\nz\n"}, git: true},
	{name: "copy onto an existing file", before: map[string]string{"a.txt": "x\n", "b.txt": "b\n"},
		patch:  "diff --git a/a.txt b/b.txt\nsimilarity index 100%\ncopy from a.txt\ncopy to b.txt\n",
		result: "'b.txt' already exists; a copy (patch line 1) creates a new file. No changes were written.", git: true},
	{name: "new and deleted empty files", before: map[string]string{"empty.txt": "", "keep.txt": "one\ntwo\n"},
		patch: "diff --git a/empty.txt b/empty.txt\ndeleted file mode 100644\nindex e69de29..0000000\n" +
			"diff --git a/fresh.txt b/fresh.txt\nnew file mode 100644\nindex 0000000..e69de29\n" + keepSection,
		result: "Applied the patch to 3 files:\nD empty.txt\nA fresh.txt (0 lines)\nM keep.txt (line 2)",
		after:  map[string]string{"fresh.txt": "", "keep.txt": "one\nTWO\n"}, git: true},
	{name: "mode change", before: map[string]string{"run.sh": "#!/bin/sh\n", "keep.txt": "one\ntwo\n"},
		patch:  keepSection + "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n",
		result: "Invalid patch: line 9: 'run.sh' changes mode from 100644 to 100755; apply_patch does not set file modes. No changes were written."},
	{name: "new executable file", before: map[string]string{"keep.txt": "one\ntwo\n"},
		patch:  keepSection + "diff --git a/x.sh b/x.sh\nnew file mode 100755\nindex 0000000..1a2b3c4\n--- /dev/null\n+++ b/x.sh\n@@ -0,0 +1 @@\n+echo\n",
		result: "Invalid patch: line 9: 'x.sh' is created with mode 100755; apply_patch creates plain files (mode 100644) only. No changes were written."},
	{name: "binary files differ", before: map[string]string{"b.bin": "\x00\x01bin", "keep.txt": "one\ntwo\n"},
		patch:  keepSection + "diff --git a/b.bin b/b.bin\nindex 88768ef..3e3315e 100644\nBinary files a/b.bin and b/b.bin differ\n",
		result: "Invalid patch: line 11: 'b.bin' has a binary diff ('Binary files a/b.bin and b/b.bin differ'); apply_patch applies text changes only. No changes were written."},
	{name: "git binary patch", before: map[string]string{"b.bin": "\x00\x01bin", "keep.txt": "one\ntwo\n"},
		patch: keepSection + "diff --git a/b.bin b/b.bin\nindex 88768efdf77ec78c9a995f94881793be6a41752b..3e3315e1b02129d197721a8a0b56dd88862f454d 100644\n" +
			"GIT binary patch\nliteral 5\nMcmZQzO3KUw00MIXJOBUy\n\nliteral 5\nMcmZQzOv=my00M6TI{*Lx\n\n",
		result: "Invalid patch: line 11: 'b.bin' has a binary diff ('GIT binary patch'); apply_patch applies text changes only. No changes were written."},
}

// mailCases are `git format-patch` mails and git's C-quoted names, as git
// writes them.
var mailCases = []patchCase{
	{name: "format-patch series", before: map[string]string{"a.txt": "x\nx\n", "b.txt": "p\np\n"},
		patch:  formatPatchMail("589ad64d944374bf7f299489af75e7f92d04f1f0", "a.txt", "x", "y") + formatPatchMail("689ad64d944374bf7f299489af75e7f92d04f1f0", "b.txt", "p", "q"),
		result: "Applied the patch to 2 files:\nM a.txt (line 2)\nM b.txt (line 2)",
		after:  map[string]string{"a.txt": "x\ny\n", "b.txt": "p\nq\n"}, git: true},
	{name: "quoted names", before: map[string]string{"caf\u00e9.txt": "x\n", "old\"q.txt": "t\n"},
		patch: "diff --git \"a/caf\\303\\251.txt\" \"b/caf\\303\\251.txt\"\nindex 587be6b..975fbec 100644\n--- \"a/caf\\303\\251.txt\"\n+++ \"b/caf\\303\\251.txt\"\n@@ -1 +1 @@\n-x\n+y\n" +
			"diff --git \"a/old\\\"q.txt\" \"b/new \\\"q\\\".txt\"\nsimilarity index 100%\nrename from \"old\\\"q.txt\"\nrename to \"new \\\"q\\\".txt\"\n",
		result: "Applied the patch to 2 files:\nM caf\u00e9.txt (line 1)\nR old\"q.txt -> new \"q\".txt",
		after:  map[string]string{"caf\u00e9.txt": "y\n", "new \"q\".txt": "t\n"}, git: true},
}

// formatPatchMail is one mail of `git format-patch --stdout`, changing
// the second line of file from `from` to `to`.
func formatPatchMail(sha, file, from, to string) string {
	return "From " + sha + " Mon Sep 17 00:00:00 2001\nFrom: A U Thor <author@example.com>\nDate: Sun, 6 Dec 2026 04:10:28 +0000\n" +
		"Subject: [PATCH] change " + file + "\n\nThe message says why.\n---\n " + file + " | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)\n\n" +
		"diff --git a/" + file + " b/" + file + "\nindex 587be6b..975fbec 100644\n--- a/" + file + "\n+++ b/" + file + "\n@@ -1,2 +1,2 @@\n " + from + "\n-" + from + "\n+" + to + "\n-- \n2.39.5\n\n"
}

// v4aCases read V4A as the reference grammar does: a line starting with a
// space is context even when it looks like a marker; blank lines before
// the first hunk, between hunks and between sections separate them.
var v4aCases = []patchCase{
	{name: "a document quoting a patch", before: map[string]string{"doc.md": "Example:\n@@ def f():\n*** End Patch\nend\n"},
		patch:  "*** Begin Patch\n*** Update File: doc.md\n@@\n Example:\n @@ def f():\n *** End Patch\n-end\n+*** End of File\n*** End Patch\n",
		result: "Applied the patch to 1 file:\nM doc.md (line 4)",
		after:  map[string]string{"doc.md": "Example:\n@@ def f():\n*** End Patch\n*** End of File\n"}},
	{name: "blank lines between sections and before the first @@", before: map[string]string{"a.txt": "1\n2\n3\n4\n5\n", "b.txt": "b\n"},
		patch:  "*** Begin Patch\n*** Update File: a.txt\n\n@@\n-1\n+one\n\n@@\n\n-4\n+four\n\n\n*** Update File: b.txt\n@@\n-b\n+B\n\n*** End Patch\n",
		result: "Applied the patch to 2 files:\nM a.txt (lines 1-4)\nM b.txt (line 1)",
		after:  map[string]string{"a.txt": "one\n2\n3\nfour\n5\n", "b.txt": "B\n"}},
	{name: "a blank line that is context", before: map[string]string{"a.txt": "x\n\ny\nx\nz\n"},
		patch:  "*** Begin Patch\n*** Update File: a.txt\n@@\n-x\n+X\n\n*** End Patch\n",
		result: "Applied the patch to 1 file:\nM a.txt (line 1)",
		after:  map[string]string{"a.txt": "X\n\ny\nx\nz\n"}},
	{name: "pure addition followed by a blank line", before: map[string]string{"a.txt": "a\n\nb\n\n"},
		patch:  "*** Begin Patch\n*** Update File: a.txt\n@@\n+c\n\n*** End Patch\n",
		result: "Applied the patch to 1 file:\nM a.txt (line 5)",
		after:  map[string]string{"a.txt": "a\n\nb\n\nc\n"}},
}

// eolCases keep every line's line ending: a CRLF file never gains a bare
// LF, and a missing final line break stays while the last line stays
// last.
var eolCases = []patchCase{
	{name: "CRLF file without a final break, last line changed", before: map[string]string{"w.txt": "a\r\nb"},
		patch:  "*** Begin Patch\n*** Update File: w.txt\n@@\n a\n-b\n+B\n*** End Patch\n",
		result: "Applied the patch to 1 file:\nM w.txt (line 2)", after: map[string]string{"w.txt": "a\r\nB\r\n"}},
	{name: "CRLF file without a final break, context reaches the end", before: map[string]string{"w.txt": "a\r\nb\r\nc"},
		patch:  "*** Begin Patch\n*** Update File: w.txt\n@@\n a\n-b\n+B\n c\n*** End Patch\n",
		result: "Applied the patch to 1 file:\nM w.txt (line 2)", after: map[string]string{"w.txt": "a\r\nB\r\nc"}},
	{name: "CRLF file without a final break, lines added at the end", before: map[string]string{"w.txt": "a\r\nb"},
		patch:  "*** Begin Patch\n*** Update File: w.txt\n@@\n+c\n*** End Patch\n",
		result: "Applied the patch to 1 file:\nM w.txt (lines 2-3)", after: map[string]string{"w.txt": "a\r\nb\r\nc\r\n"}},
	{name: "LF file without a final break, context reaches the end", before: map[string]string{"f.txt": "a\nb"},
		patch:  "*** Begin Patch\n*** Update File: f.txt\n@@\n-a\n+A\n b\n*** End Patch\n",
		result: "Applied the patch to 1 file:\nM f.txt (line 1)", after: map[string]string{"f.txt": "A\nb"}},
	{name: "last line removed", before: map[string]string{"f.txt": "a\nb\nc"},
		patch:  "--- a/f.txt\n+++ b/f.txt\n@@ -2,2 +2 @@\n b\n-c\n\\ No newline at end of file\n",
		result: "Applied the patch to 1 file:\nM f.txt (line 3)", after: map[string]string{"f.txt": "a\nb\n"}, git: true},
	{name: "unified context at the end without a final break", before: map[string]string{"f.txt": "a\nb\nc"},
		patch:  "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n\\ No newline at end of file\n",
		result: "Applied the patch to 1 file:\nM f.txt (line 2)", after: map[string]string{"f.txt": "a\nB\nc"}, git: true},
}

func TestApplyPatchClasses(t *testing.T) {
	for _, group := range []struct {
		name  string
		cases []patchCase
	}{{"GitSections", gitSectionCases}, {"Mails", mailCases}, {"V4A", v4aCases}, {"LineEndings", eolCases}} {
		t.Run(group.name, func(t *testing.T) {
			for _, c := range group.cases {
				t.Run(c.name, func(t *testing.T) { runPatchCase(t, c) })
			}
		})
	}
}

func runPatchCase(t *testing.T, c patchCase) {
	fx := localFixture(t)
	for name, data := range c.before {
		fx.put(t, name, data)
	}
	asked := 0
	s := newSet(t, fx.b, Options{Tools: []string{"apply_patch"}, NoContentHashes: true,
		OnChangeRequest: func(context.Context, *ChangeRequest) error { asked++; return nil }})
	want := c.after
	if c.after == nil {
		wantEqual(t, retry(t, s, "apply_patch", "patch", c.patch), c.result)
		if asked > 0 {
			t.Errorf("a refused patch sent %d change requests", asked)
		}
		want = c.before
	} else {
		wantEqual(t, ok(t, s, "apply_patch", "patch", c.patch), c.result)
	}
	if got := hostTree(t, fx.dir); !maps.Equal(got, want) {
		t.Errorf("files after the patch:\ngot  %q\nwant %q", got, want)
	}
}

// hostTree returns every file below dir with its content.
func hostTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestApplyPatchAcceptsWhatGitAccepts applies the cases marked git with
// `git apply` in a directory holding the same files: git takes every
// patch apply_patch takes and leaves the same tree, and refuses the
// copies apply_patch refuses.
func TestApplyPatchAcceptsWhatGitAccepts(t *testing.T) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skipf("SKIPPED LOUDLY: git is not on PATH (%v), so apply_patch is not compared with git apply", err)
	}
	for _, group := range [][]patchCase{gitSectionCases, mailCases, eolCases} {
		for _, c := range group {
			if !c.git {
				continue
			}
			t.Run(c.name, func(t *testing.T) {
				dir := t.TempDir()
				for name, data := range c.before {
					p := filepath.Join(dir, filepath.FromSlash(name))
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				cmd := exec.Command(gitBin, "apply", "--whitespace=nowarn", "-")
				cmd.Dir = dir
				cmd.Stdin = strings.NewReader(c.patch)
				cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME="+dir,
					"GIT_CEILING_DIRECTORIES="+filepath.Dir(dir))
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				err := cmd.Run()
				switch {
				case c.after == nil && err == nil:
					t.Errorf("git apply took a patch apply_patch refuses (%q)", c.result)
				case c.after != nil && err != nil:
					t.Errorf("git apply refused a patch apply_patch takes: %v: %s", err, stderr.String())
				case c.after != nil:
					if got := hostTree(t, dir); !maps.Equal(got, c.after) {
						t.Errorf("git apply left\n%q\napply_patch leaves\n%q", got, c.after)
					}
				}
			})
		}
	}
}

// TestApplyPatchPathHints gives apply_patch's missing paths the hints of
// every tool: the one twin under Unicode normalization is used (with the
// note), other near names are offered, and a new file goes to its twin
// as write_file's does.
func TestApplyPatchPathHints(t *testing.T) {
	const nfd, nfc = "cafe\u0301.txt", "caf\u00e9.txt"
	note := "\n[Path '" + nfc + "' was not found; '" + nfd + "', the same name in another Unicode normalization, was used.]"
	tests := []struct {
		name   string
		opts   Options
		patch  string
		result string
		after  map[string]string
	}{
		{"update uses the twin", Options{}, "*** Begin Patch\n*** Update File: " + nfc + "\n@@\n-x\n+y\n*** End Patch\n",
			"Applied the patch to 1 file:\nM " + nfd + " (line 1)" + note, map[string]string{nfd: "y\n", "Readme.md": "r\n"}},
		{"delete uses the twin", Options{}, "*** Begin Patch\n*** Delete File: " + nfc + "\n*** End Patch\n",
			"Applied the patch to 1 file:\nD " + nfd + note, map[string]string{"Readme.md": "r\n"}},
		{"add replaces the twin", Options{}, "*** Begin Patch\n*** Add File: " + nfc + "\n+z\n*** End Patch\n",
			"Applied the patch to 1 file:\nA " + nfd + " (1 line)" + note, map[string]string{nfd: "z\n", "Readme.md": "r\n"}},
		{"move onto the twin", Options{}, "*** Begin Patch\n*** Update File: Readme.md\n*** Move to: " + nfc + "\n*** End Patch\n",
			"Applied the patch to 1 file:\nR Readme.md -> " + nfd + note, map[string]string{nfd: "r\n"}},
		{"twin not used", Options{NoUnicodePathMatch: true}, "*** Begin Patch\n*** Update File: " + nfc + "\n@@\n-x\n+y\n*** End Patch\n",
			"File not found: " + nfc + ". Did you mean '" + nfd + "'? No changes were written.", nil},
		{"case hint on update", Options{}, "*** Begin Patch\n*** Update File: README.md\n@@\n-r\n+R\n*** End Patch\n",
			"File not found: README.md. Did you mean 'Readme.md'? No changes were written.", nil},
		{"case hint on delete", Options{}, "--- a/readme.md\n+++ /dev/null\n@@ -1 +0,0 @@\n-r\n",
			"File not found: readme.md (patch line 1 deletes it). Did you mean 'Readme.md'? No changes were written.", nil},
		{"no hint", Options{}, "*** Begin Patch\n*** Update File: other.md\n@@\n-r\n+R\n*** End Patch\n",
			"File not found: other.md. No changes were written.", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := localFixture(t)
			fx.put(t, nfd, "x\n")
			fx.put(t, "Readme.md", "r\n")
			opts := tt.opts
			opts.Tools, opts.NoContentHashes = []string{"apply_patch"}, true
			s := newSet(t, fx.b, opts)
			want := tt.after
			if want == nil {
				wantEqual(t, retry(t, s, "apply_patch", "patch", tt.patch), tt.result)
				want = map[string]string{nfd: "x\n", "Readme.md": "r\n"}
			} else {
				wantEqual(t, ok(t, s, "apply_patch", "patch", tt.patch), tt.result)
			}
			if got := hostTree(t, fx.dir); !maps.Equal(got, want) {
				t.Errorf("files after the patch:\ngot  %q\nwant %q", got, want)
			}
		})
	}
}

// TestApplyPatchRefusalsNameApplyPatch: a binary or oversized target is
// refused in apply_patch's words, not edit_file's.
func TestApplyPatchRefusalsNameApplyPatch(t *testing.T) {
	fx := localFixture(t)
	fx.put(t, "b.bin", "PK\x00\x03")
	fx.put(t, "big.txt", strings.Repeat("a\n", 600))
	s := newSet(t, fx.b, Options{Tools: []string{"apply_patch"}})
	s.maxEdit = 1000
	wantEqual(t, retry(t, s, "apply_patch", "patch", "*** Begin Patch\n*** Update File: b.bin\n@@\n-PK\n+QK\n*** End Patch\n"),
		"b.bin is a binary file; apply_patch only updates text files. No changes were written.")
	wantEqual(t, retry(t, s, "apply_patch", "patch", "*** Begin Patch\n*** Update File: big.txt\n@@\n-a\n+b\n*** End Patch\n"),
		"'big.txt' is 1200 bytes; apply_patch updates files up to 1000 bytes. Use write_file to replace it. No changes were written.")
}

// TestApplyPatchReadOnlyMountUpFront refuses a patch with a target on a
// read-only mount while the paths are checked: no change request is
// sent and nothing is written anywhere, wherever the target is in the
// patch.
func TestApplyPatchReadOnlyMountUpFront(t *testing.T) {
	m, dir := mountedFixture(t)
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{
		"*** Begin Patch\n*** Update File: /work/a.txt\n@@\n-a\n+A\n*** Add File: /tenant/c.txt\n+c\n*** Update File: /docs/guide.md\n@@\n-read me\n+x\n*** End Patch\n",
		"*** Begin Patch\n*** Add File: /docs/new.md\n+n\n*** Update File: /work/a.txt\n@@\n-a\n+A\n*** End Patch\n",
		"*** Begin Patch\n*** Update File: /work/a.txt\n*** Move to: /docs/a.txt\n*** End Patch\n",
	} {
		asked := 0
		rec := &recorder{}
		s := newSet(t, m, Options{Tools: []string{"apply_patch"}, OnEvent: rec.on,
			OnChangeRequest: func(context.Context, *ChangeRequest) error { asked++; return nil }})
		got := retry(t, s, "apply_patch", "patch", p)
		if !strings.HasPrefix(got, "Path '/docs/") || !strings.HasSuffix(got, "' is on read-only storage and cannot be changed. Write somewhere else.") {
			t.Errorf("patch onto a read-only mount: %q", got)
		}
		if asked > 0 || len(rec.events) > 0 {
			t.Errorf("a patch refused for a read-only mount asked %d times and emitted %s", asked, rec.kinds())
		}
		if b, err := os.ReadFile(filepath.Join(dir, "a.txt")); err != nil || string(b) != "a\n" {
			t.Errorf("a.txt after the refusal: %q %v", b, err)
		}
		if _, err := m.Stat(context.Background(), "tenant/c.txt"); err == nil {
			t.Error("a refused patch created tenant/c.txt")
		}
	}
}
