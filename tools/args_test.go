package tools

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestDecodeArgs(t *testing.T) {
	fields := func(p *string, n **int, b **bool) []arg {
		return []arg{{"path", p, true}, {"n", n, false}, {"flag", b, false}}
	}
	tests := []struct {
		raw  string
		want string // "" for success
	}{
		{`{"path":"a"}`, ""},
		{`{"path":"a","n":3,"flag":true}`, ""},
		{`{"path":"a","n":null}`, ""},
		{``, "Missing required argument 'path'."},
		{`null`, "Missing required argument 'path'."},
		{`{"path":null}`, "Missing required argument 'path'."},
		{`{"path":"a","x":1}`, "Unknown argument 'x'. Valid arguments: path, n, flag."},
		{`{"path":1}`, "Argument 'path' must be a string."},
		{`{"path":"a","n":"3"}`, "Argument 'n' must be an integer."},
		{`{"path":"a","n":1.5}`, "Argument 'n' must be an integer."},
		{`{"path":"a","n":1e400}`, "Argument 'n' must be an integer."},
		{`{"path":"a","flag":"yes"}`, "Argument 'flag' must be a boolean."},
		{`[1]`, "Invalid arguments: cannot unmarshal array into Go value of type map[string]json.RawMessage. Send the arguments as a JSON object."},
		{`{"path":`, "Invalid arguments: unexpected end of JSON input. Send the arguments as a JSON object."},
	}
	for _, tt := range tests {
		var p string
		var n *int
		var b *bool
		err := decodeArgs(json.RawMessage(tt.raw), fields(&p, &n, &b)...)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.raw, err)
		case tt.want != "" && err == nil:
			t.Errorf("%s: accepted", tt.raw)
		case tt.want != "":
			if !IsRetry(err) {
				t.Errorf("%s: %v is not a retry", tt.raw, err)
			}
			wantEqual(t, err.Error(), tt.want)
		}
	}
	var p string
	var n *int
	var b *bool
	if err := decodeArgs(json.RawMessage(`{"path":"x","n":7,"flag":false}`), fields(&p, &n, &b)...); err != nil || p != "x" || *n != 7 || *b {
		t.Errorf("decoded %q %v %v: %v", p, n, b, err)
	}
}

func FuzzDecodeArgs(f *testing.F) {
	f.Add(`{"path":"a","offset":1,"limit":2}`)
	f.Add(`{"path":"a","replacements":[{"old_text":"x","new_text":"y"}]}`)
	f.Add(`{"replacements":[1,{"old_text":null}]}`)
	f.Add(`{"offset":1.0e2}`)
	f.Fuzz(func(t *testing.T, raw string) {
		var p string
		var off *int
		var flag *bool
		var reps *[]replacement
		err := decodeArgs(json.RawMessage(raw), arg{"path", &p, true}, arg{"offset", &off, false},
			arg{"flag", &flag, false}, arg{"replacements", &reps, false})
		if err != nil && !IsRetry(err) {
			t.Fatalf("%q: non-retry error %v", raw, err)
		}
		if err == nil && !json.Valid([]byte(raw)) && raw != "" {
			t.Fatalf("%q: invalid JSON accepted", raw)
		}
	})
}

// decodedArgs decodes raw with decode into every kind of destination and
// prints what it got, for comparing two decoders.
func decodedArgs(raw string, decode func(json.RawMessage, ...arg) error) string {
	var p string
	var off *int
	var flag *bool
	var name *string
	var reps *[]replacement
	err := decode(json.RawMessage(raw), arg{"path", &p, true}, arg{"offset", &off, false},
		arg{"flag", &flag, false}, arg{"name", &name, false}, arg{"replacements", &reps, false})
	if err != nil {
		return "error: " + err.Error()
	}
	out := fmt.Sprintf("path %q", p)
	if off != nil {
		out += fmt.Sprintf(" offset %d", *off)
	}
	if flag != nil {
		out += fmt.Sprintf(" flag %v", *flag)
	}
	if name != nil {
		out += fmt.Sprintf(" name %q", *name)
	}
	if reps != nil {
		out += fmt.Sprintf(" replacements %q", *reps)
	}
	return out
}

