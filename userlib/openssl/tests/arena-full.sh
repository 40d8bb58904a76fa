#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# arena-full.sh OUTDIR BACKEND: what a full secure heap does to the patched
# OpenSSL, as TAP.
#
#  1. tests/exhaustion_sign for RSA-2048, 3-prime RSA-3072, RSA-PSS and
#     P-256: signatures made while the heap is nearly full may fail, but
#     every signature made once there is room again must verify.
#  2. Debian's nginx (one worker, a 64 KiB arena, RSA-2048) against one
#     client that holds 100 connections open, for TLS 1.2 and 1.3: the
#     arena fills, so some handshakes are refused, with an error in nginx's
#     log, not a crash. Once the client lets go, 40 new connections (more
#     than RSA's blinding counter of 32) must all succeed: curl checks the
#     server's signature in every handshake. The worker must be the same
#     process throughout. While the arena is full, tools/leakscan reads the
#     master and the worker from outside for the key and for the secrets of
#     the held connections (the client's key log): a failed secure
#     allocation must not have put any of them in the normal heap.
#  3. An arena too small for the key at start: nginx -t with an RSA-4096
#     key and one 8 KiB arena fails, and its error says that the secure
#     heap is full, how full, and which setting to raise (from
#     OPENSSL_SECARENA and from openssl.cnf); with a second arena it starts.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
ossl=$(dirname "$here")
top=$(cd "$ossl/../.." && pwd)
inst=${OPENSSL_INSTALL:-$top/build/openssl/install}
leakscan=$top/tools/leakscan/build/leakscan
out=${1:?usage: arena-full.sh OUTDIR BACKEND}
backend=${2:?usage: arena-full.sh OUTDIR BACKEND}
port=${ARENA_FULL_PORT:-18543}
arena="OPENSSL_SECARENA=backend=$backend,strict=yes,size=64K,arenas=1"
n=0
tap() { # tap ok|not-ok NAME [DETAIL]
	n=$((n + 1))
	if [ "$1" = ok ]; then
		echo "ok $n - $2${3:+ # $3}"
	else
		echo "not ok $n - $2${3:+ # $3}"
	fi
}
finish() {
	echo "1..$n"
	exit 0
}
rm -rf "$out"
mkdir -p "$out/nginx/tmp"

# ---- 1. signing with the heap nearly full ----
for key in rsa2048 rsa3p3072 rsapss2048 p256; do
	case $key in
	rsa2048) args=(-algorithm RSA -pkeyopt rsa_keygen_bits:2048) ;;
	rsa3p3072) args=(-algorithm RSA -pkeyopt rsa_keygen_bits:3072 -pkeyopt rsa_keygen_primes:3) ;;
	rsapss2048) args=(-algorithm RSA-PSS -pkeyopt rsa_keygen_bits:2048) ;;
	p256) args=(-algorithm EC -pkeyopt ec_paramgen_curve:P-256) ;;
	esac
	openssl genpkey "${args[@]}" -out "$out/$key.key" 2>/dev/null
	got=$(env "$arena" LD_LIBRARY_PATH="$inst/lib" "$ossl/build/exhaustion_sign" \
		"$out/$key.key" 300 2>"$out/exhaustion-$key.err")
	read -r _ pressured _ failed _ after _ bad <<<"$got"
	if [ "${failed:-0}" -gt 0 ] && [ "${after:-0}" = 900 ] && [ "$bad" = 0 ]; then
		tap ok "$key: signing fails cleanly under pressure, signs right after" \
			"$failed of $pressured failed, $after after, 0 bad"
	else
		tap not-ok "$key: signing fails cleanly under pressure, signs right after" \
			"got '$got' $(head -c 200 "$out/exhaustion-$key.err")"
	fi
done

# ---- 2. nginx with more connections than its arena holds ----
command -v nginx >/dev/null || { tap not-ok "nginx" "no nginx"; finish; }
openssl req -x509 -key "$out/rsa2048.key" -out "$out/rsa2048.crt" -subj /CN=localhost \
	-days 30 2>/dev/null

field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p"; }

