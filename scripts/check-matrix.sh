#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make check-matrix: what make check runs, on every kernel of the matrix
# and on the old fork order, then one count.
#  1. The whole VM suite on every kernel of scripts/kernels.sh all:
#     Debian 12's 6.1 and bookworm-backports' 6.12 (host root), trixie's
#     6.12 and trixie-backports' newest 7.x (trixie root). make check runs
#     only the oldest and the newest of them.
#  2. The whole VM suite, as make check-debug runs it, on the old-fork
#     variant of the 6.1 debug kernel (scripts/debug-kernel.sh old-fork).
#     That kernel carries debug-kernel/old-fork-order.patch: dup_mmap()
#     calls vm_ops->open() after copy_page_range(), as Debian's 6.1.0-6.1.89
#     and 6.1.95-6.1.190 do, where the source package (6.1.191 and later)
#     and check-debug call ->open first. The module must be right under both
#     orders, and KASAN would catch a child left on its parent's pages.
#  3. OpenSSL on the host, whole: 3.0 (make -C userlib/openssl check),
#     which make check runs without OpenSSL's own make test, and 3.5
#     (check-3.5), which make check runs without its make test and with
#     fewer key types.
#  4. The Debian packages (scripts/check-packages.sh, make check-packages):
#     every package of both releases, Debian's openssl with the series
#     included, lintian, the signed repository, and the install tests of
#     Debian 12 and 13 in VMs (apt-get install, DKMS, udev, nginx and the leak
#     scans, a kernel upgrade, removal). make check builds only secarena's
#     own packages for Debian 12.
# The other host checks are make check's.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
start=$SECONDS
rm -rf "$build/vm-out"
mkdir -p "$build/vm-out"
VMTEST_SET=all VMTEST_SCOPE=full "$top/scripts/vmtest.sh" ||
	echo "not ok 0 matrix: vmtest did not run to the end" >>"$build/vm-out/matrix.tap"
echo "check-matrix: distribution kernels in $((SECONDS - start)) s"

t=$SECONDS
kdir=$("$top/scripts/debug-kernel.sh" old-fork)
if [ -n "$kdir" ]; then
	label=$(cat "$kdir/include/config/kernel.release")
	mkdir -p "$build/vm-out/$label"
	# As in check-debug.sh: debug_pagealloc on the command line tells the
	# wipe scan that freed pages are unmapped.
	VMTEST_DEBUG_KDIR=$kdir VMTEST_APPEND=debug_pagealloc=on VMTEST_MEMORY=${VMTEST_MEMORY:-2G} \
		VMTEST_TIMEOUT=${VMTEST_TIMEOUT:-7200} "$top/scripts/vmtest.sh" ||
		echo "not ok 0 $label: vmtest did not run to the end" >>"$build/vm-out/$label/results.tap"
	grep -hE 'BUG:|WARNING:|Oops|kmemleak:' "$build/vm-out/$label/dmesg.log" 2>/dev/null | head -20
else
	echo "not ok 0 old-fork debug kernel: scripts/debug-kernel.sh old-fork failed" >>"$build/vm-out/matrix.tap"
fi
echo "check-matrix: old-fork debug kernel in $((SECONDS - t)) s"

t=$SECONDS
mkdir -p "$build/vm-out/openssl-3.0"
make -s -C "$top/userlib/openssl" check >"$build/vm-out/openssl-3.0/results.log" 2>&1
grep -E '^(not )?ok ' "$build/vm-out/openssl-3.0/results.log" | sed 's/^\(\(not \)\?ok [0-9]*\) - /\1 openssl 3.0: /' \
	>"$build/vm-out/openssl-3.0/results.tap"
grep -q '^1\.\.[1-9]' "$build/vm-out/openssl-3.0/results.log" ||
	echo "not ok 0 openssl 3.0: run-tests.sh printed no plan" >>"$build/vm-out/openssl-3.0/results.tap"
echo "check-matrix: OpenSSL 3.0 in $((SECONDS - t)) s"

t=$SECONDS
mkdir -p "$build/vm-out/openssl-3.5"
make -s -C "$top/userlib/openssl" check-3.5 >"$build/vm-out/openssl-3.5/results.log" 2>&1
grep -E '^(not )?ok ' "$build/vm-out/openssl-3.5/results.log" | sed 's/^\(\(not \)\?ok [0-9]*\) - /\1 openssl 3.5: /' \
	>"$build/vm-out/openssl-3.5/results.tap"
grep -q '^1\.\.[1-9]' "$build/vm-out/openssl-3.5/results.log" ||
	echo "not ok 0 openssl 3.5: run-tests.sh printed no plan" >>"$build/vm-out/openssl-3.5/results.tap"
echo "check-matrix: OpenSSL 3.5 in $((SECONDS - t)) s"

t=$SECONDS
mkdir -p "$build/vm-out/packages"
"$top/scripts/check-packages.sh" "$build" >"$build/vm-out/packages/results.log" 2>&1
cp "$build/results/packages.tap" "$build/vm-out/packages/results.tap" 2>/dev/null ||
	echo "not ok 0 packages: check-packages.sh wrote no results" >>"$build/vm-out/matrix.tap"
echo "check-matrix: Debian packages in $((SECONDS - t)) s; all in $((SECONDS - start)) s"
for f in "$build"/vm-out/*/device-bench.txt; do
	[ -f "$f" ] && { echo "== device benchmark"; cat "$f"; }
done
echo "== failures"
grep -h '^not ok ' "$build"/vm-out/*/results.tap "$build/vm-out/matrix.tap" 2>/dev/null || echo "(none)"
exec "$top/scripts/summary.sh" "$build"/vm-out/*/results.tap "$build/vm-out/matrix.tap"
