package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/fencefs/fencefs/tools"
)

// The read-side tools' structured content is read back from the text
// the contract fixes for them (docs/tool-contract.md), so the text the
// model sees stays exactly the contract's and the data cannot drift from
// it. Names with control characters never reach a result, so a line is
// always one entry; notices are the bracketed lines after the entries.
// What the tool tells while it runs (its shape) makes the split exact:
// how many lines are entries, and where each search line's path ends.
// Without it (a text alone, as the fuzz target gives), the entries end at
// the trailing bracketed lines and a search line's path at its first
// ":<digits>:".

// outputSchemas are the structured results of the read-side tools, by
// tool name.
var outputSchemas = map[string]json.RawMessage{
	"list_directory": json.RawMessage(`{"type":"object","properties":{` +
		`"entries":{"type":"array","items":{"type":"object","properties":{` +
		`"name":{"type":"string","description":"The entry's path as shown (directories end with '/')."},` +
		`"type":{"type":"string","enum":["file","directory"]},` +
		`"size":{"type":"integer","description":"Size in bytes; absent when the storage cannot say or for a directory."}},"required":["name","type"]}},` +
		noticesProps + `},"required":["entries","truncated"]}`),
	"find_files":   pathsSchema,
	"list_files":   pathsSchema,
	"search_files": matchesSchema,
	"grep":         matchesSchema,
	"file_info": json.RawMessage(`{"type":"object","properties":{` +
		`"path":{"type":"string"},"type":{"type":"string"},"size":{"type":"integer"},"binary":{"type":"boolean"},` +
		`"lines":{"type":"integer"},"hash":{"type":"string"},"symlink_target":{"type":"string"}},"required":["path","type"]}`),
}

const noticesProps = `"truncated":{"type":"boolean","description":"The result stopped at its cap."},` +
	`"notices":{"type":"array","items":{"type":"string"},"description":"What was left out and why, as the text says it."}`

var pathsSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"paths":{"type":"array","items":{"type":"string"},"description":"Paths as shown, directories ending with '/'."},` +
	noticesProps + `},"required":["paths","truncated"]}`)

var matchesSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"matches":{"type":"array","items":{"type":"object","properties":{` +
	`"path":{"type":"string"},"line":{"type":"integer"},"text":{"type":"string"},` +
	`"context":{"type":"boolean","description":"A context line around a match rather than a match."}},"required":["path","line","text"]}},` +
	noticesProps + `},"required":["matches","truncated"]}`)

// shape is what a read-side tool told of its text while it ran.
type shape struct {
	// entries is how many lines lead the text as its entries (a listing's
	// or a find's); -1 when the tool did not say.
	entries int
	// pathLens, when set, holds the length of each search line's path.
	pathLens []int
	exact    bool
}

// listen returns ctx under which the call tells sh its shape.
func (sh *shape) listen(ctx context.Context) context.Context {
	sh.entries = -1
	ctx = tools.WithEventListener(ctx, func(_ context.Context, ev tools.Event) {
		switch e := ev.(type) {
		case tools.DirectoryListed:
			sh.entries = e.EntryCount
		case tools.FilesSearched:
			if e.Search == "find" {
				sh.entries = e.MatchCount
			}
		}
	}, tools.ReadsNoDiff)
	return tools.WithPrintedPaths(ctx, func(pathLens []int) { sh.pathLens, sh.exact = pathLens, true })
}

// structuredResult returns the structured content of tool's text result,
// or nil for a tool without an output schema.
func structuredResult(tool, text string, sh shape) any {
	switch tool {
	case "list_directory":
		return parseListing(text, sh.entries)
	case "find_files", "list_files":
		return parsePaths(text, sh.entries)
	case "search_files", "grep":
		if sh.exact {
			if m, ok := exactMatches(text, sh.pathLens); ok {
				return m
			}
		}
		return parseMatches(text)
	case "file_info":
		return parseInfo(text)
	}
	return nil
}

// Entry is one entry of list_directory's structured content.
type Entry struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Size *int64 `json:"size,omitempty"`
}

// Listing is list_directory's structured content.
type Listing struct {
	Entries   []Entry  `json:"entries"`
	Truncated bool     `json:"truncated"`
	Notices   []string `json:"notices,omitempty"`
}

