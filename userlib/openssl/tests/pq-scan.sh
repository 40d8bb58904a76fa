#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# userlib/openssl/tests/pq-scan.sh OUT INSTALL: post-quantum private keys,
# TAP on stdout. tests/pq_key_scan.c is built against INSTALL (the patched
# OpenSSL 3.5, build/openssl-3.5/install) and run twice:
#   secarena  on INSTALL's libcrypto, its secure heap on libsecarena
#             (memfd_secret backend): every ML-KEM, ML-DSA and SLH-DSA
#             parameter set must leave 0 copies of its secret parts outside
#             the secure heap, after every step;
#   stock     on Debian 13's own libcrypto (libssl3t64), in the trixie root
#             filesystem (scripts/trixie-root.sh, run through
#             scripts/in-root.sh): the control, which must find copies of
#             every key, so that a 0 above means the copies are gone and not
#             that the scan cannot see them.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
out=${1:?usage: pq-scan.sh OUT INSTALL}
inst=${2:?usage: pq-scan.sh OUT INSTALL}
mkdir -p "$out"
out=$(cd "$out" && pwd)
case $out/ in
"$top"/*) ;;
*) echo "pq-scan: OUT must be inside $top (the root filesystem sees only the tree)" >&2; exit 1 ;;
esac
n=0
tap() { # tap ok|not-ok NAME [DETAIL]
	n=$((n + 1))
	if [ "$1" = ok ]; then echo "ok $n - $2"; else echo "not ok $n - $2${3:+ # $3}"; fi
}
finish() { echo "1..$n"; exit 0; }

# No rpath: the same binary meets whichever libcrypto.so.3 it is given.
# -z now, as Debian builds its servers: a lazy PLT resolution saves the
# vector registers on the stack (_dl_runtime_resolve_xsavec), and right
# after a copy of key bytes they hold its tail. Without it the first ML-KEM
# key of the process left z there (seen with a watchpoint).
bin=$out/pq_key_scan
if ! gcc -O2 -Wall -Wextra -Werror -Wl,-z,now -I"$inst/include" -o "$bin" "$here/pq_key_scan.c" \
	"$inst/lib/libcrypto.so" 2>"$out/build.log"; then
	tap not-ok "pq_key_scan builds against $inst" "$(head -c 300 "$out/build.log")"
	finish
fi

# totals LOG: "ALG HITS" per algorithm of a pq_key_scan run
totals() { awk '$2 == "total" && $3 == "hits" { print $1, $4 }' "$1"; }

env -u OPENSSL_CONF -u OPENSSL_SECARENA SECARENA_BACKEND=memfd_secret \
	LD_LIBRARY_PATH="$inst/lib" "$bin" >"$out/secarena.log" 2>&1
status=$?
if [ $status != 0 ] || ! grep -q '^TOTAL hits' "$out/secarena.log"; then
	tap not-ok "pq_key_scan ran on the patched build" "exit $status: $(tail -n 3 "$out/secarena.log" | tr '\n' ' ')"
else
	grep -q "^OpenSSL 3\.5" "$out/secarena.log" &&
		tap ok "pq_key_scan ran on $(head -n 1 "$out/secarena.log" | cut -d, -f1)" ||
		tap not-ok "pq_key_scan ran on the patched 3.5 build" "$(head -n 1 "$out/secarena.log")"
	while read -r alg hits; do
		[ "$hits" = 0 ] && tap ok "secarena $alg: 0 copies outside the secure heap, every step" ||
			tap not-ok "secarena $alg: 0 copies outside the secure heap" \
				"$hits hits: $(grep -E "^ +$alg +" "$out/secarena.log" | awk '$0 !~ / hits +0$/' | head -n 3 | tr -s ' ' | tr '\n' ';')"
	done < <(totals "$out/secarena.log")
	[ "$(totals "$out/secarena.log" | wc -l)" = 18 ] &&
		tap ok "secarena: all 18 parameter sets scanned" ||
		tap not-ok "secarena: all 18 parameter sets scanned" "$(totals "$out/secarena.log" | wc -l)"
fi

root=$("$top/scripts/trixie-root.sh" 2>"$out/root.log") || {
	tap not-ok "stock control: trixie root filesystem" "$(tail -n 2 "$out/root.log" | tr '\n' ' ')"
	finish
}
"$top/scripts/in-root.sh" "$root" "$bin" >"$out/stock.log" 2>&1
status=$?
if [ $status != 0 ] || ! grep -q '^TOTAL hits' "$out/stock.log"; then
	tap not-ok "stock control ran on Debian 13's libcrypto" "exit $status: $(tail -n 3 "$out/stock.log" | tr '\n' ' ')"
	finish
fi
tap ok "stock control ran on Debian 13's $(head -n 1 "$out/stock.log" | cut -d, -f1)"
while read -r alg hits; do
	[ "$hits" -gt 0 ] && tap ok "stock $alg: copies found outside the secure heap ($hits)" ||
		tap not-ok "stock $alg: copies found outside the secure heap" "0 hits: the scan saw nothing"
done < <(totals "$out/stock.log")
finish
