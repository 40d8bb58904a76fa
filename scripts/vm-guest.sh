#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Runs inside the VM as root: load the module, run the kselftest target,
# check dmesg, pages in use and unloading, and write TAP to OUT/results.tap.
# Then libsecarena's suites on the device backend (USERLIB_VMTEST).
# Usage: vm-guest.sh KVER OUT KO SELFTEST_DIR [USERLIB_VMTEST]
set -uo pipefail

kver=$1 out=$2 ko=$3 st=$4 ul=${5:-}
tap="$out/results.tap"
n=0
result() { # result ok|not-ok NAME [DETAIL]
	n=$((n + 1))
	if [ "$1" = ok ]; then
		echo "ok $n $kver: $2" >>"$tap"
	else
		echo "not ok $n $kver: $2${3:+ # $3}" >>"$tap"
	fi
}
sysfs() { cat "/sys/class/misc/secarena/$1" 2>/dev/null; }
# import PREFIX LOG: renumber another suite's TAP lines into ours; a suite
# that printed no plan failed before it could say anything.
import_tap() {
	local prefix=$1 log=$2 line rest
	while read -r line; do
		case "$line" in
		"not ok "*) rest=${line#not ok * }; result not-ok "$prefix: ${rest#- }" ;;
		"ok "*) rest=${line#ok * }; result ok "$prefix: ${rest#- }" ;;
		esac
	done < <(grep -E '^(not )?ok [0-9]+ ' "$log")
	grep -q '^1\.\.[1-9]' "$log" || result not-ok "$prefix: printed no plan"
}
: >"$tap"
# phase NAME: how long the part before took, into OUT/times.txt (vmtest.sh
# prints it, so that CI's log shows where a guest's time went).
phase_t=$SECONDS
phase() {
	echo "$((SECONDS - phase_t)) s: $1" >>"$out/times.txt"
	phase_t=$SECONDS
}
: >"$out/times.txt"

# A debug kernel (make check-debug) has kmemleak: forget what boot left,
# so that what is reported later was allocated while the suite ran.
kml=/sys/kernel/debug/kmemleak
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug 2>/dev/null
[ -e "$kml" ] && echo clear >"$kml"
# kmemleak_check LABEL: scan (twice: an object must be unreferenced for
# 5 s to be reported) and fail on any object the module allocated; a
# backtrace entry left unresolved (0xffffffff...) belonged to a module
# that is gone, which after rmmod can only be secarena.
kmemleak_check() {
	[ -e "$kml" ] || return 0
	echo scan >"$kml"; sleep 6; echo scan >"$kml"
	cat "$kml" >"$out/kmemleak-$1.log"
	echo clear >"$kml"
	local all ours
	all=$(grep -c '^unreferenced object' "$out/kmemleak-$1.log" || true)
	ours=$(awk '/^unreferenced object/ { n++ } /secarena|\] 0xffffffff/ { hit[n] = 1 }
		END { c = 0; for (i in hit) c++; print c }' "$out/kmemleak-$1.log")
	[ "$ours" = 0 ] && result ok "kmemleak $1: nothing from secarena ($all other objects)" ||
		result not-ok "kmemleak $1: nothing from secarena" "$ours of $all unreferenced objects are ours"
}

# The first memory cgroup turns on the kernel's memcg static keys, which
# patches live code (text_poke_bp) on every CPU. Under TCG that once hit a
# stale int3 on the other vCPU, an "Oops: int3" in kmem_cache_alloc() and a
# panic, when secarena_api made its memcg while the kselftest runner was
# busy. Make and remove one now, while the guest is idle; the tests' own
# cgroups then patch nothing.
cg=/sys/fs/cgroup/secarena-warmup
if grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
	grep -qw memory /sys/fs/cgroup/cgroup.subtree_control ||
		echo +memory >/sys/fs/cgroup/cgroup.subtree_control
	mkdir "$cg" 2>/dev/null && rmdir "$cg"
fi

dmesg -C
if insmod "$ko"; then result ok insmod; else result not-ok insmod; exit 0; fi
[ -c /dev/secarena ] && result ok "device node" || result not-ok "device node"

# kselftest runner: per-test TAP lines come out prefixed with '# '.
# The kselftest runner writes each test's output to /dev/stdout, which
# virtme-ng points at its console port: point it back at our own stdout.
ln -sf /proc/self/fd/1 /dev/stdout
(cd "$st" && make -s --no-print-directory OUTPUT="$st" run_tests) 2>&1 | cat >"$out/kselftest.log"
while read -r line; do
	case "$line" in
	"not ok "*) result not-ok "kselftest ${line#not ok }" ;;
	*) result ok "kselftest ${line#ok }" ;;
	esac
done < <(grep -E '^# (not )?ok [0-9]+ ' "$out/kselftest.log" | sed 's/^# //')
# A binary that failed without a failing test case (crashed, timed out).
top_fail=$(grep -cE '^not ok [0-9]+ selftests: ' "$out/kselftest.log" || true)
case_fail=$(grep -cE '^# not ok [0-9]+ ' "$out/kselftest.log" || true)
if [ "$top_fail" -gt 0 ] && [ "$case_fail" = 0 ]; then
	result not-ok "kselftest binaries failed outside any test case"
fi
grep -qE '^(not )?ok [0-9]+ selftests: ' "$out/kselftest.log" &&
	result ok "kselftest target ran" || result not-ok "kselftest target ran"

