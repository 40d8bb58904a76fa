#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# userlib/openssl/tests/run-tests.sh: the OpenSSL side on the host, as TAP,
# for one branch: OPENSSL_BRANCH=3.0 (default; Debian 12, build/openssl) or
# 3.5 (Debian 13, build/openssl-3.5). make check runs 3.0, make check-matrix
# both.
#  1. build.sh: fetch, patch, build and install OpenSSL on libsecarena; the
#     series also applies to the newest source of the branch apt offers.
#  2. The switches: OPENSSL_SECARENA and openssl.cnf [secarena], probed by an
#     unmodified program (secure_heap_probe), with their errors; a fork
#     child that lost its copy of the heap (secure_heap_fork_probe).
#  3. OpenSSL's own "make test" with the arena on (OPENSSL_SECARENA, the
#     memfd_secret backend): every test file is one result. test_secmem
#     switches the heap on itself, so it runs without the variable.
#  4. live-scan.sh: s_server, nginx and HAProxy, stock / stock + secure heap /
#     secarena, six key types, TLS 1.2 and 1.3.
#  5. arena-full.sh: signing with the arena nearly full, and nginx with
#     more connections than its arena holds.
#  5b. passphrase-scan.sh: encrypted PKCS#8 PEM and DER and PKCS#12 keys
#     loaded with a passphrase, the passphrase and its PBKDF2 key looked
#     for outside the arena, every stack included (both modes).
#  5d. stack-scan.sh: what private-key operations leave on the stack and
#     in the vector registers (a signal saves them on the stack), every key
#     type, the CPU's code paths masked in turn (issue 19, part 2).
#  6. 3.5 only: pq-scan.sh, ML-KEM, ML-DSA and SLH-DSA private keys through
#     every step of their life, against Debian 13's own libcrypto; and
#     tools/leakscan/tests/pq-tests.sh in the Debian 13 root: the scanner
#     takes those keys apart right and counts their copies exactly; and
#     quic_secret_scan there: a QUIC server on 3.5's server API (s_server
#     has none), its connections' secrets, packet keys, next-epoch secrets
#     and token key looked for outside the secure heap, live and closed;
#     and (not quick) rsa_implicit_rejection_scan there: RSA decryption with
#     a bad and a good padding and a signature, every normal-heap block
#     watched while they run (d, its hash, the kdk, the synthetic message,
#     the CRT parts).
#  7. 3.5 only: live-scan.sh inside the Debian 13 root (scripts/in-root.sh):
#     Debian 13's own nginx, HAProxy and openssl s_server on the patched build, and
#     stock (with and without its secure heap) as the control, TLS 1.3
#     with only X25519MLKEM768 on both ends (and in more runs only X25519,
#     only the pure MLKEM768), with ML-DSA certificates among the classic
#     ones; ML-KEM and SLH-DSA keys in key_holder.
# OPENSSL_TESTS=quick leaves out 3 to 5, the long ones, and runs 7 on five
# key types (make check runs 3.5 that way; make check-matrix runs it whole).
# OPENSSL_MAKE_TEST=0 leaves out 3 alone (make check runs 3.0 that way:
# OpenSSL's own suites of both branches run in make check-matrix).
# LIVE_SCAN_CONFIGS=LIST: the configurations of the live scans of 4 and 7
# (default stock,stock-secheap,secarena; make check runs stock,secarena:
# OpenSSL's own secure heap is reported there, not asserted).
# Exits 0 when it could run (failures are in the TAP), 1 when it could not.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
ossl=$(dirname "$here")
top=$(cd "$ossl/../.." && pwd)
branch=${OPENSSL_BRANCH:-3.0}
case $branch in
3.0) B=$top/build/openssl suite=bookworm ;;
3.5) B=$top/build/openssl-3.5 suite=trixie ;;
*) echo "run-tests: OPENSSL_BRANCH=$branch: not 3.0 or 3.5" >&2; exit 1 ;;
esac
tests=${OPENSSL_TESTS:-all}
case $tests in
all | quick) ;;
*) echo "run-tests: OPENSSL_TESTS=$tests: not all or quick" >&2; exit 1 ;;
esac
inst=$B/install
probe=$ossl/build/secure_heap_probe
n=0
tap() { # tap ok|not-ok|skip NAME [DETAIL]
	n=$((n + 1))
	case $1 in
	ok) echo "ok $n - $2" ;;
	skip) echo "ok $n - $2 # SKIP $3" ;;
	*) echo "not ok $n - $2${3:+ # $3}" ;;
	esac
}
mkdir -p "$B/logs"
# shellcheck source=userlib/openssl/tests/import-tap.sh
. "$here/import-tap.sh"

