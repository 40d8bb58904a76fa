#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# packaging/install-test.sh RELEASE REPO OUT
#
# The install test of issue 18, for one release (bookworm or trixie), as an
# operator would do it, on a fresh root (install-root.sh) booted in a VM on
# that root's own Debian kernels (virtme-ng, TCG):
#   1. our signed repository REPO (apt-repo.sh) added as an apt source with
#      its key; boot Debian's kernel of the release; install-guest.sh
#      install: apt-get install, DKMS, udev, openssl.cnf, nginx, leak scans
#   2. a second kernel installed in the root from backports (6.12 on
#      Debian 12, 7.x on Debian 13), as an upgrade would: DKMS builds the
#      module for it from its header hook; boot it; install-guest.sh
#      upgraded
#   3. a last boot: install-guest.sh remove (apt-get remove, Debian's
#      OpenSSL back, purge, nothing left)
# Each boot has INSTALL_TEST_TIMEOUT seconds (default 2400: under TCG the
# DKMS build in the guest takes most of the first boot's 20 minutes).
# TAP in OUT/results.tap, logs beside it; exit 0 when every test passed.
# INSTALL_TEST_UPGRADE=0 leaves out step 2. INSTALL_TEST_RESUME=1 goes on
# from step 2 on the root of a run whose install phase finished (OUT/root,
# kept when a later step failed), with that run's results.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
release=${1:?usage: install-test.sh bookworm|trixie REPO OUT}
repo=${2:?usage: install-test.sh bookworm|trixie REPO OUT}
out=${3:?usage: install-test.sh bookworm|trixie REPO OUT}
case $release in
bookworm) bpo=bookworm-backports kpat='6\.12\.[0-9]+\+deb12-amd64' ;;
trixie) bpo=trixie-backports kpat='7\.[0-9.]+\+deb13-amd64' ;;
*) echo "install-test: unknown release '$release' (bookworm or trixie)" >&2; exit 2 ;;
esac
[ -f "$repo/dists/$release/InRelease" ] || { echo "install-test: $repo has no suite $release (packaging/apt-repo.sh)" >&2; exit 1; }
upgrade=${INSTALL_TEST_UPGRADE:-1}
resume=${INSTALL_TEST_RESUME:-0}
t0=$SECONDS
log() { echo "install-test[$release]: [$((SECONDS - t0))s] $*" >&2; }

# setup_root: what a fresh root gets before its first boot.
setup_root() {
	# The operator's part: the repository's key and source. A real machine
	# has URIs: https://...; here the repository is copied into the root.
	cp -r "$repo" "$root/srv/secarena-apt"
	install -m 0644 "$repo/secarena-archive-keyring.gpg" "$root/usr/share/keyrings/"
	cat >"$root/etc/apt/sources.list.d/secarena.sources" <<-SRC
	Types: deb
	URIs: file:/srv/secarena-apt
	Suites: $release
	Components: main
	Signed-By: /usr/share/keyrings/secarena-archive-keyring.gpg
	SRC
	# The lists are fetched here, with the network: the guest has none, so the
	# packages it installs must all be ours or already on the root.
	in_root apt-get update -qq >>"$out/host.log" 2>&1 || { tail "$out/host.log" >&2; exit 1; }
	rm -f "$root/usr/sbin/policy-rc.d"
	# The guest sees the root alone, not the tree: the guest script and its
	# results live in the root's /root/install-test, copied out after each boot.
	mkdir -p "$root$gdir"
	install -m 0755 "$top/packaging/install-guest.sh" "$root$gdir/"
}

mkdir -p "$out"
out=$(cd "$out" && pwd)
gdir=/root/install-test
in_root() { "$top/scripts/in-root.sh" "$root" "$@"; }
if [ "$resume" = 1 ]; then
	root=$out/root
	[ -f "$root$gdir/install.done" ] ||
		{ echo "install-test: INSTALL_TEST_RESUME=1, but $root has no finished install phase" >&2; exit 1; }
	log "resuming on $root after its install phase"
