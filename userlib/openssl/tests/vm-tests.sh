#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# userlib/openssl/tests/vm-tests.sh OUT: the OpenSSL side on /dev/secarena.
# Runs inside the test VM as root with the module loaded, on the build that
# tests/run-tests.sh made on the host (the guest shares the host's files):
# the guest's release picks the series, as a server's would: a Debian 13
# root (trixie's 6.12 and 7.x kernels) runs the 3.5 build with Debian 13's
# nginx and openssl, a Debian 12 root the 3.0 build.
#  1. live-scan.sh with the device backend (strict): s_server, nginx and
#     HAProxy (two threads),
#     six key types, TLS 1.2 and 1.3: 0 hits outside the arena in every
#     process, the arena unreadable. On 3.5 also the post-quantum keys: an
#     ML-DSA-65 certificate (TLS 1.3), ML-KEM-768 and SLH-DSA in key_holder.
#  2. Core dumps: a patched s_server that served requests is killed with
#     SIGABRT (core_pattern to a file): the core holds no hit; the same on
#     stock s_server holds the key (the positive control).
#  3. OpenSSL's test_secmem on the device (SECARENA_REQUIRE=device) and
#     test_sslapi with the arena on the device.
# VM_LIVE_SCAN_KEYS=LIST: the key types of 1 (default: all of live-scan.sh's);
# VM_LIVE_SCAN_PQ_KEYS=LIST: those of the post-quantum run on 3.5 (default
# mldsa65,mlkem768,slhdsa128s). vm-guest.sh narrows both in make check and
# on a debug kernel.
# VM_DEVICE_SSLAPI=0 leaves out test_sslapi on the device (make check does,
# to stay in CI's hour: it takes 3 minutes under TCG; make check-matrix and
# make check-debug run it).
# TAP on stdout, plan last; exits 0 even when tests fail.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
out=${1:?usage: vm-tests.sh OUT}
release=$(. /etc/os-release && echo "${VERSION_ID:-}")
case $release in
13) B=$top/build/openssl-3.5 want=3.5 ;;
*) B=$top/build/openssl want=3.0 ;;
esac
inst=$B/install
leakscan=$top/tools/leakscan/build/leakscan
mkdir -p "$out"
n=0
tap() { # tap ok|not-ok NAME [DETAIL]
	n=$((n + 1))
	if [ "$1" = ok ]; then echo "ok $n - $2"; else echo "not ok $n - $2${3:+ # $3}"; fi
}
finish() { echo "1..$n"; exit 0; }
# shellcheck source=userlib/openssl/tests/import-tap.sh
. "$here/import-tap.sh"

if [ ! -x "$inst/bin/openssl" ] || [ ! -x "$leakscan" ]; then
	tap not-ok "patched OpenSSL and leakscan built on the host" "missing $inst/bin/openssl or $leakscan"
	finish
fi
got=$(LD_LIBRARY_PATH=$inst/lib "$inst/bin/openssl" version | cut -d' ' -f2)
case $got in
"$want".*) tap ok "Debian ${release:-?} guest runs the $want series: OpenSSL $got (patched) beside $(openssl version | cut -d' ' -f1-2)" ;;
*) tap not-ok "Debian ${release:-?} guest runs the $want series" "the patched build is OpenSSL $got" ;;
esac

