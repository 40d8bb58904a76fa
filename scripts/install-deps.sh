#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Install everything the build and the VM tests need on Debian 12 (idempotent).
# Kernels: bookworm's 6.1 and bookworm-backports' 6.12, images and headers.
# virtme-ng comes from trixie as a .deb, fetched with a private source list so the
# system's own sources stay bookworm.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)

[ "$(id -u)" = 0 ] || { echo "install-deps: must run as root" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive
# Another apt (unattended-upgrades on a fresh machine, a second build) may
# hold dpkg's lock for a while: wait for it rather than fail.
apt_get() { apt-get -o DPkg::Lock::Timeout=900 "$@"; }
stamp=/var/lib/secarena-deps.stamp
uri=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null ||
      true)
[ -n "$uri" ] || uri=$(awk '/^deb / {print $2; exit}' /etc/apt/sources.list 2>/dev/null)
[ -n "$uri" ] || { echo "install-deps: no Debian archive URI found" >&2; exit 1; }

bpo=/etc/apt/sources.list.d/secarena-backports.list
if [ ! -f "$bpo" ]; then
	echo "deb $uri bookworm-backports main" >"$bpo"
	rm -f "$stamp"
fi

need_update=1
[ -f "$stamp" ] && need_update=0
[ "$need_update" = 1 ] && apt_get update -qq

base_pkgs="build-essential kmod qemu-system-x86 linux-image-amd64 linux-headers-amd64
	linux-source-6.1 python3-argcomplete python3-pkg-resources python3-requests file
	busybox-static g++ xz-utils python3-docutils dkms man-db mandoc jq curl perl
	flex bison bc libelf-dev debootstrap apt-utils gnupg xxd
	$(grep -v '^#' "$top/userlib/DEPS")"
missing=""
for p in $base_pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	# shellcheck disable=SC2086
	apt_get install -y -qq --no-install-recommends $missing
fi

# Debian's nginx and HAProxy for the live leak scans and the benchmark.
# Their packages would start servers (nginx on port 80): policy-rc.d
# keeps the services down while they install.
servers=""
command -v nginx >/dev/null 2>&1 || servers="$servers nginx"
command -v haproxy >/dev/null 2>&1 || servers="$servers haproxy"
if [ -n "$servers" ]; then
	own_policy=0
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
		chmod +x /usr/sbin/policy-rc.d
		own_policy=1
	fi
	# shellcheck disable=SC2086
	apt_get install -y -qq --no-install-recommends $servers
	[ "$own_policy" = 1 ] && rm -f /usr/sbin/policy-rc.d
fi

# Newest 6.12 image and headers from backports (chosen, not hard-coded).
# The generic flavour only: not -rt, -cloud, -dbg or -unsigned.
if ! ls /boot/vmlinuz-6.12.*+deb12-amd64 >/dev/null 2>&1; then
	ver=$(apt-cache search --names-only '^linux-image-6\.12\.' | awk '{print $1}' |
	      grep -E '^linux-image-6\.12\.[0-9]+\+deb12-amd64$' |
	      sed 's/^linux-image-//' | sort -V | tail -n 1)
	[ -n "$ver" ] || { echo "install-deps: no 6.12 kernel in backports" >&2; exit 1; }
	apt_get install -y -qq --no-install-recommends -t bookworm-backports \
		"linux-image-$ver" "linux-headers-$ver"
fi

if ! command -v vng >/dev/null 2>&1; then
	tmp=$(mktemp -d)
	mkdir -p "$tmp/lists/partial" "$tmp/archives/partial"
	echo "deb $uri trixie main" >"$tmp/sources.list"
	opts=(-o Dir::Etc::SourceList="$tmp/sources.list" -o Dir::Etc::SourceParts=/dev/null
	      -o Dir::State::Lists="$tmp/lists" -o Dir::Cache::Archives="$tmp/archives")
	apt-get "${opts[@]}" update -qq
	(cd "$tmp" && apt-get "${opts[@]}" download virtme-ng)
	apt_get install -y -qq --no-install-recommends "$tmp"/virtme-ng_*_all.deb
	rm -rf "$tmp"
fi

touch "$stamp"
echo "install-deps: ok"
