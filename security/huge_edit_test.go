package security

import "testing"

// hugeEditCases are edit_file calls on the huge files: the binary file is
// refused from its first bytes and the text file from its size, both at
// once, neither loaded.
var hugeEditCases = []hugeCase{
	{"huge.bin", editFile, 64 << 20, true},
	{"huge.txt", editFile, 64 << 20, true},
}

// TestHugeFilesEdit runs hugeEditCases.
func TestHugeFilesEdit(t *testing.T) {
	runHugeCases(t, hugeEditCases)
}
