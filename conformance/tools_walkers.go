package conformance

import (
	"strings"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/tools"
)

// ---------------------------------------------------------------------
// search_files, find_files, list_files, grep

// searchTree is the tree the walker scenarios share. "docs" sorts before
// "docs.txt", so depth-first order shows docs/readme.md first.
var searchTree = map[string]string{
	"bin.dat":          "hello\x00binary\n",
	"docs/readme.md":   "# Hello\nsay hello\n",
	"docs.txt":         "hello docs\n",
	"notes.txt":        "hello world\nbye\n",
	"src/main.go":      "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n",
	"src/util/util.go": "package util\n\nfunc Hello() string { return \"hello\" }\n",
}

// helloMatches are the lines of searchTree matching "hello", in walk
// order, as paths relative to Dir.
func (e *toolEnv) helloMatches() []string {
	return []string{
		e.shown("docs/readme.md") + ":2:say hello",
		e.shown("docs.txt") + ":1:hello docs",
		e.shown("notes.txt") + ":1:hello world",
		e.shown("src/main.go") + ":4:\tprintln(\"hello\")",
		e.shown("src/util/util.go") + ":3:func Hello() string { return \"hello\" }",
	}
}

func (s *toolSuite) searchFilesTests() []testCase {
	return []testCase{
		{"Matches", s.testSearchMatches},
		{"IncludeGlob", s.testSearchInclude},
		{"Cap", s.testSearchCap},
		{"NoMatches", s.testSearchNone},
		{"InvalidRegex", s.testSearchInvalid},
		{"PathArgument", s.testSearchPath},
		{"LongLines", s.testSearchLongLines},
		{"ByteOrderMarks", s.testSearchByteOrderMarks},
	}
}

func (s *toolSuite) testSearchMatches(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	ts := e.tools(tools.Options{})
	e.want(ts, "search_files", args{"pattern": "hello"}, lines(e.helloMatches()...))
	e.want(ts, "search_files", args{"pattern": "(?i)^# hel+o$|bye", "path": "."},
		lines(e.shown("docs/readme.md")+":1:# Hello", e.shown("notes.txt")+":2:bye"))
}

func (s *toolSuite) testSearchInclude(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	ts := e.tools(tools.Options{})
	m := e.helloMatches()
	// fnmatch: "*" spans "/".
	e.want(ts, "search_files", args{"pattern": "hello", "include_glob": "*.go"}, lines(m[3], m[4]))
	e.want(ts, "search_files", args{"pattern": "hello", "include_glob": "*.md"}, m[0])
	e.want(ts, "search_files", args{"pattern": "hello", "include_glob": "*src/util/*"}, m[4])
	e.want(ts, "search_files", args{"pattern": "hello", "include_glob": "*.rs"}, "No matches found.")
}

func (s *toolSuite) testSearchCap(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	m := e.helloMatches()
	e.want(e.tools(tools.Options{MaxSearchResults: 3}), "search_files", args{"pattern": "hello"}, lines(m[0], m[1], m[2], "[... truncated at 3 matches]"))
	// The marker appears only when a further match was found.
	e.want(e.tools(tools.Options{MaxSearchResults: 5}), "search_files", args{"pattern": "hello"}, lines(m...))
}

func (s *toolSuite) testSearchNone(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	ts := e.tools(tools.Options{})
	e.want(ts, "search_files", args{"pattern": "no such text"}, "No matches found.")
	// A binary file is never searched.
	e.want(ts, "search_files", args{"pattern": "binary"}, "No matches found.")
}

func (s *toolSuite) testSearchInvalid(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	ts := e.tools(tools.Options{})
	msg := e.retry(ts, "search_files", args{"pattern": "hello("})
	if msg != "" && !strings.HasPrefix(msg, "Invalid regex pattern: ") {
		t.Errorf("search_files with an invalid regex: %q; want \"Invalid regex pattern: <detail>\"", msg)
	}
}

