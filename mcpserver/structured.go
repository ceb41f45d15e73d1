package mcpserver

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
)

// The read-side tools' structured content is read back from the text
// the contract fixes for them (docs/tool-contract.md), so the text the
// model sees stays exactly the contract's and the data cannot drift from
// it. Names with control characters never reach a result, so a line is
// always one entry; notices are the bracketed lines after the entries.

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

// structuredResult returns the structured content of tool's text result,
// or nil for a tool without an output schema.
func structuredResult(tool, text string) any {
	switch tool {
	case "list_directory":
		return parseListing(text)
	case "find_files", "list_files":
		return parsePaths(text)
	case "search_files", "grep":
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
// the bracketed notices and cap line at the end.
func splitNotices(text string) (lines, notices []string, truncated bool) {
	lines = strings.Split(text, "\n")
	end := len(lines)
	for end > 0 && strings.HasPrefix(lines[end-1], "[") && strings.HasSuffix(lines[end-1], "]") {
		end--
	}
	for _, n := range lines[end:] {
		if strings.HasPrefix(n, "[... truncated at ") {
			truncated = true
			continue
		}
		notices = append(notices, n)
	}
	return lines[:end], notices, truncated
}

func parseListing(text string) Listing {
	lines, notices, truncated := splitNotices(text)
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

func parsePaths(text string) Paths {
	lines, notices, truncated := splitNotices(text)
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
var matchLine = regexp.MustCompile(`^(.*?)([:-])([0-9]+)([:-])(.*)$`)

func parseMatches(text string) Matches {
	lines, notices, truncated := splitNotices(text)
	m := Matches{Matches: []Match{}, Truncated: truncated, Notices: notices}
	for _, line := range lines {
		g := matchLine.FindStringSubmatch(line)
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
