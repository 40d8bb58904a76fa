#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Host side: build the module for KVER and the stress programs, boot KVER
# in virtme-ng (TCG unless VMTEST_KVM=1), insmod, run vm-run.sh, rmmod,
# and print the TAP. Output in build/stress/vm-out/KVER/.
# Usage: [STRESS_MEMCG_RACE=1] vm-dev.sh KVER
set -euo pipefail

kver=${1:?usage: vm-dev.sh KVER}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=$top/build/stress/vm-out/$kver
mod=$top/build/stress/module/$kver
bin=$top/build/stress/limits
kvm=--disable-kvm
[ "${VMTEST_KVM:-0}" = 1 ] && kvm=
[ -f "/boot/vmlinuz-$kver" ] || { echo "vm-dev: no /boot/vmlinuz-$kver" >&2; exit 1; }

"$top/scripts/build-module.sh" "$kver" "$mod" >&2
make -s -C "$here" OUT="$bin"
rm -rf "$out"
mkdir -p "$out"

# The guest: a failed insmod is one failing test; rmmod is checked too.
guest="insmod $mod/secarena.ko || { echo '1..1'; echo 'not ok 1 - insmod'; } >$out/results.tap;
[ -c /dev/secarena ] && { STRESS_MEMCG_RACE=${STRESS_MEMCG_RACE:-0} $here/vm-run.sh $bin $out >$out/results.tap 2>$out/vm-run.stderr;
echo \$? >$out/vm-run.rc; };
rmmod secarena && echo ok >$out/rmmod || echo failed >$out/rmmod;
echo done >$out/done"

echo "vm-dev: booting $kver (TCG, several minutes)..." >&2
start=$(date +%s)
# shellcheck disable=SC2086
(cd / && timeout "${VMTEST_TIMEOUT:-900}" vng --verbose --run "/boot/vmlinuz-$kver" $kvm --force-9p \
	--memory 1G --cpus 2 --rwdir="$out" --exec "$guest" >"$out/console.log" 2>&1 </dev/null) || true
echo "vm-dev: $kver: VM ran $(($(date +%s) - start)) s" >&2

[ -f "$out/results.tap" ] && cat "$out/results.tap"
fail=0
if [ ! -f "$out/done" ]; then
	echo "not ok - $kver: guest run did not finish (see $out/console.log)"
	fail=1
fi
if [ "$(cat "$out/rmmod" 2>/dev/null)" != ok ]; then
	echo "not ok - $kver: rmmod secarena after the run"
	fail=1
fi
pass=$(grep -c '^ok ' "$out/results.tap" 2>/dev/null || true)
failed=$(grep -c '^not ok ' "$out/results.tap" 2>/dev/null || true)
echo "vm-dev: $kver: $pass passed, $failed failed (TAP in $out/results.tap)" >&2
[ "$fail" = 0 ] && [ "$failed" = 0 ]