func (s *toolSuite) testSearchPath(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	ts := e.tools(tools.Options{})
	m := e.helloMatches()
	e.want(ts, "search_files", args{"pattern": "hello", "path": "src"}, lines(m[3], m[4]))
	e.want(ts, "search_files", args{"pattern": "hello", "path": "notes.txt"}, m[2])
	e.wantRetry(ts, "search_files", args{"pattern": "hello", "path": "nope"}, "Path not found: nope")
}

// testSearchLongLines checks the display of matched lines: cut after 500
// characters with a marker, invalid UTF-8 shown as U+FFFD; search_files
// and grep alike.
func (s *toolSuite) testSearchLongLines(t *testing.T) {
	e := s.setup(t)
	exact := "needle " + strings.Repeat("é", 493)
	long := "needle " + strings.Repeat("x", 600)
	e.putAll(map[string]string{"exact.txt": exact + "\n", "long.txt": long + "\n", "utf8.txt": "needle \xff\xfe!\n"})
	want := lines(
		e.shown("exact.txt")+":1:"+exact,
		e.shown("long.txt")+":1:"+long[:500]+" [... omitted end of long line]",
		e.shown("utf8.txt")+":1:needle \ufffd\ufffd!")
	ts := e.tools(e.allTools(tools.Options{}))
	e.want(ts, "search_files", args{"pattern": "needle"}, want)
	e.want(ts, "grep", args{"pattern": "needle"}, want)
}

// testSearchByteOrderMarks checks files that start with a byte order
// mark: grep leaves a UTF-8 one out of line 1, as ripgrep does, whichever
// engine searches, and search_files shows the line as stored; a UTF-16
// file holds NULs and is binary to both.
func (s *toolSuite) testSearchByteOrderMarks(t *testing.T) {
	e := s.setup(t)
	e.putAll(map[string]string{
		"utf8.txt":  "\xef\xbb\xbfneedle one\nneedle two\n",
		"utf16.txt": "\xff\xfen\x00e\x00e\x00d\x00l\x00e\x00\n\x00",
	})
	ts := e.tools(e.allTools(tools.Options{}))
	name := e.shown("utf8.txt")
	e.want(ts, "grep", args{"pattern": "^needle"}, lines(name+":1:needle one", name+":2:needle two"))
	e.want(ts, "grep", args{"pattern": "two", "context": 1}, lines(name+"-1-needle one", name+":2:needle two"))
	e.want(ts, "search_files", args{"pattern": "needle"}, lines(name+":1:\ufeffneedle one", name+":2:needle two"))
}

func (s *toolSuite) findFilesTests() []testCase {
	return []testCase{
		{"Patterns", s.testFindPatterns},
		{"Classes", s.testFindClasses},
		{"BracesAndDirectories", s.testFindBracesAndDirs},
		{"AbsoluteRefused", s.testFindAbsolute},
		{"DotDotRefused", s.testFindDotDot},
		{"Cap", s.testFindCap},
		{"PathArgument", s.testFindPath},
	}
}

func (s *toolSuite) testFindPatterns(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	ts := e.tools(tools.Options{})
	tests := []struct {
		pattern string
		want    []string
	}{
		{"**/*.go", []string{"src/main.go", "src/util/util.go"}},
		{"*.txt", []string{"docs.txt", "notes.txt"}},
		{"**/*.md", []string{"docs/readme.md"}},
		{"*", []string{"bin.dat", "docs/", "docs.txt", "notes.txt", "src/"}},
		{"src/*", []string{"src/main.go", "src/util/"}},
		{"*/*.go", []string{"src/main.go"}},
		{"?ocs.txt", []string{"docs.txt"}},
		{"**/util*", []string{"src/util/", "src/util/util.go"}},
		{"*.rs", nil},
	}
	for _, tt := range tests {
		var want []string
		for _, w := range tt.want {
			if rel, ok := strings.CutSuffix(w, "/"); ok {
				want = append(want, e.shown(rel)+"/")
			} else {
				want = append(want, e.shown(w))
			}
		}
		if len(want) == 0 {
			want = []string{"No matches found."}
		}
		e.want(ts, "find_files", args{"pattern": tt.pattern}, lines(want...))
	}
}

