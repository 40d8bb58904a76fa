#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Boot each kernel of the matrix (scripts/kernels.sh) in virtme-ng, run the
# guest suite there and collect its TAP into build/vm-out/KVER/results.tap.
# Debian 12's kernels boot the host's own root; Debian 13's (trixie's 6.12,
# trixie-backports' 7.x) boot the trixie root filesystem, with the tree
# mounted at its own path, and get their module built inside that root.
# VMTEST_SET=ci|all picks the set (default ci: the oldest and the newest);
# VMTEST_KERNELS="kver ..." narrows it to those kernels.
# VMTEST_KVM=1 drops --disable-kvm.
# VMTEST_SCOPE=quick|full (default quick): how many key types the guest's
# OpenSSL live scans use; quick (make check) runs RSA-2048 (and ML-DSA-65
# and ML-KEM-768 on Debian 13), full (make check-matrix) all of
# them. The key types differ in OpenSSL's code, which the host's scans
# cover in full; on the device every one makes the same calls (map, fault,
# fork, wipe), and the full set took 20 minutes per guest under TCG.
# VMTEST_TCG_THREAD=single|multi (default single): QEMU's multi-threaded TCG
# has twice ended a guest with a stale int3 ("Oops: int3") right after the
# kernel patched its own code (static keys) while the other vCPU ran it,
# each time on a busy host; one thread for both vCPUs does not race.
# VMTEST_DEBUG_KDIR=DIR boots instead the kernel built in DIR (make
# check-debug: scripts/debug-kernel.sh), its release as the label.
# VMTEST_TIMEOUT (seconds, default 1500 for the quick scope, 3600 for the
# full one) bounds each guest run;
# VMTEST_MEMORY (default 1G) is the guest RAM; VMTEST_APPEND adds to the
# guest's kernel command line.
# The guest's kernel log goes to OUT/console.log (--verbose), so an oops or
# a panic that ends the run early is on record. A run that a kernel crash
# ended is run once more when the crash report does not name secarena (a
# 6.12 guest once panicked in a 9p page fault): the output says so, the
# first console log is kept as console-crashed.log, and a second failure
# counts. A crash that names secarena, or a run that ends without any
# crash report, is never retried.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build="$top/build"
dkdir=${VMTEST_DEBUG_KDIR:-}
if [ -n "$dkdir" ]; then
	matrix="$(cat "$dkdir/include/config/kernel.release") /"
else
	matrix=$("$top/scripts/kernels.sh" "${VMTEST_SET:-ci}")
	if [ -n "${VMTEST_KERNELS:-}" ]; then
		matrix=$(echo "$matrix" | grep -wF "$(printf '%s\n' $VMTEST_KERNELS)" || true)
	fi
fi
[ -n "$matrix" ] || { echo "vmtest: no kernel to boot (VMTEST_KERNELS=${VMTEST_KERNELS:-})" >&2; exit 1; }
# vng passes --qemu-opts on last: it must be the last option here too.
accel=(--disable-kvm)
qemu=(--qemu-opts="-accel tcg,thread=${VMTEST_TCG_THREAD:-single}")
case ${VMTEST_SCOPE:=quick} in
quick) guest_timeout=${VMTEST_TIMEOUT:-1500} ;;
full) guest_timeout=${VMTEST_TIMEOUT:-3600} ;;
*) echo "vmtest: VMTEST_SCOPE=$VMTEST_SCOPE: not quick or full" >&2; exit 1 ;;
esac
if [ "${VMTEST_KVM:-0}" = 1 ]; then
	accel=()
	qemu=()
fi

"$top/scripts/build-selftests.sh" "$build/ksft"
st="$build/ksft/tools/testing/selftests/secarena"
make -s -C "$top/userlib" vmtest-bin
make -s -C "$top/tools/secarena-stat"
make -s -C "$top/stress/fuzz"
make -s -C "$top/stress/limits"
make -s -C "$top/bench/device"
# The OpenSSL side (a no-op when make check's host part built it already):
# 3.0 for the Debian 12 guests, 3.5 for the Debian 13 ones (vm-tests.sh).
"$top/userlib/openssl/build.sh" >/dev/null
if echo "$matrix" | awk '$2 != "/" { found = 1 } END { exit !found }'; then
	"$top/userlib/openssl/build.sh" -b 3.5 >/dev/null
