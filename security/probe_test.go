package security

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/tools"
)

// Tool names, as tools.AllTools lists them.
const (
	readFile        = "read_file"
	writeFile       = "write_file"
	editFile        = "edit_file"
	listDirectory   = "list_directory"
	searchFiles     = "search_files"
	findFiles       = "find_files"
	createDirectory = "create_directory"
	fileInfo        = "file_info"
	listFiles       = "list_files"
	grepTool        = "grep"
	deleteFile      = "delete_file"
	moveFile        = "move_file"
	copyFile        = "copy_file"
	applyPatch      = "apply_patch"
)

// writeTools are the tools that change storage.
var writeTools = []string{writeFile, editFile, createDirectory, deleteFile, moveFile, copyFile, applyPatch}

// fileChangeTools are the tools that change a file and so refuse the
// namespace root and a mount root, which are directories they may not
// replace, remove or move.
var fileChangeTools = []string{writeFile, editFile, deleteFile, moveFile, copyFile, applyPatch}

func isWrite(tool string) bool { return slices.Contains(writeTools, tool) }

// walkers are the tools that walk a directory.
var walkers = []string{listDirectory, searchFiles, findFiles, listFiles, grepTool}

// callTimeout bounds every tool call of the suite; a call that needs it
// is a failure in itself.
const callTimeout = 30 * time.Second

// staleHash is an expected_hash no file of the suite has.
const staleHash = "000000000000"

// writtenContent is what write_file writes; it holds no canary.
const writtenContent = "written by the security suite\n"

// pathArgs returns arguments for tool that aim it at the path p: a write
// writes writtenContent, an edit replaces the canary (so it can succeed
// only on an outside file), searches look for the canary.
func pathArgs(tool, p string) map[string]any {
	switch tool {
	case writeFile:
		return map[string]any{"path": p, "content": writtenContent}
	case editFile:
		return map[string]any{"path": p, "old_text": canaryPattern, "new_text": "PWNED"}
	case searchFiles, grepTool:
		return map[string]any{"pattern": canaryPattern, "path": p}
	case findFiles:
		return map[string]any{"pattern": "**", "path": p}
	case deleteFile:
		// A hash no file has: the path is resolved and judged, and an
		// inside file is then kept, so later probes find what they expect.
		return map[string]any{"path": p, "expected_hash": staleHash}
	case moveFile:
		// The source is the path attacked; copy_file attacks the
		// destination.
		return map[string]any{"source": p, "destination": "moved-by-the-suite.txt", "expected_hash": staleHash}
	case copyFile:
		return map[string]any{"source": "a.txt", "destination": p, "overwrite": true, "destination_hash": staleHash}
	case applyPatch:
		return map[string]any{"patch": "*** Begin Patch\n*** Update File: " + p + "\n@@\n-" + canaryPattern + "\n+PWNED\n*** End Patch\n"}
	}
	return map[string]any{"path": p}
}

// patchCanName reports whether a patch's file header can carry p: a
// header ends at its line break and its path is trimmed, so a path with a
// line break or surrounding whitespace names another path there (which
// the other tools' cases cover).
func patchCanName(p string) bool {
	return !strings.ContainsAny(p, "\r\n") && strings.TrimSpace(p) == p && p != ""
}

// call runs one tool call with arguments args under the suite's timeout.
func call(t *testing.T, s *tools.Set, tool string, args any) (string, error) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatalf("encoding %s arguments: %v", tool, err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	out, err := s.Call(ctx, tool, raw)
	if ctx.Err() != nil {
		t.Errorf("%s %s: still running after %s", tool, raw, callTimeout)
	}
	return out, err
}

// probe is one attacking call and what it must satisfy.
type probe struct {
	tool string
	args map[string]any
	// echo is the path as the call wrote it: a message may quote it.
	echo string
	// refuse: the call must fail with a retryable error.
	refuse bool
	// want, when set, must be part of the refusal's message.
	want string
}

// attack runs p against w with set s and checks the guarantees every call
// owes: no fatal error, no canary or storage path in its output, nothing
// changed outside the root, nothing changed at all by a refused or
// read-only call, and the refusal p asks for. before is the storage as it
// was before the call; attack returns the storage after it.
func (w *world) attack(t *testing.T, s *tools.Set, p probe, before snapshot) (snapshot, string, error) {
	t.Helper()
	out, err := call(t, s, p.tool, p.args)
	label := func() string { raw, _ := json.Marshal(p.args); return w.kind + " " + p.tool + " " + string(raw) }
	var msg string
	switch {
	case err != nil && !tools.IsRetry(err):
		if !pendingFatal(w.kind, p.tool, err) {
			t.Errorf("%s: fatal error %v; want a retryable refusal", label(), err)
		}
		msg = err.Error()
	case err != nil:
		msg = err.Error()
		if p.want != "" && !strings.Contains(msg, p.want) {
			t.Errorf("%s: refusal %q does not say %q", label(), msg, p.want)
		}
	case p.refuse:
		t.Errorf("%s: succeeded with %q; want a retryable refusal", label(), clip(out))
	}
	w.checkLeaks(t, label(), p.echo, out+"\n"+msg)
	if before == nil {
		return nil, out, err
	}
	after := w.snap(t)
	w.checkChanges(t, label(), before, after, err != nil || !isWrite(p.tool))
	return after, out, err
}

