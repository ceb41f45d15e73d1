package skills

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// ManifestName is the file that makes a directory a skill.
const ManifestName = "SKILL.md"

// Limits on the required front matter keys.
const (
	// MaxNameLen is the longest skill name, in bytes (names are ASCII).
	MaxNameLen = 64
	// MaxDescriptionLen is the longest description, in characters.
	MaxDescriptionLen = 1024
)

// Manifest is the parsed content of a SKILL.md file.
type Manifest struct {
	// Name is the skill's name (see ValidName).
	Name string
	// Description says what the skill does and when to use it.
	Description string
	// Fields holds the other top-level keys of the front matter, decoded
	// as YAML (strings, numbers, booleans, lists, maps); nil when there
	// are none.
	Fields map[string]any
	// Body is the instructions: the text after the front matter, without
	// the blank lines that start it or the white space that ends it.
	Body string
}

// utf8BOM is skipped at the start of a manifest, as editors on some
// systems write one.
var utf8BOM = []byte("\xef\xbb\xbf")

// ParseManifest parses the content of a SKILL.md file. The file must start
// with a line "---" (after an optional UTF-8 byte order mark); the front
// matter ends at the next line "---" (trailing spaces and a CR allowed) and
// must be a YAML mapping with string values for name and description (see
// the package documentation for their rules). Keys may not repeat. Any
// error means the manifest is unusable; its text says why, in a form fit
// for a problem report.
func ParseManifest(data []byte) (Manifest, error) {
	m, err := parseManifest(data)
	if err != nil {
		return Manifest{}, err
	}
	return m, nil
}

// parseManifest is ParseManifest, except that on error the returned
// Manifest keeps the name when it was read, so a problem can name the
// skill.
func parseManifest(data []byte) (Manifest, error) {
	front, body, err := splitFrontMatter(data)
	if err != nil {
		return Manifest{}, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(front, &doc); err != nil {
		return Manifest{}, fmt.Errorf("front matter is not valid YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if doc.Kind == 0 || len(doc.Content) == 0 || isNull(doc.Content[0]) {
		return Manifest{}, errors.New("front matter is empty; it needs name and description")
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return Manifest{}, fmt.Errorf("front matter must be a YAML mapping of keys to values, not %s", describe(root))
	}
	m, err := readKeys(root)
	if err != nil {
		return m, err
	}
	m.Body = strings.TrimRightFunc(trimBlankLines(string(body)), unicode.IsSpace)
	return m, nil
}

// splitFrontMatter returns the front matter, including its opening line
// so that YAML's line numbers are the file's, and the body after the
// closing line.
func splitFrontMatter(data []byte) (front, body []byte, err error) {
	data = bytes.TrimPrefix(data, utf8BOM)
	first, rest := cutLine(data)
	if !isDelimiter(first) {
		return nil, nil, errors.New("no YAML front matter: the file must start with a line '---'")
	}
	for len(rest) > 0 {
		line, next := cutLine(rest)
		if isDelimiter(line) {
			return data[:len(data)-len(rest)], next, nil
		}
		rest = next
	}
	return nil, nil, errors.New("front matter is not closed: no line '---' after the opening one")
}

// cutLine splits data after its first line, dropping the "\n".
func cutLine(data []byte) (line, rest []byte) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return data[:i], data[i+1:]
	}
	return data, nil
}

func isDelimiter(line []byte) bool {
	return string(bytes.TrimRight(line, " \t\r")) == "---"
}

// readKeys reads the top-level mapping: name and description, which must
// be strings, and the other keys into Fields.
func readKeys(root *yaml.Node) (Manifest, error) {
	var m Manifest
	var nameNode, descNode *yaml.Node
	seen := make(map[string]bool, len(root.Content)/2)
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := deref(root.Content[i]), deref(root.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			return m, fmt.Errorf("line %d: a key must be a plain word, not %s", k.Line, describe(k))
		}
		if seen[k.Value] {
			return m, fmt.Errorf("line %d: key %q appears twice", k.Line, k.Value)
		}
		seen[k.Value] = true
		switch k.Value {
		case "name":
			nameNode = v
		case "description":
			descNode = v
		default:
			var val any
			if err := v.Decode(&val); err != nil {
				return m, fmt.Errorf("line %d: key %q: %s", k.Line, k.Value, strings.TrimPrefix(err.Error(), "yaml: "))
			}
			if m.Fields == nil {
				m.Fields = make(map[string]any)
			}
			m.Fields[k.Value] = val
		}
	}
	var err error
	if m.Name, err = stringKey(nameNode, "name"); err != nil {
		return m, err
	}
	if err := checkName(m.Name); err != nil {
		return m, err
	}
	if m.Description, err = stringKey(descNode, "description"); err != nil {
		return m, err
	}
	if n := utf8.RuneCountInString(m.Description); n > MaxDescriptionLen {
		return m, fmt.Errorf("description is %d characters, limit is %d", n, MaxDescriptionLen)
	}
	return m, nil
}

// stringKey returns the trimmed string value of the required key, or why
// there is none.
func stringKey(v *yaml.Node, key string) (string, error) {
	if v == nil {
		return "", fmt.Errorf("%s is missing", key)
	}
	if isNull(v) {
		return "", fmt.Errorf("%s is empty", key)
	}
	if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!str" {
		return "", fmt.Errorf("line %d: %s must be a string, not %s", v.Line, key, describe(v))
	}
	s := strings.TrimSpace(v.Value)
	if s == "" {
		return "", fmt.Errorf("%s is empty", key)
	}
	return s, nil
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// deref follows a YAML alias to the node it names.
func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// describe names the type of a YAML node for a message.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	}
	switch n.ShortTag() {
	case "!!int":
		return "an integer"
	case "!!float":
		return "a number"
	case "!!bool":
		return "a boolean"
	case "!!timestamp":
		return "a date"
	case "!!binary":
		return "binary data"
	case "!!null":
		return "null"
	case "!!str":
		return "a string"
	}
	return "a value tagged " + n.ShortTag()
}

// ValidName reports whether name is a valid skill name: 1 to MaxNameLen
// lowercase ASCII letters, digits and hyphens, with no hyphen at either
// end and no two hyphens in a row.
func ValidName(name string) bool {
	return checkName(name) == nil
}

func checkName(name string) error {
	if len(name) == 0 || len(name) > MaxNameLen {
		return fmt.Errorf("name %q is not valid: it must be 1 to %d characters long", name, MaxNameLen)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-':
			if i == 0 || i == len(name)-1 || name[i-1] == '-' {
				return fmt.Errorf("name %q is not valid: hyphens go only between letters or digits", name)
			}
		default:
			return fmt.Errorf("name %q is not valid: use lowercase letters, digits and hyphens", name)
		}
	}
	return nil
}

// trimBlankLines drops the lines at the start of s that hold only white
// space, keeping the indentation of the first line with text.
func trimBlankLines(s string) string {
	for {
		line, rest, ok := strings.Cut(s, "\n")
		if !ok || strings.TrimSpace(line) != "" {
			if !ok && strings.TrimSpace(line) == "" {
				return ""
			}
			return s
		}
		s = rest
	}
}