# ---- 1. live servers on the device ----
# Keys from the host's run when there are any: RSA-4096 generation under TCG
# takes minutes.
# The keys do not depend on the branch: make check's 3.0 run always has them.
for d in "$B/live-scan-host/keys" "$top/build/openssl/live-scan-host/keys"; do
	if [ -d "$d" ]; then
		mkdir -p "$out/live/keys"
		cp -n "$d"/* "$out/live/keys/" 2>/dev/null
	fi
done
OPENSSL_INSTALL=$inst "$here/live-scan.sh" "$out/live" device secarena "" "${VM_LIVE_SCAN_KEYS:-}" \
	>"$out/live-scan.tap" 2>"$out/live-scan.err"
import_tap "live scan (device)" "$out/live-scan.tap"
if [ "$want" = 3.5 ]; then
	OPENSSL_INSTALL=$inst "$here/live-scan.sh" "$out/live-pq" device secarena s_server,nginx,key_holder \
		"${VM_LIVE_SCAN_PQ_KEYS:-mldsa65,mlkem768,slhdsa128s}" >"$out/live-scan-pq.tap" 2>"$out/live-scan-pq.err"
	import_tap "live scan (device, post-quantum keys)" "$out/live-scan-pq.tap"
fi

# ---- 2. core dumps ----
keys=$out/live/keys
core_dir=$out/cores
mkdir -p "$core_dir"
old_pattern=$(cat /proc/sys/kernel/core_pattern)
echo "$core_dir/core.%p" >/proc/sys/kernel/core_pattern
port=18543

core_of() { # core_of NAME BIN ENV...: serve 3 requests, SIGABRT, echo the core path
	local name=$1 bin=$2 pid
	shift 2
	(
		ulimit -c unlimited
		exec env "$@" "$bin" s_server -quiet -www -accept "$port" \
			-key "$keys/rsa2048.key" -cert "$keys/rsa2048.crt"
	) >"$out/core-$name.log" 2>&1 &
	pid=$!
	for _ in $(seq 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
		sleep 0.1
	done
	for _ in 1 2 3; do
		printf 'GET / HTTP/1.0\r\n\r\n' | timeout 20 openssl s_client \
			-connect "127.0.0.1:$port" -quiet >/dev/null 2>&1
	done
	kill -ABRT "$pid"
	wait "$pid" 2>/dev/null
	for _ in $(seq 50); do
		[ -s "$core_dir/core.$pid" ] && break
		sleep 0.1
	done
	echo "$core_dir/core.$pid"
}

if [ -s "$keys/rsa2048.key" ]; then
	c=$(core_of stock openssl SECARENA_CORE_TEST=stock)
	if [ -s "$c" ]; then
		"$leakscan" --file "$keys/rsa2048.key" "$c" >"$out/core-stock.scan" 2>&1
		st=$?
		[ "$st" = 1 ] && tap ok "core dump of stock s_server holds the key (positive control)" ||
			tap not-ok "core dump of stock s_server holds the key" "leakscan exit $st"
	else
		tap not-ok "core dump of stock s_server written" "no $c"
	fi
	c=$(core_of secarena "$inst/bin/openssl" LD_LIBRARY_PATH="$inst/lib" \
		OPENSSL_SECARENA=backend=device,strict=yes)
	if [ -s "$c" ]; then
		"$leakscan" --file "$keys/rsa2048.key" "$c" >"$out/core-secarena.scan" 2>&1
		st=$?
		[ "$st" = 0 ] && tap ok "core dump of patched s_server holds no key material" ||
			tap not-ok "core dump of patched s_server holds no key material" \
				"leakscan exit $st: $(grep 'outside-arena:' "$out/core-secarena.scan")"
	else
		tap not-ok "core dump of patched s_server written" "no $c"
	fi
	rm -f "$core_dir"/core.*
else
	tap not-ok "core dump tests: the live scan left no rsa2048 key"
fi
echo "$old_pattern" >/proc/sys/kernel/core_pattern

# ---- 3. OpenSSL's own tests on the device ----
harness() { # harness NAME LOG ENV...: one OpenSSL test file
	local name=$1 log=$2
	shift 2
	# run_tests: the build is the host's; make test would re-check every
	# dependency over 9p first, which takes minutes under TCG.
	(cd "$B/src" && env "$@" make run_tests TESTS="$name") >"$log" 2>&1
	if grep -q '^Result: PASS' "$log" && grep -qE "test_${name#test_}\.t \.+ ok" "$log"; then
		tap ok "openssl make test on the device: $name"
	else
		tap not-ok "openssl make test on the device: $name" "$(grep -A3 '^Test Summary' "$log" | tr '\n' ' ')"
	fi
}
harness test_secmem "$out/test_secmem.log" SECARENA_REQUIRE=device
if [ "${VM_DEVICE_SSLAPI:-1}" = 1 ]; then
	harness test_sslapi "$out/test_sslapi.log" OPENSSL_SECARENA=backend=device,strict=yes
else
	echo "# test_sslapi on the device: left out (VM_DEVICE_SSLAPI=0); make check-matrix runs it"
fi
finish
