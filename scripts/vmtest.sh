#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Boot each installed Debian kernel (6.1, 6.12) in virtme-ng, run the guest
# suite there and collect its TAP into build/vm-out/KVER/results.tap.
# VMTEST_KERNELS="kver ..." picks kernels; VMTEST_KVM=1 drops --disable-kvm.
# VMTEST_DEBUG_KDIR=DIR boots instead the kernel built in DIR (make
# check-debug: scripts/debug-kernel.sh), its release as the label.
# VMTEST_TIMEOUT (seconds, default 1500) bounds each guest run;
# VMTEST_MEMORY (default 1G) is the guest RAM; VMTEST_APPEND adds to the
# guest's kernel command line.
# The guest's kernel log goes to OUT/console.log (--verbose), so an oops or
# a panic that ends the run early is on record.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build="$top/build"
kernels=${VMTEST_KERNELS:-$(cd /boot && ls vmlinuz-6.1.* vmlinuz-6.12.*+deb12-amd64 2>/dev/null |
	sed 's/^vmlinuz-//' | sort -V)}
dkdir=${VMTEST_DEBUG_KDIR:-}
if [ -n "$dkdir" ]; then
	kernels=$(cat "$dkdir/include/config/kernel.release")
fi
[ -n "$kernels" ] || { echo "vmtest: no 6.1/6.12 kernel in /boot (run scripts/install-deps.sh)" >&2; exit 1; }
kvm=--disable-kvm
[ "${VMTEST_KVM:-0}" = 1 ] && kvm=

"$top/scripts/build-selftests.sh" "$build/ksft"
st="$build/ksft/tools/testing/selftests/secarena"
make -s -C "$top/userlib" vmtest-bin
make -s -C "$top/tools/secarena-stat"
make -s -C "$top/stress/fuzz"
make -s -C "$top/stress/limits"
make -s -C "$top/bench/device"
# The OpenSSL side (a no-op when make check's host part built it already).
"$top/userlib/openssl/build.sh" >/dev/null
make -s -C "$top/userlib/openssl"
make -s -C "$top/tools/leakscan"
ul="$top/userlib/build/secarena-vmtest"

for k in $kernels; do
	out="$build/vm-out/$k"
	rm -rf "$out"
	mkdir -p "$out"
	if [ -n "$dkdir" ]; then
		image=$dkdir/arch/x86/boot/bzImage
		KDIR=$dkdir "$top/scripts/build-module.sh" "$k" "$build/module/$k"
	else
		image=/boot/vmlinuz-$k
		"$top/scripts/build-module.sh" "$k" "$build/module/$k"
	fi
	echo "vmtest: booting $k (TCG, about a minute)..."
	# shellcheck disable=SC2086
	(cd / && timeout "${VMTEST_TIMEOUT:-1500}" vng --verbose --run "$image" $kvm --force-9p --memory "${VMTEST_MEMORY:-1G}" --cpus 2 \
		${VMTEST_APPEND:+--append "$VMTEST_APPEND"} \
		--rwdir="$out" --rwdir="$top/build/openssl/src" --exec "$top/scripts/vm-guest.sh $k $out $build/module/$k/secarena.ko $st $ul" \
		>"$out/console.log" 2>&1 </dev/null) || true
	if [ ! -f "$out/done" ]; then
		echo "not ok 0 $k: guest run did not finish (see $out/console.log)" >>"$out/results.tap"
	fi
	pass=$(grep -c '^ok ' "$out/results.tap" || true)
	fail=$(grep -c '^not ok ' "$out/results.tap" || true)
	grep '^not ok ' "$out/results.tap" || true
	echo "vmtest: $k: $pass passed, $fail failed"
done
