package skills

import (
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestParseManifest(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Manifest
	}{
		{
			name: "minimal",
			in:   "---\nname: pdf-forms\ndescription: Fill in PDF forms.\n---\nRead forms.md.\n",
			want: Manifest{Name: "pdf-forms", Description: "Fill in PDF forms.", Body: "Read forms.md."},
		},
		{
			name: "other keys kept",
			in:   "---\nname: a1\ndescription: d\nlicense: MIT\nallowed-tools: [read_file, grep]\nmetadata:\n  version: 2\n  beta: true\n---\nbody\n",
			want: Manifest{Name: "a1", Description: "d", Body: "body", Fields: map[string]any{
				"license":       "MIT",
				"allowed-tools": []any{"read_file", "grep"},
				"metadata":      map[string]any{"version": 2, "beta": true},
			}},
		},
		{
			name: "CRLF, byte order mark and spaces after the delimiters",
			in:   "\xef\xbb\xbf---  \r\nname: x\r\ndescription: \"quoted: yes\"\r\n--- \r\n\r\nline one\r\nline two\r\n",
			want: Manifest{Name: "x", Description: "quoted: yes", Body: "line one\r\nline two"},
		},
		{
			name: "no body, closing line without newline",
			in:   "---\nname: x\ndescription: d\n---",
			want: Manifest{Name: "x", Description: "d"},
		},
		{
			name: "block description trimmed, body indentation kept",
			in:   "---\nname: x\ndescription: |\n  Several\n  lines.\n---\n\n\n    indented code\nnext\n\n",
			want: Manifest{Name: "x", Description: "Several\nlines.", Body: "    indented code\nnext"},
		},
		{
			name: "dashes inside the body stay",
			in:   "---\nname: x\ndescription: d\n---\nabove\n---\nbelow\n",
			want: Manifest{Name: "x", Description: "d", Body: "above\n---\nbelow"},
		},
		{
			name: "aliases resolve",
			in:   "---\ntext: &t Shared text.\nname: x\ndescription: *t\n---\n",
			want: Manifest{Name: "x", Description: "Shared text.", Fields: map[string]any{"text": "Shared text."}},
		},
		{
			name: "numeric-looking name as a quoted string",
			in:   "---\nname: \"2024\"\ndescription: d\n---\n",
			want: Manifest{Name: "2024", Description: "d"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseManifest([]byte(tt.in))
			if err != nil {
				t.Fatalf("ParseManifest: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseManifest =\n%#v\nwant\n%#v", got, tt.want)
			}
		})
	}
}

func TestParseManifestErrors(t *testing.T) {
	long := strings.Repeat("a", MaxNameLen+1)
	tests := []struct {
		name, in, want string
	}{
		{"empty file", "", "no YAML front matter: the file must start with a line '---'"},
		{"no front matter", "# Title\nname: x\n", "no YAML front matter: the file must start with a line '---'"},
		{"text before the front matter", "\n---\nname: x\ndescription: d\n---\n", "no YAML front matter: the file must start with a line '---'"},
		{"not closed", "---\nname: x\ndescription: d\n", "front matter is not closed: no line '---' after the opening one"},
		{"bad YAML", "---\nname: x\ndescription: [unclosed\n---\n", "front matter is not valid YAML: line 2: did not find expected ',' or ']'"},
		{"tab indentation", "---\nname: x\n\tdescription: d\n---\n", "front matter is not valid YAML: line 2: found a tab character that violates indentation"},
		{"empty", "---\n---\nbody\n", "front matter is empty; it needs name and description"},
		{"only a comment", "---\n# nothing\n---\n", "front matter is empty; it needs name and description"},
		{"a list", "---\n- name\n- description\n---\n", "front matter must be a YAML mapping of keys to values, not a list"},
		{"a scalar", "---\njust text\n---\n", "front matter must be a YAML mapping of keys to values, not a string"},
		{"missing name", "---\ndescription: d\n---\n", "name is missing"},
		{"missing description", "---\nname: x\n---\n", "description is missing"},
		{"null name", "---\nname:\ndescription: d\n---\n", "name is empty"},
		{"blank name", "---\nname: '  '\ndescription: d\n---\n", "name is empty"},
		{"blank description", "---\nname: x\ndescription: \"\"\n---\n", "description is empty"},
		{"integer name", "---\nname: 42\ndescription: d\n---\n", "line 2: name must be a string, not an integer"},
		{"boolean name", "---\nname: true\ndescription: d\n---\n", "line 2: name must be a string, not a boolean"},
		{"list description", "---\nname: x\ndescription:\n  - a\n  - b\n---\n", "line 4: description must be a string, not a list"},
		{"mapping description", "---\nname: x\ndescription: {a: b}\n---\n", "line 3: description must be a string, not a mapping"},
		{"float description", "---\nname: x\ndescription: 1.5\n---\n", "line 3: description must be a string, not a number"},
		{"date description", "---\nname: x\ndescription: 2024-01-02\n---\n", "line 3: description must be a string, not a date"},
		{"uppercase name", "---\nname: PDF\ndescription: d\n---\n", `name "PDF" is not valid: use lowercase letters, digits and hyphens`},
		{"name with space", "---\nname: pdf forms\ndescription: d\n---\n", `name "pdf forms" is not valid: use lowercase letters, digits and hyphens`},
		{"name with underscore", "---\nname: pdf_forms\ndescription: d\n---\n", `name "pdf_forms" is not valid: use lowercase letters, digits and hyphens`},
		{"leading hyphen", "---\nname: -x\ndescription: d\n---\n", `name "-x" is not valid: hyphens go only between letters or digits`},
		{"trailing hyphen", "---\nname: x-\ndescription: d\n---\n", `name "x-" is not valid: hyphens go only between letters or digits`},
		{"double hyphen", "---\nname: a--b\ndescription: d\n---\n", `name "a--b" is not valid: hyphens go only between letters or digits`},
		{"path in name", "---\nname: ../x\ndescription: d\n---\n", `name "../x" is not valid: use lowercase letters, digits and hyphens`},
		{"long name", "---\nname: " + long + "\ndescription: d\n---\n", `name "` + long + `" is not valid: it must be 1 to 64 characters long`},
		{"long description", "---\nname: x\ndescription: " + strings.Repeat("é", MaxDescriptionLen+1) + "\n---\n", "description is 1025 characters, limit is 1024"},
		{"duplicate key", "---\nname: x\ndescription: d\nname: y\n---\n", `line 4: key "name" appears twice`},
		{"mapping as key", "---\n? {a: b}\n: c\nname: x\ndescription: d\n---\n", "line 2: a key must be a plain word, not a mapping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseManifest([]byte(tt.in))
			if err == nil {
				t.Fatalf("ParseManifest succeeded with %#v; want error %q", got, tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("error = %q\nwant    %q", err, tt.want)
			}
			if !reflect.DeepEqual(got, Manifest{}) {
				t.Errorf("ParseManifest returned %#v with its error; want the zero Manifest", got)
			}
		})
	}
}

