#!/usr/bin/env python3
"""Writes golden.json: the diffs Python's difflib prints for udiff.Unified.

Run from the udiff directory: python3 testdata/gen.py > testdata/golden.json

Lines are split after each "\\n" (a "\\r" stays in its line), the diff is
difflib.unified_diff with three lines of context and "a/", "b/" headers, a
line without a final newline is followed by git's marker, and the whole diff
has no trailing newline. Every case is small, so nothing is truncated.
"""
import difflib
import json
import sys


def split(text):
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def unified(path, old, new):
    out = []
    for line in difflib.unified_diff(split(old), split(new), "a/" + path, "b/" + path, n=3):
        if not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        out.append(line)
    return "".join(out)[:-1]


def numbered(n, fmt="line {}"):
    return "".join(fmt.format(i) + "\n" for i in range(1, n + 1))


def with_lines(n, changes, fmt="line {}"):
    """n numbered lines with some replaced: changes maps 1-based line -> text."""
    lines = [changes.get(i, fmt.format(i)) for i in range(1, n + 1)]
    return "".join(l + "\n" for l in lines if l is not None)


TEN = numbered(10)
TWENTY = numbered(20)

CASES = [
    ("one line changed", "p.txt", "a\n", "b\n"),
    ("one line, no newlines", "p.txt", "a", "b"),
    ("insertion in the middle", "src/app.go", TEN, TEN.replace("line 5\n", "line 5\nnew\n")),
    ("insertion at start", "p.txt", TEN, "new\n" + TEN),
    ("insertion at end", "p.txt", TEN, TEN + "new\n"),
    ("deletion in the middle", "p.txt", TEN, TEN.replace("line 6\n", "")),
    ("deletion at start", "p.txt", TEN, TEN.replace("line 1\n", "")),
    ("deletion at end", "p.txt", TEN, TEN.replace("line 10\n", "")),
    ("change at start", "p.txt", TEN, with_lines(10, {1: "first"})),
    ("change at second line", "p.txt", TEN, with_lines(10, {2: "second"})),
    ("change at end", "p.txt", TEN, with_lines(10, {10: "last"})),
    ("far-apart changes make two hunks", "p.txt", TWENTY, with_lines(20, {2: "two", 18: "eighteen"})),
    ("close changes make one hunk", "p.txt", TWENTY, with_lines(20, {3: "three", 9: "nine"})),
    ("gap of exactly six lines is one hunk", "p.txt", TWENTY, with_lines(20, {5: "five", 12: "twelve"})),
    ("gap of seven lines is two hunks", "p.txt", TWENTY, with_lines(20, {5: "five", 13: "thirteen"})),
    ("three hunks", "p.txt", numbered(40), with_lines(40, {1: "a", 20: "b", 40: "c"})),
    ("replace several lines with fewer", "p.txt", TWENTY,
     with_lines(20, {8: "x", 9: None, 10: None, 11: None})),
    ("empty to content", "new.txt", "", "x\ny\n"),
    ("empty to one line", "new.txt", "", "x\n"),
    ("empty to one line without newline", "new.txt", "", "x"),
    ("content to empty", "old.txt", "x\ny\n", ""),
    ("one line to empty", "old.txt", "x\n", ""),
    ("newline to empty", "p.txt", "\n", ""),
    ("empty to newline", "p.txt", "", "\n"),
    ("old lacks final newline", "p.txt", "a\nb\nc", "a\nb\nc\n"),
    ("new lacks final newline", "p.txt", "a\nb\nc\n", "a\nb\nc"),
    ("both lack final newline, last line changed", "p.txt", "a\nb\nc", "a\nb\nd"),
    ("both lack final newline, context at the end", "p.txt", "a\nb\nc\nd", "A\nb\nc\nd"),
    ("no final newline, change far from the end", "p.txt",
     TEN + "end", with_lines(10, {2: "two"}) + "end"),
    ("line appended after a line without newline", "p.txt", "a\nb", "a\nb\nc"),
    ("CRLF line changed", "win.txt", "one\r\ntwo\r\nthree\r\n", "one\r\n2\r\nthree\r\n"),
    ("CRLF to LF", "win.txt", "one\r\ntwo\r\n", "one\ntwo\n"),
    ("CR alone is not a line break", "mac.txt", "a\rb\rc\n", "a\rB\rc\n"),
    ("unicode lines", "docs/ünï.md", "héllo\nwörld\n日本語\n", "héllo\nwelt 🌍\n日本語\n"),
    ("blank lines", "p.txt", "a\n\n\nb\n", "a\n\nb\n"),
    ("marker-like content line", "p.txt",
     "x\n\\ No newline at end of file\n", "y\n\\ No newline at end of file\n"),
    ("lines starting with diff characters", "p.txt", "-a\n+b\n c\n@@ d\n", "-a\n+B\n c\n@@ d\n"),
    ("whitespace only change", "p.txt", "a\n  b\nc\n", "a\n\tb\nc\n"),
    ("path with spaces", "my dir/a file.txt", "1\n", "2\n"),
    ("long file, change in the middle", "p.txt", numbered(100), with_lines(100, {50: "fifty"})),
]


def main():
    cases = []
    for name, path, old, new in CASES:
        cases.append({"name": name, "path": path, "old": old, "new": new, "diff": unified(path, old, new)})
    json.dump(cases, sys.stdout, ensure_ascii=False, indent=1)
    print()


if __name__ == "__main__":
    main()
