package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/tools"
)

func hash12(s string) string { return fullHash(s)[:12] }

func fullHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// TestApproveChanges drives every answer a user can give through the SDK
// client's elicitation: the file changes only on accept, and a file
// changed while the user looked is a conflict, not an overwrite.
func TestApproveChanges(t *testing.T) {
	tests := []struct {
		name   string
		action string
		// meanwhile, when set, is written to the file while the user looks.
		meanwhile string
		want      string
		wantErr   bool
		wantFile  string
	}{
		{name: "accept", action: "accept", want: "Wrote 4 chars (1 line) to f.txt. [hash:" + hash12("new\n") + "]", wantFile: "new\n"},
		{name: "decline", action: "decline", want: "['f.txt' was not written: the user declined the change]", wantFile: "old\n"},
		{name: "cancel", action: "cancel", want: "['f.txt' was not written: the user dismissed the approval without accepting]", wantFile: "old\n"},
		{name: "changed while the user looked", action: "accept", meanwhile: "theirs\n",
			want:     "['f.txt' was not written: " + reasonChanged + "]",
			wantFile: "theirs\n"},
	}
	// The latest protocol asks in two rounds of tools/call; older ones
	// are asked by the server in the middle of the call.
	for _, version := range []string{"", "2025-11-25"} {
		for _, tt := range tests {
			t.Run(version+"/"+tt.name, func(t *testing.T) {
				w := newWorkspace(t, tools.Options{}, map[string]string{"f.txt": "old\n"})
				var shown string
				cs := connectVersion(t, New(w.set, Options{Approve: ApproveChanges}), &mcp.ClientOptions{
					ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						shown = req.Params.Message
						if tt.meanwhile != "" {
							w.write(t, "f.txt", tt.meanwhile)
						}
						return &mcp.ElicitResult{Action: tt.action}, nil
					},
				}, version)
				res, text := call(t, cs, "write_file", map[string]any{"path": "f.txt", "content": "new\n"})
				if text != tt.want || res.IsError != tt.wantErr {
					t.Errorf("result %q (isError %v), want %q (isError %v)", text, res.IsError, tt.want, tt.wantErr)
				}
				for _, line := range []string{"Allow writing f.txt?", "--- a/f.txt", "+++ b/f.txt", "-old", "+new"} {
					if !strings.Contains(shown, line) {
						t.Errorf("the user was shown %q, without %q", shown, line)
					}
				}
				if got := w.read(t, "f.txt"); got != tt.wantFile {
					t.Errorf("file holds %q, want %q", got, tt.wantFile)
				}
			})
		}
	}
}

// TestApproveBinaryChangedWhileLooking: the user is shown no diff of a
// binary file, yet an answer given while the file changed is not taken
// for the change the call now makes.
func TestApproveBinaryChangedWhileLooking(t *testing.T) {
	// The diff of a binary file shows nothing, so the answer is bound to
	// the sizes and the content hash the user was asked about: another
	// writer's bytes, longer or of the same length, are not overwritten.
	for _, theirs := range []string{"theirs\x00longer", "OLD\x00BIN"} {
		w := newWorkspace(t, tools.Options{}, map[string]string{"f.bin": "old\x00bin"})
		cs := connect(t, New(w.set, Options{Approve: ApproveChanges}), &mcp.ClientOptions{
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				w.write(t, "f.bin", theirs)
				return &mcp.ElicitResult{Action: "accept"}, nil
			},
		})
		if _, text := call(t, cs, "write_file", map[string]any{"path": "f.bin", "content": "new\n"}); text != "['f.bin' was not written: "+reasonChanged+"]" {
			t.Errorf("%q written while the user looked: result %q", theirs, text)
		}
		if got := w.read(t, "f.bin"); got != theirs {
			t.Errorf("file holds %q, want %q", got, theirs)
		}
	}
}

// TestApproveEveryChangingTool: each tool that changes storage asks, and
// does nothing when declined; reads never ask.
func TestApproveEveryChangingTool(t *testing.T) {
	w := newWorkspace(t, tools.Options{Tools: tools.AllTools()}, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	var asked []string
	cs := connect(t, New(w.set, Options{Approve: ApproveChanges}), &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = append(asked, strings.SplitN(req.Params.Message, "\n", 2)[0])
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	})
	calls := []struct {
		tool  string
		args  map[string]any
		asked string
	}{
		{"write_file", map[string]any{"path": "a.txt", "content": "x"}, "Allow writing a.txt?"},
		{"edit_file", map[string]any{"path": "a.txt", "old_text": "a", "new_text": "x"}, "Allow editing a.txt?"},
		{"delete_file", map[string]any{"path": "a.txt"}, "Allow deleting a.txt?"},
		{"move_file", map[string]any{"source": "a.txt", "destination": "c.txt"}, "Allow moving a.txt to c.txt?"},
		{"copy_file", map[string]any{"source": "a.txt", "destination": "c.txt"}, "Allow copying a.txt to c.txt?"},
		{"create_directory", map[string]any{"path": "d"}, "Allow creating the directory d?"},
		{"apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Update File: b.txt\n@@\n-b\n+y\n*** End Patch\n"}, "Allow applying a patch starting at b.txt?"},
	}
	for _, c := range calls {
		asked = nil
		res, text := call(t, cs, c.tool, c.args)
		if res.IsError || !strings.Contains(text, "the user declined the change") {
			t.Errorf("%s: %q (isError %v), want the declined text", c.tool, text, res.IsError)
		}
		if len(asked) != 1 || asked[0] != c.asked {
			t.Errorf("%s asked %q, want [%q]", c.tool, asked, c.asked)
		}
	}
	asked = nil
	call(t, cs, "read_file", map[string]any{"path": "a.txt"})
	call(t, cs, "list_directory", map[string]any{})
	if len(asked) != 0 {
		t.Errorf("reads asked %q", asked)
	}
	if w.read(t, "a.txt") != "a\n" || w.read(t, "b.txt") != "b\n" {
		t.Error("a declined change changed a file")
	}
	res, text := call(t, cs, "list_directory", map[string]any{})
	if res.IsError || text != "a.txt  (2 bytes)\nb.txt  (2 bytes)" {
		t.Errorf("after declined changes the directory lists %q", text)
	}
}

