package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/memfs"
)

// providerRules is what each provider's documentation forbids or
// requires of a function's parameter schema, checked node by node.
var providerRules = map[SchemaDialect]func(path string, n map[string]any) error{
	// OpenAI, "Structured Outputs: supported schemas": the root is an
	// object; every object sets additionalProperties false and lists every
	// property in required; optional fields are nullable union types; the
	// keywords it may not carry (default, $schema, numeric, length and
	// pattern constraints on the strictest models) are absent.
	OpenAIStrict: func(path string, n map[string]any) error {
		allowed := []string{"type", "description", "enum", "properties", "required", "additionalProperties", "items", "anyOf"}
		for k := range n {
			if !slices.Contains(allowed, k) {
				return fmt.Errorf("%s: keyword %q is not in the strict subset", path, k)
			}
		}
		types := typeNames(n["type"])
		if len(types) == 0 {
			return fmt.Errorf("%s: no type", path)
		}
		for _, t := range types {
			if !slices.Contains([]string{"string", "integer", "number", "boolean", "object", "array", "null"}, t) {
				return fmt.Errorf("%s: type %q", path, t)
			}
		}
		if !slices.Contains(types, "object") {
			return nil
		}
		if n["additionalProperties"] != false {
			return fmt.Errorf("%s: an object without additionalProperties false", path)
		}
		props, _ := n["properties"].(map[string]any)
		req := strs(n["required"])
		for k := range props {
			if !slices.Contains(req, k) {
				return fmt.Errorf("%s: property %q is not required", path, k)
			}
		}
		if len(req) != len(props) {
			return fmt.Errorf("%s: required names %v, properties %d", path, req, len(props))
		}
		return nil
	},
	// Gemini, FunctionDeclaration.parameters (Schema, a subset of
	// OpenAPI 3.0): upper-case Type enum values, a single type (nullable
	// instead of a union), no $schema, additionalProperties, const, oneOf,
	// allOf or $ref; required and propertyOrdering name properties.
	Gemini: func(path string, n map[string]any) error {
		allowed := []string{"type", "format", "description", "nullable", "enum", "items", "properties", "required",
			"minimum", "maximum", "minItems", "maxItems", "minLength", "maxLength", "propertyOrdering", "anyOf"}
		for k := range n {
			if !slices.Contains(allowed, k) {
				return fmt.Errorf("%s: keyword %q is not in Gemini's Schema", path, k)
			}
		}
		t, ok := n["type"].(string)
		if !ok || !slices.Contains([]string{"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT"}, t) {
			return fmt.Errorf("%s: type %v is not one of Gemini's", path, n["type"])
		}
		props, _ := n["properties"].(map[string]any)
		for _, r := range append(strs(n["required"]), strs(n["propertyOrdering"])...) {
			if _, ok := props[r]; !ok {
				return fmt.Errorf("%s: %q names no property", path, r)
			}
		}
		if po := strs(n["propertyOrdering"]); len(po) != len(props) {
			return fmt.Errorf("%s: propertyOrdering %v does not name every property", path, po)
		}
		return nil
	},
}

func typeNames(v any) []string {
	switch t := v.(type) {
	case string:
		return []string{t}
	case []any:
		return strs(t)
	}
	return nil
}