# scan_full KEYLOG PID...: "0" if every process has one arena, unreadable,
# and no hit outside it; else what was found.
scan_full() {
	local keylog=$1 p line hits found=""
	shift
	for p in "$@"; do
		"$leakscan" --keylog "$keylog" "$out/rsa2048.key" "$p" >"$out/scan-$p.txt" 2>&1
		line=$(grep -E "^leakscan: pid $p: outside-arena:" "$out/scan-$p.txt")
		if [ -z "$line" ]; then
			found="$found pid $p: scan failed"
			continue
		fi
		hits=0
		for f in whole pieces pem der tls tlskeys; do
			hits=$((hits + $(echo "$line" | field "$f")))
		done
		[ "$hits" = 0 ] || found="$found pid $p: $hits hits"
		[ "$(echo "$line" | field regions)" = 1 ] && [ "$(echo "$line" | field readable)" = 0 ] ||
			found="$found pid $p: not one unreadable arena"
	done
	echo "${found:-0}"
}

# open_conns: established TCP connections whose local port is $port (the
# server's side), from /proc/net/tcp (no ss(8) needed).
open_conns() {
	awk -v p="$(printf ':%04X' "$port")" '$2 ~ p"$" && $4 == "01" { n++ } END { print n + 0 }' \
		/proc/net/tcp
}

answered_all() { # answered_all TLS COUNT: 0 if COUNT new connections all answered
	local tls=$1 ok=0
	for _ in $(seq "$2"); do
		curl -sk --max-time 20 "--tlsv$tls" --tls-max "$tls" "https://127.0.0.1:$port/" |
			grep -q '^secarena live scan$' && ok=$((ok + 1))
	done
	echo "$ok"
	[ "$ok" = "$2" ]
}

