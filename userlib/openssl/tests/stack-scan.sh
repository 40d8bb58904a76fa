#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# userlib/openssl/tests/stack-scan.sh OUT SCANNER [KEYS]
#
# What private-key operations leave on the stack (issue 19, part 2):
# SCANNER (tests/private_op_stack_scan.c, built by run-tests.sh) runs each
# key type's private operations on a thread that then waits, and reads the
# process for the key's parts, the RSA CRT values in plain and Montgomery
# form, the ephemeral keys and the shared secrets, every writable mapping
# and the thread's stack included. Per key type (KEYS, comma-separated;
# default every one OpenSSL 3.0 has) six runs: the CPU as it is, with its
# SHA extensions masked (as on CPUs without them) and with BMI2 masked (the
# Montgomery code without MULX), each without and with a signal taken after
# the operations (the kernel saves the vector registers on the stack).
#   patched (OPENSSL_INSTALL, OPENSSL_SECARENA on memfd_secret): every count
#            0 in all six runs;
#   stock    (this system's libcrypto, with its own secure heap for the
#            scanner): the pieces counted, not asserted (what survives
#            depends on what ran later), and how deep the operations wrote
#            into the stack, asserted: no deeper than 14 KiB, 2 KiB short
#            of the 16 KiB the series scrubs (the patched build's own depth
#            cannot be read: its scrub writes there);
#   control  (both): the scanner leaves 48 random bytes in a dead frame of
#            the thread's stack after the operations; every run must find
#            them on the stack and nowhere else, so the scan is seen to read
#            the stack where the patched counts are 0.
# Runs in the environment it is started in (run-tests.sh starts it in the
# Debian 13 root for 3.5); its openssl makes the keys. TAP on stdout, plan
# last; exits 0 when it ran.
set -uo pipefail

out=${1:?usage: stack-scan.sh OUT SCANNER [KEYS]}
scanner=${2:?usage: stack-scan.sh OUT SCANNER [KEYS]}
keys=${3:-rsa2048,rsa3072,rsa4096,p256,p384,ed25519,ed448,x25519,x448,dh2048,dsa2048}
install=${OPENSSL_INSTALL:?OPENSSL_INSTALL: the patched build}
max_depth=14336

n=0
tap() { # tap ok|not-ok NAME [DETAIL]
	n=$((n + 1))
	if [ "$1" = ok ]; then echo "ok $n - $2"; else echo "not ok $n - $2${3:+ # $3}"; fi
}
finish() { echo "1..$n"; exit 0; }

mkdir -p "$out/keys" "$out/logs"
[ -x "$scanner" ] || { tap not-ok "stack scan prerequisites" "no scanner $scanner"; finish; }
[ -e "$install/lib/libcrypto.so.3" ] || { tap not-ok "stack scan prerequisites" "no $install/lib/libcrypto.so.3"; finish; }

genkey() { # genkey NAME FILE
	case $1 in
	rsa*) openssl genpkey -algorithm RSA -pkeyopt "rsa_keygen_bits:${1#rsa}" -out "$2" ;;
	p256) openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$2" ;;
	p384) openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-384 -out "$2" ;;
	ed25519 | ed448 | x25519 | x448) openssl genpkey -algorithm "${1^^}" -out "$2" ;;
	dh2048) openssl genpkey -algorithm DH -pkeyopt group:ffdhe2048 -out "$2" ;;
	dsa2048)
		openssl genpkey -genparam -algorithm DSA -pkeyopt dsa_paramgen_bits:2048 \
			-out "$out/keys/dsa.param" &&
			openssl genpkey -paramfile "$out/keys/dsa.param" -out "$2"
		;;
	mlkem*) openssl genpkey -algorithm "ML-KEM-${1#mlkem}" -out "$2" ;;
	mldsa*) openssl genpkey -algorithm "ML-DSA-${1#mldsa}" -out "$2" ;;
	slhdsa128f) openssl genpkey -algorithm SLH-DSA-SHA2-128f -out "$2" ;;
	*) return 1 ;;
	esac
}

# counts LOG: "HEAP STACK" summed over every pattern of one run but the
# scanner's own control
counts() {
	awk '/^ops: after, outside the secure heap/ && !/ control residue / { h += $(NF - 2); s += $NF }
		END { print h + 0, s + 0 }' "$1"
}
# control LOG: "HEAP STACK" of the control residue (stack only when the scan
# reads the thread's stack: "0 N", N > 0)
control() {
	awk '/^ops: after, outside the secure heap control residue / { print $(NF - 2), $NF; f = 1 }
		END { if (!f) print "none" }' "$1"
}
# what LOG: the patterns a run found outside, as "name=heap+stack ..."
what() {
	awk '/^ops: after, outside the secure heap/ && !/ control residue / && ($(NF - 2) + $NF) > 0 {
		name = $0; sub(/^ops: after, outside the secure heap /, "", name)
		sub(/ +heap\/data.*/, "", name); printf "%s=%d+%d ", name, $(NF - 2), $NF }' "$1"
}

