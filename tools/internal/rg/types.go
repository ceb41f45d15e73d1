package rg

import (
	_ "embed"
	"strings"
)

// typeList is ripgrep 13's built-in file type table (`rg --type-list`), so
// that the built-in engine accepts the same file_type names and selects
// the same files as rg does.
//
//go:embed types.txt
var typeList string

// TypeGlobs returns the file name globs of the ripgrep file type name.
func TypeGlobs(name string) ([]string, bool) {
	for _, line := range strings.Split(typeList, "\n") {
		n, globs, ok := strings.Cut(line, ": ")
		if ok && n == name {
			return strings.Split(globs, ", "), true
		}
	}
	return nil, false
}
