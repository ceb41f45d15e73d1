package tools

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// arg describes one field of a tool's arguments for decodeArgs. dst is a
// *string, *int, *bool, *[]replacement, or a pointer to one of these
// pointers (**string, **int, **bool, **[]replacement) for an optional
// field whose absence must be told from its zero value.
type arg struct {
	name     string
	dst      any
	required bool
}

// replacement is one item of edit_file's replacements list.
type replacement struct {
	OldText string
	NewText string
}

// decodeArgs decodes a tool's JSON arguments strictly: a malformed
// object, an unknown field, a missing required field or a wrongly typed
// value is a *RetryError naming the field. A JSON null counts as absent.
//
// The arguments are scanned once, each value found in place; arguments
// the scan does not take (malformed JSON, an unknown or escaped name, more
// fields than it holds) go through encoding/json, whose error text the
// model then sees.
func decodeArgs(raw json.RawMessage, fields ...arg) error {
	var vals [maxArgs][]byte
	if len(fields) <= maxArgs && scanArgs(raw, fields, vals[:len(fields)]) {
		return assignArgs(fields, vals[:len(fields)])
	}
	return decodeArgsJSON(raw, fields)
}

// decodeArgsJSON is decodeArgs through encoding/json, for the arguments
// scanArgs does not take.
func decodeArgsJSON(raw json.RawMessage, fields []arg) error {
	obj, err := decodeObject(raw)
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.ContainsFunc(fields, func(f arg) bool { return f.name == k }) {
			// The names are copied into the text (see argErr).
			var names strings.Builder
			for i, f := range fields {
				if i > 0 {
					names.WriteString(", ")
				}
				names.WriteString(f.name)
			}
			return retryf(KindInvalid, "Unknown argument '%s'. Valid arguments: %s.", k, names.String())
		}
	}
	all := make([][]byte, len(fields))
	for i, f := range fields {
		all[i] = obj[f.name]
	}
	return assignArgs(fields, all)
}

// argErr is the retry (KindInvalid) before+name+after. It copies name where retryf
// would let it escape, and with it every destination of decodeArgs (the
// compiler tracks the fields as a whole), which would then be allocated
// on each call.
func argErr(before, name, after string) error {
	return &RetryError{Message: before + name + after, Kind: KindInvalid}
}

// maxArgs is the most fields decodeArgs scans in one pass; more than any
// tool has.
const maxArgs = 12

// assignArgs decodes vals[i], the value of fields[i] (nil when absent),
// in the order of fields.
func assignArgs(fields []arg, vals [][]byte) error {
	for i, f := range fields {
		v := vals[i]
		if v == nil || isNull(v) {
			if f.required {
				return argErr("Missing required argument '", f.name, "'.")
			}
			continue
		}
		if err := decodeValue(f.name, v, f.dst); err != nil {
			return err
		}
	}
	return nil
}

// scanArgs finds the value of each field in the JSON object raw, as
// encoding/json would (a repeated name: the last value). It reports
// false, leaving the rest to encoding/json, for anything scanObject does
// not take and for a name that is no field.
func scanArgs(raw []byte, fields []arg, vals [][]byte) bool {
	return scanObject(raw, func(name, value []byte) bool {
		for k := range fields {
			if fields[k].name == string(name) {
				vals[k] = value
				return true
			}
		}
		return false
	})
}

// scanObject calls member with each name and value of the JSON object
// raw, in order, and checks the whole text's syntax. It reports false
// when raw is neither a valid object, empty nor null, when a name is
// written with escapes (the caller would have to unquote it), or when
// member returns false.
func scanObject(raw []byte, member func(name, value []byte) bool) bool {
	i := skipSpace(raw, 0)
	if i == len(raw) {
		return true
	}
	if bytes.HasPrefix(raw[i:], []byte("null")) {
		return skipSpace(raw, i+4) == len(raw)
	}
	if raw[i] != '{' {
		return false
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return skipSpace(raw, i+1) == len(raw)
	}
	for {
		end, ok := scanString(raw, i)
		if !ok {
			return false
		}
		name := raw[i+1 : end-1]
		if bytes.IndexByte(name, '\\') >= 0 {
			return false
		}
		if i = skipSpace(raw, end); i == len(raw) || raw[i] != ':' {
			return false
		}
		i = skipSpace(raw, i+1)
		if end, ok = scanValue(raw, i, 0); !ok || !member(name, raw[i:end]) {
			return false
		}
		if i = skipSpace(raw, end); i == len(raw) {
			return false
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
		case '}':
			return skipSpace(raw, i+1) == len(raw)
		default:
			return false
		}
	}
}

