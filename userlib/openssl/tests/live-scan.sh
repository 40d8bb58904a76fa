#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# userlib/openssl/tests/live-scan.sh OUT BACKEND CONFIGS [SERVERS] [KEYS]
#
# Live servers after real handshakes, read from outside by tools/leakscan.
# For each server (s_server: openssl s_server; nginx: Debian's nginx, master
# and two workers; haproxy: Debian's HAProxy, master and one worker of two
# threads that share the key; key_holder: tests/key_holder.c, which loads the key and
# uses it once, for the keys no server certificate carries; legacy_rsa: the
# same with the RSA-2048 key read through the OpenSSL 1.1 API, so that its
# first use exports it to the provider), key and TLS
# version (1.2, 1.3; none for key_holder), and each configuration:
#   stock           Debian's libssl/libcrypto, no secure heap (what nginx runs)
#   stock-secheap   the same with OpenSSL's own secure heap switched on
#                   (tests/stock_secure_heap.so, LD_PRELOAD); its mapping is
#                   given to the scanner as an arena range, so hits inside it
#                   (it is readable) count apart from the normal heap's
#   secarena        the patched build (LD_LIBRARY_PATH) with OPENSSL_SECARENA
#                   on BACKEND (device in the VM, memfd_secret on a host)
# it starts the server, makes 10 requests (curl for nginx and HAProxy, s_client for
# s_server) whose clients write the TLS secrets to a key log (SSLKEYLOGFILE,
# -keylogfile), scans every server process for the key and for those secrets
# (leakscan --keylog: TLS 1.2 master secrets, TLS 1.3 handshake, traffic and
# exporter secrets, and the record keys derived from them) and writes one
# row per process to OUT/leaks.tsv.  It then holds one connection open (an
# idle s_client) and scans again, so that a live connection's secrets and
# record keys are looked for while they are in use, and with TLS 1.3 the
# resumption PSK of the server's last ticket (from the client's saved
# session, leakscan --secret; counted with the TLS secrets).  TAP on stdout, plan
# last:
#   secarena: 0 hits outside the arena in every process, exactly one arena
#             region per process, and it is not readable (exact counts);
#   stock:    at least one whole private component found (the positive
#             control: the scanner sees keys when they are there), and with
#             a connection open at least one TLS secret hit;
#   stock-secheap: its hits are reported, not asserted (they are OpenSSL's).
# Last, tests/ticket_server with ticket keys the test chose (RSA-2048, TLS
# 1.2 and 1.3, a connection that gets a ticket and one that resumes with
# it): the keys are looked for with leakscan --secret; stock must show them.
# DSA keys have no TLS 1.3 signature scheme and current clients do not offer
# DSA for TLS 1.2 by default: they are scanned in key_holder only, with DH,
# X25519 and X448.
# Post-quantum keys (OpenSSL 3.5 and later, so in the Debian 13 root): ML-DSA
# (mldsa44, mldsa65, mldsa87) serves TLS 1.3 certificates; ML-KEM (mlkem512,
# mlkem768, mlkem1024) and SLH-DSA (slhdsa128s: SHA2-128s, slhdsa256f:
# SHAKE-256f) have no TLS certificate use and run in key_holder.
# CONFIGS, SERVERS, KEYS: comma-separated subsets (default: all).
# LIVE_SCAN_HAPROXY_KEYS=LIST: the keys HAProxy serves (default rsa2048,p256,
# the certificates a HAProxy TLS terminator has, those of them in KEYS; a
# list given here must name TLS keys of KEYS): its key handling is the
# same OpenSSL calls as nginx's, which serves every key type; what HAProxy
# adds is two threads on one process's keys and arena. HAProxy runs with
# tune.ssl.cachesize 0: its own session cache keeps every session's master
# secret in shared memory of its own, out of OpenSSL's reach (openssl.rst);
# LIVE_SCAN_HAPROXY_GLOBAL= (empty) runs it with the cache, and then the
# TLS 1.2 scans find those secrets.
# LIVE_SCAN_GROUPS=LIST: the only key exchange groups of the TLS 1.3 runs,
# e.g. X25519MLKEM768, on both ends: the clients offer only them (s_client
# -groups, curl --curves) and the servers accept only them (s_server
# -groups, nginx ssl_ecdh_curve, HAProxy curves), so that a group a server does not enable
# by default (pure MLKEM768) is served too, and a handshake succeeds only
# with one of them.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
out=${1:?usage: live-scan.sh OUT BACKEND CONFIGS [SERVERS] [KEYS]}
backend=${2:?backend}
configs=${3:-stock,stock-secheap,secarena}
servers=${4:-s_server,nginx,haproxy,key_holder,legacy_rsa,ticket_server}
keys=${5:-rsa2048,rsa3072,rsa4096,rsa3p3072,p256,p384,ed25519,ed448,dsa2048,dh2048,x25519,x448}
install=${OPENSSL_INSTALL:-$top/build/openssl/install}
leakscan=$top/tools/leakscan/build/leakscan
shim=$top/userlib/openssl/build/stock_secure_heap.so
holder=$top/userlib/openssl/build/key_holder
ticket_server=$top/userlib/openssl/build/ticket_server
extra_secrets=()
port=${LIVE_SCAN_PORT:-18443}
haproxy_keys=${LIVE_SCAN_HAPROXY_KEYS:-rsa2048,p256}
requests=${LIVE_SCAN_REQUESTS:-10}

