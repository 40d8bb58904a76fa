#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make check-debug: the whole VM suite (kselftests, libsecarena, OpenSSL,
# demo, fuzzer, exhaustion, wipe scan) on a 6.1 kernel built with KASAN,
# KFENCE, DEBUG_VM, lockdep, DEBUG_ATOMIC_SLEEP, kmemleak and
# DEBUG_PAGEALLOC (scripts/debug-kernel.sh), then the count.
# Not part of make check: the build takes long and the checkers slow the
# guest several times over.  Any report in the guest's log fails "dmesg
# clean"; kmemleak is scanned with every file closed and after rmmod.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
kdir=$("$top/scripts/debug-kernel.sh") || exit 1
label=$(cat "$kdir/include/config/kernel.release")
rm -rf "$build/vm-out/$label"
# Present even when vmtest stops before the guest: the failure goes here.
mkdir -p "$build/vm-out/$label"
# debug_pagealloc is on by default in this build; saying so on the command
# line lets the wipe scan know that freed pages are unmapped (kcore: zeros).
VMTEST_DEBUG_KDIR=$kdir VMTEST_APPEND=debug_pagealloc=on VMTEST_MEMORY=${VMTEST_MEMORY:-2G} VMTEST_TIMEOUT=${VMTEST_TIMEOUT:-7200} \
	"$top/scripts/vmtest.sh" ||
	echo "not ok 0 $label: vmtest did not run to the end" >>"$build/vm-out/$label/results.tap"
echo "== failures"
grep -h '^not ok ' "$build/vm-out/$label/results.tap" 2>/dev/null || echo "(none)"
grep -hE 'BUG:|WARNING:|Oops|kmemleak:' "$build/vm-out/$label/dmesg.log" 2>/dev/null | head -20
exec "$top/scripts/summary.sh" "$build/vm-out/$label/results.tap"
