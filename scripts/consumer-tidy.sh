#!/usr/bin/env bash
# Checks that a library user's `go mod tidy` works: it makes a module in a
# temporary directory that imports every library package of fencefs (each
# package with Go code outside its tests, but internal/, commands and the
# test-only package security), points github.com/fencefs/fencefs at this
# checkout with a replace, and runs `go mod tidy` and `go build` there
# with the workspace off, as a user would. tidy loads the tests of every
# package the module imports, so a test of a library package that imports
# the containers module (reached only through go.work) fails it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GOWORK=off GOFLAGS=-mod=mod

pkgs=$(go list -f '{{if and (ne .Name "main") .GoFiles}}{{.ImportPath}}{{end}}' ./... |
	grep -v -e '/internal\(/\|$\)' -e '/security$')
[ -n "$pkgs" ] || { echo "no packages listed" >&2; exit 1; }
cat >"$work/go.mod" <<MOD
module example.com/consumer

go 1.26.0

require github.com/fencefs/fencefs v0.0.0

replace github.com/fencefs/fencefs => $root
MOD
{
	printf 'package main\n\nimport (\n'
	for p in $pkgs; do printf '\t_ "%s"\n' "$p"; done
	printf ')\n\nfunc main() {}\n'
} >"$work/main.go"
cd "$work"
if ! out=$(go mod tidy 2>&1); then
	printf '%s\n' "$out" >&2
	echo "go mod tidy fails in a module that uses fencefs" >&2
	exit 1
fi
go build ./...
echo "go mod tidy and go build work in a module importing $(wc -w <<<"$pkgs") fencefs packages"
