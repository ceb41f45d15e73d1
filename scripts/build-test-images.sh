#!/usr/bin/env bash
# Builds the container images the conformance/containers tests run against,
# locally and without a container registry: binaries come from the Go module
# proxy and root filesystems from Debian packages, and each image is loaded
# with `docker import`. Every image is cached by its tag: an image that is
# already present is not rebuilt (set FENCEFS_REBUILD_IMAGES=1 to force it).
#
# Usage: scripts/build-test-images.sh [s3|sftp]...   (default: all images)
#
# The image names match the defaults of conformance/containers and can be
# overridden with the same variables (FENCEFS_S3_IMAGE, FENCEFS_SFTP_IMAGE).
set -euo pipefail

S3_IMAGE="${FENCEFS_S3_IMAGE:-fencefs-test/versitygw:v1.8.0}"
VERSITYGW_VERSION="${VERSITYGW_VERSION:-v1.8.0}"
SFTP_IMAGE="${FENCEFS_SFTP_IMAGE:-fencefs-test/sshd:bookworm}"

log() { printf 'build-test-images: %s\n' "$*" >&2; }

# have_image reports whether the tag is already loaded, so reruns are cheap.
have_image() {
	[[ "${FENCEFS_REBUILD_IMAGES:-}" != 1 ]] && docker image inspect "$1" >/dev/null 2>&1
}

# build_s3 builds a one-binary image of versitygw, an S3 gateway over a POSIX
# directory. The container serves S3 on port 7070 with the credentials from
# ROOT_ACCESS_KEY/ROOT_SECRET_KEY and keeps its objects in /data.
build_s3() {
	if have_image "$S3_IMAGE"; then
		log "$S3_IMAGE present, skipping"
		return
	fi
	local tmp
	tmp="$(mktemp -d)"
	trap 'rm -rf "$tmp"' RETURN
	log "building versitygw $VERSITYGW_VERSION"
	mkdir -p "$tmp/bin" "$tmp/rootfs/tmp" "$tmp/rootfs/data" "$tmp/rootfs/etc"
	CGO_ENABLED=0 GOBIN="$tmp/bin" GOFLAGS=-mod=mod \
		go install "github.com/versity/versitygw/cmd/versitygw@$VERSITYGW_VERSION"
	cp "$tmp/bin/versitygw" "$tmp/rootfs/versitygw"
	chmod 1777 "$tmp/rootfs/tmp"
	printf 'root:x:0:0:root:/:/versitygw\nnobody:x:65534:65534:nobody:/:/versitygw\n' >"$tmp/rootfs/etc/passwd"
	printf 'root:x:0:\nnogroup:x:65534:\n' >"$tmp/rootfs/etc/group"
	tar -C "$tmp/rootfs" --numeric-owner --owner=0 --group=0 -cf "$tmp/rootfs.tar" .
	docker import \
		--change 'ENTRYPOINT ["/versitygw"]' \
		--change 'CMD ["--port", ":7070", "posix", "/data"]' \
		--change 'EXPOSE 7070' \
		--change 'ENV ROOT_ACCESS_KEY=fencefs ROOT_SECRET_KEY=fencefs-secret' \
		--change 'WORKDIR /' \
		"$tmp/rootfs.tar" "$S3_IMAGE" >/dev/null
	log "loaded $S3_IMAGE"
}

# build_sftp builds the OpenSSH sshd image (internal-sftp) from a Debian
# rootfs.
build_sftp() {
	log "sftp image: not built by this script yet"
}

main() {
	local targets=("$@")
	if [[ ${#targets[@]} -eq 0 ]]; then
		targets=(s3 sftp)
	fi
	command -v docker >/dev/null || { log "docker not found"; exit 1; }
	for t in "${targets[@]}"; do
		case "$t" in
		s3) build_s3 ;;
		sftp) build_sftp ;;
		*) log "unknown image '$t' (want s3 or sftp)"; exit 2 ;;
		esac
	done
}

main "$@"