// Paths is the structured content of find_files and list_files.
type Paths struct {
	Paths     []string `json:"paths"`
	Truncated bool     `json:"truncated"`
	Notices   []string `json:"notices,omitempty"`
}

// Match is one line of a search's structured content.
type Match struct {
	Path    string `json:"path"`
	Line    int    `json:"line"`
	Text    string `json:"text"`
	Context bool   `json:"context,omitempty"`
}

// Matches is the structured content of search_files and grep.
type Matches struct {
	Matches   []Match  `json:"matches"`
	Truncated bool     `json:"truncated"`
	Notices   []string `json:"notices,omitempty"`
}

// Info is file_info's structured content.
type Info struct {
	Path          string `json:"path"`
	Type          string `json:"type"`
	Size          *int64 `json:"size,omitempty"`
	Binary        *bool  `json:"binary,omitempty"`
	Lines         *int64 `json:"lines,omitempty"`
	Hash          string `json:"hash,omitempty"`
	SymlinkTarget string `json:"symlink_target,omitempty"`
}

// splitNotices parses the lines of a walker's text: the entries, then
// the bracketed notices and cap line at the end. entries, when not -1, is
// how many lines are entries; the other lines are then notices (a line
// that is not bracketed, such as "(empty directory)", is neither).
func splitNotices(text string, entries int) (lines, notices []string, truncated bool) {
	lines = strings.Split(text, "\n")
	end := len(lines)
	bracketed := func(l string) bool { return strings.HasPrefix(l, "[") && strings.HasSuffix(l, "]") }
	if entries >= 0 && entries <= len(lines) {
		end = entries
	} else {
		for end > 0 && bracketed(lines[end-1]) {
			end--
		}
	}
	for _, n := range lines[end:] {
		switch {
		case strings.HasPrefix(n, "[... truncated at "):
			truncated = true
		case bracketed(n):
			notices = append(notices, n)
		}
	}
	return lines[:end], notices, truncated
}

func parseListing(text string, entries int) Listing {
	lines, notices, truncated := splitNotices(text, entries)
	l := Listing{Entries: []Entry{}, Truncated: truncated, Notices: notices}
	for _, line := range lines {
		switch {
		case line == "(empty directory)" || line == "":
		case strings.HasSuffix(line, "/"):
			l.Entries = append(l.Entries, Entry{Name: line, Type: "directory"})
		default:
			e := Entry{Name: line, Type: "file"}
			if i := strings.LastIndex(line, "  ("); i >= 0 {
				e.Name = line[:i]
				size := strings.TrimSuffix(line[i+3:], ")")
				if n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSuffix(size, " bytes"), " byte"), 10, 64); err == nil {
					e.Size = &n
				}
			}
			l.Entries = append(l.Entries, e)
		}
	}
	return l
}

func parsePaths(text string, entries int) Paths {
	lines, notices, truncated := splitNotices(text, entries)
	p := Paths{Paths: []string{}, Truncated: truncated, Notices: notices}
	for _, line := range lines {
		if line != "" && line != "No matches found." && line != "No files found." {
			p.Paths = append(p.Paths, line)
		}
	}
	return p
}

