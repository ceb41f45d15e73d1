#!/usr/bin/env bash
# Runs afero's whole test suite, from the afero version in go.mod (fetched
# into the module cache with `go mod download`), against aferoadapter.ToAfero
# over memfs and over a local directory. The suite is copied into a
# throwaway module renamed aferosuite (so its tests, still package afero,
# can import fencefs, which imports the real afero), and every MemMapFs and
# OsFs the tests create becomes a fresh fencefs view; only the tests of
# afero's own internals keep afero's file systems (KEPT below). Each test
# runs in a process of its own, since some panic on a nil handle after an
# expected error. Every failure must be listed in EXPECTED with its reason;
# an unlisted failure, or a listed test that passes, fails this script.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
version=$(go list -m -f '{{.Version}}' github.com/spf13/afero)
src=$(go mod download -json "github.com/spf13/afero@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -d "$src" ] || { echo "afero $version is not in the module cache" >&2; exit 1; }
work=$(mktemp -d)
trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT

# Why each test fails on the view, the same on both backends.
declare -A EXPECTED=(
	# fencefs commits a write when its handle is closed, atomically.
	[TestWriteAt]="reads the file while its writer is open; writes show at Close"
	[TestMultipleOpenFiles]="reads the file while its writer is open; writes show at Close"
	[TestReadFile]="reads a file whose Create handle was never closed; writes show at Close"
	[TestIsEmpty]="checks a TempFile that was never closed; writes show at Close"
	[TestExists]="checks a TempFile that was never closed; writes show at Close"
	[TestSafeWriteToDisk]="checks a TempFile that was never closed; writes show at Close"
	# Paths are normalized with backend.CleanVirtual.
	[TestNestedBasePaths]="uses Windows drive prefixes (C:/...), which the view refuses on every OS"
	[TestReadDir]="reads \"..\" from the root, which the view refuses"
	[TestDirExists]="asks whether \"..\" exists, which the view refuses"
	[TestUnionFileReaddirAskForTooMany]="opens \"\", which the view refuses as os.Open does"
	# Modes and times belong to the backend.
	[TestPermSet]="expects the perm given to OpenFile/Mkdir; the backend gives its normal modes"
	[TestMemFsMkdirAllNoClobber]="expects MkdirAll's perm; the backend gives its normal modes"
	[TestMemFsChmod]="expects Mkdir's perm and Chmod; Chmod is unsupported"
	[TestUnionCreateExisting]="CopyOnWriteFs copies to its layer with Chtimes, which is unsupported"
	[TestCacheOnReadFsNotInLayer]="CacheOnReadFs copies to its layer with Chtimes, which is unsupported"
	[TestUnionCacheExpire]="CacheOnReadFs refreshes its layer with Chtimes, which is unsupported"
	# The harness: each view is a backend of its own, not a host path.
	[TestCopyOnWrite]="its base and layer were one disk (two OsFs); here two separate views, so the base does not see the layer's directory"
	[TestLstatIfPossible]="makes its symlink with os.Symlink at the Fs's path, which is not a host path in the view"
	# MemMapFs's own behaviour, which os does not share.
	[TestPathErrors]="MemMapFs's Mkdir creates missing parents; os.Mkdir and the view refuse"
	[TestMemFsUnexpectedEOF]="MemMapFs answers ErrUnexpectedEOF past the end; os.File and the view answer io.EOF"
	[TestMemFsLstatIfPossible]="MemMapFs has no symlinks and says lstat was not called; the view's LstatIfPossible lstats"
)
# The tests of afero's own internals (MemMapFs's data map, OsFs symlink
# creation), which keep afero's file systems.
KEPT="TestMemMapFsConfurrentMkdir TestMemMapFsRename TestSymlinkIfPossible TestReadlinkIfPossible"

cp -r "$src/." "$work/suite"
chmod -R u+w "$work/suite"
python3 - "$work/suite" "$KEPT" <<'PY'
import glob, os, re, sys
work, kept_want = sys.argv[1], sys.argv[2].split()
for path in glob.glob(work + '/**/*.go', recursive=True):
    text = open(path).read()
    open(path, 'w').write(text.replace('"github.com/spf13/afero/', '"aferosuite/'))
mod = open(work + '/go.mod').read()
open(work + '/go.mod', 'w').write(mod.replace('module github.com/spf13/afero', 'module aferosuite', 1))
internal = re.compile(r'getData|\(\*MemMapFs\)|SymlinkIfPossible|testLink\(|createLink\(')
fss = re.compile(r'&MemMapFs\{\}|NewMemMapFs\(\)|new\(MemMapFs\)|&OsFs\{\}|NewOsFs\(\)')
kept, replaced = [], 0
for path in sorted(glob.glob(work + '/*_test.go')):
    parts = open(path).read().split('\nfunc ')
    for i, part in enumerate(parts):
        if i > 0 and internal.search(part):
            kept.append(part.split('(')[0])
            continue
        parts[i], n = fss.subn('fencefsView()', part)
        replaced += n
    # A variable the tests typed *OsFs is now an Fs.
    text = '\nfunc '.join(parts).replace('testLstat(osFs, ', 'testLstat(osFs.(Lstater), ')
    open(path, 'w').write(text)
assert sorted(kept) == sorted(kept_want), 'tests of internals changed: %s' % kept
assert replaced > 70, 'only %d file systems replaced' % replaced
PY

cat >"$work/suite/fencefs_view_test.go" <<'GO'
package afero

import (
	"context"
	"os"
	"time"

	realafero "github.com/spf13/afero"

	"github.com/fencefs/fencefs/aferoadapter"
	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/local"
	"github.com/fencefs/fencefs/memfs"
)

// fencefsView is the afero view of a fresh backend, memfs or a local
// directory as FENCEFS_VIEW says, holding the system's temporary
// directory, which the tests assume every Fs has.
func fencefsView() Fs {
	var b backend.Backend
	switch os.Getenv("FENCEFS_VIEW") {
	case "memfs":
		b = memfs.New()
	case "local":
		dir, err := os.MkdirTemp(os.Getenv("FENCEFS_VIEW_ROOTS"), "root")
		if err != nil {
			panic(err)
		}
		if b, err = local.New(dir); err != nil {
			panic(err)
		}
	default:
		panic("FENCEFS_VIEW is neither memfs nor local")
	}
	v := viewFs{aferoadapter.ToAfero(context.Background(), b)}
	if err := v.MkdirAll(os.TempDir(), 0o755); err != nil {
		panic(err)
	}
	return v
}

// viewFs presents the view, a real afero.Fs, as this copy's Fs: the two
// packages' File interfaces have the same methods.
type viewFs struct{ v realafero.Fs }

func file(f realafero.File, err error) (File, error) {
	if f == nil {
		return nil, err
	}
	return f, err
}

func (w viewFs) Create(name string) (File, error) { return file(w.v.Create(name)) }
func (w viewFs) Open(name string) (File, error)   { return file(w.v.Open(name)) }
func (w viewFs) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	return file(w.v.OpenFile(name, flag, perm))
}
func (w viewFs) Mkdir(name string, perm os.FileMode) error    { return w.v.Mkdir(name, perm) }
func (w viewFs) MkdirAll(name string, perm os.FileMode) error { return w.v.MkdirAll(name, perm) }
func (w viewFs) Remove(name string) error                     { return w.v.Remove(name) }
func (w viewFs) RemoveAll(name string) error                  { return w.v.RemoveAll(name) }
func (w viewFs) Rename(o, n string) error                     { return w.v.Rename(o, n) }
func (w viewFs) Stat(name string) (os.FileInfo, error)        { return w.v.Stat(name) }
func (w viewFs) Name() string                                 { return w.v.Name() }
func (w viewFs) Chmod(name string, mode os.FileMode) error    { return w.v.Chmod(name, mode) }
func (w viewFs) Chown(name string, uid, gid int) error        { return w.v.Chown(name, uid, gid) }
func (w viewFs) Chtimes(name string, a, m time.Time) error    { return w.v.Chtimes(name, a, m) }
func (w viewFs) LstatIfPossible(name string) (os.FileInfo, bool, error) {
	return w.v.(realafero.Lstater).LstatIfPossible(name)
}
func (w viewFs) ReadlinkIfPossible(name string) (string, error) {
	return w.v.(realafero.LinkReader).ReadlinkIfPossible(name)
}
GO
cat >>"$work/suite/go.mod" <<MOD

