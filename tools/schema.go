package tools

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// prop is one property of a tool's input schema: its name and its
// hand-written JSON Schema.
type prop struct {
	name   string
	schema string
}

// objectSchema assembles a flat draft 2020-12 object schema from
// hand-written properties, in the given order, with additionalProperties
// false.
func objectSchema(required []string, props ...prop) json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{`)
	for i, p := range props {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(p.name))
		b.WriteByte(':')
		b.WriteString(p.schema)
	}
	b.WriteString(`},"required":[`)
	for i, r := range required {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(r))
	}
	b.WriteString(`],"additionalProperties":false}`)
	var out bytes.Buffer
	if err := json.Indent(&out, b.Bytes(), "", "  "); err != nil {
		panic("tools: invalid hand-written schema: " + err.Error())
	}
	return out.Bytes()
}

// expectedHashProp is the expected_hash property of write_file and
// edit_file, present only when content hashes are on.
const expectedHashProp = `{"type":"string","description":"Optional. The hash a previous read_file, write_file or edit_file reported for this file (the 12 characters after 'hash:'). The change is refused if the file no longer matches, so you never overwrite changes you have not seen. Ignored when the file does not exist."}`

// withHash appends the expected_hash property when hashes are on.
func (s *Set) withHash(props ...prop) []prop {
	if s.opts.NoContentHashes {
		return props
	}
	return append(props, prop{"expected_hash", expectedHashProp})
}

// hashArg returns the decoding spec of expected_hash, or nothing when
// hashes are off (the argument is then unknown).
func (s *Set) hashArg(dst **string) []arg {
	if s.opts.NoContentHashes {
		return nil
	}
	return []arg{{name: "expected_hash", dst: dst}}
}
