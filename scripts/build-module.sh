#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build secarena.ko against one kernel's headers with W=1, in a copy of the
# sources so that several kernels can be built side by side.
# Usage: build-module.sh KVER OUTDIR   -> OUTDIR/secarena.ko; fails on any warning.
# KDIR overrides the headers (/lib/modules/KVER/build), e.g. a debug kernel's tree.
set -euo pipefail

kver=${1:?usage: build-module.sh KVER OUTDIR}
out=${2:?usage: build-module.sh KVER OUTDIR}
top=$(cd "$(dirname "$0")/.." && pwd)
kdir=${KDIR:-/lib/modules/$kver/build}
[ -d "$kdir" ] || { echo "build-module: no headers for $kver at $kdir" >&2; exit 1; }

mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -rf "$out"
mkdir -p "$out"
cp -r "$top/Kbuild" "$top/module" "$top/uapi" "$out/"
log="$out/build.log"
if ! make -C "$kdir" M="$out" W=1 modules >"$log" 2>&1; then
	cat "$log" >&2
	exit 1
fi
if grep -E 'warning:|error:' "$log" >&2; then
	echo "build-module: $kver: warnings above" >&2
	exit 1
fi
echo "build-module: $kver: $out/secarena.ko, no warnings"