// checkLeaks fails when text shows a canary or a storage path of w.
// Quotations of the caller's own path echo are taken out first.
func (w *world) checkLeaks(t *testing.T, label, echo, text string) {
	t.Helper()
	for _, e := range echoes(echo) {
		text = strings.ReplaceAll(text, e, "")
	}
	for _, bad := range append([]string{w.s.tok, w.s.nameTok}, w.leaks...) {
		if strings.Contains(text, bad) {
			t.Errorf("%s: output shows %q (outside the root or a storage path):\n%s", label, bad, clip(text))
		}
	}
}

// echoes returns the forms in which a message may quote the path p: p
// itself, Go-quoted, and its parent directories (longest first).
func echoes(p string) []string {
	if p == "" {
		return nil
	}
	out := []string{p, strings.Trim(strconv.Quote(p), `"`)}
	for i := len(p) - 1; i > 0; i-- {
		if p[i] == '/' {
			out = append(out, p[:i])
		}
	}
	return out
}

// checkChanges fails when storage changed outside the root, or at all
// when frozen is set.
func (w *world) checkChanges(t *testing.T, label string, before, after snapshot, frozen bool) {
	t.Helper()
	for _, k := range before.diff(after) {
		switch {
		case !w.inRoot(k):
			t.Errorf("%s: changed %q outside the root (before %q, after %q)", label, k, before[k], after[k])
		case frozen:
			t.Errorf("%s: a refused or read-only call changed %q (before %q, after %q)", label, k, before[k], after[k])
		}
	}
}

// inRoot reports whether the storage key k (relative to the parent)
// lies in a part of the storage the tools may change: the root, or
// another writable mount of a rooted world.
func (w *world) inRoot(k string) bool {
	for _, r := range append([]string{w.root}, w.otherRoots...) {
		if strings.HasPrefix(k, r) || k == strings.TrimSuffix(r, "/") {
			return true
		}
	}
	return false
}

// clip shortens long outputs in failure messages.
func clip(s string) string {
	if len(s) > 600 {
		return s[:600] + "..."
	}
	return s
}

// expect says when a hostile path must be refused.
type expect int

const (
	// contained: the path names something inside the root (perhaps an
	// odd name); the call may succeed but must stay inside.
	contained expect = iota
	// invalid: a spelling no tool accepts (control characters,
	// backslashes, drive letters, "~", over-long names, empty).
	invalid
	// escapes: the path climbs out of the root. Refused in a plain
	// namespace; in a rooted one it lands on the virtual root or another
	// mount, and is refused there unless it names the root or a mount
	// that allows the access.
	escapes
	// hostOutside: an absolute host path outside the root. Refused where
	// absolute paths are host paths (local disk, plain); elsewhere "/"
	// is the namespace root and the path names something inside.
	hostOutside
	// protectedWrite: writes are refused (default protected patterns);
	// reads are allowed.
	protectedWrite
)

// mustRefuse reports whether tool must refuse the (expanded) path p in w.
func (w *world) mustRefuse(e expect, tool, p string) bool {
	switch e {
	case invalid:
		return true
	case protectedWrite:
		return isWrite(tool)
	case escapes, hostOutside:
		if w.rooted {
			return w.virtualRefusal(tool, p)
		}
		return e == escapes || w.hostAbs
	}
	return false
}

// virtualRefusal decides an escaping path in a rooted world: it must be
// refused unless it lands on the virtual root (for a reading tool) or in
// a mount that allows the access.
func (w *world) virtualRefusal(tool, p string) bool {
	v, err := backend.CleanVirtual(p, w.cwd)
	if err != nil {
		return true
	}
	mount, rest, _ := strings.Cut(strings.TrimPrefix(v, "/"), "/")
	switch {
	case v == "/", slices.Contains(w.mounts, mount) && rest == "":
		// The namespace root and the mount roots are existing
		// directories: create_directory reports them created.
		return slices.Contains(fileChangeTools, tool)
	case !slices.Contains(w.mounts, mount):
		return true
	}
	// create_directory may report an existing directory of a read-only
	// mount as created; the snapshots prove it changed nothing.
	return slices.Contains(fileChangeTools, tool) && slices.Contains(w.roMounts, mount)
}

// wantMessage is the refusal text a plain namespace owes an escaping
// path; other refusals are checked by the tools' own tests.
func (w *world) wantMessage(e expect) string {
	if w.rooted {
		return ""
	}
	if e == escapes || (e == hostOutside && w.hostAbs) {
		return "resolves outside the root directory."
	}
	return ""
}

// pathCase is one hostile spelling of a path.
type pathCase struct {
	path string
	e    expect
	// want, when set, must be part of the refusal's message (instead of
	// the message wantMessage gives).
	want string
}

// attackPaths runs every tool against every case in w with set s,
// taking a snapshot around each call where that is cheap and around each
// case otherwise.
func (w *world) attackPaths(t *testing.T, s *tools.Set, cases []pathCase) {
	t.Helper()
	state := w.snap(t)
	for _, c := range cases {
		p := w.expand(c.path)
		caseBefore, wrote := state, false
		for _, tool := range tools.AllTools() {
			if tool == applyPatch && !patchCanName(p) {
				continue
			}
			pr := probe{tool: tool, args: pathArgs(tool, p), echo: p, refuse: w.mustRefuse(c.e, tool, p), want: c.want}
			if pr.want == "" {
				pr.want = w.wantMessage(c.e)
			}
			if !pr.refuse {
				pr.want = ""
			}
			if w.cheapSnap {
				state, _, _ = w.attack(t, s, pr, state)
			} else if _, _, err := w.attack(t, s, pr, nil); err == nil && isWrite(tool) {
				wrote = true
			}
		}
		if !w.cheapSnap {
			state = w.snap(t)
			w.checkChanges(t, w.kind+" "+strconv.Quote(p), caseBefore, state, !wrote)
		}
	}
}