# ---- 1. build ----
if "$ossl/build.sh" -b "$branch" >"$B/logs/build-sh.log" 2>&1; then
	tap ok "patched OpenSSL builds and installs ($(sed -n 's/.*source: \(.*\)/\1/p' "$B/logs/build-sh.log"))"
else
	tap not-ok "patched OpenSSL builds and installs" "$(tail -n 3 "$B/logs/build-sh.log" | tr '\n' ' ')"
	echo "1..$n"
	exit 1
fi
grep -q 'libsecarena linked in statically' "$B/logs/build-sh.log" &&
	tap ok "libcrypto.so.3 holds a private copy of libsecarena (no export, no ldd entry)" ||
	tap not-ok "libcrypto.so.3 holds a private copy of libsecarena"

# The newest source of the branch that the archive serves: the series must
# apply to it too, without fuzz. The security suite's Debian files are often
# gone while its upstream tarball is still there (only the tarball is needed
# here); where the tarball is gone as well, the next version down is tried
# and the result names the versions passed over. build.sh left its private
# apt configuration in $B/apt.
# shellcheck source=scripts/debian-archive.sh
. "$top/scripts/debian-archive.sh"
apt_private "$B/apt" "$suite" && apt_private_update "$B/apt" >/dev/null 2>&1
mkdir -p "$B/dl-newest"
tried="" up=""
while read -r v; do
	u=${v#*:}
	u=${u%-*}
	[ -f "$B/dl-newest/openssl_$u.orig.tar.gz" ] ||
		(cd "$B/dl-newest" && apt-get "${APT_PRIVATE[@]}" source -qq --download-only "openssl=$v") >/dev/null 2>&1
	if [ -f "$B/dl-newest/openssl_$u.orig.tar.gz" ]; then
		up=$u
		break
	fi
	tried="$tried $u"
done < <(apt-cache "${APT_PRIVATE[@]}" madison openssl 2>/dev/null |
	awk -F' *[|] *' '$3 ~ /Sources/ { print $2 }' | sort -V -r)
if [ -n "$up" ]; then
	t=$(mktemp -d)
	tar -xzf "$B/dl-newest/openssl_$up.orig.tar.gz" -C "$t"
	bad=""
	for p in "$ossl/patches/$branch"/*.patch; do
		(cd "$t"/openssl-* && patch -p1 -N -f --fuzz=0 -s <"$p") >/dev/null 2>&1 || bad="$bad $(basename "$p")"
	done
	rm -rf "$t"
	what="newest $branch.x source the archive serves${tried:+; not served:$tried}"
	[ -z "$bad" ] && tap ok "the series applies to OpenSSL $up ($what)" ||
		tap not-ok "the series applies to OpenSSL $up ($what)" "failed:$bad"
else
	tap not-ok "the series applies to the newest $branch.x source" "no openssl source downloads${tried:+ (tried$tried)}"
fi

# ---- 2. switches ----
make -s -C "$ossl" >"$B/logs/tools.log" 2>&1 || tap not-ok "test programs build" "see $B/logs/tools.log"
probe_run() { # probe_run EXPECTED_OUTPUT EXPECTED_STATUS STDERR_PATTERN NAME ENV...
	local want=$1 wstatus=$2 pat=$3 name=$4 got status
	shift 4
	got=$(env -u OPENSSL_SECARENA -u OPENSSL_CONF LD_LIBRARY_PATH="$inst/lib" "$@" "$probe" 2>"$B/logs/probe.err")
	status=$?
	if [ "$got" = "$want" ] && [ "$status" = "$wstatus" ] &&
		{ [ -z "$pat" ] || grep -q -- "$pat" "$B/logs/probe.err"; }; then
		tap ok "$name"
	else
		tap not-ok "$name" "got '$got' status $status, stderr: $(head -c 200 "$B/logs/probe.err")"
	fi
}
on="init 1 initialized 1 used 0 block 1"
off="init 1 initialized 0 used 0 block 0"
probe_run "$off" 0 "" "no setting: no secure heap (stock behaviour)"
probe_run "$on" 0 "" "OPENSSL_SECARENA=on: arena in service before main() uses it" OPENSSL_SECARENA=on
probe_run "$on" 0 "" "OPENSSL_SECARENA with size, minsize, arenas, backend" \
	OPENSSL_SECARENA=size=64K,minsize=32,arenas=2,backend=memfd_secret
probe_run "$off" 0 "" "OPENSSL_SECARENA=off: no secure heap" OPENSSL_SECARENA=off
# Every kind of bad setting: libcrypto's init fails, and stderr names the
# setting and says what is wrong with it.
while IFS='|' read -r setting why; do
	probe_run "init 0" 1 "OPENSSL_SECARENA: bad setting $setting: $why" \
		"OPENSSL_SECARENA=$setting: init fails, naming it: $why" OPENSSL_SECARENA="$setting"
done <<'SETTINGS'
sise=1M|unknown setting
size=3M|not a power of two
size=1Q|not a size
size=99999999999999G|not a size
minsize=24|not a power of two
arenas=33|not a number of arenas from 1 to 32
arenas=0|not a number of arenas from 1 to 32
backend=foo|not device, memfd_secret or mlock
strict=maybe|not yes or no
size|not on, off or name=value
SETTINGS
probe_run "init 0" 1 "OPENSSL_SECARENA: bad setting: size must hold at least 4 blocks of minsize" \
	"OPENSSL_SECARENA=size=64,minsize=32: init fails, size holds fewer than 4 blocks" \
	OPENSSL_SECARENA=size=64,minsize=32
if [ ! -e /dev/secarena ]; then
	probe_run "init 0" 1 "strict secure heap could not be mapped: No such device" \
		"strict=yes without /dev/secarena: libcrypto init fails (ENODEV)" \
		OPENSSL_SECARENA=backend=device,strict=yes
	probe_run "$on" 0 "" "non-strict without /dev/secarena: next backend" \
		OPENSSL_SECARENA=backend=device
fi
cnf=$B/logs/secarena-test.cnf
printf 'openssl_conf = init\n[init]\nsecarena = sa\n[sa]\nsize = 256K\nbackend = memfd_secret\n' >"$cnf"
probe_run "$on" 0 "" "openssl.cnf [secarena]: arena in service" OPENSSL_CONF="$cnf"
printf 'openssl_conf = init\n[init]\nsecarena = sa\n[sa]\nbogus = 1\n' >"$cnf.bad"
probe_run "init 0" 1 "openssl.cnf \[secarena\]: bad setting bogus = 1: unknown setting" \
	"openssl.cnf [secarena] unknown setting: init fails, naming it" OPENSSL_CONF="$cnf.bad"
printf 'openssl_conf = init\n[init]\nsecarena = sa\n[sa]\nsize = 3M\n' >"$cnf.bad"
probe_run "init 0" 1 "openssl.cnf \[secarena\]: bad setting size = 3M: not a power of two" \
	"openssl.cnf [secarena] bad value: init fails, naming it" OPENSSL_CONF="$cnf.bad"
probe_run "$off" 0 "" "OPENSSL_SECARENA=off wins over openssl.cnf" OPENSSL_CONF="$cnf" OPENSSL_SECARENA=off
printf 'openssl_conf = init\n[init]\nsecarena = sa\n[sa]\nsize = 256K\narenas = 1\nbackend = memfd_secret\n' >"$cnf.full"

# A full secure heap: the error says how full and which setting to raise,
# named as the heap was made (OPENSSL_SECARENA, openssl.cnf, or the
# application's own CRYPTO_secure_malloc_init()).
full_probe() { # full_probe NAME STDERR_PATTERN ENV... -- ARGS...
	local name=$1 pat=$2 envs=() got status
	shift 2
	while [ "$1" != -- ]; do
		envs+=("$1")
		shift
	done
	shift
	got=$(env -u OPENSSL_SECARENA -u OPENSSL_CONF "${envs[@]}" LD_LIBRARY_PATH="$inst/lib" \
		"$ossl/build/secure_heap_full_probe" "$@" 2>"$B/logs/full-probe.err")
	status=$?
	if [ "$status" = 0 ] && grep -q -- "$pat" "$B/logs/full-probe.err"; then
		tap ok "$name"
	else
		tap not-ok "$name" "got '$got' status $status, stderr: $(head -c 300 "$B/logs/full-probe.err")"
	fi
}
msg_cfg="in OPENSSL_SECARENA or the secarena section of openssl.cnf"
full_probe "a block larger than the arena: says so and to raise size=" \
	"secure malloc failure.*secure heap: a block of 8192 bytes is larger than an arena (size=4096): raise size= $msg_cfg" \
	OPENSSL_SECARENA=size=4K,arenas=1,backend=memfd_secret -- large 8192
full_probe "a full heap: how full, and to raise arenas= or size=" \
	"secure heap full: no room for a block of 512 bytes ([0-9]* of 8192 bytes in use, 2 of at most 2 arenas of size=4096): raise arenas= or size= $msg_cfg" \
	OPENSSL_SECARENA=size=4K,arenas=2,backend=memfd_secret -- fill 512
full_probe "a full heap from openssl.cnf: the same words" \
	"secure heap full: no room for a block of 1024 bytes ([0-9]* of 262144 bytes in use, 1 of at most 1 arenas of size=262144): raise arenas= or size= $msg_cfg" \
	OPENSSL_CONF="$cnf.full" -- fill 1024
full_probe "a heap the application made: names its CRYPTO_secure_malloc_init() size" \
	"secure heap: a block of 8192 bytes is larger than an arena (size=4096): raise size= given to CRYPTO_secure_malloc_init() by the application" \
	SECARENA_BACKEND=memfd_secret -- app 8192

# A fork child whose copy of the heap could not be mapped frees what it
# inherited without reaching free(3) (CRYPTO_secure_free asks secarena_owns).
want=$(printf 'child allocated 0 actual 64 freed\nparent child-exit 0 allocated 1')
got=$(env -u OPENSSL_SECARENA -u OPENSSL_CONF SECARENA_BACKEND=memfd_secret LD_LIBRARY_PATH="$inst/lib" \
	"$ossl/build/secure_heap_fork_probe" 2>"$B/logs/fork-probe.err")
[ "$got" = "$want" ] &&
	tap ok "fork child without its copy of the heap frees inherited blocks (no free(3) of them)" ||
	tap not-ok "fork child without its copy of the heap frees inherited blocks" \
		"got '$(echo "$got" | tr '\n' '|')', stderr: $(head -c 200 "$B/logs/fork-probe.err")"

# ---- 3. OpenSSL's test suite with the arena on ----
import_harness() { # import_harness LOG: one result per test file
	local log=$1 file status
	while read -r file status; do
		case $status in
		ok) tap ok "openssl make test: $file" ;;
		skipped:*) tap skip "openssl make test: $file" "${status#skipped: }" ;;
		*) tap not-ok "openssl make test: $file" "$status" ;;
		esac
	done < <(grep -oE '[0-9]{2}-test_[A-Za-z0-9_]+\.t \.+ .*' "$log" |
		sed -E 's/^([^ ]+) \.+ /\1 /' | sort -u -k1,1)
	grep -q '^Result: PASS' "$log" || grep -q '^All tests successful' "$log" ||
		tap not-ok "openssl make test: harness result" "$(grep -A3 '^Test Summary' "$log" | tr '\n' ' ')"
}
if [ "$tests" = all ] && [ "${OPENSSL_MAKE_TEST:-1}" = 1 ]; then
	(cd "$B/src" && OPENSSL_SECARENA=backend=memfd_secret,size=1M make test \
		HARNESS_JOBS="${JOBS:-2}" TESTS="-test_secmem") >"$B/logs/make-test.log" 2>&1
	import_harness "$B/logs/make-test.log"
	(cd "$B/src" && make test TESTS=test_secmem) >"$B/logs/make-test-secmem.log" 2>&1
	import_harness "$B/logs/make-test-secmem.log"
fi
if [ "$tests" = all ]; then
	# ---- 4. live servers ----
	OPENSSL_INSTALL=$inst "$here/live-scan.sh" "$B/live-scan-host" memfd_secret \
		"${LIVE_SCAN_CONFIGS:-stock,stock-secheap,secarena}" \
		>"$B/logs/live-scan.tap" 2>"$B/logs/live-scan.err"
	import_tap "live scan (host, memfd_secret)" "$B/logs/live-scan.tap"

	# ---- 5. a full arena ----
	OPENSSL_INSTALL=$inst "$here/arena-full.sh" "$B/arena-full" memfd_secret \
		>"$B/logs/arena-full.tap" 2>"$B/logs/arena-full.err"
	import_tap "full arena (host, memfd_secret)" "$B/logs/arena-full.tap"
fi

# ---- 5b. encrypted keys: the passphrase ----
# On the host for 3.0; for 3.5 in the Debian 13 root (its openssl makes the
# files, its libcrypto is the stock side).
if [ "$branch" = 3.0 ]; then
	OPENSSL_INSTALL=$inst "$here/passphrase-scan.sh" "$B/passphrase-scan" memfd_secret \
		>"$B/logs/passphrase-scan.tap" 2>"$B/logs/passphrase-scan.err"
	import_tap "encrypted keys (host, memfd_secret)" "$B/logs/passphrase-scan.tap"
elif root=$("$top/scripts/trixie-root.sh" 2>"$B/logs/trixie-root.err"); then
	OPENSSL_INSTALL=$inst IN_ROOT_ENV=OPENSSL_INSTALL "$top/scripts/in-root.sh" "$root" \
		"$here/passphrase-scan.sh" "$B/passphrase-scan" memfd_secret \
		rsa2048,p256,ed25519,ed448,x25519,x448,dsa2048,dh2048,mldsa65,mlkem768 \
		>"$B/logs/passphrase-scan.tap" 2>"$B/logs/passphrase-scan.err"
	import_tap "encrypted keys (Debian 13 root, memfd_secret)" "$B/logs/passphrase-scan.tap"
fi

# ---- 5d. what private-key operations leave on the stack ----
# stack-scan.sh with tests/private_op_stack_scan: every key type's private
# operations on a thread, then that thread's stack (and every other
# writable mapping) read for the key's parts, CRT values, ephemeral keys
# and shared secrets, with and without a signal, with the SHA extensions
# and BMI2 masked too. On the host for 3.0; for 3.5 built against its
# headers and run in the Debian 13 root (stock: Debian 13's libcrypto),
# post-quantum keys included (five key types in the quick run).
pss=$B/private_op_stack_scan
if [ "$branch" = 3.0 ]; then
	if ${CC:-cc} -O2 -Wall -Wextra -Werror -Wl,-z,now -o "$pss" "$here/private_op_stack_scan.c" -lcrypto -lpthread \
		>"$B/logs/stack-scan-build.log" 2>&1; then
		OPENSSL_INSTALL=$inst "$here/stack-scan.sh" "$B/stack-scan" "$pss" \
			>"$B/logs/stack-scan.tap" 2>"$B/logs/stack-scan.err"
		import_tap "stack after private operations (host)" "$B/logs/stack-scan.tap"
	else
		tap not-ok "stack after private operations: scanner built" "$(head -n 3 "$B/logs/stack-scan-build.log" | tr '\n' ' ')"
	fi
elif root=$("$top/scripts/trixie-root.sh" 2>"$B/logs/trixie-root.err"); then
	if [ "$tests" = all ]; then
		sk=rsa2048,rsa3072,rsa4096,p256,p384,ed25519,ed448,x25519,x448,dh2048,dsa2048,mlkem768,mlkem1024,mldsa65,mldsa87,slhdsa128f
	else
		sk=rsa2048,p256,x25519,mlkem768,mldsa65
	fi
	if ${CC:-cc} -O2 -Wall -Wextra -Werror -Wl,-z,now -o "$pss" "$here/private_op_stack_scan.c" \
		-I"$inst/include" -L"$inst/lib" -lcrypto -lpthread >"$B/logs/stack-scan-build.log" 2>&1; then
		OPENSSL_INSTALL=$inst IN_ROOT_ENV=OPENSSL_INSTALL "$top/scripts/in-root.sh" "$root" \
			"$here/stack-scan.sh" "$B/stack-scan" "$pss" "$sk" \
			>"$B/logs/stack-scan.tap" 2>"$B/logs/stack-scan.err"
		import_tap "stack after private operations (Debian 13 root)" "$B/logs/stack-scan.tap"
	else
		tap not-ok "stack after private operations: scanner built" "$(head -n 3 "$B/logs/stack-scan-build.log" | tr '\n' ' ')"
	fi
fi

# ---- 5c. TLS 1.2 CBC: the keyed hash states of the record MAC ----
# tls12_mac_state_scan in one process: a server and a client, 20 records
# each way, for HMAC-SHA256 and HMAC-SHA1 suites, with and without
# encrypt-then-MAC. Stock must show the states outside its secure heap (the
# control); the patched build nothing: MAC keys and their ipad/opad states,
# live normal-heap blocks and every writable mapping, stacks included.
# On the host for 3.0; for 3.5 built against its headers and run in the
# Debian 13 root (stock: Debian 13's libssl).
mac_scan_counts() { # mac_scan_counts LOG: "LIVE HEAP STACK" summed over the pad states; "all" adds the keys
	awk -v which="$2" '
		/^records: live normal-heap hits/ { if (which == "all" || $5 ~ /^(ipad|opad)_/) l += $6 }
		/^live: after, outside the secure heap/ {
			if (which == "all" || $7 ~ /^(ipad|opad)_/) { h += $9; st += $11 }
		}
		END { print l + 0, h + 0, st + 0 }' "$1"
}
mac_scan() { # mac_scan LABEL BINARY RUN...: one stock and one patched run per suite and mode
	local label=$1 bin=$2 ci mode log rc counts
	shift 2
	for ci in AES128-SHA256 AES128-SHA; do
		for mode in etm mte; do
			log=$B/logs/tls12-mac-$ci-$mode
			"$@" stock "$bin" "$B/tls12-mac/key.pem" "$B/tls12-mac/cert.pem" "$ci" "$mode" >"$log-stock.log" 2>&1
			rc=$?
			read -r l h st <<<"$(mac_scan_counts "$log-stock.log" pads)"
			[ "$rc" = 0 ] && [ $((l + h)) -gt 0 ] &&
				tap ok "TLS 1.2 $ci $mode, $label stock: positive control, MAC pad states outside the secure heap (live $l, after $h)" ||
				tap not-ok "TLS 1.2 $ci $mode, $label stock: positive control" "exit $rc, live $l after $h"
			# Twice: as the CPU is, and with its SHA extensions masked
			# (OPENSSL_ia32cap), so that the AVX2/AVX/SSSE3 code paths of
			# SHA and of the stitched AES-CBC-HMAC ciphers run on a machine
			# that has them too.
			# (An empty OPENSSL_ia32cap would mean "no capability at all".)
			for cap in "" ":~0x20000000"; do
				"$@" patched env ${cap:+"OPENSSL_ia32cap=$cap"} "$bin" "$B/tls12-mac/key.pem" "$B/tls12-mac/cert.pem" \
					"$ci" "$mode" >"$log-secarena${cap:+-noshaext}.log" 2>&1
				rc=$?
				counts=$(mac_scan_counts "$log-secarena${cap:+-noshaext}.log" all)
				[ "$rc" = 0 ] && grep -q '^records: ok$' "$log-secarena${cap:+-noshaext}.log" && [ "$counts" = "0 0 0" ] &&
					tap ok "TLS 1.2 $ci $mode, $label patched${cap:+, SHA extensions off}: MAC keys and their ipad/opad states never outside the arena (live, heap, stack)" ||
					tap not-ok "TLS 1.2 $ci $mode, $label patched${cap:+, SHA extensions off}: nothing outside the arena" "exit $rc, live/heap/stack $counts"
			done
		done
	done
}
mac_run_host() { # mac_run_host stock|patched BINARY ARGS...
	local side=$1
	shift
	if [ "$side" = stock ]; then
		env -u OPENSSL_SECARENA -u OPENSSL_CONF "$@"
	else
		env -u OPENSSL_CONF OPENSSL_SECARENA=backend=memfd_secret LD_LIBRARY_PATH="$inst/lib" "$@"
	fi
}
mac_run_root() { # mac_run_root stock|patched BINARY ARGS...: in the Debian 13 root
	local side=$1
	shift
	if [ "$side" = stock ]; then
		"$top/scripts/in-root.sh" "$root" "$@"
	else
		OPENSSL_SECARENA=backend=memfd_secret LD_LIBRARY_PATH=$inst/lib \
			IN_ROOT_ENV="OPENSSL_SECARENA LD_LIBRARY_PATH" "$top/scripts/in-root.sh" "$root" "$@"
	fi
}
mkdir -p "$B/tls12-mac"
[ -s "$B/tls12-mac/cert.pem" ] || {
	openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$B/tls12-mac/key.pem" 2>/dev/null &&
		openssl req -x509 -key "$B/tls12-mac/key.pem" -out "$B/tls12-mac/cert.pem" -subj /CN=localhost \
			-days 3650 2>/dev/null
}
mss=$B/tls12_mac_state_scan
if [ "$branch" = 3.0 ]; then
	if ${CC:-cc} -O2 -Wall -Wextra -Werror -Wl,-z,now -o "$mss" "$here/tls12_mac_state_scan.c" -lssl -lcrypto \
		>"$B/logs/tls12-mac-build.log" 2>&1; then
		mac_scan host "$mss" mac_run_host
	else
		tap not-ok "TLS 1.2 MAC states: scanner built" "$(head -n 3 "$B/logs/tls12-mac-build.log" | tr '\n' ' ')"
	fi
elif root=$("$top/scripts/trixie-root.sh" 2>"$B/logs/trixie-root.err"); then
	if ${CC:-cc} -O2 -Wall -Wextra -Werror -Wl,-z,now -o "$mss" "$here/tls12_mac_state_scan.c" \
		-I"$inst/include" -L"$inst/lib" -lssl -lcrypto >"$B/logs/tls12-mac-build.log" 2>&1; then
		mac_scan "Debian 13 root" "$mss" mac_run_root
	else
		tap not-ok "TLS 1.2 MAC states: scanner built" "$(head -n 3 "$B/logs/tls12-mac-build.log" | tr '\n' ' ')"
	fi
fi

# ---- 6. post-quantum keys ----
if [ "$branch" = 3.5 ]; then
	"$here/pq-scan.sh" "$B/pq-scan" "$inst" >"$B/logs/pq-scan.tap" 2>"$B/logs/pq-scan.err"
	import_tap "post-quantum keys" "$B/logs/pq-scan.tap"
	root=$("$top/scripts/trixie-root.sh" 2>"$B/logs/trixie-root.err") || root=
	# (Without the root, section 7 reports why.)
	if [ -z "$root" ]; then
		:
	elif make -s -C "$top/tools/leakscan" >"$B/logs/leakscan-build.log" 2>&1; then
		"$top/scripts/in-root.sh" "$root" "$top/tools/leakscan/tests/pq-tests.sh" \
			>"$B/logs/leakscan-pq.tap" 2>&1
		import_tap "leakscan, post-quantum keys" "$B/logs/leakscan-pq.tap"
	else
		tap not-ok "leakscan, post-quantum keys: leakscan built" "$(tail -n 2 "$B/logs/leakscan-build.log" | tr '\n' ' ')"
	fi

	# RSA implicit rejection (3.2 and later): built against 3.5's headers.
	# About two minutes a run (every allocation scans every live block), so
	# only in the whole run.
	irs=$B/rsa_implicit_rejection_scan
	if [ -z "$root" ] || [ "$tests" != all ]; then
		:
	elif ! ${CC:-cc} -O2 -Wall -Wextra -Werror -Wl,-z,now -o "$irs" "$here/rsa_implicit_rejection_scan.c" \
		-I"$inst/include" -L"$inst/lib" -lcrypto >"$B/logs/rsa-ir-build.log" 2>&1; then
		tap not-ok "RSA implicit rejection: scanner built" "$(head -n 3 "$B/logs/rsa-ir-build.log" | tr '\n' ' ')"
	else
		mkdir -p "$B/rsa-ir"
		[ -s "$B/rsa-ir/rsa2048.pem" ] || openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 \
			-out "$B/rsa-ir/rsa2048.pem" 2>/dev/null
		"$top/scripts/in-root.sh" "$root" "$irs" "$B/rsa-ir/rsa2048.pem" >"$B/logs/rsa-ir-stock.log" 2>&1
		rc=$?
		d=$(sed -n 's/^bad: live normal-heap hits d\/be *\([0-9]*\).*/\1/p' "$B/logs/rsa-ir-stock.log")
		[ "$rc" = 0 ] && [ "${d:-0}" -gt 0 ] &&
			tap ok "RSA implicit rejection, Debian 13's libcrypto: positive control, d passes through the normal heap ($d piece hits)" ||
			tap not-ok "RSA implicit rejection, Debian 13's libcrypto: positive control" "exit $rc, d/be hits ${d:-none}"
		LD_LIBRARY_PATH=$inst/lib IN_ROOT_ENV=LD_LIBRARY_PATH "$top/scripts/in-root.sh" "$root" "$irs" \
			"$B/rsa-ir/rsa2048.pem" >"$B/logs/rsa-ir-secarena.log" 2>&1
		rc=$?
		# Every count, the HMAC pad states' included (digest contexts, 0025).
		res=$(awk '/live normal-heap hits|after, outside the secure heap/ {
				name = $0; sub(/.*(hits|heap) /, "", name); split(name, f, " ")
				n++
				if (/live/ && f[2] != 0) bad = bad " " $1 f[1] "=" f[2]
				if (/after/ && (f[3] != 0 || f[5] != 0)) bad = bad " " $1 f[1] "=" f[3] "+" f[5]
			}
			END { print n + 0, bad }' "$B/logs/rsa-ir-secarena.log")
		ok=$(grep -c '^bad-padding decryption: ok\|^good decryption: ok, .*matches$\|^signature: ok$' "$B/logs/rsa-ir-secarena.log")
		[ "$rc" = 0 ] && [ "$ok" = 3 ] && [ "${res%% *}" = 126 ] && [ "$res" = "${res%% *} " ] &&
			tap ok "RSA implicit rejection, patched: d, its hash, the kdks, their HMAC pad states, the synthetic message and the key's parts never in the normal heap (${res%% *} counts, all 0)" ||
			tap not-ok "RSA implicit rejection, patched: nothing in the normal heap" "exit $rc, $ok of 3 operations, counts:$res"
	fi

	# QUIC: built against the 3.5 build's headers (the host's are 3.0).
	qss=$B/quic_secret_scan
	if [ -z "$root" ]; then
		:
	elif ! ${CC:-cc} -O2 -Wall -Wextra -Werror -Wl,-z,now -o "$qss" "$here/quic_secret_scan.c" \
		-I"$inst/include" -L"$inst/lib" -lssl -lcrypto >"$B/logs/quic-build.log" 2>&1; then
		tap not-ok "QUIC server: quic_secret_scan built" "$(head -n 3 "$B/logs/quic-build.log" | tr '\n' ' ')"
	else
		"$top/scripts/in-root.sh" "$root" "$qss" >"$B/logs/quic-stock.log" 2>&1
		rc=$?
		leak=$(sed -n 's/^LEAK: \([0-9]*\) piece hits.*/\1/p' "$B/logs/quic-stock.log")
		[ "$rc" = 1 ] && [ "${leak:-0}" -gt 0 ] &&
			tap ok "QUIC server, Debian 13's libssl with its secure heap: positive control, $leak piece hits outside it" ||
			tap not-ok "QUIC server, Debian 13's libssl: positive control, secrets outside the secure heap" \
				"exit $rc, $(tail -n 1 "$B/logs/quic-stock.log")"
		LD_LIBRARY_PATH=$inst/lib SECARENA_BACKEND=mlock IN_ROOT_ENV="LD_LIBRARY_PATH SECARENA_BACKEND" \
			"$top/scripts/in-root.sh" "$root" "$qss" >"$B/logs/quic-secarena.log" 2>&1
		rc=$?
		[ "$rc" = 0 ] && grep -q '^PASS: no secret outside the secure heap$' "$B/logs/quic-secarena.log" &&
			tap ok "QUIC server, patched: no secret, packet key, next-epoch secret or token key outside the arena, live or closed" ||
			tap not-ok "QUIC server, patched: nothing outside the arena" "exit $rc, $(tail -n 1 "$B/logs/quic-secarena.log")"
	fi

	# ---- 7. Debian 13's servers, the hybrid post-quantum group ----
	keys=rsa2048,p256,ed25519,mldsa65,mlkem768 groups=X25519MLKEM768
	if [ "$tests" = all ]; then
		keys=rsa2048,rsa3072,rsa4096,rsa3p3072,p256,p384,ed25519,ed448
		keys=$keys,mldsa44,mldsa65,mldsa87,mlkem512,mlkem768,mlkem1024,slhdsa128s,slhdsa256f
		groups="X25519MLKEM768 X25519 MLKEM768"
	fi
	if [ -n "$root" ]; then
		for g in $groups; do
			LIVE_SCAN_GROUPS=$g OPENSSL_INSTALL=$inst \
				IN_ROOT_ENV="LIVE_SCAN_GROUPS OPENSSL_INSTALL" "$top/scripts/in-root.sh" "$root" \
				"$here/live-scan.sh" "$B/live-scan-trixie-$g" memfd_secret \
				"${LIVE_SCAN_CONFIGS:-stock,stock-secheap,secarena}" \
				s_server,nginx,haproxy,key_holder "$keys" >"$B/logs/live-scan-trixie-$g.tap" 2>"$B/logs/live-scan-trixie-$g.err"
			import_tap "live scan (Debian 13 root, $g)" "$B/logs/live-scan-trixie-$g.tap"
		done
	else
		tap not-ok "live scan (Debian 13 root): the root filesystem" "$(tail -n 2 "$B/logs/trixie-root.err" | tr '\n' ' ')"
	fi
fi
echo "1..$n"
exit 0