n=0
tap() { # tap ok|not-ok NAME [DETAIL]
	n=$((n + 1))
	if [ "$1" = ok ]; then echo "ok $n - $2"; else echo "not ok $n - $2${3:+ # $3}"; fi
}
finish() { echo "1..$n"; exit 0; }

mkdir -p "$out/keys" "$out/nginx/tmp" "$out/haproxy" "$out/logs"
for f in "$leakscan" "$shim" "$holder" "$ticket_server" "$install/lib/libcrypto.so.3"; do
	[ -e "$f" ] || { tap not-ok "live scan prerequisites" "missing $f"; finish; }
done
command -v nginx >/dev/null || { tap not-ok "live scan prerequisites" "no nginx"; finish; }
if [[ ",$servers," == *,haproxy,* ]] && ! command -v haproxy >/dev/null; then
	tap not-ok "live scan prerequisites" "no haproxy (scripts/install-deps.sh installs it)"
	finish
fi
printf 'server\tconfig\tkey\ttls\tprocess\twhole\tpieces\tpem\tder\tarena_regions\treadable\ttls_secrets\ttls_keys\n' \
	>"$out/leaks.tsv"

genkey() { # genkey NAME: key (and, for TLS, a self-signed certificate), system openssl
	local name=$1 k=$out/keys/$1 args
	[ -s "$k.key" ] && return 0
	case $name in
	rsa3p*) args=(-algorithm RSA -pkeyopt "rsa_keygen_bits:${name#rsa3p}" -pkeyopt rsa_keygen_primes:3) ;;
	rsa*) args=(-algorithm RSA -pkeyopt "rsa_keygen_bits:${name#rsa}") ;;
	p256) args=(-algorithm EC -pkeyopt ec_paramgen_curve:P-256) ;;
	p384) args=(-algorithm EC -pkeyopt ec_paramgen_curve:P-384) ;;
	ed25519 | ed448 | x25519 | x448) args=(-algorithm "$name") ;;
	mldsa*) args=(-algorithm "ML-DSA-${name#mldsa}") ;;
	mlkem*) args=(-algorithm "ML-KEM-${name#mlkem}") ;;
	slhdsa128s) args=(-algorithm SLH-DSA-SHA2-128s) ;;
	slhdsa256f) args=(-algorithm SLH-DSA-SHAKE-256f) ;;
	dh2048) args=(-algorithm DH -pkeyopt group:ffdhe2048) ;;
	dsa2048)
		openssl genpkey -genparam -algorithm DSA -pkeyopt dsa_paramgen_bits:2048 \
			-out "$k.param" 2>/dev/null || return 1
		args=(-paramfile "$k.param") ;;
	*) return 1 ;;
	esac
	openssl genpkey "${args[@]}" -out "$k.key" 2>/dev/null || return 1
	tls_key "$name" || return 0
	openssl req -x509 -key "$k.key" -out "$k.crt" -subj /CN=localhost -days 30 2>/dev/null
}

