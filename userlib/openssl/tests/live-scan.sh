#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# userlib/openssl/tests/live-scan.sh OUT BACKEND CONFIGS [SERVERS] [KEYS]
#
# Live servers after real handshakes, read from outside by tools/leakscan.
# For each server (s_server: openssl s_server; nginx: Debian's nginx, master
# and two workers), key and TLS version (1.2, 1.3), and each configuration:
#   stock           Debian's libssl/libcrypto, no secure heap (what nginx runs)
#   stock-secheap   the same with OpenSSL's own secure heap switched on
#                   (tests/stock_secure_heap.so, LD_PRELOAD); its mapping is
#                   given to the scanner as an arena range, so hits inside it
#                   (it is readable) count apart from the normal heap's
#   secarena        the patched build (LD_LIBRARY_PATH) with OPENSSL_SECARENA
#                   on BACKEND (device in the VM, memfd_secret on a host)
# it starts the server, makes 10 requests (curl for nginx, s_client for
# s_server), scans every server process and writes one row per process to
# OUT/leaks.tsv.  TAP on stdout, plan last:
#   secarena: 0 hits outside the arena in every process, exactly one arena
#             region per process, and it is not readable (exact counts);
#   stock:    at least one whole private component found (the positive
#             control: the scanner sees keys when they are there);
#   stock-secheap: its hits are reported, not asserted (they are OpenSSL's).
# CONFIGS, SERVERS, KEYS: comma-separated subsets (default: all).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
out=${1:?usage: live-scan.sh OUT BACKEND CONFIGS [SERVERS] [KEYS]}
backend=${2:?backend}
configs=${3:-stock,stock-secheap,secarena}
servers=${4:-s_server,nginx}
keys=${5:-rsa2048,rsa3072,rsa4096,p256,p384,ed25519}
install=${OPENSSL_INSTALL:-$top/build/openssl/install}
leakscan=$top/tools/leakscan/build/leakscan
shim=$top/userlib/openssl/build/stock_secure_heap.so
port=${LIVE_SCAN_PORT:-18443}
requests=${LIVE_SCAN_REQUESTS:-10}

n=0
tap() { # tap ok|not-ok NAME [DETAIL]
	n=$((n + 1))
	if [ "$1" = ok ]; then echo "ok $n - $2"; else echo "not ok $n - $2${3:+ # $3}"; fi
}
finish() { echo "1..$n"; exit 0; }

mkdir -p "$out/keys" "$out/nginx/tmp" "$out/logs"
for f in "$leakscan" "$shim" "$install/lib/libcrypto.so.3"; do
	[ -e "$f" ] || { tap not-ok "live scan prerequisites" "missing $f"; finish; }
done
command -v nginx >/dev/null || { tap not-ok "live scan prerequisites" "no nginx"; finish; }
printf 'server\tconfig\tkey\ttls\tprocess\twhole\tpieces\tpem\tder\tarena_regions\treadable\n' \
	>"$out/leaks.tsv"

genkey() { # genkey NAME: key and self-signed certificate, system openssl
	local name=$1 args
	[ -s "$out/keys/$name.key" ] && return 0
	case $name in
	rsa*) args=(-newkey "rsa:${name#rsa}") ;;
	p256) args=(-newkey ec -pkeyopt ec_paramgen_curve:P-256) ;;
	p384) args=(-newkey ec -pkeyopt ec_paramgen_curve:P-384) ;;
	ed25519) args=(-newkey ed25519) ;;
	*) return 1 ;;
	esac
	openssl req -x509 "${args[@]}" -nodes -keyout "$out/keys/$name.key" \
		-out "$out/keys/$name.crt" -subj /CN=localhost -days 30 2>/dev/null
}

# The environment of each configuration, as an env(1) argument list.
config_env() {
	case $1 in
	stock) echo "SECARENA_LIVE_SCAN=stock" ;;
	stock-secheap) echo "LD_PRELOAD=$shim STOCK_SECURE_HEAP_REPORT=$out/secheap.range" ;;
	secarena) echo "LD_LIBRARY_PATH=$install/lib OPENSSL_SECARENA=backend=$backend,strict=yes" ;;
	esac
}