// matchLine reads "<path>:<line>:<text>" (a match) and
// "<path>-<line>-<text>" (context); the path is the shortest prefix
// followed by a line number, as no tool path ends in ":<digits>".
var matchLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(.*?)([:-])([0-9]+)([:-])(.*)$`) })

// exactMatches splits a search's text with the length of each line's
// path, as the tool printed it; ok is false when the lengths do not fit
// the text.
func exactMatches(text string, pathLens []int) (_ Matches, ok bool) {
	m := Matches{Matches: []Match{}}
	lines := strings.Split(text, "\n")
	i := 0
	for _, pl := range pathLens {
		for i < len(lines) && lines[i] == "--" {
			i++ // the separator between groups of lines
		}
		if i == len(lines) || pl <= 0 || pl >= len(lines[i]) {
			return Matches{}, false
		}
		line := lines[i]
		i++
		sep := line[pl]
		digits, rest, found := strings.Cut(line[pl+1:], string(sep))
		n, err := strconv.Atoi(digits)
		if (sep != ':' && sep != '-') || !found || err != nil {
			return Matches{}, false
		}
		m.Matches = append(m.Matches, Match{Path: line[:pl], Line: n, Text: rest, Context: sep == '-'})
	}
	for _, n := range lines[i:] {
		switch {
		case strings.HasPrefix(n, "[... truncated at "):
			m.Truncated = true
		case strings.HasPrefix(n, "[") && strings.HasSuffix(n, "]"):
			m.Notices = append(m.Notices, n)
		}
	}
	return m, true
}

func parseMatches(text string) Matches {
	lines, notices, truncated := splitNotices(text, -1)
	m := Matches{Matches: []Match{}, Truncated: truncated, Notices: notices}
	for _, line := range lines {
		g := matchLine().FindStringSubmatch(line)
		if g == nil || g[2] != g[4] {
			continue // "--" between groups, "No matches found."
		}
		n, err := strconv.Atoi(g[3])
		if err != nil {
			continue
		}
		m.Matches = append(m.Matches, Match{Path: g[1], Line: n, Text: g[5], Context: g[2] == "-"})
	}
	return m
}

func parseInfo(text string) Info {
	var info Info
	for _, line := range strings.Split(text, "\n") {
		key, value, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		switch key {
		case "path":
			info.Path = value
		case "type":
			info.Type = value
		case "size":
			n, _, _ := strings.Cut(value, " ")
			if n, err := strconv.ParseInt(n, 10, 64); err == nil {
				info.Size = &n
			}
		case "binary":
			b := value == "true"
			info.Binary = &b
		case "lines":
			if n, err := strconv.ParseInt(value, 10, 64); err == nil {
				info.Lines = &n
			}
		case "hash":
			info.Hash = value
		case "symlink_target":
			info.SymlinkTarget = value
		}
	}
	return info
}

// The text inside the structure. MCP asks a tool that returns structured
// content to return its JSON as text too (a SHOULD, for clients that read
// only text). fencefs keeps the text content the contract's text, which
// is what models act on best (a hint such as edit_file's "(line 3)", the
// notices of what was left out), and puts that same text inside the
// structure as its field "text" (first as fencefs writes it; the SDK may
// reorder the keys): a client that shows the model
// structured content in place of the text (pydantic-ai does) loses none
// of the contract, and one that shows the text loses no data.

// textProperty is the schema of the "text" field every structured
// result carries.
var textProperty = map[string]any{"type": "string",
	"description": "The result as the tool's text says it (the same as the text content): read it first; the other fields are its data."}

// withText returns schema with the required "text" property.
func withText(schema json.RawMessage) json.RawMessage {
	var m map[string]any
	if err := json.Unmarshal(schema, &m); err != nil {
		panic(err) // the schemas are constants of this package
	}
	props, _ := m["properties"].(map[string]any)
	props["text"] = textProperty
	req, _ := m["required"].([]any)
	m["required"] = append([]any{"text"}, req...)
	out, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return out
}

// schemasWithText gives changesSchema and outputSchemas with the text
// field added, built on first use rather than at start, so a program
// that links the package and serves no tool pays nothing for them.
var schemasWithText = sync.OnceValues(func() (json.RawMessage, map[string]json.RawMessage) {
	out := make(map[string]json.RawMessage, len(outputSchemas))
	for name, s := range outputSchemas {
		out[name] = withText(s)
	}
	return withText(changesSchema), out
})

// textFirst is structured content with the result's text as its first
// field "text".
type textFirst struct {
	text string
	data any
}

func (t textFirst) MarshalJSON() ([]byte, error) {
	data, err := json.Marshal(t.data)
	if err != nil {
		return nil, err
	}
	if len(data) < 2 || data[0] != '{' {
		return nil, fmt.Errorf("structured content %s is not an object", data)
	}
	text, err := json.Marshal(t.text)
	if err != nil {
		return nil, err
	}
	out := append([]byte(`{"text":`), text...)
	if len(data) > 2 {
		out = append(out, ',')
	}
	return append(out, data[1:]...), nil
}
