package mcpserver

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/tools"
)

// structuredCase is a call, its text and its structured content: into
// receives it and must equal want.
type structuredCase struct {
	tool     string
	args     map[string]any
	wantText string
	into     any
	want     any
}

// TestStructuredContent: each data tool's result carries its text
// exactly as the contract says it and the same data as structured
// content; the changing tools carry the new hash.
func TestStructuredContent(t *testing.T) {
	w := newWorkspace(t, tools.Options{Tools: tools.AllTools()}, map[string]string{
		"a.txt": "alpha\nbeta\n", "sub/b.go": "package b // alpha\n", ".hidden": "x",
	})
	cs := connect(t, New(w.set, Options{}), nil)
	eleven := int64(11)
	tests := []structuredCase{
		{"list_directory", map[string]any{}, "a.txt  (11 bytes)\nsub/\n[1 hidden entry omitted; name a hidden path explicitly to include it]",
			&Listing{}, &Listing{Entries: []Entry{{Name: "a.txt", Type: "file", Size: &eleven}, {Name: "sub/", Type: "directory"}},
				Notices: []string{"[1 hidden entry omitted; name a hidden path explicitly to include it]"}}},
		{"find_files", map[string]any{"pattern": "**/*.go"}, "sub/b.go", &Paths{}, &Paths{Paths: []string{"sub/b.go"}}},
		{"find_files", map[string]any{"pattern": "*.md"}, "No matches found.", &Paths{}, &Paths{Paths: []string{}}},
		{"search_files", map[string]any{"pattern": "alpha"}, "a.txt:1:alpha\nsub/b.go:1:package b // alpha\n[1 hidden entry omitted; name a hidden path explicitly to include it]", &Matches{},
			&Matches{Matches: []Match{{Path: "a.txt", Line: 1, Text: "alpha"}, {Path: "sub/b.go", Line: 1, Text: "package b // alpha"}}, Notices: []string{"[1 hidden entry omitted; name a hidden path explicitly to include it]"}}},
		{"grep", map[string]any{"pattern": "beta", "context": 1}, "a.txt-1-alpha\na.txt:2:beta\n[1 hidden entry omitted; name a hidden path explicitly to include it]", &Matches{},
			&Matches{Matches: []Match{{Path: "a.txt", Line: 1, Text: "alpha", Context: true}, {Path: "a.txt", Line: 2, Text: "beta"}}, Notices: []string{"[1 hidden entry omitted; name a hidden path explicitly to include it]"}}},
		{"file_info", map[string]any{"path": "a.txt"}, "path: a.txt\ntype: file\nsize: 11 bytes\nbinary: false\nlines: 2\nhash: " + hash12("alpha\nbeta\n"),
			&Info{}, &Info{Path: "a.txt", Type: "file", Size: &eleven, Binary: new(bool), Lines: ptr(int64(2)), Hash: hash12("alpha\nbeta\n")}},
		{"write_file", map[string]any{"path": "c.txt", "content": "gamma"}, "Wrote 5 chars (1 line) to c.txt. [hash:" + hash12("gamma") + "]",
			&struct{ Changes []change }{}, &struct{ Changes []change }{[]change{{Kind: "file_written", Path: "c.txt", Hash: fullHash("gamma")}}}},
	}
	for _, tt := range tests {
		checkStructured(t, cs, tt.tool, tt.args, tt.wantText, tt.into, tt.want)
	}
	// Every tool with structured content declares its schema.
	list, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range list.Tools {
		if tool.Name != "read_file" && tool.OutputSchema == nil {
			t.Errorf("%s has no output schema", tool.Name)
		}
	}
}