wait_port() {
	local i
	for i in $(seq 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

start_server() { # start_server SERVER CONFIG KEY TLS -> pids in $pids
	local server=$1 config=$2 key=$3 tls=$4 k=$out/keys/$3 bin=openssl
	pids=""
	rm -f "$out/secheap.range"
	[ "$config" = secarena ] && bin=$install/bin/openssl
	if [ "$server" = s_server ]; then
		# shellcheck disable=SC2046
		env $(config_env "$config") "$bin" s_server -quiet -www -accept "$port" \
			-key "$k.key" -cert "$k.crt" "-tls${tls/./_}" \
			>"$out/logs/$server-$config-$key-$tls.log" 2>&1 &
		srv=$!
	else
		sed -e "s|@OUT@|$out/nginx|g" -e "s|@PORT@|$port|g" -e "s|@KEY@|$k.key|g" \
			-e "s|@CRT@|$k.crt|g" -e "s|@TLS@|TLSv$tls|g" \
			"$here/nginx.conf.in" >"$out/nginx/nginx.conf"
		# shellcheck disable=SC2046
		env $(config_env "$config") nginx -c "$out/nginx/nginx.conf" -e "$out/nginx/error.log" \
			>"$out/logs/$server-$config-$key-$tls.log" 2>&1 &
		srv=$!
	fi
	wait_port || return 1
	if [ "$server" = nginx ]; then
		sleep 0.3
		pids="$srv $(pgrep -P "$srv" | tr '\n' ' ')"
	else
		pids=$srv
	fi
}

stop_server() {
	kill "$srv" 2>/dev/null
	wait "$srv" 2>/dev/null
	# nginx workers exit with the master; never leave one on the port.
	pkill -f "nginx -c $out/nginx/nginx.conf" 2>/dev/null
	true
}

requests() { # requests SERVER TLS: 0 if every request succeeded
	local server=$1 tls=$2 i ok=0
	for i in $(seq "$requests"); do
		if [ "$server" = nginx ]; then
			curl -sk --max-time 20 "--tlsv$tls" --tls-max "$tls" "https://127.0.0.1:$port/" |
				grep -q '^secarena live scan$' && ok=$((ok + 1))
		else
			printf 'GET / HTTP/1.0\r\n\r\n' |
				timeout 20 openssl s_client -connect "127.0.0.1:$port" "-tls${tls/./_}" \
					-quiet 2>/dev/null | grep -q 'HTTP/1.0 200' && ok=$((ok + 1))
		fi
	done
	[ "$ok" = "$requests" ]
}

field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p"; }

for key in ${keys//,/ }; do
	genkey "$key" || { tap not-ok "key $key generated"; continue; }
	for server in ${servers//,/ }; do
		for tls in 1.2 1.3; do
			for config in ${configs//,/ }; do
				name="$server $config $key TLS$tls"
				if ! start_server "$server" "$config" "$key" "$tls"; then
					tap not-ok "$name: server started" \
						"$(tail -n 3 "$out/logs/$server-$config-$key-$tls.log" | tr '\n' ' ')"
					stop_server
					continue
				fi
				if ! requests "$server" "$tls"; then
					tap not-ok "$name: $requests requests answered"
					stop_server
					continue
				fi
				total_whole=0 bad=""
				for p in $pids; do
					role=$(tr '\0' ' ' <"/proc/$p/cmdline" | sed 's/ *$//')
					case $role in
					"nginx: master"*) role=master ;;
					"nginx: worker"*) role=worker-$p ;;
					*) role=s_server ;;
					esac
					# OpenSSL's secure heap, where the shim says it is: its
					# hits count apart (it is readable, which the table shows).
					range=()
					[ "$config" = stock-secheap ] && [ -s "$out/secheap.range" ] &&
						range=(--arena-range "$(head -n 1 "$out/secheap.range")")
					"$leakscan" "${range[@]}" "$out/keys/$key.key" "$p" >"$out/logs/scan-$p.txt" 2>&1
					line=$(grep -E "^leakscan: pid $p: outside-arena:" "$out/logs/scan-$p.txt")
					if [ -z "$line" ]; then
						bad="$bad $role:scan-failed"
						continue
					fi
					w=$(echo "$line" | field whole) pc=$(echo "$line" | field pieces)
					pem=$(echo "$line" | field pem) der=$(echo "$line" | field der)
					ar=$(echo "$line" | field regions) rd=$(echo "$line" | field readable)
					printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$server" "$config" \
						"$key" "$tls" "$role" "$w" "$pc" "$pem" "$der" "$ar" "$rd" >>"$out/leaks.tsv"
					total_whole=$((total_whole + w))
					if [ "$config" = secarena ]; then
						[ "$((w + pc + pem + der))" = 0 ] || bad="$bad $role:hits=$((w + pc + pem + der))"
						[ "$ar" = 1 ] || bad="$bad $role:arena-regions=$ar"
						[ "$rd" = 0 ] || bad="$bad $role:arena-readable=$rd"
					fi
				done
				stop_server
				case $config in
				secarena)
					[ -z "$bad" ] && tap ok "$name: 0 hits outside the arena, arena unreadable" ||
						tap not-ok "$name: 0 hits outside the arena, arena unreadable" "$bad" ;;
				stock)
					[ "$total_whole" -gt 0 ] && [ -z "$bad" ] &&
						tap ok "$name: positive control, stock keeps whole copies ($total_whole)" ||
						tap not-ok "$name: positive control, stock keeps whole copies" \
							"whole=$total_whole$bad" ;;
				stock-secheap)
					[ -z "$bad" ] && tap ok "$name: scanned ($total_whole whole copies)" ||
						tap not-ok "$name: scanned" "$bad" ;;
				esac
			done
		done
	done
done
finish
