#!/usr/bin/env bash
# Runs afero's own shared tests (afero_test.go, match_test.go, path_test.go
# and the Fs-generic tests of memmap_test.go, from the afero version in
# go.mod, read from the module cache) against aferoadapter.ToAfero over a
# memfs, in a throwaway module. fencefs commits a write when its handle is
# closed, so exactly the two tests that expect writes to show before Close
# may fail: TestWriteAt and TestMultipleOpenFiles. Anything else failing,
# or either of those passing, fails this script.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
version=$(go list -m -f '{{.Version}}' github.com/spf13/afero)
src=$(go env GOMODCACHE)/github.com/spf13/afero@$version
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat >"$work/go.mod" <<MOD
module aferosuite

go 1.26.0

require (
	github.com/fencefs/fencefs v0.0.0
	github.com/spf13/afero $version
)

replace github.com/fencefs/fencefs => $root
MOD

python3 - "$src" "$work" <<'PY'
import re, sys
src, work = sys.argv[1], sys.argv[2]

def external(text):
    # An external test package with afero dot-imported, so the tests can
    # import fencefs (which imports afero) without an import cycle.
    text = text.replace('package afero\n', 'package afero_test\n', 1)
    return text.replace('import (\n', 'import (\n\t. "github.com/spf13/afero"\n', 1)

def functions(text, names):
    out = []
    for name in names:
        i = text.index('func ' + name + '(')
        out.append(text[i:text.index('\n}\n', i) + 3])
    return '\n'.join(out)

main = external(open(src + '/afero_test.go').read())
main, n = re.subn(r'Fss(\s*)=\s*\[\]Fs\{&MemMapFs\{\}, &OsFs\{\}\}', r'Fss\1= []Fs{fencefsView()}', main, count=1)
assert n == 1, 'afero_test.go no longer declares Fss as expected'
main = main.replace('import (\n', 'import (\n\t"context"\n\t"github.com/fencefs/fencefs/aferoadapter"\n\t"github.com/fencefs/fencefs/memfs"\n', 1)
main += '''
// fencefsView is the afero view of a fresh memfs holding the system's
// temporary directory, which the tests assume every Fs has.
func fencefsView() Fs {
	v := aferoadapter.ToAfero(context.Background(), memfs.New())
	if err := v.MkdirAll(os.TempDir(), 0o755); err != nil {
		panic(err)
	}
	return v
}
'''
open(work + '/afero_test.go', 'w').write(main)
for name in ('match_test.go', 'path_test.go'):
    open(work + '/' + name, 'w').write(external(open(src + '/' + name).read()))
mem = open(src + '/memmap_test.go').read()
body = functions(mem, ['TestMultipleOpenFiles', 'TestReadOnly', 'TestWriteCloseTime'])
imports = ['io', 'os', 'path/filepath', 'runtime', 'testing', 'time']
open(work + '/memmap_test.go', 'w').write(external(
    'package afero\n\nimport (\n' + ''.join('\t"%s"\n' % i for i in imports) + ')\n\n' + body))
helper = functions(open(src + '/path.go').read(), ['readDirNames'])
open(work + '/helpers_test.go', 'w').write(external(
    'package afero\n\nimport (\n\t"sort"\n)\n\n' + helper))
PY

cd "$work"
export GOWORK=off GOFLAGS=-mod=mod
go mod tidy >/dev/null 2>&1
# TestMultipleOpenFiles panics on its nil handle, so it runs on its own.
out=$( (go test -count=1 -v -skip '^TestMultipleOpenFiles$' . ; go test -count=1 -v -run '^TestMultipleOpenFiles$' .) 2>&1 || true)
failed=$(printf '%s\n' "$out" | sed -n 's/^--- FAIL: \([A-Za-z0-9_]*\).*/\1/p' | sort -u | tr '\n' ' ')
passed=$(printf '%s\n' "$out" | grep -c '^--- PASS: ' || true)
printf 'afero %s shared tests on the fencefs view: %s passed; failed: %s\n' "$version" "$passed" "${failed:-none}"
if [ "$failed" != "TestMultipleOpenFiles TestWriteAt " ]; then
	printf '%s\n' "$out" >&2
	echo "want exactly TestMultipleOpenFiles and TestWriteAt to fail (writes show at Close)" >&2
	exit 1
fi
