package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// SchemaDialect names a rendering of a tool's input schema for the
// function calling of one family of model providers. Every rendering
// describes the same arguments: what a model sends under any of them
// decodes to the same call (a null counts as an absent argument).
type SchemaDialect int

const (
	// JSONSchema is the full draft 2020-12 schema, as in Tool.InputSchema.
	JSONSchema SchemaDialect = iota
	// OpenAIStrict is the subset OpenAI's strict function calling and
	// structured outputs accept: every object closed with
	// additionalProperties false and listing every property as required,
	// an optional property made nullable instead, and no $schema, default
	// or numeric, length or pattern constraint (each is said in the
	// property's description instead, so the model still reads it).
	OpenAIStrict
	// Gemini is the OpenAPI 3.0 subset of Gemini's function declarations:
	// upper-case type names, no $schema, additionalProperties or default
	// (said in the description), properties in the order they are shown
	// (propertyOrdering), optional properties left out of required.
	Gemini
)

// String returns the dialect's name as the options of fencefs's bindings
// spell it: "json-schema", "openai-strict" or "gemini".
func (d SchemaDialect) String() string {
	switch d {
	case JSONSchema:
		return "json-schema"
	case OpenAIStrict:
		return "openai-strict"
	case Gemini:
		return "gemini"
	}
	return "SchemaDialect(" + strconv.Itoa(int(d)) + ")"
}

// ParseSchemaDialect returns the dialect named s, as String spells it.
func ParseSchemaDialect(s string) (SchemaDialect, error) {
	for _, d := range []SchemaDialect{JSONSchema, OpenAIStrict, Gemini} {
		if d.String() == s {
			return d, nil
		}
	}
	return 0, fmt.Errorf("tools: unknown schema dialect %q (want json-schema, openai-strict or gemini)", s)
}

// SchemaFor returns the tool's input schema rendered for dialect d, as
// compact JSON. JSONSchema returns InputSchema as it is.
func (t *Tool) SchemaFor(d SchemaDialect) (json.RawMessage, error) {
	return RenderSchema(t.InputSchema, d)
}

// RenderSchema renders a tool input schema (a flat object schema as the
// tools write them: objects, arrays, strings, integers, numbers and
// booleans with descriptions, defaults and simple constraints) for
// dialect d. It fails on a keyword it cannot carry into d, rather than
// hand a provider a schema it refuses or one that says less than the
// original.
func RenderSchema(schema json.RawMessage, d SchemaDialect) (json.RawMessage, error) {
	if d == JSONSchema {
		return schema, nil
	}
	if d != OpenAIStrict && d != Gemini {
		return nil, fmt.Errorf("tools: unknown schema dialect %d", int(d))
	}
	root, err := parseNode(schema)
	if err != nil {
		return nil, fmt.Errorf("tools: schema: %w", err)
	}
	if root.kind != nodeObject || root.get("type").str() != "object" {
		return nil, fmt.Errorf("tools: schema: the root is not an object schema")
	}
	out, err := renderSchemaNode(root, d, false)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	out.write(&b)
	return b.Bytes(), nil
}

// constraintWords are the constraints a dialect may not carry, and how
// a description says them instead.
var constraintWords = map[string]string{
	"minimum":   "Minimum",
	"maximum":   "Maximum",
	"minLength": "Minimum length",
	"maxLength": "Maximum length",
	"minItems":  "Minimum items",
	"maxItems":  "Maximum items",
	"pattern":   "Pattern",
}