phase kselftest
# libsecarena on /dev/secarena: its TAP results, renumbered.
if [ -n "$ul" ]; then
	status=0
	timeout 900 "$ul" >"$out/libsecarena.log" 2>&1 || status=$?
	import_tap "libsecarena device" "$out/libsecarena.log"
	if [ "$status" != 0 ] && ! grep -q '^not ok ' "$out/libsecarena.log"; then
		result not-ok "libsecarena device suite exited with status $status"
	fi
fi

phase "libsecarena device suite"
# A debug kernel (kmemleak, so KASAN and the rest too) runs the same code
# several times slower under TCG: the fuzzer's fixed 100000 operations get
# three times the time, and the OpenSSL live scans run on two key types
# (RSA-2048 with every server, DH through key_holder) instead of twelve:
# the module sees the same calls from each (map, fault, fork, wipe), and
# the twelve took 95 minutes, four more than 40 on a busy host.
# make check (VM_SCOPE=quick, set by vmtest.sh) runs them on RSA-2048, and
# the post-quantum run on ML-DSA-65 and ML-KEM-768 (with P-256 too, the
# Debian 12 guest's OpenSSL phase took 602 s, 2.5 minutes a key type).
stress_limit=1200
if [ -e "$kml" ]; then
	export FUZZ_TIMEOUT=2700 VM_LIVE_SCAN_KEYS=rsa2048,dh2048
	stress_limit=3000
elif [ "${VM_SCOPE:-full}" = quick ]; then
	export VM_LIVE_SCAN_KEYS=rsa2048 VM_LIVE_SCAN_PQ_KEYS=mldsa65,mlkem768
	# OpenSSL's TLS API tests on the device (3 minutes a guest): TLS on
	# the device is what the live scans' servers already do.
	export VM_DEVICE_SSLAPI=0
fi

# Under attack and at the limits: the syscall fuzzer, exhaustion, and the
# wipe proof by a scan of all physical memory (stress/).
for s in fuzz limits; do
	timeout "$stress_limit" "$(dirname "$0")/../stress/$s/vm-run.sh" >"$out/stress-$s.log" 2>&1
	import_tap "stress $s" "$out/stress-$s.log"
	phase "stress $s"
done

# OpenSSL on the device: live server scans, core dumps, its own tests.
"$(dirname "$0")/../userlib/openssl/tests/vm-tests.sh" "$out/openssl" >"$out/openssl.log" 2>&1
import_tap openssl "$out/openssl.log"
phase "openssl (live scans ${VM_LIVE_SCAN_KEYS:-of every key type})"

# make demo's table, so that the demo is tested where it runs.
hk="$(dirname "$0")/../build/openssl/live-scan-host/keys"
if [ -s "$hk/rsa2048.key" ]; then
	export DEMO_KEY="$hk/rsa2048.key" DEMO_CERT="$hk/rsa2048.crt"
fi
if "$(dirname "$0")/../demo/heartbleed-demo.sh" "$out/demo" >"$out/demo.log" 2>&1; then
	result ok "demo: secarena column clean, stock column shows the key"
else
	result not-ok "demo: secarena column clean, stock column shows the key" \
		"$(grep -E '^demo: ' "$out/demo.log" | tail -n 1)"
fi

phase demo
# secarena-stat against the live module (its own arenas, exact sizes).
TMPDIR="$out" "$(dirname "$0")/../tools/secarena-stat/vm-test.sh" >"$out/secarena-stat.log" 2>&1
import_tap secarena-stat "$out/secarena-stat.log"

# The device against mlock()ed anonymous memory (bench/device): a table,
# not a test; only a step that fails counts.
if "$(dirname "$0")/../bench/device/vm-bench.sh" "$out/device-bench.txt" 2>"$out/device-bench.err"; then
	result ok "device benchmark ran (table in device-bench.txt)"
else
	result not-ok "device benchmark ran" "$(tail -n 1 "$out/device-bench.err")"
fi

phase "secarena-stat and device benchmark"
# Unloading: refused while a file is open, done once it is closed.
exec 3<>/dev/secarena
if rmmod secarena 2>/dev/null; then result not-ok "rmmod refused while open"; else result ok "rmmod refused while open"; fi
[ "$(sysfs arenas)" = 1 ] && result ok "arenas counts the open file" ||
	result not-ok "arenas counts the open file" "arenas=$(sysfs arenas)"
exec 3<&-

kmemleak_check before-rmmod
inuse=$(sysfs pages_in_use)
[ "$inuse" = 0 ] && result ok "pages in use back to 0" || result not-ok "pages in use back to 0" "pages_in_use=$inuse"
# OOM-killer reports (a test provokes one in a memcg on purpose) carry a
# stack dump; they are cut out before looking for real traces.
bad=$(dmesg | awk '/invoked oom-killer/ { skip = 1 } /Killed process|oom_reaper:/ { skip = 0; next } !skip' |
	grep -E 'BUG:|WARNING:|Oops|Call Trace|general protection' | head -5)
[ -z "$bad" ] && result ok "dmesg clean" || result not-ok "dmesg clean" "$(echo "$bad" | head -1)"
dmesg >"$out/dmesg.log"
if rmmod secarena; then result ok rmmod; else result not-ok rmmod; fi
[ ! -e /dev/secarena ] && result ok "device gone after rmmod" || result not-ok "device gone after rmmod"
kmemleak_check after-rmmod
echo "guest-done" >"$out/done"