# 0 if NAME can be a TLS server's certificate key here.
tls_key() {
	case $1 in dh* | x25519 | x448 | dsa* | mlkem* | slhdsa*) return 1 ;; esac
}

# The TLS versions a certificate key serves: ML-DSA has no TLS 1.2 scheme.
tls_versions() {
	case $1 in mldsa*) echo 1.3 ;; *) echo 1.2 1.3 ;; esac
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
	local server=$1 config=$2 key=$3 tls=$4 k=$out/keys/$3 bin=openssl i
	pids=""
	rm -f "$out/secheap.range"
	[ "$config" = secarena ] && bin=$install/bin/openssl
	if [ "$server" = key_holder ] || [ "$server" = legacy_rsa ]; then
		local log=$out/logs/$server-$config-$key.log mode=()
		[ "$server" = legacy_rsa ] && mode=(--legacy-rsa)
		: >"$log"	# an old "ready" must not stand for this start's
		# shellcheck disable=SC2046
		env $(config_env "$config") "$holder" "${mode[@]}" "$k.key" >"$log" 2>&1 &
		srv=$!
		for i in $(seq 100); do
			grep -qs '^ready' "$log" && break
			kill -0 "$srv" 2>/dev/null || return 1
			sleep 0.1
		done
		grep -q '^ready' "$log" || return 1
		pids=$srv
		return 0
	elif [ "$server" = s_server ]; then
		# shellcheck disable=SC2046
		env $(config_env "$config") "$bin" s_server -quiet -www -accept "$port" \
			-key "$k.key" -cert "$k.crt" "-tls${tls/./_}" $(groups_args s_client "$tls") \
			>"$out/logs/$server-$config-$key-$tls.log" 2>&1 &
		srv=$!
	elif [ "$server" = haproxy ]; then
		cat "$k.crt" "$k.key" >"$out/haproxy/$key.pem"
		sed -e "s|@OUT@|$out/haproxy|g" -e "s|@PORT@|$port|g" -e "s|@PEM@|$out/haproxy/$key.pem|g" \
			-e "s|@TLS@|$tls|g" -e "s|@EXTRA@|$(groups_args haproxy "$tls")|" -e "s|@GLOBAL@|${LIVE_SCAN_HAPROXY_GLOBAL-tune.ssl.cachesize 0}|" \
			"$here/haproxy.cfg.in" >"$out/haproxy/haproxy.cfg"
		# -W: master-worker; -db: in the foreground, so $srv is the master.
		# shellcheck disable=SC2046
		env $(config_env "$config") haproxy -W -db -f "$out/haproxy/haproxy.cfg" \
			>"$out/logs/$server-$config-$key-$tls.log" 2>&1 &
		srv=$!
	else
		sed -e "s|@OUT@|$out/nginx|g" -e "s|@PORT@|$port|g" -e "s|@KEY@|$k.key|g" \
			-e "s|@CRT@|$k.crt|g" -e "s|@TLS@|TLSv$tls|g" \
			-e "s|@EXTRA@|$(groups_args nginx "$tls")|" \
			"$here/nginx.conf.in" >"$out/nginx/nginx.conf"
		# shellcheck disable=SC2046
		env $(config_env "$config") nginx -c "$out/nginx/nginx.conf" -e "$out/nginx/error.log" \
			>"$out/logs/$server-$config-$key-$tls.log" 2>&1 &
		srv=$!
	fi
	wait_port || return 1
	if [ "$server" = nginx ] || [ "$server" = haproxy ]; then
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
	pkill -f "haproxy -W -db -f $out/haproxy/haproxy.cfg" 2>/dev/null
	true
}