// testFindBracesAndDirs checks the choices of docs/tool-contract.md
// section 10: "{a,b}" alternatives, and a trailing "/" for directories
// only.
func (s *toolSuite) testFindBracesAndDirs(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	ts := e.tools(tools.Options{})
	e.want(ts, "find_files", args{"pattern": "{docs,notes}.txt"}, lines(e.shown("docs.txt"), e.shown("notes.txt")))
	e.want(ts, "find_files", args{"pattern": "*/"}, lines(e.shown("docs")+"/", e.shown("src")+"/"))
	e.want(ts, "find_files", args{"pattern": "**/"}, lines(e.shown("docs")+"/", e.shown("src")+"/", e.shown("src/util")+"/"))
	e.wantRetry(ts, "find_files", args{"pattern": "*", "path": "notes.txt"}, "Not a directory: notes.txt")
}

func (s *toolSuite) testFindClasses(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	ts := e.tools(tools.Options{})
	docs, notes := e.shown("docs.txt"), e.shown("notes.txt")
	e.want(ts, "find_files", args{"pattern": "[!d]*.txt"}, notes)
	e.want(ts, "find_files", args{"pattern": "[^d]*.txt"}, notes)
	e.want(ts, "find_files", args{"pattern": "[dn]*.txt"}, lines(docs, notes))
	e.want(ts, "find_files", args{"pattern": "[a-m]*.txt"}, docs)
}

func (s *toolSuite) testFindAbsolute(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	ts := e.tools(tools.Options{})
	e.wantRetry(ts, "find_files", args{"pattern": "/etc/*"}, "Pattern '/etc/*' must be relative to the search path, not absolute.")
}

func (s *toolSuite) testFindDotDot(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	ts := e.tools(tools.Options{})
	e.wantRetry(ts, "find_files", args{"pattern": "../*"}, "Pattern '../*' is not a valid glob pattern.")
	e.wantRetry(ts, "find_files", args{"pattern": "src/../../*.go"}, "Pattern 'src/../../*.go' is not a valid glob pattern.")
}

func (s *toolSuite) testFindCap(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	e.want(e.tools(tools.Options{MaxFindResults: 2}), "find_files", args{"pattern": "*"},
		lines(e.shown("bin.dat"), e.shown("docs")+"/", "[... truncated at 2 matches]"))
	e.want(e.tools(tools.Options{MaxFindResults: 2}), "find_files", args{"pattern": "**/*.go"},
		lines(e.shown("src/main.go"), e.shown("src/util/util.go")))
}

func (s *toolSuite) testFindPath(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	ts := e.tools(tools.Options{})
	e.want(ts, "find_files", args{"pattern": "*.go", "path": "src"}, e.shown("src/main.go"))
	e.want(ts, "find_files", args{"pattern": "**/*.go", "path": "src/util"}, e.shown("src/util/util.go"))
	e.wantRetry(ts, "find_files", args{"pattern": "*", "path": "nope"}, "Path not found: nope")
}

func (s *toolSuite) listFilesTests() []testCase {
	return []testCase{
		{"All", s.testListFilesAll},
		{"Glob", s.testListFilesGlob},
		{"Cap", s.testListFilesCap},
		{"IgnoreFiles", s.testListFilesIgnore},
		{"RipgrepMissing", s.testRipgrepMissing},
	}
}

// treeFiles is every file of searchTree, in path order.
func (e *toolEnv) treeFiles() []string {
	var out []string
	for _, f := range []string{"bin.dat", "docs/readme.md", "docs.txt", "notes.txt", "src/main.go", "src/util/util.go"} {
		out = append(out, e.shown(f))
	}
	return out
}

func (s *toolSuite) testListFilesAll(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	ts := e.tools(e.allTools(tools.Options{}))
	all := e.treeFiles()
	e.want(ts, "list_files", nil, lines(all...))
	e.want(ts, "list_files", args{"path": "src"}, lines(all[4:]...))
	e.want(ts, "list_files", args{"path": "notes.txt"}, all[3])
}

