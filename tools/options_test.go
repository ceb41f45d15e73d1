package tools

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestOptionsValidation(t *testing.T) {
	tests := []struct {
		opts Options
		want string
	}{
		{Options{MaxReadLines: -1}, "tools: MaxReadLines must be > 0, got -1"},
		{Options{MaxReadChars: -5}, "tools: MaxReadChars must be > 0, got -5"},
		{Options{MaxListResults: -1}, "tools: MaxListResults must be > 0, got -1"},
		{Options{MaxSearchResults: -2}, "tools: MaxSearchResults must be > 0, got -2"},
		{Options{MaxFindResults: -3}, "tools: MaxFindResults must be > 0, got -3"},
		{Options{RipgrepTimeout: -1}, "tools: RipgrepTimeout must be > 0, got -1ns"},
		{Options{Tools: []string{"read_file", "cat"}}, `tools: unknown tool "cat"; valid tools are read_file, write_file, edit_file, list_directory, search_files, find_files, create_directory, file_info, list_files, grep, apply_patch, delete_file, move_file, copy_file`},
	}
	for _, tt := range tests {
		_, err := New(newMemFS(), tt.opts)
		if err == nil {
			t.Errorf("%+v accepted", tt.opts)
			continue
		}
		wantEqual(t, err.Error(), tt.want)
	}
	if _, err := New(newMemFS(), Options{Denied: []string{""}}); err == nil {
		t.Error("an invalid pattern was accepted")
	}
	if _, err := New(nil, Options{}); err == nil {
		t.Error("a nil backend was accepted")
	}
}

func names(s *Set) []string {
	var out []string
	for _, t := range s.Tools() {
		out = append(out, t.Name)
	}
	return out
}

func TestToolSelection(t *testing.T) {
	tests := []struct {
		opts Options
		want string
	}{
		{Options{}, "read_file write_file edit_file list_directory search_files find_files create_directory file_info"},
		{Options{ReadOnly: true}, "read_file list_directory search_files find_files file_info"},
		{Options{Tools: []string{"grep", "read_file", "list_files", "read_file"}}, "read_file list_files grep"},
		{Options{Tools: AllTools(), ReadOnly: true}, "read_file list_directory search_files find_files file_info list_files grep"},
		{Options{Tools: []string{}}, ""},
	}
	for _, tt := range tests {
		s := newSet(t, newMemFS(), tt.opts)
		wantEqual(t, strings.Join(names(s), " "), tt.want)
		for _, n := range names(s) {
			if tool, ok := s.Tool(n); !ok || tool.Name != n {
				t.Errorf("Tool(%q) = %v, %v", n, tool, ok)
			}
		}
	}
	if len(DefaultTools()) != 8 || len(AllTools()) != 14 || len(ReadOnlyTools()) != 7 {
		t.Error("tool name lists have the wrong lengths")
	}
	DefaultTools()[0] = "changed"
	if DefaultTools()[0] != "read_file" {
		t.Error("DefaultTools shares its slice")
	}
}

func TestSchemasAndAnnotations(t *testing.T) {
	s := newSet(t, newMemFS(), Options{Tools: AllTools()})
	annotations := map[string]Annotations{
		"read_file":        {Title: "Read file", ReadOnly: true, Idempotent: true},
		"write_file":       {Title: "Write file", Destructive: true, Idempotent: true},
		"edit_file":        {Title: "Edit file", Destructive: true},
		"list_directory":   {Title: "List directory", ReadOnly: true, Idempotent: true},
		"create_directory": {Title: "Create directory", Idempotent: true},
		"file_info":        {Title: "File info", ReadOnly: true, Idempotent: true},
		"delete_file":      {Title: "Delete file", Destructive: true},
		"move_file":        {Title: "Move file", Destructive: true},
		"copy_file":        {Title: "Copy file", Destructive: true, Idempotent: true},
	}
	required := map[string][]string{
		"read_file": {"path"}, "write_file": {"path", "content"}, "edit_file": {"path"},
		"list_directory": {}, "create_directory": {"path"}, "file_info": {"path"},
		"delete_file": {"path"}, "move_file": {"source", "destination"}, "copy_file": {"source", "destination"},
	}
	for _, tool := range s.Tools() {
		var schema struct {
			Schema     string                     `json:"$schema"`
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
			Additional *bool                      `json:"additionalProperties"`
		}
		if err := json.Unmarshal(tool.InputSchema, &schema); err != nil {
			t.Fatalf("%s schema: %v", tool.Name, err)
		}
		if schema.Schema != "https://json-schema.org/draft/2020-12/schema" || schema.Type != "object" ||
			schema.Additional == nil || *schema.Additional || schema.Properties == nil {
			t.Errorf("%s schema is not a closed draft 2020-12 object: %s", tool.Name, tool.InputSchema)
		}
		if tool.Description == "" {
			t.Errorf("%s has no description", tool.Name)
		}
		if want, ok := annotations[tool.Name]; ok && tool.Annotations != want {
			t.Errorf("%s annotations %+v, want %+v", tool.Name, tool.Annotations, want)
		}
		if want, ok := required[tool.Name]; ok && !slices.Equal(schema.Required, want) {
			t.Errorf("%s required %v, want %v", tool.Name, schema.Required, want)
		}
		for _, r := range schema.Required {
			if _, ok := schema.Properties[r]; !ok {
				t.Errorf("%s requires unknown %s", tool.Name, r)
			}
		}
		_, hasHash := schema.Properties["expected_hash"]
		if want := !slices.Contains(ReadOnlyTools(), tool.Name) && tool.Name != "create_directory" && tool.Name != "apply_patch"; hasHash != want {
			t.Errorf("%s expected_hash present = %v", tool.Name, hasHash)
		}
	}
	read, _ := s.Tool("read_file")
	if !strings.Contains(read.Description, "2000 lines") {
		t.Errorf("read_file description does not state its limit: %q", read.Description)
	}
	list, _ := s.Tool("list_directory")
	if !strings.Contains(list.Description, "1000 entries") {
		t.Errorf("list_directory description does not state its cap: %q", list.Description)
	}

	s = newSet(t, newMemFS(), Options{NoContentHashes: true, MaxReadLines: 50})
	for _, name := range []string{"write_file", "edit_file"} {
		tool, _ := s.Tool(name)
		if strings.Contains(string(tool.InputSchema), "expected_hash") || strings.Contains(tool.Description, "expected_hash") {
			t.Errorf("%s mentions expected_hash with hashes off", name)
		}
	}
	read, _ = s.Tool("read_file")
	if !strings.Contains(read.Description, "50 lines") || strings.Contains(read.Description, "hash") {
		t.Errorf("read_file description %q", read.Description)
	}
}

func TestCallUnknownTool(t *testing.T) {
	s := newSet(t, newMemFS(), Options{})
	_, err := s.Call(t.Context(), "grep", nil)
	if err == nil || IsRetry(err) {
		t.Errorf("calling an unconfigured tool: %v", err)
	}
}
