#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build (once) a 6.1 kernel from Debian's linux-source-6.1 with the
# checkers in debug-kernel/debug.config, outside the tree, and print its
# build directory.  virtme-ng's minimal config (vng --kconfig) is the base:
# it has what booting under vng needs and little else, so the build takes
# tens of minutes on two CPUs rather than hours.
# The cache (DEBUG_KERNEL_CACHE, default /var/cache/secarena) is reused
# while the fragment and the source package are unchanged.
# Usage: debug-kernel.sh   -> prints KDIR (bzImage at KDIR/arch/x86/boot/bzImage)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${DEBUG_KERNEL_CACHE:-/var/cache/secarena}
tarball=/usr/src/linux-source-6.1.tar.xz
frag=$top/debug-kernel/debug.config
kdir=$cache/linux-source-6.1
log=$cache/build.log

die() { echo "debug-kernel: $*" >&2; exit 1; }
[ -f "$tarball" ] || die "no $tarball (apt-get install linux-source-6.1)"
command -v vng >/dev/null || die "no vng (scripts/install-deps.sh installs virtme-ng)"
for t in flex bison bc; do
	command -v $t >/dev/null || die "no $t (apt-get install flex bison bc libelf-dev)"
done
[ -f /usr/include/libelf.h ] || die "no libelf.h (apt-get install libelf-dev)"
mkdir -p "$cache"

# The stamp names what the build was made from; anything else rebuilds.
want="$(sha256sum "$frag" | cut -d' ' -f1) $(stat -c %Y "$tarball")"
if [ -f "$kdir/.secarena-stamp" ] && [ "$(cat "$kdir/.secarena-stamp")" = "$want" ] &&
   [ -f "$kdir/arch/x86/boot/bzImage" ] && [ -f "$kdir/Module.symvers" ]; then
	echo "$kdir"
	exit 0
fi

if [ ! -f "$kdir/Makefile" ]; then
	echo "debug-kernel: extracting $tarball into $cache" >&2
	tar -xJf "$tarball" -C "$cache"
fi
cd "$kdir"
echo "debug-kernel: configuring (vng --kconfig + $frag)" >&2
vng --kconfig --config "$frag" >"$cache/config.log" 2>&1 || { cat "$cache/config.log" >&2; die "vng --kconfig failed"; }
# vng turns debug info on for gdb; it only slows the build here.
./scripts/config --disable DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT --enable DEBUG_INFO_NONE --disable DEBUG_INFO
make olddefconfig >>"$cache/config.log" 2>&1
# Every line of the fragment must have survived Kconfig's dependencies.
bad=0
while IFS='=' read -r key val; do
	case "$key" in CONFIG_*) ;; *) continue ;; esac
	got=$(sed -n "s/^$key=//p" .config)
	[ -z "$got" ] && grep -q "^# $key is not set" .config && got=n
	if [ "$got" != "$val" ]; then
		echo "debug-kernel: $key wanted $val, Kconfig gave ${got:-nothing}" >&2
		bad=1
	fi
done <"$frag"
[ "$bad" = 0 ] || die "the fragment does not apply: fix debug-kernel/debug.config"

echo "debug-kernel: building (make -j$(nproc) bzImage modules; log in $log)" >&2
start=$(date +%s)
if ! make -j"$(nproc)" bzImage modules >"$log" 2>&1; then
	tail -n 30 "$log" >&2
	die "kernel build failed"
fi
echo "debug-kernel: built in $(( $(date +%s) - start )) s" >&2
echo "$want" >.secarena-stamp
echo "$kdir"