for tls in 1.2 1.3; do
	sed -e "s|@OUT@|$out/nginx|g" -e "s|@PORT@|$port|g" -e "s|@KEY@|$out/rsa2048.key|g" \
		-e "s|@CRT@|$out/rsa2048.crt|g" -e "s|@TLS@|TLSv$tls|g" -e "s|@EXTRA@||" \
		-e 's/worker_processes 2;/worker_processes 1;/' -e 's/worker_connections 64;/worker_connections 512;/' \
		"$here/nginx.conf.in" >"$out/nginx/nginx.conf"
	: >"$out/nginx/error.log"
	env "$arena" LD_LIBRARY_PATH="$inst/lib" nginx -c "$out/nginx/nginx.conf" \
		-e "$out/nginx/error.log" >"$out/nginx-$tls.log" 2>&1 &
	srv=$!
	for _ in $(seq 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
		sleep 0.1
	done
	sleep 0.3
	worker=$(pgrep -P "$srv")
	first=$(answered_all "$tls" 3)

	# The client holds its connections until its stdin closes.
	rm -f "$out/keylog-$tls"
	coproc HOLD { python3 "$here/hold_tls.py" "$port" "$tls" 100 "$out/keylog-$tls"; }
	read -r -t 300 _ held _ refused <&"${HOLD[0]}"
	scanned=$(scan_full "$out/keylog-$tls" "$srv" "$worker")
	eval "exec ${HOLD[1]}>&-"
	wait "$HOLD_PID" 2>/dev/null
	# Until nginx has closed them all and freed their arena blocks.
	for _ in $(seq 100); do
		[ "$(open_conns)" = 0 ] && break
		sleep 0.1
	done
	after=$(answered_all "$tls" 40)
	logged=$(grep -c 'malloc failure' "$out/nginx/error.log")
	still=$(pgrep -P "$srv")
	secrets=$(grep -c '^[A-Z]' "$out/keylog-$tls" 2>/dev/null)
	kill "$srv" 2>/dev/null
	wait "$srv" 2>/dev/null
	pkill -f "nginx -c $out/nginx/nginx.conf" 2>/dev/null

	detail="before 3/$first, held ${held:-?} refused ${refused:-?}, after 40/$after, log: $logged malloc failures"
	if [ "$first" = 3 ] && [ "${held:-0}" -gt 0 ] && [ "${refused:-0}" -gt 0 ] && [ "$logged" -gt 0 ]; then
		tap ok "nginx TLS $tls: the arena fills, handshakes are refused with an error" "$detail"
	else
		tap not-ok "nginx TLS $tls: the arena fills, handshakes are refused with an error" "$detail"
	fi
	if [ "$after" = 40 ] && [ -n "$worker" ] && [ "$still" = "$worker" ] &&
		! grep -q 'exited on signal' "$out/nginx/error.log"; then
		tap ok "nginx TLS $tls: same worker, every handshake after signs right" "$detail"
	else
		tap not-ok "nginx TLS $tls: same worker, every handshake after signs right" \
			"$detail, worker $worker then $still"
	fi
	if [ "$scanned" = 0 ] && [ "${secrets:-0}" -gt 0 ]; then
		tap ok "nginx TLS $tls: arena full, 0 hits outside it, arena unreadable" \
			"key and $secrets logged secrets looked for"
	else
		tap not-ok "nginx TLS $tls: arena full, 0 hits outside it, arena unreadable" \
			"${secrets:-0} logged secrets;$scanned"
	fi
done

# ---- 3. an arena too small for the key at start ----
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:4096 -out "$out/rsa4096.key" 2>/dev/null
openssl req -x509 -key "$out/rsa4096.key" -out "$out/rsa4096.crt" -subj /CN=localhost \
	-days 30 2>/dev/null
sed -e "s|@OUT@|$out/nginx|g" -e "s|@PORT@|$port|g" -e "s|@KEY@|$out/rsa4096.key|g" \
	-e "s|@CRT@|$out/rsa4096.crt|g" -e "s|@TLS@|TLSv1.3|g" -e "s|@EXTRA@||" \
	"$here/nginx.conf.in" >"$out/nginx/nginx-4096.conf"
cnf=$out/secarena-small.cnf
printf 'openssl_conf = init\n[init]\nsecarena = sa\n[sa]\nbackend = %s\nstrict = yes\nsize = 8K\narenas = 1\n' \
	"$backend" >"$cnf"
full="PEM_read_bio_PrivateKey() failed .*secure malloc failure:secure heap full: no room for a block of [0-9]* bytes ([0-9]* of 8192 bytes in use, 1 of at most 1 arenas of size=8192): raise arenas= or size= in OPENSSL_SECARENA or the secarena section of openssl.cnf"
# start_case NAME STATUS PATTERN ENV... -- COMMAND...: STATUS 0 or "fails"
start_case() {
	local name=$1 want=$2 pat=$3 envs=() status
	shift 3
	while [ "$1" != -- ]; do
		envs+=("$1")
		shift
	done
	shift
	env -u OPENSSL_SECARENA -u OPENSSL_CONF "${envs[@]}" LD_LIBRARY_PATH="$inst/lib" \
		timeout 60 "$@" >"$out/start.out" 2>&1
	status=$?
	if { [ "$want" = 0 ] && [ "$status" = 0 ]; } ||
		{ [ "$want" = fails ] && [ "$status" != 0 ] && [ "$status" != 124 ] &&
			grep -q -- "$pat" "$out/start.out"; }; then
		tap ok "$name"
	else
		tap not-ok "$name" "status $status: $(tail -c 400 "$out/start.out" | tr '\n' ' ')"
	fi
}
ngx=(nginx -t -c "$out/nginx/nginx-4096.conf" -e "$out/nginx/error.log")
start_case "nginx -t, RSA-4096, one 8 KiB arena from OPENSSL_SECARENA: says the heap is full and what to raise" \
	fails "$full" OPENSSL_SECARENA="backend=$backend,strict=yes,size=8K,arenas=1" -- "${ngx[@]}"
start_case "nginx -t, RSA-4096, one 8 KiB arena from openssl.cnf: the same error" \
	fails "$full" OPENSSL_CONF="$cnf" -- "${ngx[@]}"
start_case "nginx -t, RSA-4096, two 8 KiB arenas: starts" \
	0 "" OPENSSL_SECARENA="backend=$backend,strict=yes,size=8K,arenas=2" -- "${ngx[@]}"
finish
