#!/usr/bin/env bash
# Runs the whole fencefs test suite on a Debian machine, including the
# conformance suites against real S3 (versitygw) and SFTP (OpenSSH) servers
# in containers and Azure Blob Storage (Azurite, a Node program run as a
# plain process). It installs what it needs (Docker Engine from Debian's
# docker.io, ripgrep, debootstrap, Node and npm, Azurite from npm, pinned,
# into a cache directory), starts dockerd when it is not running,
# builds the test images locally, and then runs vet, gofmt and the race-
# enabled tests, then every fuzz target briefly (FUZZTIME, default 5s).
# Extra arguments are passed to `go test`.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '== %s\n' "$*" >&2; }

as_root() {
	if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

install_packages() {
	local missing=()
	command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
	command -v rg >/dev/null 2>&1 || missing+=(ripgrep)
	command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
	command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
	if [ "${#missing[@]}" -gt 0 ]; then
		log "installing ${missing[*]}"
		as_root apt-get update -qq
		as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
	fi
}

start_docker() {
	if docker info >/dev/null 2>&1; then
		return
	fi
	log "starting dockerd"
	as_root sh -c 'nohup dockerd >/tmp/fencefs-dockerd.log 2>&1 &'
	for _ in $(seq 1 60); do
		if docker info >/dev/null 2>&1; then
			return
		fi
		sleep 1
	done
	log "dockerd did not start; its log:"
	tail -n 50 /tmp/fencefs-dockerd.log >&2 || true
	exit 1
}

# install_azurite installs the pinned Azurite (the version
# conformance/containers.AzuriteVersion names: the last whose engines take
# Node 20) into a cache directory once, and names its azurite-blob.
install_azurite() {
	local version=3.35.0
	local dir="${XDG_CACHE_HOME:-$HOME/.cache}/fencefs/azurite-$version"
	if [ ! -x "$dir/node_modules/.bin/azurite-blob" ]; then
		log "installing azurite@$version into $dir"
		mkdir -p "$dir"
		npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "azurite@$version" >/dev/null
	fi
	export FENCEFS_AZURITE_BIN="$dir/node_modules/.bin/azurite-blob"
}

# install_fake_gcs installs the Cloud Storage emulator the gcsadapter tests
# start as a plain process, at the version they are pinned to, into a
# cache directory put on PATH.
install_fake_gcs() {
	local version dir
	version=$(sed -n 's/^const FakeGCSServerVersion = "\(.*\)"$/\1/p' conformance/containers/gcs.go)
	dir="${XDG_CACHE_HOME:-$HOME/.cache}/fencefs/fake-gcs-server-$version"
	if [ ! -x "$dir/fake-gcs-server" ]; then
		log "installing fake-gcs-server $version"
		GOBIN="$dir" GOWORK=off go install "github.com/fsouza/fake-gcs-server@$version"
	fi
	export PATH="$dir:$PATH"
}

install_packages
install_azurite
start_docker
install_fake_gcs
log "building test images"
./scripts/build-test-images.sh

export TESTCONTAINERS_RYUK_DISABLED=true
export TESTCONTAINERS_HOST_OVERRIDE=127.0.0.1
export FENCEFS_REQUIRE_CONTAINERS=1

log "gofmt"
unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
	printf 'gofmt would change:\n%s\n' "$unformatted" >&2
	exit 1
fi
log "a library user's go mod tidy"
./scripts/consumer-tidy.sh
# Every module of the workspace (go.work) is vetted and tested from its own
# directory: the root, conformance/containers (library users do not inherit
# testcontainers) and each heavy integration (a framework binding, a cloud
# adapter) that lives in a module of its own.
mapfile -t modules < <(go list -m -f '{{.Dir}}')
log "go vet"
for m in "${modules[@]}"; do (cd "$m" && go vet ./...); done
# The one-shot build of the command (go install -tags fencefs_oneshot):
# vetted here; cmd/fencefs's TestOneshotBuild builds it and compares it
# with the default build.
log "go vet -tags fencefs_oneshot (cmd/fencefs)"
(cd cmd/fencefs && go vet -tags fencefs_oneshot ./...)
log "go test -race"
for m in "${modules[@]}"; do (cd "$m" && go test -race -count=1 -timeout 30m "$@" ./...); done
# The default run lists a directory of 200,000 entries; the threat model's
# million runs here, without the race detector, whose costs (three times
# slower, no buffer pooling) are not the tools' own.
log "a directory of a million entries"
FENCEFS_MANY_ENTRIES=1000000 go test -count=1 -timeout 10m -run '^TestManyEntries$' ./security/
log "fuzz: every target for ${FUZZTIME:-5s}"
FUZZTIME="${FUZZTIME:-5s}" ./scripts/fuzz.sh
