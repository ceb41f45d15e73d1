package mcpserver

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/tools"
)

// TestStructuredContent: each data tool's result carries its text
// exactly as the contract says it and the same data as structured
// content; the changing tools carry the new hash.
func TestStructuredContent(t *testing.T) {
	w := newWorkspace(t, tools.Options{Tools: tools.AllTools()}, map[string]string{
		"a.txt": "alpha\nbeta\n", "sub/b.go": "package b // alpha\n", ".hidden": "x",
	})
	cs := connect(t, New(w.set, Options{}), nil)
	eleven := int64(11)
	tests := []struct {
		tool     string
		args     map[string]any
		wantText string
		into     any
		want     any
	}{
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
		res, text := call(t, cs, tt.tool, tt.args)
		if res.IsError || text != tt.wantText {
			t.Errorf("%s: text %q (isError %v), want %q", tt.tool, text, res.IsError, tt.wantText)
		}
		structured(t, res, tt.into)
		if !reflect.DeepEqual(tt.into, tt.want) {
			got, _ := json.Marshal(tt.into)
			want, _ := json.Marshal(tt.want)
			t.Errorf("%s: structured %s, want %s", tt.tool, got, want)
		}
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

func ptr[T any](v T) *T { return &v }

// FuzzStructured: the parsers of the contract texts take any text
// without failing, and every entry they find is a line of it.
func FuzzStructured(f *testing.F) {
	f.Add("a.txt  (11 bytes)\nsub/\n[1 hidden entry omitted]")
	f.Add("a.txt-1-alpha\na.txt:2:beta\n--\n[... truncated at 3 lines]")
	f.Add("path: a\ntype: file\nsize: 3 bytes")
	f.Fuzz(func(t *testing.T, text string) {
		lines := "\n" + text + "\n"
		for _, e := range parseListing(text).Entries {
			if !strings.Contains(lines, "\n"+e.Name) {
				t.Errorf("entry %q is not a line of %q", e.Name, text)
			}
		}
		for _, m := range parseMatches(text).Matches {
			if !strings.Contains(lines, "\n"+m.Path) || !strings.Contains(lines, m.Text+"\n") {
				t.Errorf("match %+v is not a line of %q", m, text)
			}
		}
		parsePaths(text)
		parseInfo(text)
	})
}
