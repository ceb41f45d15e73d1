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

failed=()
count=0
while IFS=: read -r file name; do
	pkg="./$(dirname "${file#./}")"
	count=$((count + 1))
	printf '== %s %s (%s)\n' "$pkg" "$name" "$FUZZTIME" >&2
	if ! go test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" "$pkg"; then
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
