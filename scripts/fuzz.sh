#!/usr/bin/env bash
# Runs every fuzz target of the module for a short time, one at a time:
#
#   scripts/fuzz.sh                 # every target, FUZZTIME each (10s)
#   FUZZTIME=1m scripts/fuzz.sh     # longer
#   scripts/fuzz.sh security tools  # only targets below these directories
#
# Targets are found by their declarations (func FuzzXxx in *_test.go
# files), so new ones are picked up without editing this script. The seed
# corpora run in every `go test`; this adds the mutation phase. A target
# that fails leaves its failing input in the package's testdata/fuzz
# directory, to be committed with the fix. The exit status is non-zero
# when any target failed.
set -uo pipefail
cd "$(dirname "$0")/.."

FUZZTIME="${FUZZTIME:-10s}"
dirs=("$@")
[ "${#dirs[@]}" -eq 0 ] && dirs=(.)

# fuzz_once runs one target. Go 1.26's fuzz coordinator sometimes ends a run
# with a bare "context deadline exceeded" when -fuzztime expires while a
# worker is busy (go.dev/issue/75804, fixed in Go 1.27), without any failing
# input; such a run is repeated, up to three times (on a loaded machine a
# few targets of a run meet it, and now and then one meets it twice). A real
# failure always writes its input ("Failing input written to ...") and is
# never retried.
fuzz_once() {
	local pkg=$1 name=$2 out
	out=$(mktemp)
	for attempt in 1 2 3 4; do
		if go test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" "$pkg" 2>&1 | tee "$out"; then
			rm -f "$out"
			return 0
		fi
		if grep -q 'Failing input written' "$out" || ! grep -q 'context deadline exceeded' "$out" || [ "$attempt" -eq 4 ]; then
			rm -f "$out"
			return 1
		fi
		printf '== %s %s: the fuzzer stopped on its own deadline with no failing input; again\n' "$pkg" "$name" >&2
	done
}

failed=()
count=0
while IFS=: read -r file name; do
	pkg="./$(dirname "${file#./}")"
	count=$((count + 1))
	printf '== %s %s (%s)\n' "$pkg" "$name" "$FUZZTIME" >&2
	if ! fuzz_once "$pkg" "$name"; then
		failed+=("$pkg $name")
	fi
done < <(grep -rHo --include='*_test.go' -E '^func Fuzz[A-Za-z0-9_]*' "${dirs[@]}" |
	sed -E 's/:func /:/' | sort -t: -k1,1 -k2,2)

if [ "$count" -eq 0 ]; then
	echo "no fuzz targets found in ${dirs[*]}" >&2
	exit 1
fi
if [ "${#failed[@]}" -gt 0 ]; then
	printf 'fuzz targets that failed:\n' >&2
	printf '  %s\n' "${failed[@]}" >&2
	exit 1
fi
printf '== all %d fuzz targets passed (%s each)\n' "$count" "$FUZZTIME" >&2