else
	rm -f "$out"/results.tap "$out"/*.done "$out"/*.log "$out"/leakscan-*.txt
	root=$("$top/packaging/install-root.sh" "$release" "$out/root")
	setup_root
fi

# kernel_image KVER: Debian 12 and 13's 6.x put it in /boot, 7.x in
# /usr/lib/modules/KVER.
kernel_image() {
	local f
	for f in "$root/boot/vmlinuz-$1" "$root/usr/lib/modules/$1/vmlinuz"; do
		[ -f "$f" ] && { echo "$f"; return 0; }
	done
	return 1
}
boot() { # boot KVER PHASE...
	local k=$1 image
	shift
	image=$(kernel_image "$k") || { echo "not ok - install $release: no image of $k" >>"$root$gdir/results.tap"; return 0; }
	log "booting $k for: $*"
	(cd / && timeout "${INSTALL_TEST_TIMEOUT:-2400}" vng --verbose --run "$image" --root "$root" --rw \
		--disable-kvm --force-9p --memory 1G --cpus 2 \
		--exec "$gdir/install-guest.sh $release $gdir $*" \
		--qemu-opts="-accel tcg,thread=single" >"$out/console-$k-$1.log" 2>&1 </dev/null) || true
	cp -r "$root$gdir"/. "$out"/
	rm -f "$out/install-guest.sh"
	local p
	for p in "$@"; do
		[ -f "$out/$p.done" ] || echo "not ok - install $release $k: phase $p did not finish (console-$k-$1.log)" >>"$root$gdir/results.tap"
	done
	cp "$root$gdir/results.tap" "$out/" 2>/dev/null || true
}

# fetch_debian_openssl: Debian's own libssl and openssl into the root's apt
# cache, for the remove phase's downgrade (the guest has no network).
fetch_debian_openssl() {
	local libssl=libssl3 v
	[ "$release" = trixie ] && libssl=libssl3t64
	v=$(in_root apt-cache policy "$libssl" | awk '/^ +([*]{3} )?[0-9]/ {
		v = $1 == "***" ? $2 : $1; if (v !~ /secarena/) { print v; exit } }')
	[ -n "$v" ] || { echo "install-test: no Debian version of $libssl in the root's sources" >&2; return 1; }
	log "Debian's $libssl $v fetched for the downgrade"
	in_root apt-get install -y -qq --download-only --allow-downgrades "$libssl=$v" "openssl=$v" \
		>>"$out/host.log" 2>&1
}

# shellcheck disable=SC2012 # kernel versions: no odd names
k1=$(cd "$root/lib/modules" && ls | sort -V | tail -n 1)
klast=$k1
[ "$resume" = 1 ] || boot "$k1" install
if [ "$upgrade" = 1 ]; then
	echo "deb $(sed -n 's/^URIs: //p' "$root/etc/apt/sources.list.d/debian.sources" | head -n 1) $bpo main" \
		>"$root/etc/apt/sources.list.d/backports.list"
	in_root apt-get update -qq >>"$out/host.log" 2>&1
	k2=$(in_root apt-cache search --names-only '^linux-image-' | awk '{ print $1 }' |
		sed 's/^linux-image-//' | grep -E "^$kpat\$" | sort -V | tail -n 1)
	[ -n "$k2" ] || { echo "install-test: no kernel matching $kpat in $bpo" >&2; exit 1; }
	log "kernel upgrade: $k2 (DKMS builds the module from its header hook)"
	# By name, from whichever suite has it: Debian 12's 6.12 kernels come
	# from bookworm-security as well as from backports.
	# -t: what the kernel needs from backports comes from there too (7.x
	# pre-depends on backports' linux-base).
	in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -t "$bpo" \
		"linux-image-$k2" "linux-headers-$k2" >>"$out/host.log" 2>&1 ||
		{ tail "$out/host.log" >&2; exit 1; }
	boot "$k2" upgraded
	klast=$k2
fi
fetch_debian_openssl || echo "not ok - install $release: Debian's OpenSSL could not be fetched for the downgrade" >>"$root$gdir/results.tap"
boot "$klast" remove
pass=$(grep -c '^ok ' "$out/results.tap" || true)
fail=$(grep -c '^not ok ' "$out/results.tap" || true)
grep '^not ok ' "$out/results.tap" >&2 || true
log "$pass passed, $fail failed"
[ "$fail" = 0 ] && [ "$pass" -gt 0 ]
