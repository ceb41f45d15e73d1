#!/usr/bin/env python3
"""Writes fnmatch.json: expected results of Python's fnmatch for policy.Match.

Run from the policy directory: python3 testdata/gen.py > testdata/fnmatch.json

Each case is [pattern, name, matched]. The expectation is fnmatchcase plus the
"**/" rule (a pattern starting with "**/" is also tried without it). Patterns
holding "^" are left out: policy.Match reads "[^seq]" as a negated class,
where Python's fnmatch reads "^" as a member.
"""
import fnmatch
import json
import random


def expect(pattern, name):
    if fnmatch.fnmatchcase(name, pattern):
        return True
    return pattern.startswith("**/") and fnmatch.fnmatchcase(name, pattern[3:])


FIXED_PATTERNS = [
    "*", "?", "*.py", "src/*.py", "**/.git", "**/.env", "**/.env.*", "*.pem",
    "*.key", "**/secrets*", "[abc]", "[!abc]", "[a-c]x", "[!a-c]x", "[]]",
    "[!]]", "[]-a]", "[a-]", "[-a]", "[--0]", "[a--]", "[z-a]", "[!z-a]",
    "[c-a-z]", "[a-c-e]", "[", "[a", "[!", "[]", "[!]", "a[", "a[]b", "\\",
    "a\\*b", "[\\]", "[\\a]", "**", "**/**/x", "a/**/b", "*a*b*c*", "?*?",
    "[é-ü]", "é*", "*ü", "[!é]", "a b", "a?b", "[*]", "[?]", "[[]", "[!-]",
    "*.[ch]", "a/*", "*/b", "**/", "[0-9][0-9]*",
]
FIXED_NAMES = [
    "", ".", "a", "b", "x", "]", "-", "!", "^", "[", "\\", "ax", "bx", "dx",
    "a.py", "src/a.py", "src/sub/a.py", ".git", "sub/.git", ".gitignore",
    ".env", "apps/.env", ".env.local", "environment.md", "x.pem", "a/b.key",
    "secrets.txt", "conf/secrets/x", "abc", "aXbYc", "a/b", "a/x/b", "x/b",
    "a*b", "a b", "é", "ü", "éx", "xü", "12", "1a", "a.c", "a.h", "z", "0",
    ",", "/", "a/", "*", "?",
]
ALPHABET = "ab./-!]*?[\\é"


def random_text(rng, alphabet, limit):
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, limit)))


def main():
    rng = random.Random(20260101)
    cases = []
    for p in FIXED_PATTERNS:
        for n in FIXED_NAMES:
            cases.append([p, n, expect(p, n)])
    for _ in range(3000):
        p = random_text(rng, ALPHABET, 8)
        n = random_text(rng, ALPHABET, 8)
        cases.append([p, n, expect(p, n)])
        n = realize(rng, p)
        cases.append([p, n, expect(p, n)])
    cases = [c for c in cases if "^" not in c[0]]
    print("[")
    print(",\n".join(json.dumps(c, ensure_ascii=False) for c in cases))
    print("]")


def realize(rng, pattern):
    """Returns a name likely to match pattern, so that matches are common."""
    out = []
    for c in pattern:
        if c == "*":
            out.append(random_text(rng, ALPHABET, 3))
        elif c == "?":
            out.append(rng.choice(ALPHABET))
        elif c == "[" or c == "]":
            out.append(rng.choice(["", c, rng.choice(ALPHABET)]))
        else:
            out.append(c)
    return "".join(out)


if __name__ == "__main__":
    main()
