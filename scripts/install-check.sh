#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make install into a DESTDIR against one kernel: module, depmod, udev rule,
# uapi header, libsecarena (libraries, headers, pkg-config, man page).
# Usage: install-check.sh KVER
set -euo pipefail

kver=${1:?usage: install-check.sh KVER}
top=$(cd "$(dirname "$0")/.." && pwd)
dest=$(mktemp -d)
src=$(mktemp -d)
trap 'rm -rf "$dest" "$src"' EXIT
# The sources only: no build trees (an OpenSSL build is hundreds of MiB).
tar -C "$top" --exclude=./build --exclude=./userlib/build --exclude=./.git \
	--exclude=./tools/secarena-stat/build --exclude=./tools/leakscan/build -cf - . |
	tar -C "$src" -xf -
make -s -C "$src" install KVER="$kver" DESTDIR="$dest" >/dev/null
ko=$(find "$dest/lib/modules/$kver" -name secarena.ko)
[ -n "$ko" ] || { echo "no secarena.ko under $dest/lib/modules/$kver" >&2; exit 1; }
modinfo -F license "$ko" | grep -qx GPL
grep -q 'secarena.ko:' "$dest/lib/modules/$kver/modules.dep"
test -f "$dest/lib/udev/rules.d/60-secarena.rules"
test -f "$dest/usr/local/include/linux/secarena.h"
lib="$dest/usr/local"
for f in lib/libsecarena.so.0 lib/libsecarena.so lib/libsecarena.a include/secarena.h \
	 include/secure_malloc.h lib/pkgconfig/libsecarena.pc share/man/man3/secarena_malloc.3 \
	 sbin/secarena-stat share/man/man8/secarena-stat.8 share/man/man4/secarena.4; do
	test -e "$lib/$f" || { echo "not installed: $lib/$f" >&2; exit 1; }
done
readelf -d "$lib/lib/libsecarena.so.0" | grep -q 'SONAME.*libsecarena.so.0'
make -s -C "$src" uninstall KVER="$kver" DESTDIR="$dest" >/dev/null
[ -z "$(find "$dest/lib/modules/$kver" -name secarena.ko)" ]
left=$(find "$dest" -type f ! -path "*/modules.*" ! -name "modules.*")
[ -z "$left" ] || { echo "left after uninstall: $left" >&2; exit 1; }
