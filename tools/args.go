package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
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
func decodeArgs(raw json.RawMessage, fields ...arg) error {
	obj, err := decodeObject(raw)
	if err != nil {
		return err
	}
	var names []string
	for _, f := range fields {
		names = append(names, f.name)
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.Contains(names, k) {
			return retryf("Unknown argument '%s'. Valid arguments: %s.", k, strings.Join(names, ", "))
		}
	}
	for _, f := range fields {
		v, ok := obj[f.name]
		if !ok || isNull(v) {
			if f.required {
				return retryf("Missing required argument '%s'.", f.name)
			}
			continue
		}
		if err := decodeValue(f.name, v, f.dst); err != nil {
			return err
		}
	}
	return nil
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
		return nil, retryf("Invalid arguments: %s. Send the arguments as a JSON object.", detail)
	}
	return obj, nil
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

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
		// v was checked with the whole object: decode it in one pass.
		if str, ok := unquoteJSON(v); ok {
			*d = str
			return nil
		}
		if json.Unmarshal(v, d) != nil {
			return retryf("Argument '%s' must be a string.", name)
		}
	case *bool:
		if json.Unmarshal(v, d) != nil {
			return retryf("Argument '%s' must be a boolean.", name)
		}
	case *int:
		n, ok := decodeInt(v)
		if !ok {
			return retryf("Argument '%s' must be an integer.", name)
		}
		*d = n
	case *[]replacement:
		return decodeReplacements(name, v, d)
	default:
		panic(fmt.Sprintf("tools: decodeArgs: unsupported destination %T", dst))
	}
	return nil
}

// decodeInt accepts a JSON number with an integral value that fits an int
// (so 10 and 10.0 both work, "10" and 1.5 do not).
func decodeInt(v json.RawMessage) (int, bool) {
	var num json.Number
	if t := bytes.TrimSpace(v); len(t) == 0 || t[0] == '"' {
		return 0, false // json.Number would accept a quoted number
	}
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	if dec.Decode(&num) != nil {
		return 0, false
	}
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
// as strictly as the top-level arguments.
func decodeReplacements(name string, v json.RawMessage, d *[]replacement) error {
	var items []json.RawMessage
	if json.Unmarshal(v, &items) != nil {
		return retryf("Argument '%s' must be a list of objects with old_text and new_text.", name)
	}
	out := make([]replacement, 0, len(items))
	for i, item := range items {
		prefix := fmt.Sprintf("%s[%d].", name, i)
		var r replacement
		var obj map[string]json.RawMessage
		if json.Unmarshal(item, &obj) != nil || obj == nil {
			return retryf("Argument '%s[%d]' must be an object with old_text and new_text.", name, i)
		}
		for k := range obj {
			if k != "old_text" && k != "new_text" {
				return retryf("Unknown argument '%s%s'. Valid arguments: old_text, new_text.", prefix, k)
			}
		}
		for _, f := range []struct {
			key string
			dst *string
		}{{"old_text", &r.OldText}, {"new_text", &r.NewText}} {
			fv, ok := obj[f.key]
			if !ok || isNull(fv) {
				return retryf("Missing required argument '%s%s'.", prefix, f.key)
			}
			if err := decodeValue(prefix+f.key, fv, f.dst); err != nil {
				return err
			}
		}
		out = append(out, r)
	}
	*d = out
	return nil
}