// TestApproveWithoutElicitation: a client that cannot elicit gets a
// refusal for every change, or the configured fallback's decision.
func TestApproveWithoutElicitation(t *testing.T) {
	t.Run("refused", func(t *testing.T) {
		w := newWorkspace(t, tools.Options{}, map[string]string{"f.txt": "old\n"})
		cs := connect(t, New(w.set, Options{Approve: ApproveChanges}), nil)
		res, text := call(t, cs, "write_file", map[string]any{"path": "f.txt", "content": "new\n"})
		if !res.IsError || text != noElicitation {
			t.Errorf("result %q (isError %v), want the refusal", text, res.IsError)
		}
		if _, text := call(t, cs, "read_file", map[string]any{"path": "f.txt"}); !strings.Contains(text, "old") {
			t.Errorf("read_file after the refusal: %q", text)
		}
		if w.read(t, "f.txt") != "old\n" {
			t.Error("written without approval")
		}
	})
	t.Run("fallback", func(t *testing.T) {
		w := newWorkspace(t, tools.Options{}, map[string]string{"f.txt": "old\n"})
		var seen *tools.ChangeRequest
		cs := connect(t, New(w.set, Options{Approve: ApproveChanges, ApprovalFallback: func(_ context.Context, req *tools.ChangeRequest) error {
			seen = req
			req.Cancel("changes are reviewed in the pull request")
			return nil
		}}), nil)
		_, text := call(t, cs, "write_file", map[string]any{"path": "f.txt", "content": "new\n"})
		if text != "['f.txt' was not written: changes are reviewed in the pull request]" {
			t.Errorf("result %q", text)
		}
		if seen == nil || seen.Path != "f.txt" || !strings.Contains(seen.Diff, "+new") {
			t.Errorf("fallback saw %+v", seen)
		}
		if w.read(t, "f.txt") != "old\n" {
			t.Error("written although the fallback cancelled")
		}
	})
}

// TestApprovalMessageEscapes: what would not show as itself in a name or
// a diff line is escaped (and a backslash with it, so a name cannot forge
// an escape); line feeds and tabs of a diff stay.
func TestApprovalMessageEscapes(t *testing.T) {
	for _, tt := range []struct {
		in, want  string
		multiline bool
		changed   bool
	}{
		{in: "plain/name.txt", want: "plain/name.txt"},
		{in: "caf\u00e9 \u65e5\u672c.txt", want: "caf\u00e9 \u65e5\u672c.txt"},
		{in: "evil\u202Etxt.exe", want: `evil\u{202E}txt.exe`, changed: true},
		{in: "a\u200Bb\u2028c\u2066d", want: `a\u{200B}b\u{2028}c\u{2066}d`, changed: true},
		{in: "a\\u{202E}\u202E", want: `a\\u{202E}\u{202E}`, changed: true},
		{in: "bad\xffutf8", want: `bad\x{FF}utf8`, changed: true},
		{in: "a\nb\tc\r", want: `a\u{000A}b\u{0009}c\u{000D}`, changed: true},
		{in: "-a\n+b\tc\r\n", want: "-a\n+b\tc\\u{000D}\n", multiline: true, changed: true},
		{in: "-a\n+b\n", want: "-a\n+b\n", multiline: true},
	} {
		got, changed := escapeShown(tt.in, tt.multiline)
		if got != tt.want || changed != tt.changed {
			t.Errorf("escapeShown(%q, %v) = %q, %v; want %q, %v", tt.in, tt.multiline, got, changed, tt.want, tt.changed)
		}
	}
	msg := ApprovalMessage(&tools.ChangeRequest{Operation: tools.OpWrite, Path: "evil\u202Etxt.exe", Diff: "+x\u200By\n"})
	if strings.ContainsAny(msg, "\u202E\u200B") || !strings.HasPrefix(msg, `Allow writing "evil\u{202E}txt.exe"?`) || !strings.Contains(msg, "shown escaped") {
		t.Errorf("message %q", msg)
	}
}

// FuzzEscapeShown: whatever a name or diff holds, what the user is shown
// is valid UTF-8 with no character that would not show as itself (but
// the line feeds and tabs of a diff), and text that needed no escaping is
// shown unchanged.
func FuzzEscapeShown(f *testing.F) {
	f.Add("evil\u202Etxt.exe", false)
	f.Add("-a\n+b\tc\r\n", true)
	f.Add("bad\xff\\u{41}", false)
	f.Fuzz(func(t *testing.T, s string, multiline bool) {
		got, changed := escapeShown(s, multiline)
		if !utf8.ValidString(got) {
			t.Fatalf("escapeShown(%q) = %q: invalid UTF-8", s, got)
		}
		for _, r := range got {
			if multiline && (r == '\n' || r == '\t') {
				continue
			}
			if unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp) {
				t.Fatalf("escapeShown(%q) = %q keeps %U", s, got, r)
			}
		}
		if !changed && got != s {
			t.Fatalf("escapeShown(%q) = %q, unchanged reported", s, got)
		}
	})
}