// maxScanDepth bounds the nesting scanValue follows; deeper values go to
// encoding/json.
const maxScanDepth = 64

// scanValue returns the end of the JSON value starting at b[i], and
// whether it is one.
func scanValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '"':
		return scanString(b, i)
	case c == '{' || c == '[':
		if depth >= maxScanDepth {
			return i, false
		}
		closing := byte('}')
		if c == '[' {
			closing = ']'
		}
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == closing {
			return i + 1, true
		}
		for {
			if c == '{' {
				end, ok := scanString(b, i)
				if !ok {
					return i, false
				}
				if i = skipSpace(b, end); i == len(b) || b[i] != ':' {
					return i, false
				}
				i = skipSpace(b, i+1)
			}
			end, ok := scanValue(b, i, depth+1)
			if !ok {
				return i, false
			}
			if i = skipSpace(b, end); i == len(b) {
				return i, false
			}
			switch b[i] {
			case ',':
				i = skipSpace(b, i+1)
			case closing:
				return i + 1, true
			default:
				return i, false
			}
		}
	case c == 't':
		return scanLiteral(b, i, "true")
	case c == 'f':
		return scanLiteral(b, i, "false")
	case c == 'n':
		return scanLiteral(b, i, "null")
	default:
		return scanNumber(b, i)
	}
}

// scanString returns the end of the JSON string literal at b[i] (past its
// closing quote).
func scanString(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return i, false
	}
	for i++; i < len(b); {
		switch c := b[i]; {
		case c == '"':
			return i + 1, true
		case c == '\\':
			if i+1 >= len(b) {
				return i, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if _, ok := hex4(b[i+2:]); !ok {
					return i, false
				}
				i += 6
			default:
				return i, false
			}
		case c < 0x20:
			return i, false
		default:
			i++
		}
	}
	return i, false
}

func scanLiteral(b []byte, i int, lit string) (int, bool) {
	if !bytes.HasPrefix(b[i:], []byte(lit)) {
		return i, false
	}
	return i + len(lit), true
}

// scanNumber returns the end of the JSON number at b[i].
func scanNumber(b []byte, i int) (int, bool) {
	digits := func() bool {
		start := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		return i > start
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case !digits():
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return i, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return i, false
		}
	}
	return i, true
}

// skipSpace returns the index of the first byte from i on that is not
// JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// decodeObject parses raw as a JSON object; empty input and null are the
// empty object.
func decodeObject(raw json.RawMessage) (map[string]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || isNull(raw) {
		return map[string]json.RawMessage{}, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		detail := "not a JSON object"
		if err != nil {
			detail = strings.TrimPrefix(err.Error(), "json: ")
		}
		return nil, retryf(KindInvalid, "Invalid arguments: %s. Send the arguments as a JSON object.", detail)
	}
	return obj, nil
}

func isNull(v []byte) bool { return string(bytes.TrimSpace(v)) == "null" }

