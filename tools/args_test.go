package tools

import (
	"encoding/json"
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