fi
make -s -C "$top/userlib/openssl"
make -s -C "$top/tools/leakscan"
ul="$top/userlib/build/secarena-vmtest"

# boot KVER ROOT OUT: one guest run of the suite, its TAP in OUT.
boot() {
	local k=$1 root=$2 out=$3 image share
	rm -rf "$out"
	mkdir -p "$out"
	# The host's root: only these folders are writable in the guest.
	share=(--rwdir="$out" --rwdir="$top/build/openssl/src")
	if [ -n "$dkdir" ]; then
		image=$dkdir/arch/x86/boot/bzImage
		KDIR=$dkdir "$top/scripts/build-module.sh" "$k" "$build/module/$k"
	elif [ "$root" = / ]; then
		image=/boot/vmlinuz-$k
		"$top/scripts/build-module.sh" "$k" "$build/module/$k"
	else
		image=$root/boot/vmlinuz-$k
		CHROOT=$root "$top/scripts/build-module.sh" "$k" "$build/module/$k"
		# The guest sees the root, not the host: the tree comes in at its
		# own path, which needs a mount point in the (read-only) root.
		mkdir -p "$root$top"
		share=(--root "$root" --rwdir="$top=$top")
	fi
	echo "vmtest: booting $k (TCG, about a minute)..."
	# shellcheck disable=SC2086
	(cd / && timeout "$guest_timeout" vng --verbose --run "$image" "${share[@]}" "${accel[@]}" --force-9p --memory "${VMTEST_MEMORY:-1G}" --cpus 2 \
		${VMTEST_APPEND:+--append "$VMTEST_APPEND"} \
		--exec "env VM_SCOPE=${VMTEST_SCOPE:-quick} $top/scripts/vm-guest.sh $k $out $build/module/$k/secarena.ko $st $ul" \
		"${qemu[@]}" >"$out/console.log" 2>&1 </dev/null) || true
}

# run_guest KVER ROOT: one kernel's run, its crash retry and its summary.
run_guest() {
	local k=$1 root=$2 out="$build/vm-out/$1" t0=$SECONDS crash pass fail
	boot "$k" "$root" "$out"
	crash=""
	[ -f "$out/done" ] || crash=$("$top/scripts/crash-report.sh" "$out/console.log")
	case $crash in
	"not ours: "*)
		echo "vmtest: $k: the guest crashed outside secarena (${crash#not ours: }); running it again, once"
		mv "$out/console.log" "$build/vm-out/$k.console-crashed.log"
		boot "$k" "$root" "$out"
		mv "$build/vm-out/$k.console-crashed.log" "$out/console-crashed.log"
		echo "# $k: the results of a second run: the first ended in a crash outside secarena (console-crashed.log)" \
			>>"$out/results.tap"
		;;
	esac
	if [ ! -f "$out/done" ]; then
		echo "not ok 0 $k: guest run did not finish (see $out/console.log)" >>"$out/results.tap"
	fi
	pass=$(grep -c '^ok ' "$out/results.tap" || true)
	fail=$(grep -c '^not ok ' "$out/results.tap" || true)
	grep '^not ok ' "$out/results.tap" || true
	echo "vmtest: $k: $pass passed, $fail failed in $((SECONDS - t0)) s"
	sed "s/^/vmtest: $k: /" "$out/times.txt" 2>/dev/null || true
}

# One guest at a time: two at once on this 2-CPU machine (each its own
# root) made each about three times as slow (the Debian 12 guest's OpenSSL
# phase took 998 s for two key types, where twelve had taken 1212 s alone)
# and both ran into the timeout.
while read -r k root <&3; do
	run_guest "$k" "$root"
done 3<<<"$matrix"
