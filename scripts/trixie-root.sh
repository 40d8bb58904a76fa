#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A Debian 13 (trixie) root filesystem, for module builds against kernels
# whose kbuild programs need trixie's glibc and as the root of VM guests:
# trixie's 6.12 kernel and headers, the newest 7.x of trixie-backports and
# what scripts/trixie-root.packages lists. Made once with debootstrap from
# the host's own Debian archive, kept in the build tree, brought up to date
# (security updates) when its apt lists are a day old, made anew when the
# package list changes. Prints the root's path; progress and timings go to
# stderr, apt's output to ROOTS/trixie.log.
# SECARENA_ROOTS=DIR keeps the roots in DIR (default: build/roots);
# SECARENA_ROOT_MAX_AGE=SECONDS is the age of the apt lists that triggers
# an update (default 86400).
# Usage: trixie-root.sh   -> ROOTS/trixie
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
list=$top/scripts/trixie-root.packages
roots=${SECARENA_ROOTS:-$top/build/roots}
max_age=${SECARENA_ROOT_MAX_AGE:-86400}
[ "$(id -u)" = 0 ] || { echo "trixie-root: must run as root" >&2; exit 1; }

mkdir -p "$roots"
roots=$(cd "$roots" && pwd)
root=$roots/trixie
stamp=$root/var/lib/secarena-root.stamp
logf=$roots/trixie.log
exec 9>"$roots/trixie.lock"
flock 9

log() { echo "trixie-root: $*" >&2; }
# timed LABEL CMD...: run CMD with its output in the log, report its time.
timed() {
	local label=$1 t=$SECONDS
	shift
	if ! "$@" >>"$logf" 2>&1; then
		log "$label failed after $((SECONDS - t)) s; the end of $logf:"
		tail -n 30 "$logf" >&2
		exit 1
	fi
	log "$label: $((SECONDS - t)) s"
}
# in_root CMD...: CMD chrooted in the root, /proc, /sys and /dev mounted in
# a mount namespace of its own, so that they are unmounted when CMD ends,
# however it ends, and never seen outside.
in_root() {
	unshare --mount --propagation private sh -c '
		r=$1; shift
		mount -t proc proc "$r/proc" && mount -t sysfs sysfs "$r/sys" &&
			mount --rbind /dev "$r/dev" && exec chroot "$r" "$@"' sh "$root" \
		env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 \
		DEBIAN_FRONTEND=noninteractive "$@"
}

# shellcheck source=scripts/debian-archive.sh
. "$top/scripts/debian-archive.sh"
uri=$(host_uri main)
[ -n "$uri" ] || { echo "trixie-root: no Debian archive URI in the host's apt sources" >&2; exit 1; }
sec=$(host_uri security)
[ -n "$sec" ] || { echo "trixie-root: cannot derive a security archive from $uri" >&2; exit 1; }

packages() { sed 's/#.*//' "$list" | xargs; }

# The newest generic amd64 7.x flavour that trixie-backports offers.
newest_7x() {
	in_root apt-cache search --names-only '^linux-image-7\.' | awk '{ print $1 }' |
		grep -E '^linux-image-7\.[0-9.]+\+[a-z]+[0-9]+-amd64$' |
		sed 's/^linux-image-//' | sort -V | tail -n 1 || true
}

