#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Host side, for developing the fuzzer: build the module and the fuzzer,
# boot one kernel in virtme-ng (TCG), insmod, run vm-run.sh, rmmod, and
# print the TAP. Output in build/stress/vm/KVER/.
# Usage: vm-dev.sh KVER   (env: FUZZ_OPS, FUZZ_SEED, FUZZ_PROCS, FUZZ_THREADS;
#                          VMTEST_KVM=1 drops --disable-kvm)
set -euo pipefail

kver=${1:?usage: vm-dev.sh KVER (see /boot/vmlinuz-*)}
top=$(cd "$(dirname "$0")/../.." && pwd)
out="$top/build/stress/vm/$kver"
mod="$top/build/stress/module/$kver"
kvm=--disable-kvm
[ "${VMTEST_KVM:-0}" = 1 ] && kvm=

"$top/scripts/build-module.sh" "$kver" "$mod"
make -s -C "$top/stress/fuzz"
rm -rf "$out"
mkdir -p "$out"

env="FUZZ_LOGDIR=$out"
for v in FUZZ_OPS FUZZ_SEED FUZZ_PROCS FUZZ_THREADS FUZZ_TIMEOUT; do
	[ -n "${!v:-}" ] && env="$env $v=${!v}"
done
cat >"$out/guest.sh" <<GUEST
insmod $mod/secarena.ko || exit 1
env $env $top/stress/fuzz/vm-run.sh >$out/results.tap 2>$out/vm-run.err
if rmmod secarena; then echo "ok - rmmod" >$out/rmmod; else echo "not ok - rmmod" >$out/rmmod; fi
echo done >$out/done
GUEST

echo "vm-dev: booting $kver (TCG), fuzzing..."
start=$(date +%s)
# shellcheck disable=SC2086
(cd / && timeout 1800 vng --verbose --run "/boot/vmlinuz-$kver" $kvm --force-9p --memory 1G --cpus 2 \
	--rwdir="$out" --exec "bash $out/guest.sh" >"$out/console.log" 2>&1 </dev/null) || true
echo "vm-dev: $kver: VM ran $(( $(date +%s) - start )) s"
if [ ! -f "$out/done" ]; then
	echo "not ok - $kver: guest run did not finish (see $out/console.log)"
	exit 1
fi
cat "$out/results.tap" "$out/rmmod"
! grep -q '^not ok' "$out/results.tap" "$out/rmmod"
