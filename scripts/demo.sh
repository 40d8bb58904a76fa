#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make demo: build the module and the demo, boot Debian's 6.1 kernel in a VM
# and show a secret read from the heap but not from the arena.
# DEMO_KERNEL=kver picks another installed kernel.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
k=${DEMO_KERNEL:-$(cd /boot && ls vmlinuz-6.1.* | sed 's/^vmlinuz-//' | sort -V | tail -n 1)}
kvm=--disable-kvm
[ "${VMTEST_KVM:-0}" = 1 ] && kvm=

echo "demo: building secarena.ko for $k and the demo program"
"$top/scripts/build-module.sh" "$k" "$build/module/$k" >/dev/null
mkdir -p "$build/demo"
gcc -O2 -Wall -Wextra -I"$top/uapi" -o "$build/demo/secarena-demo" "$top/demo/secarena-demo.c"
echo "demo: booting $k in a VM (TCG emulation, about a minute)"
# shellcheck disable=SC2086
cd / && vng --run "/boot/vmlinuz-$k" $kvm --force-9p --memory 1G --cpus 2 \
	--exec "insmod $build/module/$k/secarena.ko && $build/demo/secarena-demo; rc=\$?; rmmod secarena; exit \$rc" \
	</dev/null