// renderSchemaNode renders one schema (a property's, an item's or the
// root's); nullable says the dialect must also accept null for it.
func renderSchemaNode(n *node, d SchemaDialect, nullable bool) (*node, error) {
	if n.kind != nodeObject {
		return nil, fmt.Errorf("tools: schema: a subschema is not an object")
	}
	typ := n.get("type").str()
	var desc []string
	if s := n.get("description").str(); s != "" {
		desc = append(desc, s)
	}
	out := &node{kind: nodeObject}
	var props, items *node
	var required []string
	for _, m := range n.obj {
		switch m.key {
		case "$schema", "additionalProperties", "type", "description":
			// Written below, or dropped: every object is closed again in
			// OpenAIStrict, and Gemini has no such keyword.
		case "default":
			desc = append(desc, "Default: "+string(m.val.compact())+".")
		case "properties":
			props = m.val
		case "required":
			for _, r := range m.val.arr {
				required = append(required, r.str())
			}
		case "items":
			items = m.val
		case "enum":
			out.set("enum", m.val)
		case "minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems", "pattern":
			if d == Gemini && m.key != "pattern" {
				out.set(m.key, m.val)
				continue
			}
			desc = append(desc, constraintWords[m.key]+": "+string(m.val.compact())+".")
		default:
			return nil, fmt.Errorf("tools: schema: keyword %q has no rendering for %s", m.key, d)
		}
	}
	switch {
	case !slices.Contains([]string{"string", "integer", "number", "boolean", "object", "array"}, typ):
		return nil, fmt.Errorf("tools: schema: a subschema's type is not one simple type")
	case d == Gemini:
		out.set("type", strNode(strings.ToUpper(typ)))
		if nullable {
			out.set("nullable", rawNode("true"))
		}
	case nullable:
		out.set("type", &node{kind: nodeArray, arr: []*node{strNode(typ), strNode("null")}})
	default:
		out.set("type", strNode(typ))
	}
	if len(desc) > 0 {
		out.set("description", strNode(strings.Join(desc, " ")))
	}
	if items != nil {
		r, err := renderSchemaNode(items, d, false)
		if err != nil {
			return nil, err
		}
		out.set("items", r)
	}
	if typ == "object" {
		if err := renderProperties(out, props, required, d); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// renderProperties writes an object schema's properties and required
// list for dialect d.
func renderProperties(out, props *node, required []string, d SchemaDialect) error {
	rp := &node{kind: nodeObject}
	var names []*node
	if props != nil {
		for _, m := range props.obj {
			r, err := renderSchemaNode(m.val, d, d == OpenAIStrict && !slices.Contains(required, m.key))
			if err != nil {
				return fmt.Errorf("%w (property %q)", err, m.key)
			}
			rp.set(m.key, r)
			names = append(names, strNode(m.key))
		}
	}
	for _, r := range required {
		if props.get(r) == nil {
			return fmt.Errorf("tools: schema: required %q names no property", r)
		}
	}
	out.set("properties", rp)
	switch d {
	case OpenAIStrict:
		out.set("required", &node{kind: nodeArray, arr: names})
		out.set("additionalProperties", rawNode("false"))
	case Gemini:
		req := &node{kind: nodeArray}
		for _, r := range required {
			req.arr = append(req.arr, strNode(r))
		}
		if len(req.arr) > 0 {
			out.set("required", req)
		}
		if len(names) > 0 {
			out.set("propertyOrdering", &node{kind: nodeArray, arr: names})
		}
	}
	return nil
}

// node is a JSON value that keeps the order of an object's members, so a
// rendering shows properties in the order the tool wrote them.
type node struct {
	kind nodeKind
	obj  []member
	arr  []*node
	raw  json.RawMessage // a string, number, boolean or null as written
}

type nodeKind int

const (
	nodeScalar nodeKind = iota
	nodeObject
	nodeArray
)

type member struct {
	key string
	val *node
}

func strNode(s string) *node {
	b, _ := json.Marshal(s)
	return &node{raw: b}
}

func rawNode(s string) *node { return &node{raw: json.RawMessage(s)} }

// get returns the member named key of an object, or nil.
func (n *node) get(key string) *node {
	if n == nil {
		return nil
	}
	for _, m := range n.obj {
		if m.key == key {
			return m.val
		}
	}
	return nil
}

// set appends the member key, or replaces its value.
func (n *node) set(key string, v *node) {
	for i := range n.obj {
		if n.obj[i].key == key {
			n.obj[i].val = v
			return
		}
	}
	n.obj = append(n.obj, member{key, v})
}

// str returns a string node's value, or "".
func (n *node) str() string {
	if n == nil || n.kind != nodeScalar {
		return ""
	}
	var s string
	if json.Unmarshal(n.raw, &s) != nil {
		return ""
	}
	return s
}

// compact returns the node as compact JSON.
func (n *node) compact() []byte {
	var b bytes.Buffer
	n.write(&b)
	return b.Bytes()
}

func (n *node) write(b *bytes.Buffer) {
	switch n.kind {
	case nodeObject:
		b.WriteByte('{')
		for i, m := range n.obj {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(m.key)
			b.Write(k)
			b.WriteByte(':')
			m.val.write(b)
		}
		b.WriteByte('}')
	case nodeArray:
		b.WriteByte('[')
		for i, v := range n.arr {
			if i > 0 {
				b.WriteByte(',')
			}
			v.write(b)
		}
		b.WriteByte(']')
	default:
		b.Write(n.raw)
	}
}

// parseNode decodes one JSON value, keeping member order.
func parseNode(raw []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	n, err := decodeNode(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, fmt.Errorf("text after the schema")
	}
	return n, nil
}

// maxSchemaDepth bounds the nesting parseNode follows.
const maxSchemaDepth = 32

func decodeNode(dec *json.Decoder, depth int) (*node, error) {
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("nested deeper than %d", maxSchemaDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &node{kind: nodeObject}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, _ := kt.(string)
				v, err := decodeNode(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.set(key, v)
			}
			_, err := dec.Token()
			return n, err
		case '[':
			n := &node{kind: nodeArray}
			for dec.More() {
				v, err := decodeNode(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.arr = append(n.arr, v)
			}
			_, err := dec.Token()
			return n, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case nil:
		return rawNode("null"), nil
	default:
		b, err := json.Marshal(t)
		if err != nil {
			return nil, err
		}
		return &node{raw: b}, nil
	}
}
