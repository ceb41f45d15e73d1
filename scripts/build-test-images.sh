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
	trap 'rm -rf "$tmp"; trap - RETURN' RETURN
	log "building versitygw $VERSITYGW_VERSION"
	mkdir -p "$tmp/bin" "$tmp/rootfs/tmp" "$tmp/rootfs/data" "$tmp/rootfs/etc"
	CGO_ENABLED=0 GOBIN="$tmp/bin" \
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

# as_root runs a command as root: debootstrap, chroot and reading the
# finished rootfs need it.
as_root() {
	if [[ "$(id -u)" -eq 0 ]]; then "$@"; else sudo "$@"; fi
}

# debian_mirror prints the Debian archive apt already uses here (the first
# bookworm source in /etc/apt), so the build reaches the same mirror;
# FENCEFS_DEBIAN_MIRROR overrides it.
debian_mirror() {
	if [[ -n "${FENCEFS_DEBIAN_MIRROR:-}" ]]; then
		echo "$FENCEFS_DEBIAN_MIRROR"
		return
	fi
	local f uri
	for f in /etc/apt/sources.list.d/*.sources; do
		[[ -r "$f" ]] || continue
		uri="$(awk '
			/^[ \t]*$/ { if (u != "" && s ~ /(^| )bookworm( |$)/) { print u; exit } u = ""; s = "" }
			tolower($1) == "uris:" { u = $2 }
			tolower($1) == "suites:" { $1 = ""; s = $0 " " }
			END { if (u != "" && s ~ /(^| )bookworm( |$)/) print u }
		' "$f" | head -n1)"
		if [[ -n "$uri" ]]; then
			echo "$uri"
			return
		fi
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[[ -r "$f" ]] || continue
		uri="$(awk '$1 == "deb" { i = 2; if ($2 ~ /^\[/) { while ($i !~ /\]$/) i++; i++ } if ($(i+1) == "bookworm") { print $i; exit } }' "$f")"
		if [[ -n "$uri" ]]; then
			echo "$uri"
			return
		fi
	done
	log "no bookworm source found in /etc/apt; set FENCEFS_DEBIAN_MIRROR to a Debian archive URL"
	return 1
}

# sftp_start_script is the container's command: it installs the authorized
# key and password handed in by the test (SFTP_AUTHORIZED_KEY,
# SFTP_PASSWORD) and runs sshd in the foreground, logging to stderr.
sftp_start_script() {
	cat <<'SCRIPT'
#!/bin/sh
set -eu
mkdir -p /run/sshd
chmod 0755 /run/sshd
if [ -n "${SFTP_PASSWORD:-}" ]; then
	echo "fencefs:$SFTP_PASSWORD" | chpasswd
fi
if [ -n "${SFTP_AUTHORIZED_KEY:-}" ]; then
	install -d -m 0700 -o fencefs -g fencefs /home/fencefs/.ssh
	printf '%s\n' "$SFTP_AUTHORIZED_KEY" >/home/fencefs/.ssh/authorized_keys
	chown fencefs:fencefs /home/fencefs/.ssh/authorized_keys
	chmod 0600 /home/fencefs/.ssh/authorized_keys
fi
exec /usr/sbin/sshd -D -e
SCRIPT
}

# sftp_sshd_config restricts the server to SFTP for the test user, served by
# the in-process internal-sftp, without PAM and without root logins.
sftp_sshd_config() {
	cat <<'CONF'
UsePAM no
PermitRootLogin no
PasswordAuthentication yes
KbdInteractiveAuthentication no
PubkeyAuthentication yes
AllowUsers fencefs
AllowTcpForwarding no
X11Forwarding no
PrintMotd no
ForceCommand internal-sftp
CONF
}

# build_sftp builds the OpenSSH sshd image (internal-sftp) from a minimal
# Debian bookworm rootfs made by debootstrap. The container serves SFTP on
# port 22 for the user "fencefs" (password "fencefs" unless SFTP_PASSWORD
# says otherwise; SFTP_AUTHORIZED_KEY adds a public key). Its host keys are
# generated once, at build time.
build_sftp() {
	if have_image "$SFTP_IMAGE"; then
		log "$SFTP_IMAGE present, skipping"
		return
	fi
	command -v debootstrap >/dev/null || { log "debootstrap not found (apt-get install debootstrap)"; exit 1; }
	local tmp mirror
	tmp="$(mktemp -d)"
	trap 'as_root rm -rf "$tmp"; trap - RETURN' RETURN
	mirror="$(debian_mirror)"
	log "debootstrap bookworm from $mirror"
	as_root debootstrap --variant=minbase --include=openssh-server bookworm "$tmp/rootfs" "$mirror" >"$tmp/debootstrap.log" 2>&1 || {
		tail -n 30 "$tmp/debootstrap.log" >&2
		exit 1
	}
	sftp_start_script | as_root tee "$tmp/rootfs/usr/local/sbin/fencefs-sshd-start" >/dev/null
	sftp_sshd_config | as_root tee "$tmp/rootfs/etc/ssh/sshd_config.d/fencefs.conf" >/dev/null
	as_root chmod 0755 "$tmp/rootfs/usr/local/sbin/fencefs-sshd-start"
	# Subsystem may be defined only once, so the packaged line is replaced.
	as_root sed -i 's|^Subsystem[[:space:]].*|Subsystem sftp internal-sftp|' "$tmp/rootfs/etc/ssh/sshd_config"
	as_root rm -f "$tmp/rootfs/etc/ssh/ssh_host_"*
	as_root chroot "$tmp/rootfs" /bin/sh -euc '
		useradd --create-home --shell /bin/sh fencefs
		echo fencefs:fencefs | chpasswd
		ssh-keygen -A
		mkdir -p /run/sshd && /usr/sbin/sshd -t && rmdir /run/sshd
		apt-get clean
		rm -rf /var/lib/apt/lists/* /var/cache/debconf/*-old /var/log/*.log
	'
	as_root tar -C "$tmp/rootfs" --numeric-owner -cf "$tmp/rootfs.tar" .
	docker import \
		--change 'CMD ["/usr/local/sbin/fencefs-sshd-start"]' \
		--change 'EXPOSE 22' \
		--change 'WORKDIR /' \
		"$tmp/rootfs.tar" "$SFTP_IMAGE" >/dev/null
	log "loaded $SFTP_IMAGE"
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
