package security

import "testing"

// TestEndlessStreamsIgnoringContext is TestEndlessStreams with streams
// that ignore their context, as a hung or hostile storage stream does.
func TestEndlessStreamsIgnoringContext(t *testing.T) {
	endlessStreams(t, map[string]streamSpec{
		"lines.txt":   {"y\n", false},
		"oneline.txt": {"yyyyyyyy", false},
		"binary.bin":  {"\x00\x00", false},
	})
}