stock_total=0
for k in ${keys//,/ }; do
	key=$out/keys/$k.pem
	if [ ! -s "$key" ] && ! genkey "$k" "$key" >"$out/logs/genkey-$k.log" 2>&1; then
		tap not-ok "$k: key made" "$(tail -n 1 "$out/logs/genkey-$k.log")"
		continue
	fi
	bad="" deep_bad="" deepest=0 runs=0 stock_stack=0 ctl_bad=
	for cap in "" ":~0x20000000" ":~0x100"; do
		for sig in 0 1; do
			tag=$k${cap:+-cap${cap#:~}}-sig$sig
			sigenv=()
			[ "$sig" = 1 ] && sigenv=(SCAN_SIGNAL=1)
			# (An empty OPENSSL_ia32cap would mean "no capability at all".)
			env -u OPENSSL_CONF -u OPENSSL_SECARENA ${cap:+"OPENSSL_ia32cap=$cap"} "${sigenv[@]}" \
				"$scanner" "$key" >"$out/logs/$tag-stock.log" 2>&1
			read -r _ s <<<"$(counts "$out/logs/$tag-stock.log")"
			c=$(control "$out/logs/$tag-stock.log")
			case $c in "0 "[1-9]*) ;; *) ctl_bad+="$tag stock: $c; " ;; esac
			stock_stack=$((stock_stack + s))
			grep -q '^operations: ok' "$out/logs/$tag-stock.log" ||
				deep_bad+="$tag: the operations failed; "
			depth=$(sed -n 's/^stack depth written: \([0-9]*\) bytes$/\1/p' "$out/logs/$tag-stock.log")
			if [ -z "$depth" ]; then
				deep_bad+="$tag: no depth; "
			elif [ "$depth" -gt "$max_depth" ]; then
				deep_bad+="$tag: $depth bytes; "
			fi
			[ "${depth:-0}" -gt "$deepest" ] && deepest=$depth
			env -u OPENSSL_CONF OPENSSL_SECARENA=backend=memfd_secret,strict=yes \
				LD_LIBRARY_PATH="$install/lib" ${cap:+"OPENSSL_ia32cap=$cap"} "${sigenv[@]}" \
				"$scanner" "$key" >"$out/logs/$tag-secarena.log" 2>&1
			rc=$?
			log=$out/logs/$tag-secarena.log
			runs=$((runs + 1))
			c=$(control "$log")
			case $c in "0 "[1-9]*) ;; *) ctl_bad+="$tag patched: $c; " ;; esac
			if [ "$rc" != 0 ] || ! grep -q '^secure heap: 1$' "$log" || ! grep -q '^operations: ok' "$log"; then
				bad+="$tag: exit $rc, $(grep -m1 -v '^ops:' "$log" | tail -n 1); "
			elif [ "$(counts "$log")" != "0 0" ]; then
				bad+="$tag: $(what "$log"); "
			fi
		done
	done
	stock_total=$((stock_total + stock_stack))
	[ -z "$bad" ] &&
		tap ok "$k, patched: nothing of the key, its CRT values, ephemeral keys or shared secrets outside the arena, stacks included ($runs runs)" ||
		tap not-ok "$k, patched: nothing outside the arena, stacks included" "$bad"
	[ -z "$ctl_bad" ] &&
		tap ok "$k: control, the residue the scanner leaves on the thread's stack is found there, and only there (stock and patched, $runs runs each)" ||
		tap not-ok "$k: control, the scanner's residue found on the thread's stack" "$ctl_bad"
	[ -z "$deep_bad" ] &&
		tap ok "$k, stock: the operations write at most $deepest bytes deep, within what the series scrubs ($stock_stack pieces left on the stack in $runs runs)" ||
		tap not-ok "$k, stock: the operations write at most $max_depth bytes deep" "$deep_bad"
done
# Stock's own pieces are what later calls happened not to overwrite: a
# count, not a control (RSA-3072 leaves a whole value on 3.0's stack, X25519
# pieces come and go with the signal frame's timing).
echo "# stock: $stock_total pieces on the stack over all key types and runs"
finish
