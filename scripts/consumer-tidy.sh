#!/usr/bin/env bash
# Checks that a library user's `go mod tidy` works, for every module of
# the workspace (go.work): for each one it makes a module in a temporary
# directory that imports every library package of that module (each
# package with Go code outside its tests, but internal/, commands and the
# test-only package security), points the fencefs modules those packages
# are built from (not their tests) at this checkout with replaces, as a
# user of a checkout would, and runs `go mod tidy` and `go build` there
# with the workspace off. tidy loads the tests of every package the
# module imports, so a test of a library package that imports a fencefs
# module those packages are not built from (the containers module,
# reached only through go.work) fails it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The modules of the workspace, path and directory, read with it on.
mapfile -t mods < <(go list -m -f '{{.Path}} {{.Dir}}')
[ "${#mods[@]}" -gt 0 ] || { echo "no modules listed" >&2; exit 1; }
declare -A dirs
for m in "${mods[@]}"; do dirs[${m% *}]=${m#* }; done

failed=0 total=0 checked=0
for m in "${mods[@]}"; do
	path=${m% *} dir=${m#* }
	all=$(cd "$dir" && go list -f '{{if and (ne .Name "main") .GoFiles}}{{.ImportPath}}{{end}}' ./...)
	pkgs=$(grep -v -e '/internal\(/\|$\)' -e '/security$' <<<"$all" || true)
	if [ -z "$pkgs" ]; then
		echo "$path: no library packages"
		continue
	fi
	# The fencefs modules the packages are built from (their tests left
	# out): what a user replaces to use a checkout of this one.
	# shellcheck disable=SC2086
	need=$(cd "$dir" && go list -deps -f '{{with .Module}}{{.Path}}{{end}}' $pkgs | sort -u)
	replaces=$(for p in $need; do
		if [ -n "${dirs[$p]:-}" ]; then printf '\t%s => %s\n' "$p" "${dirs[$p]}"; fi
	done)
	c="$work/$(tr '/.' '__' <<<"$path")"
	mkdir -p "$c"
	cat >"$c/go.mod" <<MOD
module example.com/consumer

go 1.26.0

require $path v0.0.0

replace (
$replaces
)
MOD
	{
		printf 'package main\n\nimport (\n'
		for p in $pkgs; do printf '\t_ "%s"\n' "$p"; done
		printf ')\n\nfunc main() {}\n'
	} >"$c/main.go"
	n=$(wc -w <<<"$pkgs")
	total=$((total + n))
	checked=$((checked + 1))
	if ! out=$(cd "$c" && GOWORK=off GOFLAGS=-mod=mod go mod tidy 2>&1); then
		printf '%s\n' "$out" >&2
		echo "$path: go mod tidy fails in a module importing its $n packages" >&2
		failed=$((failed + 1))
		continue
	fi
	if ! (cd "$c" && GOWORK=off GOFLAGS=-mod=mod go build ./...); then
		echo "$path: go build fails in a module importing its $n packages" >&2
		failed=$((failed + 1))
		continue
	fi
	echo "$path: go mod tidy and go build work in a module importing its $n packages, replacing $(grep -c . <<<"$replaces") fencefs module(s)"
done
if [ "$failed" -gt 0 ]; then
	echo "go mod tidy or go build fails for $failed of $checked modules" >&2
	exit 1
fi
echo "go mod tidy and go build work for all $checked library modules ($total packages)"