func (s *toolSuite) testListFilesGlob(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	ts := e.tools(e.allTools(tools.Options{}))
	all := e.treeFiles()
	// ripgrep globs: "*.go" at any depth, "!" excludes.
	e.want(ts, "list_files", args{"glob": "*.go"}, lines(all[4:]...))
	e.want(ts, "list_files", args{"glob": "!*.go"}, lines(all[:4]...))
	e.want(ts, "list_files", args{"glob": "*.rs"}, "No files found.")
}

func (s *toolSuite) testListFilesCap(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	all := e.treeFiles()
	e.want(e.tools(e.allTools(tools.Options{MaxFindResults: 2})), "list_files", nil, lines(all[0], all[1], "[... truncated at 2 files]"))
	e.want(e.tools(e.allTools(tools.Options{MaxFindResults: 6})), "list_files", nil, lines(all...))
}

// arrangeGitIgnore stores searchTree inside a git repository whose
// .gitignore excludes the .txt files.
func (e *toolEnv) arrangeGitIgnore() {
	e.t.Helper()
	e.putAll(searchTree)
	e.put(".git/HEAD", "ref: refs/heads/main\n")
	e.put(".gitignore", "*.txt\n")
}

func (s *toolSuite) testListFilesIgnore(t *testing.T) {
	e := s.setup(t)
	e.arrangeGitIgnore()
	ts := e.tools(e.allTools(tools.Options{}))
	all := e.treeFiles()
	e.want(ts, "list_files", nil, lines(all[0], all[1], all[4], all[5], hiddenNotice(2)))
	// The other walkers do not read ignore files. No hidden entry could
	// match *.txt, so there is no notice.
	e.want(ts, "find_files", args{"pattern": "*.txt"}, lines(e.shown("docs.txt"), e.shown("notes.txt")))
}

// testRipgrepMissing checks list_files and grep without ripgrep: the
// built-in engine answers as usual, on local disk too.
func (s *toolSuite) testRipgrepMissing(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	ts := e.tools(tools.Options{Tools: tools.AllTools(), RipgrepPath: "/nonexistent/fencefs-no-rg"})
	e.want(ts, "list_files", nil, lines(e.treeFiles()...))
	e.want(ts, "grep", args{"pattern": "hello"}, lines(e.helloMatches()...))
}

func (s *toolSuite) grepTests() []testCase {
	return []testCase{
		{"Matches", s.testGrepMatches},
		{"Context", s.testGrepContext},
		{"Options", s.testGrepOptions},
		{"Cap", s.testGrepCap},
		{"IgnoreFiles", s.testGrepIgnore},
	}
}

func (s *toolSuite) testGrepMatches(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	ts := e.tools(e.allTools(tools.Options{}))
	m := e.helloMatches()
	// The same format as search_files.
	e.want(ts, "grep", args{"pattern": "hello"}, lines(m...))
	e.want(ts, "grep", args{"pattern": "hello", "path": "src"}, lines(m[3], m[4]))
	e.want(ts, "grep", args{"pattern": "hello", "path": "notes.txt"}, m[2])
	e.want(ts, "grep", args{"pattern": "no such text"}, "No matches found.")
}

func (s *toolSuite) testGrepContext(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	ts := e.tools(e.allTools(tools.Options{}))
	notes, readme := e.shown("notes.txt"), e.shown("docs/readme.md")
	e.want(ts, "grep", args{"pattern": "bye", "context": 1}, lines(notes+"-1-hello world", notes+":2:bye"))
	e.want(ts, "grep", args{"pattern": "^say|^bye", "context": 1},
		lines(readme+"-1-# Hello", readme+":2:say hello", "--", notes+"-1-hello world", notes+":2:bye"))
}