// jsonDecoder is decodeArgs without its one-pass scan.
func jsonDecoder(raw json.RawMessage, fields ...arg) error { return decodeArgsJSON(raw, fields) }

func TestDecodeArgsOnePass(t *testing.T) {
	tests := []string{
		`{"path":"a"}`,
		` { "path" : "a\u00e9\n" , "offset" : 10 , "flag" : false } `,
		`{"path":"a","offset":1e2,"name":null}`,
		`{"path":"a","offset":-0}`,
		`{"path":"a","path":"b"}`,
		`{"path":"a","replacements":[{"old_text":"x","new_text":"y"},{"new_text":"2","old_text":"1"}]}`,
		`{"path":"a","replacements":[]}`,
		`{"path":"a","replacements":[{"old_text":"x"}]}`,
		`{"path":"a","replacements":[{"old_text":"x","new_text":"y","z":1}]}`,
		`{"path":"a","replacements":[{"old\u005ftext":"x","new_text":"y"}]}`,
		`{"path":"a","replacements":[1]}`,
		`{"path":"a","replacements":{"old_text":"x"}}`,
		`{"path":"a","replacements":[{"old_text":1,"new_text":"y"}]}`,
		`{"path":"a","replacements":[{"old_text":[[[[]]]],"new_text":"y"}]}`,
		`{"p\u0061th":"a"}`,
		`{"path":"a","offset":01}`,
		`{"path":"a","offset":1.}`,
		`{"path":"a","flag":tru}`,
		`{"path":"a",}`,
		`{"path":"a"} x`,
		`{"path":"\x"}`,
		"{\"path\":\"a\tb\"}",
		"{\"path\":\"\xff\"}",
		`{"path":"\ud800"}`,
		`{"path":"a","offset":{"a":[1,2,{"b":null}]}}`,
		`{"path":"a","name":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`,
		`null`,
		` `,
		`[]`,
		`"path"`,
	}
	for _, raw := range tests {
		got, want := decodedArgs(raw, decodeArgs), decodedArgs(raw, jsonDecoder)
		if got != want {
			t.Errorf("%s:\none pass      %s\nencoding/json %s", raw, got, want)
		}
		if got, want := stringArg(json.RawMessage(raw), "path"), stringArgJSON(raw, "path"); got != want {
			t.Errorf("%s: stringArg %q, encoding/json %q", raw, got, want)
		}
	}
}

// stringArgJSON is stringArg through encoding/json alone.
func stringArgJSON(raw, key string) string {
	var m map[string]json.RawMessage
	var v string
	if json.Unmarshal([]byte(raw), &m) != nil || json.Unmarshal(m[key], &v) != nil {
		return ""
	}
	return v
}

// FuzzDecodeArgsOnePass checks that the one-pass scan decodes every
// input as encoding/json does: the same values, the same refusal.
func FuzzDecodeArgsOnePass(f *testing.F) {
	f.Add(`{"path":"a","offset":1,"limit":2}`)
	f.Add(`{"path":"a","replacements":[{"old_text":"x","new_text":"y"}]}`)
	f.Add(`{"path":"a\u00e9","flag":true,"name":"\ud83d\ude00"}`)
	f.Add(`{"offset":-1.0e2,"path":""}`)
	f.Fuzz(func(t *testing.T, raw string) {
		got, want := decodedArgs(raw, decodeArgs), decodedArgs(raw, jsonDecoder)
		if got != want {
			t.Fatalf("%q:\none pass      %s\nencoding/json %s", raw, got, want)
		}
		if got, want := stringArg(json.RawMessage(raw), "path"), stringArgJSON(raw, "path"); got != want {
			t.Fatalf("%q: stringArg %q, encoding/json %q", raw, got, want)
		}
	})
}