# The group options of TLS 1.3 runs (TLS 1.2 has no hybrid groups), for
# s_client and s_server, curl, and nginx's configuration.
groups_args() { # groups_args s_client|curl|nginx TLS
	[ -n "${LIVE_SCAN_GROUPS:-}" ] && [ "$2" = 1.3 ] || return 0
	case $1 in
	curl) echo "--curves $LIVE_SCAN_GROUPS" ;;
	nginx) echo "ssl_ecdh_curve $LIVE_SCAN_GROUPS;" ;;
	haproxy) echo "curves $LIVE_SCAN_GROUPS" ;;
	*) echo "-groups $LIVE_SCAN_GROUPS" ;;
	esac
}

requests() { # requests SERVER TLS KEYLOG: 0 if every request succeeded
	local server=$1 tls=$2 keylog=$3 i ok=0
	rm -f "$keylog"
	case $server in key_holder | legacy_rsa) return 0 ;; esac
	for i in $(seq "$requests"); do
		if [ "$server" = nginx ] || [ "$server" = haproxy ]; then
			# shellcheck disable=SC2046 # groups_args is a list of words
			SSLKEYLOGFILE=$keylog curl -sk --max-time 20 "--tlsv$tls" --tls-max "$tls" \
				$(groups_args curl "$tls") "https://127.0.0.1:$port/" | grep -q '^secarena live scan$' && ok=$((ok + 1))
		else
			# shellcheck disable=SC2046
			printf 'GET / HTTP/1.0\r\n\r\n' |
				timeout 20 openssl s_client -connect "127.0.0.1:$port" "-tls${tls/./_}" \
					$(groups_args s_client "$tls") -keylogfile "$keylog" -quiet 2>/dev/null |
				grep -q 'HTTP/1.0 200' && ok=$((ok + 1))
		fi
	done
	[ "$ok" = "$requests" ] && grep -qv '^#' "$keylog"
}

# A connection held open for the duration of a scan: its client's pid in
# $held, its secrets in KEYLOG once the handshake is done, and its session
# in KEYLOG.sess (for TLS 1.3 that carries the resumption PSK of the
# server's last ticket, which the scan looks for too).
hold_connection() { # hold_connection TLS KEYLOG
	local tls=$1 keylog=$2 i n
	rm -f "$keylog" "$keylog.sess"
	# No request: s_server answers one and closes; this one stays idle
	# (-quiet ignores the end of its input).
	# shellcheck disable=SC2046
	timeout 40 openssl s_client -connect "127.0.0.1:$port" "-tls${tls/./_}" $(groups_args s_client "$tls") \
		-keylogfile "$keylog" -sess_out "$keylog.sess" -quiet </dev/null >/dev/null 2>&1 &
	held=$!
	for i in $(seq 100); do
		n=$(grep -vcs '^#' "$keylog")
		[ "${n:-0}" -ge "$([ "$tls" = 1.2 ] && echo 1 || echo 5)" ] && [ -s "$keylog.sess" ] &&
			{ sleep 0.3; return 0; }
		sleep 0.1
	done
	return 1
}

# --secret psk=HEX for the resumption PSK in a saved TLS 1.3 session.
psk_secret() { # psk_secret SESSION_FILE
	local psk
	[ -s "$1" ] || return 0
	psk=$(openssl sess_id -in "$1" -noout -text 2>/dev/null | sed -n 's/^ *Resumption PSK: *//p')
	[ -n "$psk" ] && echo "--secret psk=$psk"
}

field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p"; }

