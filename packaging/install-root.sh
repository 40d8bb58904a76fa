#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# packaging/install-root.sh RELEASE DEST
#
# A fresh root filesystem of RELEASE (bookworm or trixie) in DEST, as a
# server is before secarena comes: Debian's kernel and its headers, Debian's
# nginx, curl, openssl and DKMS from the Debian archive, systemd and udev,
# and nothing of ours. The install tests (install-test.sh) add our apt
# repository to it and boot it.
# The first call makes the root with debootstrap from the host's Debian
# archive and keeps it as build/roots/install-RELEASE.tar; each call then
# unpacks that archive into DEST, so every test starts from the same
# untouched system. The archive is made anew when it is older than
# SECARENA_ROOT_MAX_AGE seconds (default a week) or this script changed.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
release=${1:?usage: install-root.sh bookworm|trixie DEST}
dest=${2:?usage: install-root.sh bookworm|trixie DEST}
case $release in
bookworm | trixie) ;;
*) echo "install-root: unknown release '$release' (bookworm or trixie)" >&2; exit 2 ;;
esac
[ "$(id -u)" = 0 ] || { echo "install-root: must run as root" >&2; exit 1; }
max_age=${SECARENA_ROOT_MAX_AGE:-604800}
roots=$top/build/roots
mkdir -p "$roots"
tarball=$roots/install-$release.tar
stamp=$tarball.stamp
logf=$roots/install-$release.log
t0=$SECONDS
log() { echo "install-root[$release]: [$((SECONDS - t0))s] $*" >&2; }

# What the server has before it meets secarena: the packages an operator
# of a TLS server on Debian would have, taken from Debian's archive.
packages="systemd-sysv udev kmod procps iproute2 ca-certificates curl openssl
	nginx dkms linux-image-amd64 linux-headers-amd64"
packages=$(echo $packages)

# shellcheck source=scripts/debian-archive.sh
. "$top/scripts/debian-archive.sh"
uri=$(host_uri main)
sec=$(host_uri security)
[ -n "$uri" ] && [ -n "$sec" ] || { echo "install-root: no Debian archive URI in the host's apt sources" >&2; exit 1; }

want="$(sha256sum "$0" | cut -d ' ' -f 1) $uri"
exec 9>"$tarball.lock"
flock 9

make_tarball() {
	local r=$roots/install-$release.new
	rm -rf --one-file-system "$r"
	command -v debootstrap >/dev/null || apt-get install -y -qq --no-install-recommends debootstrap
	log "debootstrap $release from $uri"
	unshare --mount --propagation private debootstrap --variant=minbase "$release" "$r" "$uri" >>"$logf" 2>&1 ||
		{ tail -n 20 "$logf" >&2; exit 1; }
	rm -f "$r/etc/apt/sources.list"
	cat >"$r/etc/apt/sources.list.d/debian.sources" <<SRC
Types: deb
URIs: $uri
Suites: $release $release-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $sec
Suites: $release-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
	echo 'APT::Install-Recommends "false";' >"$r/etc/apt/apt.conf.d/90secarena-test"
	# Package scripts start no service while the root is made (nginx would
	# listen on the host's port 80); the test removes this file.
	printf '#!/bin/sh\nexit 101\n' >"$r/usr/sbin/policy-rc.d"
	chmod 755 "$r/usr/sbin/policy-rc.d"
	# Guests boot without an initramfs (virtme-ng): keep it small.
	mkdir -p "$r/etc/initramfs-tools/conf.d"
	echo MODULES=list >"$r/etc/initramfs-tools/conf.d/secarena-test"
	echo "secarena-$release" >"$r/etc/hostname"
	cp -L /etc/resolv.conf "$r/etc/resolv.conf"
	log "apt-get install from the archive: $(echo $packages)"
	# shellcheck disable=SC2086
	"$top/scripts/in-root.sh" "$r" sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y $packages" \
		>>"$logf" 2>&1 || { tail -n 20 "$logf" >&2; exit 1; }
	rmdir -p --ignore-fail-on-non-empty "$r$top" 2>/dev/null || true
	tar -C "$r" -cf "$tarball.new" .
	mv "$tarball.new" "$tarball"
	rm -rf --one-file-system "$r"
	echo "$want" >"$stamp"
	log "kept as $tarball ($(du -h "$tarball" | cut -f 1))"
}

if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ] || [ ! -f "$tarball" ] ||
   [ $(($(date +%s) - $(stat -c %Y "$tarball"))) -ge "$max_age" ]; then
	: >"$logf"
	make_tarball
fi
if [ -e "$dest" ]; then
	if findmnt -rn -o TARGET | grep -q "^$(realpath -m "$dest")/"; then
		echo "install-root: something is mounted under $dest: not removing it" >&2
		exit 1
	fi
	rm -rf --one-file-system "$dest"
fi
mkdir -p "$dest"
tar -C "$dest" -xf "$tarball"
log "fresh root in $dest"
echo "$dest"