func strs(v any) []string {
	a, _ := v.([]any)
	var out []string
	for _, x := range a {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

// walkSchema calls check on every subschema of n.
func walkSchema(path string, n map[string]any, check func(string, map[string]any) error) error {
	if err := check(path, n); err != nil {
		return err
	}
	if props, ok := n["properties"].(map[string]any); ok {
		keys := make([]string, 0, len(props))
		for k := range props {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p, ok := props[k].(map[string]any)
			if !ok {
				return fmt.Errorf("%s.%s: not an object", path, k)
			}
			if err := walkSchema(path+"."+k, p, check); err != nil {
				return err
			}
		}
	}
	if it, ok := n["items"].(map[string]any); ok {
		return walkSchema(path+"[]", it, check)
	}
	return nil
}

func allToolsSet(t *testing.T) *Set {
	t.Helper()
	s, err := New(memfs.New(), Options{Tools: AllTools()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSchemaDialectsFollowProviderRules(t *testing.T) {
	for _, hashes := range []bool{true, false} {
		s, err := New(memfs.New(), Options{Tools: AllTools(), NoContentHashes: !hashes})
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range s.Tools() {
			for d, rules := range providerRules {
				t.Run(fmt.Sprintf("%s/%s/hashes=%v", d, tool.Name, hashes), func(t *testing.T) {
					raw, err := tool.SchemaFor(d)
					if err != nil {
						t.Fatal(err)
					}
					var root map[string]any
					if err := json.Unmarshal(raw, &root); err != nil {
						t.Fatalf("not JSON: %v\n%s", err, raw)
					}
					if err := walkSchema(tool.Name, root, rules); err != nil {
						t.Fatalf("%v\n%s", err, raw)
					}
					assertSameProperties(t, tool.InputSchema, raw)
				})
			}
		}
	}
}

// assertSameProperties checks that a rendering offers the same arguments,
// with the same descriptions at their start, as the full schema.
func assertSameProperties(t *testing.T, full, rendered json.RawMessage) {
	t.Helper()
	var a, b struct {
		Properties map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(full, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(rendered, &b); err != nil {
		t.Fatal(err)
	}
	if len(a.Properties) != len(b.Properties) {
		t.Fatalf("properties %d, rendered %d", len(a.Properties), len(b.Properties))
	}
	for k, p := range a.Properties {
		q, ok := b.Properties[k]
		if !ok || !strings.HasPrefix(q.Description, p.Description) {
			t.Errorf("property %q: description %q, rendered %q", k, p.Description, q.Description)
		}
	}
}

func TestSchemaDialectSaysWhatItDrops(t *testing.T) {
	s := allToolsSet(t)
	read, _ := s.Tool("read_file")
	raw, err := read.SchemaFor(OpenAIStrict)
	if err != nil {
		t.Fatal(err)
	}
	var root struct {
		Properties map[string]struct {
			Type        any    `json:"type"`
			Description string `json:"description"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(raw, &root); err != nil {
		t.Fatal(err)
	}
	limit := root.Properties["limit"]
	if !strings.Contains(limit.Description, "Minimum: 1.") || !strings.Contains(limit.Description, "Default: ") {
		t.Errorf("limit's description lost its minimum or default: %q", limit.Description)
	}
	if fmt.Sprint(limit.Type) != "[integer null]" {
		t.Errorf("optional limit's type = %v, want [integer null]", limit.Type)
	}
	if fmt.Sprint(root.Properties["path"].Type) != "string" {
		t.Errorf("required path's type = %v, want string", root.Properties["path"].Type)
	}
}

func TestRenderSchemaRefusesWhatItCannotCarry(t *testing.T) {
	for _, schema := range []string{
		`{"type":"object","properties":{"a":{"type":"string","const":"x"}}}`,
		`{"type":"object","properties":{"a":{"oneOf":[{"type":"string"}]}}}`,
		`{"type":"string"}`,
		`[1,2]`,
		`{"type":"object"} {}`,
	} {
		for _, d := range []SchemaDialect{OpenAIStrict, Gemini} {
			if out, err := RenderSchema(json.RawMessage(schema), d); err == nil {
				t.Errorf("%s of %s = %s, want an error", d, schema, out)
			}
		}
	}
	if _, err := RenderSchema(json.RawMessage(`{}`), SchemaDialect(9)); err == nil {
		t.Error("an unknown dialect rendered")
	}
}

func TestParseSchemaDialect(t *testing.T) {
	for _, d := range []SchemaDialect{JSONSchema, OpenAIStrict, Gemini} {
		got, err := ParseSchemaDialect(d.String())
		if err != nil || got != d {
			t.Errorf("ParseSchemaDialect(%q) = %v, %v", d.String(), got, err)
		}
	}
	if _, err := ParseSchemaDialect("openai"); err == nil {
		t.Error(`ParseSchemaDialect("openai") succeeded`)
	}
}

// dialectCalls are calls a model makes, with the required arguments
// only; under OpenAIStrict it sends every other argument as null.
var dialectCalls = []struct {
	tool string
	args string
}{
	{"read_file", `{"path":"a.txt"}`},
	{"file_info", `{"path":"a.txt"}`},
	{"list_directory", `{}`},
	{"list_files", `{}`},
	{"find_files", `{"pattern":"*.txt"}`},
	{"search_files", `{"pattern":"hello"}`},
	{"grep", `{"pattern":"hel+o"}`},
	{"write_file", `{"path":"b.txt","content":"new\n"}`},
	{"edit_file", `{"path":"a.txt","old_text":"hello","new_text":"bye"}`},
	{"create_directory", `{"path":"d/e"}`},
	{"apply_patch", `{"patch":"*** Begin Patch\n*** Update File: a.txt\n@@\n-hello world\n+hello there\n*** End Patch"}`},
	{"copy_file", `{"source":"a.txt","destination":"c.txt"}`},
	{"move_file", `{"source":"a.txt","destination":"m.txt"}`},
	{"delete_file", `{"path":"a.txt"}`},
}

// withNulls adds every property of schema that args lacks as null, as a
// model under OpenAI's strict schema sends it.
func withNulls(t *testing.T, schema json.RawMessage, args string) string {
	t.Helper()
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	var a map[string]any
	if err := json.Unmarshal(schema, &s); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		t.Fatal(err)
	}
	for k := range s.Properties {
		if _, ok := a[k]; !ok {
			a[k] = nil
		}
	}
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSchemaDialectArgumentsDecodeToTheSameCall(t *testing.T) {
	ctx := context.Background()
	for _, c := range dialectCalls {
		t.Run(c.tool, func(t *testing.T) {
			var results []string
			for _, d := range []SchemaDialect{JSONSchema, OpenAIStrict, Gemini} {
				s := allToolsSet(t)
				seed, _ := s.Tool("write_file")
				if _, err := seed.Call(ctx, json.RawMessage(`{"path":"a.txt","content":"hello world\n"}`)); err != nil {
					t.Fatal(err)
				}
				tool, ok := s.Tool(c.tool)
				if !ok {
					t.Fatalf("no tool %s", c.tool)
				}
				args := c.args
				if d == OpenAIStrict {
					strict, err := tool.SchemaFor(d)
					if err != nil {
						t.Fatal(err)
					}
					args = withNulls(t, strict, args)
				}
				text, err := tool.Call(ctx, json.RawMessage(args))
				if err != nil {
					t.Fatalf("%s %s: %v", d, args, err)
				}
				results = append(results, text)
			}
			for i, r := range results[1:] {
				if r != results[0] {
					t.Errorf("dialect %d answered\n%s\nwant\n%s", i+1, r, results[0])
				}
			}
		})
	}
}

func ExampleTool_SchemaFor() {
	s, err := New(memfs.New(), Options{})
	if err != nil {
		panic(err)
	}
	tool, _ := s.Tool("file_info")
	for _, d := range []SchemaDialect{OpenAIStrict, Gemini} {
		schema, err := tool.SchemaFor(d)
		if err != nil {
			panic(err)
		}
		var root struct {
			Properties map[string]struct {
				Type any `json:"type"`
			} `json:"properties"`
			Required []string `json:"required"`
		}
		if err := json.Unmarshal(schema, &root); err != nil {
			panic(err)
		}
		fmt.Println(d, root.Properties["path"].Type, root.Required)
	}
	// Output:
	// openai-strict string [path]
	// gemini STRING [path]
}

func FuzzRenderSchema(f *testing.F) {
	s, err := New(memfs.New(), Options{Tools: AllTools()})
	if err != nil {
		f.Fatal(err)
	}
	for _, tool := range s.Tools() {
		f.Add([]byte(tool.InputSchema))
	}
	f.Add([]byte(`{"type":"object","properties":{"a":{"type":"array","items":{"type":"object"}}}}`))
	f.Fuzz(func(t *testing.T, schema []byte) {
		for _, d := range []SchemaDialect{OpenAIStrict, Gemini} {
			out, err := RenderSchema(schema, d)
			if err != nil {
				continue
			}
			var root map[string]any
			if err := json.Unmarshal(out, &root); err != nil {
				t.Fatalf("%s rendered invalid JSON %q: %v", d, out, err)
			}
			// Whatever renders keeps the provider's rules.
			if err := walkSchema("root", root, providerRules[d]); err != nil {
				t.Fatalf("%s rendered %s: %v", d, out, err)
			}
		}
	})
}