func (s *toolSuite) testGrepOptions(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	ts := e.tools(e.allTools(tools.Options{}))
	m := e.helloMatches()
	e.want(ts, "grep", args{"pattern": "hello", "glob": "*.go"}, lines(m[3], m[4]))
	e.want(ts, "grep", args{"pattern": "hello", "file_type": "md"}, m[0])
	e.want(ts, "grep", args{"pattern": "println(", "literal": true}, m[3])
	e.want(ts, "grep", args{"pattern": "HELLO", "ignore_case": true},
		lines(e.shown("docs/readme.md")+":1:# Hello", m[0], m[1], m[2], m[3], m[4]))
}

func (s *toolSuite) testGrepCap(t *testing.T) {
	e := s.setup(t)
	e.putAll(searchTree)
	m := e.helloMatches()
	e.want(e.tools(e.allTools(tools.Options{MaxSearchResults: 3})), "grep", args{"pattern": "hello"},
		lines(m[0], m[1], m[2], "[... truncated at 3 lines]"))
	e.want(e.tools(e.allTools(tools.Options{MaxSearchResults: 5})), "grep", args{"pattern": "hello"}, lines(m...))
	// The cap counts match and context lines, not "--" separators.
	notes, readme := e.shown("notes.txt"), e.shown("docs/readme.md")
	e.want(e.tools(e.allTools(tools.Options{MaxSearchResults: 3})), "grep", args{"pattern": "^say|^bye", "context": 1},
		lines(readme+"-1-# Hello", readme+":2:say hello", "--", notes+"-1-hello world", "[... truncated at 3 lines]"))
}

func (s *toolSuite) testGrepIgnore(t *testing.T) {
	e := s.setup(t)
	e.arrangeGitIgnore()
	ts := e.tools(e.allTools(tools.Options{}))
	m := e.helloMatches()
	e.want(ts, "grep", args{"pattern": "hello"}, lines(m[0], m[3], m[4], hiddenNotice(2)))
	// search_files reads no ignore files.
	e.want(ts, "search_files", args{"pattern": "hello"}, lines(append(m, hiddenNotice(2))...))
}

// ---------------------------------------------------------------------
// hidden entries

func (s *toolSuite) hiddenTests() []testCase {
	return []testCase{
		{"Walkers", s.testHiddenWalkers},
		{"NamedExplicitly", s.testHiddenExplicit},
		{"ControlCharacterNames", s.testControlNames},
	}
}

// arrangeHidden stores two dot-named children of Dir and one nested
// below a visible directory, which is skipped without being counted.
func (e *toolEnv) arrangeHidden() {
	e.t.Helper()
	e.putAll(map[string]string{
		".hidden/h.txt":    "hello hidden\n",
		".env":             "hello=1\n",
		"sub/.cache/c.txt": "hello cache\n",
		"sub/s.txt":        "hello s\n",
		"v.txt":            "hello\n",
	})
}

func (s *toolSuite) testHiddenWalkers(t *testing.T) {
	e := s.setup(t)
	e.arrangeHidden()
	ts := e.tools(e.allTools(tools.Options{}))
	notice := hiddenNotice(2)
	sub, v := e.shown("sub/s.txt"), e.shown("v.txt")
	e.want(ts, "list_directory", nil, lines(e.shown("sub")+"/", e.fileLine("v.txt", 6), notice))
	e.want(ts, "search_files", args{"pattern": "hello"}, lines(sub+":1:hello s", v+":1:hello", notice))
	e.want(ts, "list_files", nil, lines(sub, v, notice))
	e.want(ts, "grep", args{"pattern": "hello"}, lines(sub+":1:hello s", v+":1:hello", notice))
	// The notice counts only hidden entries that could have been part of
	// the result: .env is not a .txt file, but .hidden may hold one; no
	// hidden entry can match *.rs at the top.
	e.want(ts, "find_files", args{"pattern": "**/*.txt"}, lines(sub, v, hiddenNotice(1)))
	e.want(ts, "find_files", args{"pattern": "*.rs"}, "No matches found.")
	e.want(ts, "find_files", args{"pattern": ".*"}, lines("No matches found.", notice))
	e.want(ts, "search_files", args{"pattern": "hello", "include_glob": "*.env"}, lines("No matches found.", notice))
	e.want(ts, "list_files", args{"glob": "*.txt"}, lines(sub, v, hiddenNotice(1)))
	e.want(ts, "grep", args{"pattern": "hello", "file_type": "rust"}, lines("No matches found.", hiddenNotice(1)))
	// A denied entry is invisible, not hidden: it is not counted.
	denied := e.tools(e.allTools(tools.Options{Denied: []string{"**/.env"}}))
	e.want(denied, "list_directory", nil, lines(e.shown("sub")+"/", e.fileLine("v.txt", 6), hiddenNotice(1)))
	e.want(denied, "find_files", args{"pattern": "*"}, lines(e.shown("sub")+"/", v, hiddenNotice(1)))
	e.want(denied, "list_files", nil, lines(sub, v, hiddenNotice(1)))
	e.want(denied, "grep", args{"pattern": "hello"}, lines(sub+":1:hello s", v+":1:hello", hiddenNotice(1)))
	// Below the walk root hidden entries are skipped, not counted; naming
	// a directory makes its dot-named children count.
	e.want(ts, "find_files", args{"pattern": "**/*.txt", "path": "sub"}, lines(sub, hiddenNotice(1)))
}

