package tools

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"sync"
)

// prop is one property of a tool's input schema: its name and its
// hand-written JSON Schema.
type prop struct {
	name   string
	schema string
}

// objectSchema assembles a flat draft 2020-12 object schema from
// hand-written properties, in the given order, with additionalProperties
// false. The result is the process's shared copy (see textCache).
func objectSchema(required []string, props ...prop) json.RawMessage {
	b := schemaBufs.Get().(*bytes.Buffer)
	defer func() { b.Reset(); schemaBufs.Put(b) }()
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
	return shared.schema(b.Bytes(), func(compact []byte) json.RawMessage {
		var out bytes.Buffer
		if err := json.Indent(&out, compact, "", "  "); err != nil {
			panic("tools: invalid hand-written schema: " + err.Error())
		}
		// Clipped: an append by a holder of the shared schema copies it
		// instead of writing into spare capacity others share.
		return slices.Clip(out.Bytes())
	})
}

// schemaBufs holds objectSchema's buffers between calls: the compact
// schema is only a key, once its indented form is known.
var schemaBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

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
