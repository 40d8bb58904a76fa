#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build (once) a 6.1 kernel from Debian's linux-source-6.1 with the
# checkers in debug-kernel/debug.config, outside the tree, and print its
# build directory.  virtme-ng's minimal config (vng --kconfig) is the base:
# it has what booting under vng needs and little else, so the build takes
# tens of minutes on two CPUs rather than hours.
# The cache (DEBUG_KERNEL_CACHE, default /var/cache/secarena) is reused
# while the fragment and the source package are unchanged.
#
# The old-fork variant (make check-matrix) is the same kernel with
# debug-kernel/old-fork-order.patch, which puts dup_mmap()'s vm_ops->open()
# back after copy_page_range(), the order of Debian's 6.1.0-6.1.89 and
# 6.1.95-6.1.190 (6.1.191 and later, like 6.9 upstream, call ->open
# first).  It lives in its own tree, CACHE/linux-source-6.1-old-fork, and
# its release ends in -secarena-debug-oldfork (CONFIG_LOCALVERSION), so its
# results land in their own build/vm-out/ folder.  When the plain tree is
# built and current the variant starts from a copy of it, and only fork.o,
# what embeds the release string and the link are rebuilt; otherwise it
# extracts the source afresh.  Its stamp adds the patch's hash.
# Usage: debug-kernel.sh [old-fork]
#        -> prints KDIR (bzImage at KDIR/arch/x86/boot/bzImage)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${DEBUG_KERNEL_CACHE:-/var/cache/secarena}
tarball=/usr/src/linux-source-6.1.tar.xz
frag=$top/debug-kernel/debug.config
variant=${1:-}
kdir=$cache/linux-source-6.1
log=$cache/build.log
conflog=$cache/config.log

die() { echo "debug-kernel: $*" >&2; exit 1; }
case "$variant" in
"") ;;
old-fork)
	patch=$top/debug-kernel/old-fork-order.patch
	localversion=-secarena-debug-oldfork
	[ -f "$patch" ] || die "no $patch"
	command -v patch >/dev/null || die "no patch (apt-get install patch)"
	plain=$kdir
	kdir=$cache/linux-source-6.1-old-fork
	log=$cache/build-old-fork.log
	conflog=$cache/config-old-fork.log
	;;
*) die "unknown variant '$variant' (usage: debug-kernel.sh [old-fork])" ;;
esac
[ -f "$tarball" ] || die "no $tarball (apt-get install linux-source-6.1)"
command -v vng >/dev/null || die "no vng (scripts/install-deps.sh installs virtme-ng)"
for t in flex bison bc; do
	command -v $t >/dev/null || die "no $t (apt-get install flex bison bc libelf-dev)"
done
[ -f /usr/include/libelf.h ] || die "no libelf.h (apt-get install libelf-dev)"
mkdir -p "$cache"

# One build at a time in the cache: the variant copies the plain tree.
exec 9>"$cache/.lock"
if ! flock -n 9; then
	echo "debug-kernel: waiting for another build in $cache" >&2
	flock 9
fi

# built DIR STAMP: DIR holds a finished build made from STAMP.
built() {
	[ -f "$1/.secarena-stamp" ] && [ "$(cat "$1/.secarena-stamp")" = "$2" ] &&
		[ -f "$1/arch/x86/boot/bzImage" ] && [ -f "$1/Module.symvers" ]
}

# The stamp names what the build was made from; anything else rebuilds.
want="$(sha256sum "$frag" | cut -d' ' -f1) $(stat -c %Y "$tarball")"
plainwant=$want
if [ -n "$variant" ]; then
	source_id="$(stat -c %Y "$tarball") $(sha256sum "$patch" | cut -d' ' -f1)"
	want="$want $(sha256sum "$patch" | cut -d' ' -f1) $variant $localversion"
fi
if built "$kdir" "$want"; then
	echo "$kdir"
	exit 0
fi

if [ -z "$variant" ]; then
	if [ ! -f "$kdir/Makefile" ]; then
		echo "debug-kernel: extracting $tarball into $cache" >&2
		tar -xJf "$tarball" -C "$cache"
	fi
elif [ ! -f "$kdir/.secarena-source" ] || [ "$(cat "$kdir/.secarena-source")" != "$source_id" ]; then
	# A tree patched with another patch (or half made) starts again.
	rm -rf "$kdir" "$kdir.tmp"
	if built "$plain" "$plainwant"; then
		echo "debug-kernel: copying the built $plain" >&2
		cp -a "$plain" "$kdir.tmp"
		rm -f "$kdir.tmp/.secarena-stamp"
		# objtool's build records absolute paths: point them at the
		# copy, keeping the times, or objtool rebuilds and then every
		# object that it checked with it.
		{ grep -rlIZ -F "$plain" "$kdir.tmp/tools" || true; } | while IFS= read -r -d '' f; do
			FROM=$plain TO=$kdir perl -pi -e 's/\Q$ENV{FROM}\E/$ENV{TO}/g' "$f"
			touch -r "$plain/${f#"$kdir.tmp/"}" "$f"
		done
	else
		echo "debug-kernel: extracting $tarball into $kdir" >&2
		mkdir -p "$kdir.tmp"
		tar -xJf "$tarball" -C "$kdir.tmp" --strip-components=1
	fi
	echo "debug-kernel: applying $patch" >&2
	patch -d "$kdir.tmp" -p1 --fuzz=0 --no-backup-if-mismatch <"$patch" >&2 ||
		die "$patch does not apply to $tarball"
	echo "$source_id" >"$kdir.tmp/.secarena-source"
	mv "$kdir.tmp" "$kdir"
fi
cd "$kdir"
echo "debug-kernel: configuring (vng --kconfig + $frag)" >&2
vng --kconfig --config "$frag" >"$conflog" 2>&1 || { cat "$conflog" >&2; die "vng --kconfig failed"; }
# vng turns debug info on for gdb; it only slows the build here.
./scripts/config --disable DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT --enable DEBUG_INFO_NONE --disable DEBUG_INFO
make olddefconfig >>"$conflog" 2>&1
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
if [ -n "$variant" ]; then
	# Its own release, hence its own build/vm-out/ folder; nothing but
	# the release strings depends on it, so a copied tree stays incremental.
	./scripts/config --set-str LOCALVERSION "$localversion"
	make olddefconfig >>"$conflog" 2>&1
	grep -qx "CONFIG_LOCALVERSION=\"$localversion\"" .config || die "CONFIG_LOCALVERSION did not stick"
fi

echo "debug-kernel: building (make -j$(nproc) bzImage modules; log in $log)" >&2
start=$(date +%s)
if ! make -j"$(nproc)" bzImage modules >"$log" 2>&1; then
	tail -n 30 "$log" >&2
	die "kernel build failed"
fi
echo "debug-kernel: built in $(( $(date +%s) - start )) s" >&2
echo "$want" >.secarena-stamp
echo "$kdir"