# scan_pids SERVER CONFIG KEY TLS KEYLOG PHASE: every process in $pids, one
# row each in leaks.tsv; sets total_whole, total_tls and bad.
scan_pids() {
	local server=$1 config=$2 key=$3 tls=$4 keylog=$5 phase=$6 p role line w pc pem der ar rd ts tk sc
	local range kl
	total_whole=0 total_tls=0 bad=""
	for p in $pids; do
		role=$(tr '\0' ' ' <"/proc/$p/cmdline" | sed 's/ *$//')
		case $role in
		"nginx: master"*) role=master ;;
		"nginx: worker"*) role=worker-$p ;;
		haproxy*) [ "$p" = "$srv" ] && role=master || role=worker-$p ;;
		*) role=$server ;;
		esac
		# OpenSSL's secure heap, where the shim says it is: its
		# hits count apart (it is readable, which the table shows).
		range=()
		[ "$config" = stock-secheap ] && [ -s "$out/secheap.range" ] &&
			range=(--arena-range "$(head -n 1 "$out/secheap.range")")
		kl=()
		grep -qsv '^#' "$keylog" && kl=(--keylog "$keylog")
		# shellcheck disable=SC2207
		kl+=($(psk_secret "$keylog.sess") "${extra_secrets[@]}")
		"$leakscan" "${range[@]}" "${kl[@]}" "$out/keys/$key.key" "$p" >"$out/logs/scan-$p.txt" 2>&1
		line=$(grep -E "^leakscan: pid $p: outside-arena:" "$out/logs/scan-$p.txt")
		if [ -z "$line" ]; then
			bad="$bad $role:scan-failed"
			continue
		fi
		w=$(echo "$line" | field whole) pc=$(echo "$line" | field pieces)
		pem=$(echo "$line" | field pem) der=$(echo "$line" | field der)
		ts=$(echo "$line" | field tls) tk=$(echo "$line" | field tlskeys)
		sc=$(echo "$line" | field secrets)
		ts=$((ts + sc))	# the resumption PSK counts with the TLS secrets
		ar=$(echo "$line" | field regions) rd=$(echo "$line" | field readable)
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$server$phase" "$config" \
			"$key" "$tls" "$role" "$w" "$pc" "$pem" "$der" "$ar" "$rd" "$ts" "$tk" >>"$out/leaks.tsv"
		total_whole=$((total_whole + w))
		total_tls=$((total_tls + ts))
		if [ "$config" = secarena ]; then
			[ "$((w + pc + pem + der + ts + tk))" = 0 ] ||
				bad="$bad $role:hits=$((w + pc + pem + der)),tls=$ts,tlskeys=$tk"
			[ "$ar" = 1 ] || bad="$bad $role:arena-regions=$ar"
			[ "$rd" = 0 ] || bad="$bad $role:arena-readable=$rd"
		fi
	done
}

# report NAME CONFIG PHASE: one TAP line from scan_pids' totals.  The stock
# positive control asks for TLS secrets only while a connection is open:
# after it closed, what is left of them depends on the server (nginx frees
# a TLS 1.2 session it does not cache with its master key cleansed).
report() {
	local name=$1 config=$2 phase=$3
	case $config in
	secarena)
		[ -z "$bad" ] && tap ok "$name: 0 hits outside the arena, arena unreadable" ||
			tap not-ok "$name: 0 hits outside the arena, arena unreadable" "$bad" ;;
	stock)
		if [ "$phase" != open ]; then
			[ "$total_whole" -gt 0 ] && [ -z "$bad" ] &&
				tap ok "$name: positive control, stock keeps whole copies ($total_whole; TLS secret hits $total_tls)" ||
				tap not-ok "$name: positive control, stock keeps whole copies" \
					"whole=$total_whole$bad"
		else
			[ "$total_whole" -gt 0 ] && [ "$total_tls" -gt 0 ] && [ -z "$bad" ] &&
				tap ok "$name: positive control, stock keeps whole copies ($total_whole) and TLS secrets ($total_tls hits)" ||
				tap not-ok "$name: positive control, stock keeps whole copies and TLS secrets" \
					"whole=$total_whole tls=$total_tls$bad"
		fi ;;
	stock-secheap)
		[ -z "$bad" ] && tap ok "$name: scanned ($total_whole whole copies, $total_tls TLS secret hits)" ||
			tap not-ok "$name: scanned" "$bad" ;;
	esac
}