# The kernels are trixie's (what linux-image-amd64 depends on) and K7;
# older ones that an upgrade left behind are purged.
prune_kernels() { # prune_kernels K7
	local k6 old
	k6=$(in_root dpkg-query -W -f '${Depends}' linux-image-amd64 |
		sed -n 's/^linux-image-\([^ ,]*\).*/\1/p')
	[ -n "$k6" ] || { echo "no kernel behind linux-image-amd64" >&2; return 1; }
	old=$(in_root dpkg-query -W -f '${Package} ${Status}\n' 'linux-*' |
		awk -v a="$k6" -v b="$1" '$NF == "installed" &&
			$1 ~ /^linux-(image|headers|binary|modules|base)-[0-9].*-amd64$/ {
			k = $1; sub(/^linux-[a-z]+-/, "", k); if (k != a && k != b) print $1 }')
	[ -z "$old" ] && return 0
	# shellcheck disable=SC2086
	in_root apt-get purge -y $old && in_root apt-get autoremove --purge -y
}

install_all() {
	local k7
	# shellcheck disable=SC2046
	timed "packages ($(packages | wc -w) from $list)" \
		in_root apt-get install -y $(packages)
	k7=$(newest_7x)
	[ -n "$k7" ] || { log "no 7.x kernel in trixie-backports"; exit 1; }
	# Not -t trixie-backports: that would move linux-image-amd64 and
	# linux-libc-dev to backports too.
	timed "7.x kernel $k7 from trixie-backports" in_root apt-get install -y \
		"linux-image-$k7/trixie-backports" "linux-headers-$k7/trixie-backports"
	timed "old kernels purged" prune_kernels "$k7"
	in_root apt-get clean
}

lists_date() { date -u -d "@$1" '+%Y-%m-%d %H:%M UTC'; }

write_stamp() {
	local now k
	now=$(date +%s)
	{
		echo "packages=$(sha256sum "$list" | cut -d ' ' -f 1)"
		echo "lists=$now"
		for k in $(cd "$root/usr/lib/modules" && ls | sort -V); do
			echo "kernel=$k"
		done
	} >"$stamp"
	log "apt lists of $(lists_date "$now"); kernels: $(sed -n 's/^kernel=//p' "$stamp" | xargs)"
}

make_root() {
	# A root left by a run that failed, or made for another package list.
	if [ -e "$root" ]; then
		if findmnt -rn -o TARGET | grep -q "^$root/"; then
			echo "trixie-root: something is mounted under $root: not removing it" >&2
			exit 1
		fi
		rm -rf --one-file-system "$root"
	fi
	command -v debootstrap >/dev/null ||
		timed "debootstrap installed on the host" apt-get install -y --no-install-recommends debootstrap
	timed "debootstrap trixie from $uri" \
		unshare --mount --propagation private debootstrap --variant=minbase trixie "$root" "$uri"

	rm -f "$root/etc/apt/sources.list"
	cat >"$root/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $uri
Suites: trixie trixie-updates trixie-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $sec
Suites: trixie-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
	cat >"$root/etc/apt/apt.conf.d/90secarena" <<EOF
APT::Install-Recommends "false";
Acquire::Languages "none";
EOF
	# Package scripts start no service (nginx would listen on port 80).
	printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
	chmod 755 "$root/usr/sbin/policy-rc.d"
	# The kernel packages insist on an initramfs; guests boot without one
	# (virtme-ng), so keep it small.
	mkdir -p "$root/etc/initramfs-tools/conf.d"
	echo MODULES=list >"$root/etc/initramfs-tools/conf.d/secarena"

	cp -L /etc/resolv.conf "$root/etc/resolv.conf"
	timed "apt-get update" in_root apt-get update
	install_all
	write_stamp
}

refresh_root() {
	cp -L /etc/resolv.conf "$root/etc/resolv.conf"
	timed "apt-get update" in_root apt-get update
	timed "apt-get upgrade" in_root apt-get -y upgrade
	install_all
	write_stamp
}

start=$SECONDS
want=$(sha256sum "$list" | cut -d ' ' -f 1)
have=$(sed -n 's/^packages=//p' "$stamp" 2>/dev/null || true)
lists=$(sed -n 's/^lists=//p' "$stamp" 2>/dev/null || true)
if [ "$have" != "$want" ]; then
	log "making $root (trixie, security from $sec)"
	: >"$logf"
	make_root
elif [ $(($(date +%s) - lists)) -ge "$max_age" ]; then
	log "apt lists of $(lists_date "$lists"): updating $root"
	: >"$logf"
	refresh_root
else
	log "reusing $root (apt lists of $(lists_date "$lists"))"
fi
log "done in $((SECONDS - start)) s; $(du -sh "$root" | cut -f 1)"
echo "$root"