// decodeValue decodes one field value into dst.
func decodeValue(name string, v json.RawMessage, dst any) error {
	switch d := dst.(type) {
	case **string:
		*d = new(string)
		return decodeValue(name, v, *d)
	case **int:
		*d = new(int)
		return decodeValue(name, v, *d)
	case **bool:
		*d = new(bool)
		return decodeValue(name, v, *d)
	case **[]replacement:
		*d = new([]replacement)
		return decodeValue(name, v, *d)
	case *string:
		// v is one valid JSON value: a string literal unquotes.
		str, ok := unquoteJSON(v)
		if !ok {
			return argErr("Argument '", name, "' must be a string.")
		}
		*d = str
	case *bool:
		switch string(bytes.TrimSpace(v)) {
		case "true":
			*d = true
		case "false":
			*d = false
		default:
			return argErr("Argument '", name, "' must be a boolean.")
		}
	case *int:
		n, ok := decodeInt(v)
		if !ok {
			return argErr("Argument '", name, "' must be an integer.")
		}
		*d = n
	case *[]replacement:
		return decodeReplacements(name, v, d)
	default:
		// reflect rather than fmt, so that dst does not escape.
		panic("tools: decodeArgs: unsupported destination " + reflect.TypeOf(dst).String())
	}
	return nil
}

// decodeInt accepts a JSON number with an integral value that fits an int
// (so 10 and 10.0 both work, "10" and 1.5 do not).
func decodeInt(v json.RawMessage) (int, bool) {
	t := bytes.TrimSpace(v)
	if end, ok := scanNumber(t, 0); !ok || end != len(t) {
		return 0, false
	}
	num := json.Number(t)
	if i, err := num.Int64(); err == nil {
		return int(i), true
	}
	f, err := num.Float64()
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int(f), true
}

// decodeReplacements decodes a list of {old_text, new_text} objects, each
// as strictly as the top-level arguments. v is one valid JSON value (the
// arguments' syntax was checked whole).
func decodeReplacements(name string, v []byte, d *[]replacement) error {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || v[0] != '[' {
		return argErr("Argument '", name, "' must be a list of objects with old_text and new_text.")
	}
	var out []replacement
	i := skipSpace(v, 1)
	for n := 0; i < len(v) && v[i] != ']'; n++ {
		end, ok := scanValue(v, i, 0)
		if !ok {
			return argErr("Argument '", name, "' must be a list of objects with old_text and new_text.")
		}
		r, err := decodeReplacement(name+"["+strconv.Itoa(n)+"]", v[i:end])
		if err != nil {
			return err
		}
		out = append(out, r)
		if i = skipSpace(v, end); i < len(v) && v[i] == ',' {
			i = skipSpace(v, i+1)
		}
	}
	if out == nil {
		out = []replacement{}
	}
	*d = out
	return nil
}

// decodeReplacement decodes item, one valid JSON value of the list named
// item (as "replacements[2]").
func decodeReplacement(item string, v []byte) (replacement, error) {
	var r replacement
	notObject := func() error {
		return retryf(KindInvalid, "Argument '%s' must be an object with old_text and new_text.", item)
	}
	if len(v) == 0 || v[0] != '{' {
		return r, notObject()
	}
	var oldText, newText []byte
	i := skipSpace(v, 1)
	for i < len(v) && v[i] != '}' {
		end, ok := scanString(v, i)
		if !ok {
			return r, notObject()
		}
		key, _ := unquoteJSON(v[i:end])
		if i = skipSpace(v, end); i == len(v) || v[i] != ':' {
			return r, notObject()
		}
		i = skipSpace(v, i+1)
		if end, ok = scanValue(v, i, 0); !ok {
			return r, notObject()
		}
		switch key {
		case "old_text":
			oldText = v[i:end]
		case "new_text":
			newText = v[i:end]
		default:
			return r, retryf(KindInvalid, "Unknown argument '%s.%s'. Valid arguments: old_text, new_text.", item, key)
		}
		if i = skipSpace(v, end); i < len(v) && v[i] == ',' {
			i = skipSpace(v, i+1)
		}
	}
	for _, f := range []struct {
		key string
		v   []byte
		dst *string
	}{{"old_text", oldText, &r.OldText}, {"new_text", newText, &r.NewText}} {
		if f.v == nil || isNull(f.v) {
			return r, retryf(KindInvalid, "Missing required argument '%s.%s'.", item, f.key)
		}
		if err := decodeValue(item+"."+f.key, f.v, f.dst); err != nil {
			return r, err
		}
	}
	return r, nil
}