require github.com/fencefs/fencefs v0.0.0

replace github.com/fencefs/fencefs => $root
MOD

cd "$work/suite"
export GOWORK=off GOFLAGS=-mod=mod
go mod tidy >/dev/null 2>&1
go test -c -o "$work/suite.test" .
tests=$(FENCEFS_VIEW=memfs "$work/suite.test" -test.list '^Test' | grep '^Test')
status=0
for view in memfs local; do
	mkdir "$work/roots-$view"
	passed=0 failed=() unexpected=() stale=()
	for t in $tests; do
		if FENCEFS_VIEW=$view FENCEFS_VIEW_ROOTS="$work/roots-$view" \
			timeout 120 "$work/suite.test" -test.run "^$t\$" -test.count=1 >"$work/out" 2>&1; then
			passed=$((passed + 1))
			[ -z "${EXPECTED[$t]:-}" ] || stale+=("$t")
		else
			failed+=("$t")
			if [ -z "${EXPECTED[$t]:-}" ]; then
				unexpected+=("$t")
				printf '%s on %s:\n' "$t" "$view" >&2
				cat "$work/out" >&2
			fi
		fi
	done
	printf 'afero %s suite on the view over %s: %d tests, %d passed, %d expected failures\n' \
		"$version" "$view" "$(wc -w <<<"$tests")" "$passed" "$((${#failed[@]} - ${#unexpected[@]}))"
	for t in "${failed[@]}"; do
		[ -z "${EXPECTED[$t]:-}" ] || printf '  %s: %s\n' "$t" "${EXPECTED[$t]}"
	done
	if [ "${#unexpected[@]}" -gt 0 ]; then
		printf 'unexpected failures over %s: %s\n' "$view" "${unexpected[*]}" >&2
		status=1
	fi
	if [ "${#stale[@]}" -gt 0 ]; then
		printf 'listed as expected failures but passed over %s (update EXPECTED): %s\n' "$view" "${stale[*]}" >&2
		status=1
	fi
done
exit $status
