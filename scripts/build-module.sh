#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build secarena.ko against one kernel's headers with W=1, in a copy of the
# sources so that several kernels can be built side by side.
# Usage: build-module.sh KVER OUTDIR   -> OUTDIR/secarena.ko; fails on any warning.
# KDIR overrides the headers (/lib/modules/KVER/build), e.g. a debug kernel's tree.
# CHROOT=DIR builds inside the root filesystem DIR (scripts/trixie-root.sh), as
# root: Debian 13's kbuild programs need its glibc. The sources are copied into
# DIR/tmp, make runs there chrooted, and the build tree comes back to OUTDIR;
# KDIR is then a path inside DIR.
set -euo pipefail

kver=${1:?usage: build-module.sh KVER OUTDIR}
out=${2:?usage: build-module.sh KVER OUTDIR}
top=$(cd "$(dirname "$0")/.." && pwd)
kdir=${KDIR:-/lib/modules/$kver/build}
root=
[ -z "${CHROOT:-}" ] || root=$(cd "$CHROOT" && pwd)
# Looked up inside the root: a build link may be absolute.
if ! ${root:+chroot "$root"} test -d "$kdir"; then
	echo "build-module: no headers for $kver at ${root:+$root:}$kdir" >&2
	exit 1
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -rf "$out"
mkdir -p "$out"
src=$out
if [ -n "$root" ]; then
	src=$(mktemp -d "$root/tmp/secarena-module.XXXXXX")
	trap 'rm -rf "$src"' EXIT
fi
cp -r "$top/Kbuild" "$top/module" "$top/uapi" "$src/"
log="$out/build.log"
status=0
if [ -n "$root" ]; then
	# /proc, /sys and /dev in a mount namespace of the build's own: they
	# are unmounted when make ends, however it ends.
	unshare --mount --propagation private sh -c '
		r=$1; shift
		mount -t proc proc "$r/proc" && mount -t sysfs sysfs "$r/sys" &&
			mount --rbind /dev "$r/dev" && exec chroot "$r" "$@"' sh "$root" \
		env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 \
		make -C "$kdir" M="${src#"$root"}" W=1 modules >"$log" 2>&1 || status=$?
	cp -r "$src/." "$out/"
else
	make -C "$kdir" M="$out" W=1 modules >"$log" 2>&1 || status=$?
fi
if [ "$status" != 0 ]; then
	cat "$log" >&2
	exit 1
fi
if grep -E 'warning:|error:' "$log" >&2; then
	echo "build-module: $kver: warnings above" >&2
	exit 1
fi
echo "build-module: $kver: $out/secarena.ko, no warnings"
