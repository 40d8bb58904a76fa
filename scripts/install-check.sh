#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make install into a DESTDIR against one kernel: module, depmod, udev rule, header.
# Usage: install-check.sh KVER
set -euo pipefail

kver=${1:?usage: install-check.sh KVER}
top=$(cd "$(dirname "$0")/.." && pwd)
dest=$(mktemp -d)
src=$(mktemp -d)
trap 'rm -rf "$dest" "$src"' EXIT
cp -r "$top/." "$src/"
rm -rf "$src/build"
make -s -C "$src" install KVER="$kver" DESTDIR="$dest" >/dev/null
ko=$(find "$dest/lib/modules/$kver" -name secarena.ko)
[ -n "$ko" ] || { echo "no secarena.ko under $dest/lib/modules/$kver" >&2; exit 1; }
modinfo -F license "$ko" | grep -qx GPL
grep -q 'secarena.ko:' "$dest/lib/modules/$kver/modules.dep"
test -f "$dest/lib/udev/rules.d/60-secarena.rules"
test -f "$dest/usr/local/include/linux/secarena.h"
make -s -C "$src" uninstall KVER="$kver" DESTDIR="$dest" >/dev/null
[ -z "$(find "$dest/lib/modules/$kver" -name secarena.ko)" ]
