package mcpserver

import (
	"bytes"
	"encoding/json"
	"slices"
	"sync"
)

// The SDK reads a tool's input schema again on every tools/call (over
// HTTP it looks for x-mcp-header properties by marshalling the schema and
// decoding it), and marshalling compacts a json.RawMessage. A fencefs
// tool's schema is indented (tools.Tool.InputSchema), so the server hands
// the SDK the compact form: the same bytes on the wire (tools/list
// compacts it anyway), and about a third fewer bytes to scan on each
// call. The compact forms are shared by the process, as the indented ones
// are, so that a stateful session's server costs no copy of its own.

// compactSchemas holds the compact form of each indented schema.
var compactSchemas = struct {
	mu sync.RWMutex
	m  map[string]json.RawMessage
}{m: make(map[string]json.RawMessage)}

// maxCompactSchemas bounds compactSchemas: tool options are few in a
// process; beyond the bound schemas are compacted but not shared.
const maxCompactSchemas = 1024

// compactSchema returns schema without insignificant white space, or
// schema itself when it is not valid JSON (the SDK then refuses it as
// before).
func compactSchema(schema json.RawMessage) json.RawMessage {
	if len(schema) == 0 {
		return schema
	}
	compactSchemas.mu.RLock()
	c, ok := compactSchemas.m[string(schema)]
	compactSchemas.mu.RUnlock()
	if ok {
		return c
	}
	var b bytes.Buffer
	if err := json.Compact(&b, schema); err != nil {
		return schema
	}
	// Clipped: an append by a holder of the shared schema copies it.
	c = slices.Clip(b.Bytes())
	compactSchemas.mu.Lock()
	defer compactSchemas.mu.Unlock()
	if got, ok := compactSchemas.m[string(schema)]; ok {
		return got
	}
	if len(compactSchemas.m) < maxCompactSchemas {
		compactSchemas.m[string(schema)] = c
	}
	return c
}
