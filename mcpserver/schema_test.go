package mcpserver

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/fencefs/fencefs/tools"
)

// TestToolSchemaCompact: the SDK gets each tool's input schema compact,
// the JSON of the tool (what tools/list sends) is byte for byte what the
// indented schema gave, and the compact forms are shared by the process.
func TestToolSchemaCompact(t *testing.T) {
	for _, opts := range []tools.Options{{Tools: tools.AllTools()}, {Tools: tools.AllTools(), MaxReadLines: 7, ReadOnly: true}} {
		w := newWorkspace(t, opts, nil)
		for _, tool := range w.set.Tools() {
			if !bytes.Contains(tool.InputSchema, []byte("\n")) {
				t.Fatalf("%s: the tools' schema is no longer indented; this test and compactSchema may go: %s", tool.Name, tool.InputSchema)
			}
			mt := Tool(tool)
			got, ok := mt.InputSchema.(json.RawMessage)
			if !ok {
				t.Fatalf("%s: input schema %T", tool.Name, mt.InputSchema)
			}
			var want bytes.Buffer
			if err := json.Compact(&want, tool.InputSchema); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want.Bytes()) {
				t.Errorf("%s: schema %s, want %s", tool.Name, got, want.Bytes())
			}
			wire, err := json.Marshal(mt)
			if err != nil {
				t.Fatal(err)
			}
			old := *mt
			old.InputSchema = tool.InputSchema
			before, err := json.Marshal(&old)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(wire, before) {
				t.Errorf("%s: the tool's JSON changed:\n%s\nwas\n%s", tool.Name, wire, before)
			}
			again := Tool(tool).InputSchema.(json.RawMessage)
			if &again[0] != &got[0] {
				t.Errorf("%s: a second server's schema is a copy of its own", tool.Name)
			}
		}
	}
	if got := compactSchema(json.RawMessage("{not json")); string(got) != "{not json" {
		t.Errorf("invalid schema changed to %q", got)
	}
}