func (s *toolSuite) testHiddenExplicit(t *testing.T) {
	e := s.setup(t)
	e.arrangeHidden()
	ts := e.tools(e.allTools(tools.Options{}))
	h := e.shown(".hidden/h.txt")
	e.want(ts, "list_directory", args{"path": ".hidden"}, e.fileLine(".hidden/h.txt", 13))
	e.want(ts, "search_files", args{"pattern": "hello", "path": ".hidden"}, h+":1:hello hidden")
	e.want(ts, "find_files", args{"pattern": "*", "path": ".hidden"}, h)
	e.want(ts, "list_files", args{"path": ".hidden"}, h)
	e.want(ts, "grep", args{"pattern": "hello", "path": ".hidden"}, h+":1:hello hidden")
	// Direct tools reach hidden files.
	e.want(ts, "read_file", args{"path": ".env"}, readHeader(".env", 1, "hello=1\n")+numbered(1, "hello=1"))
}

// testControlNames checks that a name with a control character can never
// forge an output line: every walker leaves it out and says how many it
// left out.
func (s *toolSuite) testControlNames(t *testing.T) {
	e := s.setup(t)
	e.putAll(map[string]string{"ok.txt": "hello\n", "sub/s.txt": "hello\n"})
	for _, name := range []string{"bad\nname.txt", "sub/tab\tname.txt"} {
		if e.caps.ReadOnly || !implements[backend.Writer](e.b) {
			e.put(name, "hello\n")
			continue
		}
		err := backend.WriteFile(e.ctx, e.b, e.store(name), []byte("hello\n"), backend.WriteOptions{})
		if err != nil {
			t.Skipf("skipped: the backend cannot store the name %q: %v", name, err)
		}
	}
	ts := e.tools(e.allTools(tools.Options{}))
	ok, sub := e.shown("ok.txt"), e.shown("sub/s.txt")
	notice := "[1 entry with control characters in their names omitted]"
	e.want(ts, "list_directory", nil, lines(e.fileLine("ok.txt", 6), e.shown("sub")+"/", notice))
	e.want(ts, "find_files", args{"pattern": "*"}, lines(ok, e.shown("sub")+"/", notice))
	notice2 := "[2 entries with control characters in their names omitted]"
	e.want(ts, "find_files", args{"pattern": "**/*.txt"}, lines(ok, sub, notice2))
	e.want(ts, "search_files", args{"pattern": "hello"}, lines(ok+":1:hello", sub+":1:hello", notice2))
	e.want(ts, "list_files", nil, lines(ok, sub, notice2))
	e.want(ts, "grep", args{"pattern": "hello"}, lines(ok+":1:hello", sub+":1:hello", notice2))
	e.wantRetryMentions(ts, "read_file", args{"path": "bad\nname.txt"}, "control character")
}
