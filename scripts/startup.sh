#!/usr/bin/env bash
# Measures what starting the fencefs command costs: the whole process's
# CPU time (user + system) of `fencefs version` and of `fencefs call
# read_file` on a 4 KiB file, for the default build and the one-shot build
# (-tags fencefs_oneshot), beside a Go
# hello world built by the same toolchain (the floor of any Go program),
# then the package
# initialisation of `fencefs version` from GODEBUG=inittrace=1: how many
# packages, their sum, the heaviest and fencefs's own.
#
# Usage: scripts/startup.sh [ROUNDS [RUNS]]
#
# Each round runs every command RUNS times in turn (default 20 rounds of
# 20 runs); a command's figure is the median over rounds of its mean CPU
# per run, read from the shell's accounting of its children (getrusage,
# microseconds), so a loaded machine moves it less than the wall clock.
# FENCEFS_BUILD_FLAGS adds flags to `go build` (such as "-tags X" or
# "-ldflags=-s -w"). Nothing is timed in a test: this is a measurement,
# not a verdict. The goal (#25) is under 3 ms for version and call.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds="${1:-20}"
runs="${2:-20}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# shellcheck disable=SC2086 # FENCEFS_BUILD_FLAGS is split on purpose.
(cd cmd/fencefs && go build ${FENCEFS_BUILD_FLAGS:-} -o "$work/fencefs" .)
# shellcheck disable=SC2086
(cd cmd/fencefs && go build ${FENCEFS_BUILD_FLAGS:-} -tags fencefs_oneshot -o "$work/fencefs-oneshot" .)
mkdir "$work/hello"
cat >"$work/hello/main.go" <<'EOF'
package main

import "fmt"

func main() { fmt.Println("fencefs") }
EOF
(cd "$work/hello" && GOWORK=off GOFLAGS=-mod=mod go mod init hello >/dev/null 2>&1 && GOWORK=off go build -o "$work/hello.bin" .)
mkdir "$work/dir"
for _ in $(seq 256); do echo 0123456789abcde; done >"$work/dir/f.txt"

# cpu_ms CMD...: the children's CPU (user + system) of RUNS runs of CMD,
# in ms per run, from the shell's `times`.
cpu_ms() {
	(
		for _ in $(seq "$runs"); do "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }; done
		times
	) | awk -v n="$runs" 'NR == 2 {
		split($1, u, /[ms]/); split($2, s, /[ms]/)
		printf "%.3f\n", (u[1] * 60 + u[2] + s[1] * 60 + s[2]) * 1000 / n
	}'
}

names=(hello version call oneshot-version oneshot-call)
declare -A cmds=(
	[hello]="$work/hello.bin"
	[version]="$work/fencefs version"
	[call]="$work/fencefs call --root $work/dir read_file {\"path\":\"f.txt\"}"
	[oneshot-version]="$work/fencefs-oneshot version"
	[oneshot-call]="$work/fencefs-oneshot call --root $work/dir read_file {\"path\":\"f.txt\"}"
)
declare -A labels=(
	[hello]="Go hello world (floor)"
	[version]="fencefs version"
	[call]="fencefs call read_file"
	[oneshot-version]="one-shot version"
	[oneshot-call]="one-shot call read_file"
)
declare -A samples
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
for _ in $(seq "$rounds"); do
	for n in "${names[@]}"; do
		# shellcheck disable=SC2086 # the command line is split on purpose.
		samples[$n]+="$(cpu_ms ${cmds[$n]}) "
	done
done
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"

median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
echo "fencefs start-up, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, load average $load_before before / $load_after after"
echo "$(go version | cut -d' ' -f3), binaries $(($(stat -c %s "$work/fencefs") / 1024 / 1024)) MiB (default), $(($(stat -c %s "$work/fencefs-oneshot") / 1024 / 1024)) MiB (-tags fencefs_oneshot)${FENCEFS_BUILD_FLAGS:+, built with $FENCEFS_BUILD_FLAGS}; $rounds rounds of $runs runs"
printf '%-28s %10s %10s %10s\n' "whole-process CPU, ms" median min max
for n in "${names[@]}"; do
	sorted="$(echo "${samples[$n]}" | tr ' ' '\n' | grep . | sort -g)"
	printf '%-28s %10s %10s %10s\n' "${labels[$n]}" "$(echo "$sorted" | median)" "$(echo "$sorted" | head -1)" "$(echo "$sorted" | tail -1)"
done

# Package initialisation of `fencefs version`: medians over the runs,
# since one preempted init would move a mean.
trace="$work/inittrace.txt"
for i in $(seq "$runs"); do
	GODEBUG=inittrace=1 "$work/fencefs" version 2>&1 >/dev/null | awk -v i="$i" '/^init / {print i, $2, $5, $8}'
done >"$trace"
# permedian FILTER: "median-ms bytes package" for each package matching
# FILTER, heaviest first.
permedian() {
	awk -v re="$1" '$2 ~ re {print $2, $3, $4}' "$trace" | sort -k1,1 -k2,2g |
		awk '{ms[$1] = ms[$1] " " $2; b[$1] = $3} END {for (p in ms) {k = split(substr(ms[p], 2), v, " "); printf "  %6.3f %8d  %s\n", v[int((k + 1) / 2)], b[p], p}}' |
		sort -rn
}
echo
awk '{sum[$1] += $3; n[$1]++; if ($2 ~ /^github.com\/fencefs\//) own[$1] += $3}
	END {for (i in sum) print n[i], sum[i], own[i] + 0}' "$trace" | sort -k2,2g |
	awk -v runs="$runs" '{c[NR] = $1; s[NR] = $2; o[NR] = $3} END {m = int((NR + 1) / 2); printf "package init of fencefs version: %d packages, %.2f ms in all (median of %d runs under inittrace; fencefs'"'"'s own %.2f ms)\n", c[m], s[m], runs, o[m]}'
echo "heaviest (median ms, bytes allocated, package):"
permedian . | head -15
echo "fencefs's own:"
permedian '^github.com/fencefs/' | head -8
