package tools

import (
	"testing"
)

// The same name in two Unicode normalizations, as macOS (NFD) and most
// models (NFC) write it.
const (
	cafeNFC = "Caf\u00e9.png"
	cafeNFD = "Cafe\u0301.png"
)

func TestPathHints(t *testing.T) {
	forEach(t, func(t *testing.T, fx fixture) {
		fx.put(t, "shots/"+cafeNFD, "image\n")
		fx.put(t, "docs/README.md", "read me\n")
		fx.put(t, "private/Secret.txt", "s\n")
		s := newSet(t, fx.b, Options{NoContentHashes: true, Denied: []string{"private/Secret.txt"}})
		wantEqual(t, ok(t, s, "read_file", "path", "shots/"+cafeNFC),
			"[shots/"+cafeNFD+" | 1 line]\n     1\timage\n\n[Path 'shots/"+cafeNFC+"' was not found; 'shots/"+cafeNFD+"', the same name in another Unicode normalization, was used.]")
		wantEqual(t, retry(t, s, "read_file", "path", "docs/readme.md"), "File not found: docs/readme.md. Did you mean 'docs/README.md'?")
		wantEqual(t, retry(t, s, "file_info", "path", "DOCS"), "Path not found: DOCS. Did you mean 'docs'?")
		// An entry the policy denies is never named.
		wantEqual(t, retry(t, s, "read_file", "path", "private/secret.txt"), "File not found: private/secret.txt")
		// A write to the other normalization replaces the existing file.
		ok(t, s, "write_file", "path", "shots/"+cafeNFC, "content", "new\n")
		wantEqual(t, fx.mustGet(t, "shots/"+cafeNFD), "new\n")
		if _, found := fx.get(t, "shots/"+cafeNFC); found {
			t.Error("write_file made a second file under the other normalization")
		}
		off := newSet(t, fx.b, Options{NoUnicodePathMatch: true})
		wantEqual(t, retry(t, off, "read_file", "path", "shots/"+cafeNFC), "File not found: shots/"+cafeNFC+". Did you mean 'shots/"+cafeNFD+"'?")
	})
}

func TestFindFilesDeepHint(t *testing.T) {
	forEach(t, func(t *testing.T, fx fixture) {
		fx.put(t, "src/a.go", "package a\n")
		fx.put(t, "src/b/c.go", "package c\n")
		rec := &recorder{}
		s := newSet(t, fx.b, Options{OnEvent: rec.on})
		wantEqual(t, ok(t, s, "find_files", "pattern", "*.go"),
			"No matches found. '*.go' matches names directly in the search path only; '**/*.go' matches 2 paths below it, such as 'src/a.go'.")
		wantEqual(t, rec.kinds(), "files_searched")
		wantEqual(t, ok(t, s, "find_files", "pattern", "*.rs"), "No matches found.")
	})
}