// TestStructuredContentExact: names that read like a line number or a
// notice are split as the tool printed them: paths holding ":2:" or
// "-2-", and a last entry "[x]".
func TestStructuredContentExact(t *testing.T) {
	w := newWorkspace(t, tools.Options{Tools: tools.AllTools()}, map[string]string{
		"B1:2:c.txt": "alpha\n", "C-2-d.txt": "one\nalpha\n", "[x]": "alpha\n",
	})
	cs := connect(t, New(w.set, Options{}), nil)
	tests := []structuredCase{
		{"search_files", map[string]any{"pattern": "alpha"}, "B1:2:c.txt:1:alpha\nC-2-d.txt:2:alpha\n[x]:1:alpha", &Matches{},
			&Matches{Matches: []Match{{Path: "B1:2:c.txt", Line: 1, Text: "alpha"}, {Path: "C-2-d.txt", Line: 2, Text: "alpha"}, {Path: "[x]", Line: 1, Text: "alpha"}}}},
		{"grep", map[string]any{"pattern": "alpha", "context": 1}, "B1:2:c.txt:1:alpha\n--\nC-2-d.txt-1-one\nC-2-d.txt:2:alpha\n--\n[x]:1:alpha", &Matches{},
			&Matches{Matches: []Match{{Path: "B1:2:c.txt", Line: 1, Text: "alpha"}, {Path: "C-2-d.txt", Line: 1, Text: "one", Context: true}, {Path: "C-2-d.txt", Line: 2, Text: "alpha"}, {Path: "[x]", Line: 1, Text: "alpha"}}}},
		{"find_files", map[string]any{"pattern": "*"}, "B1:2:c.txt\nC-2-d.txt\n[x]", &Paths{}, &Paths{Paths: []string{"B1:2:c.txt", "C-2-d.txt", "[x]"}}},
		{"list_files", map[string]any{}, "B1:2:c.txt\nC-2-d.txt\n[x]", &Paths{}, &Paths{Paths: []string{"B1:2:c.txt", "C-2-d.txt", "[x]"}}},
	}
	for _, tt := range tests {
		checkStructured(t, cs, tt.tool, tt.args, tt.wantText, tt.into, tt.want)
	}
}

// checkStructured calls tool and checks its text and structured content.
func checkStructured(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any, wantText string, into, want any) {
	t.Helper()
	res, text := call(t, cs, tool, args)
	if res.IsError || text != wantText {
		t.Errorf("%s: text %q (isError %v), want %q", tool, text, res.IsError, wantText)
	}
	structured(t, res, into)
	// The contract's text is in the structure, for clients that show
	// the model structured content in place of the text.
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var withText struct {
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(raw, &withText); err != nil || withText.Text == nil || *withText.Text != text {
		t.Errorf("%s: structured %s does not carry the text %q", tool, raw, text)
	}
	if !reflect.DeepEqual(into, want) {
		got, _ := json.Marshal(into)
		wantJSON, _ := json.Marshal(want)
		t.Errorf("%s: structured %s, want %s", tool, got, wantJSON)
	}
}

func ptr[T any](v T) *T { return &v }

// FuzzStructured: the parsers of the contract texts take any text
// without failing, and every entry they find is a line of it.
func FuzzStructured(f *testing.F) {
	f.Add("a.txt  (11 bytes)\nsub/\n[1 hidden entry omitted]", 2)
	f.Add("a.txt-1-alpha\na.txt:2:beta\n--\n[... truncated at 3 lines]", 5)
	f.Add("path: a\ntype: file\nsize: 3 bytes", 0)
	f.Fuzz(func(t *testing.T, text string, n int) {
		lines := "\n" + text + "\n"
		for _, e := range parseListing(text, -1).Entries {
			if !strings.Contains(lines, "\n"+e.Name) {
				t.Errorf("entry %q is not a line of %q", e.Name, text)
			}
		}
		for _, m := range parseMatches(text).Matches {
			if !strings.Contains(lines, "\n"+m.Path) || !strings.Contains(lines, m.Text+"\n") {
				t.Errorf("match %+v is not a line of %q", m, text)
			}
		}
		parsePaths(text, -1)
		parseInfo(text)
		// With a shape: any entry count, and path lengths taken from
		// the fuzzed number, the parsers still take only what is there.
		all := strings.Split(text, "\n")
		parseListing(text, int(uint(n)%uint(len(all)+2))-1)
		var lens []int
		for _, l := range all {
			lens = append(lens, int(uint(n)%uint(len(l)+1)))
		}
		if m, ok := exactMatches(text, lens); ok {
			for _, mt := range m.Matches {
				if !strings.Contains(lines, "\n"+mt.Path) || !strings.Contains(lines, mt.Text+"\n") {
					t.Errorf("exact match %+v is not a line of %q", mt, text)
				}
			}
		}
	})
}
