#!/usr/bin/env bash
# Runs fencefs's benchmark suite and prints one table of ratios: each tool
# side by side with the program a user would run instead (ripgrep, GNU
# find, plain file reads), timed alternately in the same loop, with the
# goals of the suite and whether they are met.
#
# Usage: scripts/bench.sh [go test flags...]
#
# The corpora (about 1.5 GB) are generated once into $FENCEFS_BENCH_DIR
# (default /tmp/fencefs-bench) and reused. The S3 rows need Docker: the S3
# test image is built when Docker answers, and those rows are reported as
# skipped otherwise. FENCEFS_BENCH_ROUNDS=k multiplies the rounds of every
# benchmark. The raw `go test -bench` output goes to stderr and to
# $FENCEFS_BENCH_DIR/last-run.txt; the table goes to stdout. The exit
# status is 3 when a measured goal was not met.
set -euo pipefail
cd "$(dirname "$0")/.."

export FENCEFS_BENCH_DIR="${FENCEFS_BENCH_DIR:-/tmp/fencefs-bench}"
log() { printf '== %s\n' "$*" >&2; }

for tool in rg find; do
	command -v "$tool" >/dev/null 2>&1 || log "WARNING: $tool is not installed; the rows compared with it will be skipped"
done

mkdir -p "$FENCEFS_BENCH_DIR"
bin="$FENCEFS_BENCH_DIR/fencefs-bench"
go build -o "$bin" ./bench/cmd/fencefs-bench
log "corpora in $FENCEFS_BENCH_DIR"
"$bin" corpora >&2

if docker info >/dev/null 2>&1; then
	log "S3 test image"
	./scripts/build-test-images.sh s3 || log "WARNING: the S3 image could not be built; the S3 rows will be skipped"
else
	log "WARNING: Docker does not answer; the S3 rows will be skipped"
fi

raw="$FENCEFS_BENCH_DIR/last-run.txt"
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
log "benchmarks (load average $load_before)"
# The benchmarks run one at a time (-p 1), so that the S3 server and the
# local searches do not compete for the CPU.
if ! go test -p 1 ./bench/... -run '^$' -bench . -benchtime 1x -timeout 60m "$@" 2>&1 | tee "$raw" >&2; then
	log "go test failed; the rows it did not finish are marked in the table"
fi
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"

echo
echo "fencefs benchmark suite, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, load average $load_before before / $load_after after"
echo "$(go version | cut -d' ' -f3), $(rg --version 2>/dev/null | sed -n 1p), $(find --version 2>/dev/null | sed -n 1p)"
"$bin" table "$raw"