# A list given by hand names TLS keys of this run: an entry HAProxy could
# not serve would otherwise be left out without a word. (The default list
# is cut down to the run's keys on purpose.)
if [ -n "${LIVE_SCAN_HAPROXY_KEYS:-}" ] && [[ ",$servers," == *,haproxy,* ]]; then
	for key in ${haproxy_keys//,/ }; do
		if [[ ",$keys," != *,$key,* ]]; then
			tap not-ok "LIVE_SCAN_HAPROXY_KEYS: $key" "not one of this run's keys ($keys)"
		elif ! tls_key "$key"; then
			tap not-ok "LIVE_SCAN_HAPROXY_KEYS: $key" "not a key a TLS server can have"
		fi
	done
fi

for key in ${keys//,/ }; do
	genkey "$key" || { tap not-ok "key $key generated"; continue; }
	for server in ${servers//,/ }; do
		[ "$server" = ticket_server ] && continue	# below
		if [ "$server" = key_holder ]; then
			tls_key "$key" && continue
			versions=-
		elif [ "$server" = legacy_rsa ]; then
			[ "$key" = rsa2048 ] || continue
			versions=-
		else
			tls_key "$key" || continue
			[ "$server" = haproxy ] && [[ ",$haproxy_keys," != *,$key,* ]] && continue
			versions=$(tls_versions "$key")
		fi
		for tls in $versions; do
			for config in ${configs//,/ }; do
				name="$server $config $key"
				[ "$tls" = - ] || name="$name TLS$tls"
				keylog=$out/keylog-$server-$config-$key-$tls.txt
				if ! start_server "$server" "$config" "$key" "$tls"; then
					tap not-ok "$name: server started" \
						"$(tail -n 3 "$out/logs/$server-$config-$key"*.log | tr '\n' ' ')"
					stop_server
					continue
				fi
				if ! requests "$server" "$tls" "$keylog"; then
					tap not-ok "$name: $requests requests answered, secrets logged"
					stop_server
					continue
				fi
				scan_pids "$server" "$config" "$key" "$tls" "$keylog" ""
				report "$name" "$config" closed
				if [ "$versions" != - ]; then
					# The same server with one connection in use (s_client,
					# idle), so that its secrets and record keys are live.
					if hold_connection "$tls" "$keylog.held"; then
						scan_pids "$server" "$config" "$key" "$tls" "$keylog.held" "+open"
						report "$name, connection open" "$config" open
					else
						tap not-ok "$name: a connection held open"
					fi
					kill "$held" 2>/dev/null
					wait "$held" 2>/dev/null
				fi
				stop_server
			done
		done
	done
done

# The session ticket keys: only a server that was given them knows them.
if [[ ",$servers," == *,ticket_server,* ]] && genkey rsa2048; then
	k=$out/keys/rsa2048
	head -c 80 /dev/urandom >"$out/ticket.keys"
	hex=$(od -An -v -tx1 "$out/ticket.keys" | tr -d ' \n')
	extra_secrets=(--secret "ticket_hmac=${hex:32:64}" --secret "ticket_aes=${hex:96:64}")
	for tls in 1.2 1.3; do
		for config in ${configs//,/ }; do
			name="ticket_server $config rsa2048 TLS$tls"
			pids="" log=$out/logs/ticket_server-$config-$tls.log
			# shellcheck disable=SC2046
			env $(config_env "$config") "$ticket_server" "$k.crt" "$k.key" "$out/ticket.keys" "$port" \
				>"$log" 2>&1 &
			srv=$!
			if ! wait_port; then
				tap not-ok "$name: server started" "$(tail -n 3 "$log" | tr '\n' ' ')"
				stop_server
				continue
			fi
			pids=$srv
			rm -f "$out/ticket.sess"
			# -quiet: the first client waits for the server to close, so
			# that it has read the TLS 1.3 tickets; the second prints
			# whether it resumed.
			printf 'GET / HTTP/1.0\r\n\r\n' |
				timeout 20 openssl s_client -connect "127.0.0.1:$port" "-tls${tls/./_}" \
					-sess_out "$out/ticket.sess" -quiet >/dev/null 2>&1
			reused=$(printf 'GET / HTTP/1.0\r\n\r\n' |
				timeout 20 openssl s_client -connect "127.0.0.1:$port" "-tls${tls/./_}" \
					-sess_in "$out/ticket.sess" 2>/dev/null | grep -c '^Reused')
			if [ "$reused" != 1 ]; then
				tap not-ok "$name: a ticket issued and a session resumed with it" "reused=$reused"
				stop_server
				continue
			fi
			scan_pids ticket_server "$config" rsa2048 "$tls" /dev/null ""
			stop_server
			report "$name, ticket keys" "$config" open
		done
	done
	extra_secrets=()
fi
finish