func TestParseManifestKeepsNameForProblems(t *testing.T) {
	m, err := parseManifest([]byte("---\nname: known\n---\n"))
	if err == nil || m.Name != "known" {
		t.Fatalf("parseManifest = %#v, %v; want the name kept with the error", m, err)
	}
}

func TestValidName(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"a", true},
		{"pdf-forms", true},
		{"k8s", true},
		{"0", true},
		{strings.Repeat("a", MaxNameLen), true},
		{strings.Repeat("a", MaxNameLen+1), false},
		{"", false},
		{"-", false},
		{"a--b", false},
		{"A", false},
		{".git", false},
		{"a.b", false},
		{"a/b", false},
		{"é", false},
		{"a\n", false},
	}
	for _, tt := range tests {
		if got := ValidName(tt.name); got != tt.want {
			t.Errorf("ValidName(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func FuzzParseManifest(f *testing.F) {
	for _, s := range []string{
		"---\nname: x\ndescription: d\n---\nbody\n",
		"\xef\xbb\xbf---\r\nname: x\r\ndescription: d\r\n---\r\n",
		"---\nname: x\ndescription: |\n  a\n  b\n---\n\n  body\n",
		"---\na: &a [1, 2]\nb: *a\nname: x\ndescription: d\n---\n",
		"---\nname: 42\n---\n",
		"---\n---\n",
		"no front matter",
		"---\nname: [\n---\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseManifest(data)
		if err != nil {
			if !reflect.DeepEqual(m, Manifest{}) {
				t.Fatalf("error %q came with a non-zero manifest %#v", err, m)
			}
			if err.Error() == "" {
				t.Fatal("empty error text")
			}
			return
		}
		if !ValidName(m.Name) {
			t.Fatalf("accepted invalid name %q", m.Name)
		}
		if m.Description == "" || strings.TrimSpace(m.Description) != m.Description {
			t.Fatalf("description %q is empty or untrimmed", m.Description)
		}
		if n := utf8.RuneCountInString(m.Description); n > MaxDescriptionLen {
			t.Fatalf("description of %d characters accepted", n)
		}
		if strings.TrimRightFunc(m.Body, unicode.IsSpace) != m.Body {
			t.Fatalf("body %q ends in white space", m.Body)
		}
		if _, ok := m.Fields["name"]; ok {
			t.Fatal("name copied into Fields")
		}
		if _, ok := m.Fields["description"]; ok {
			t.Fatal("description copied into Fields")
		}
		again, err := ParseManifest(data)
		if err != nil || !reflect.DeepEqual(again, m) {
			t.Fatalf("second parse differs: %#v, %v", again, err)
		}
	})
}
