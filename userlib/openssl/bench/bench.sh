#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# userlib/openssl/bench/bench.sh [ROUNDS] [SECONDS]
#
# What the arena costs a TLS server, measured against its peers in one run:
#
#   stock          Debian's libssl3, no secure heap (what nginx runs today)
#   stock+secheap  Debian's libssl3 with OpenSSL's own secure heap on
#                  (tests/stock_secure_heap.so, LD_PRELOAD, 1 MiB)
#   patched-off    our build, arena not switched on
#   patched+arena  our build with OPENSSL_SECARENA (BENCH_BACKEND, default
#                  device when /dev/secarena exists, else memfd_secret)
#
# BENCH_BRANCH=3.0 (default: Debian 12, build/openssl) or 3.5 (Debian 13,
# build/openssl-3.5; run it inside the Debian 13 root, which make bench-3.5
# does, so that "stock" is Debian 13's OpenSSL and nginx).
# Measures RSA-2048, P-256 and Ed25519 sign/s and X25519 derive/s (openssl
# speed: the last three are where the scrub after each private operation
# weighs the most); on 3.5 also ML-DSA-65 sign/s
# and ML-KEM-768 decaps/s; full TLS 1.2 and 1.3 handshakes/s with an
# RSA-2048 key (handshake_bench: client and server in one process, no
# resumption); and new TLS 1.3 connections per second to Debian's nginx
# (two workers, RSA-2048) from two openssl s_time clients at once, each
# connection a full handshake and one request, with the server's group
# X25519, and on 3.5 also X25519MLKEM768; and new TLS 1.2 and 1.3
# connections per second to Debian's HAProxy (one worker process of two
# threads, nbthread 2: many threads on one process's keys and arena), with
# an RSA-2048 and with a P-256 certificate, from two s_time clients at once.
# The four builds take turns in
# every round (ROUNDS, default 5; SECONDS per measurement, default 3), so
# drift of the machine hits them alike; the table gives each one's median
# and its ratio to stock. Nothing here is a pass/fail test: it prints
# numbers.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
ossl=$(dirname "$here")
top=$(cd "$ossl/../.." && pwd)
branch=${BENCH_BRANCH:-3.0}
case $branch in
3.0) inst=$top/build/openssl/install groups=X25519 ;;
3.5) inst=$top/build/openssl-3.5/install groups="X25519 X25519MLKEM768" ;;
*) echo "bench: BENCH_BRANCH=$branch: not 3.0 or 3.5" >&2; exit 1 ;;
esac
shim=$ossl/build/stock_secure_heap.so
hsb=$ossl/build/handshake_bench
rounds=${1:-5}
secs=${2:-3}

die() { echo "bench: $*" >&2; exit 1; }
case $rounds$secs in *[!0-9]*) die "ROUNDS and SECONDS are whole numbers" ;; esac
[ "$rounds" -ge 1 ] && [ "$secs" -ge 1 ] || die "ROUNDS and SECONDS must be at least 1"
[ -x "$inst/bin/openssl" ] || die "no patched build in $inst: run make -C userlib/openssl openssl${branch/3.0/}"
[ -f "$shim" ] && [ -x "$hsb" ] || die "run make -C userlib/openssl first"
command -v openssl >/dev/null || die "Debian's openssl is not installed"
command -v nginx >/dev/null || die "Debian's nginx is not installed"
command -v haproxy >/dev/null || die "Debian's haproxy is not installed (scripts/install-deps.sh)"
case $(openssl version) in "OpenSSL $branch".*) ;; *) die "BENCH_BRANCH=$branch, but the system has $(openssl version)" ;; esac

if [ -n "${BENCH_BACKEND:-}" ]; then
	backend=$BENCH_BACKEND
elif [ -c /dev/secarena ] && [ -w /dev/secarena ]; then
	backend=device
else
	backend=memfd_secret
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=bench -days 2 \
	-keyout "$tmp/key.pem" -out "$tmp/cert.pem" 2>/dev/null || die "cannot make a key"
# HAProxy reads the certificate and its key from one file.
cat "$tmp/cert.pem" "$tmp/key.pem" >"$tmp/rsa2048.pem"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=bench -days 2 \
	-keyout "$tmp/p256.key" -out "$tmp/p256.crt" 2>/dev/null || die "cannot make a P-256 key"
cat "$tmp/p256.crt" "$tmp/p256.key" >"$tmp/p256.pem"

configs="stock stock+secheap patched-off patched+arena"
env_of() { # the environment a build runs with
	case $1 in
	stock) echo "" ;;
	stock+secheap) echo "LD_PRELOAD=$shim" ;;
	patched-off) echo "LD_LIBRARY_PATH=$inst/lib" ;;
	patched+arena) echo "LD_LIBRARY_PATH=$inst/lib OPENSSL_SECARENA=backend=$backend,strict=yes" ;;
	esac
}
openssl_of() { case $1 in patched*) echo "$inst/bin/openssl" ;; *) command -v openssl ;; esac; }

# Prove each build is what its name says before timing it.
for c in $configs; do
	v=$(env $(env_of "$c") "$(openssl_of "$c")" version) || die "$c: openssl does not run"
	echo "bench: $c: $v" >&2
done
probe=$ossl/build/secure_heap_probe
if [ -x "$probe" ]; then
	for c in $configs; do
		echo "bench: $c: $(env $(env_of "$c") "$probe" 2>&1 | head -n 1)" >&2
	done
fi

# speed CONFIG ALGORITHM LINE COLUMN: one figure of openssl speed, found by
# the name its table gives the row (LINE, a regular expression: 3.0 says
# "rsa 2048 bits", 3.5 "rsa2048") and the column of the header above it.
speed() {
	env $(env_of "$1") "$(openssl_of "$1")" speed -seconds "$secs" "$2" 2>/dev/null |
		awk -v row="$3" -v col="$4" '
		/[a-z]\/s( |$)/ && $1 !~ /[0-9:]/ { n = split($0, h); next }	# a header line
		$0 ~ "^ *" row " " {
			for (i = 1; i <= n; i++)
				if (h[i] == col) { print $(NF - n + i); f = 1; exit }
		}
		END { exit !f }'
}
hs() { # handshakes/s
	env $(env_of "$1") "$hsb" "$tmp/key.pem" "$tmp/cert.pem" "$2" "$secs" |
		awk '$5 == "per_second" { print $6; f = 1 } END { exit !f }'
}

# s_time_pair PORT TLS: two s_time clients at once for SECS seconds; the
# new connections per second of both together, over the wall time.
s_time_pair() {
	local t0 t1 a b
	t0=$(date +%s.%N)
	openssl s_time -connect "127.0.0.1:$1" -new "-tls${2/./_}" -www / -time "$secs" >"$tmp/st1" 2>&1 &
	a=$!
	openssl s_time -connect "127.0.0.1:$1" -new "-tls${2/./_}" -www / -time "$secs" >"$tmp/st2" 2>&1
	b=$?
	wait "$a" || b=1
	t1=$(date +%s.%N)
	[ "$b" = 0 ] || return 1
	awk -v t="$t0 $t1" '/connections in [0-9.]+s;/ { c += $1; f++ }
		END { split(t, w, " "); if (f != 2) exit 1; printf "%.1f\n", c / (w[2] - w[1]) }' "$tmp/st1" "$tmp/st2"
}

# nginx CONFIG GROUP: new TLS 1.3 connections/s, two s_time clients at once.
port=${BENCH_PORT:-18643}
nginx_start() { # nginx_start CONFIG GROUP
	mkdir -p "$tmp/nginx/tmp"
	sed -e "s|@OUT@|$tmp/nginx|g" -e "s|@PORT@|$port|g" -e "s|@KEY@|$tmp/key.pem|g" \
		-e "s|@CRT@|$tmp/cert.pem|g" -e "s|@GROUP@|$2|g" "$here/nginx-bench.conf.in" >"$tmp/nginx/nginx.conf"
	env $(env_of "$1") nginx -c "$tmp/nginx/nginx.conf" -e "$tmp/nginx/error.log" >"$tmp/nginx/log" 2>&1 &
	ngx=$!
	for i in $(seq 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
nginx_stop() {
	kill "$ngx" 2>/dev/null
	wait "$ngx" 2>/dev/null
	pkill -f "nginx -c $tmp/nginx/nginx.conf" 2>/dev/null
	true
}
nginx_rate() {
	local b
	nginx_start "$1" "$2" || { nginx_stop; return 1; }
	# The group the server chose, from a client that offers both (3.5's
	# default list): s_client names a hybrid group "Negotiated TLS1.3
	# group", a classic one by its "Peer Temp Key" (3.0: "Server Temp Key").
	if ! echo | openssl s_client -connect "127.0.0.1:$port" -tls1_3 2>/dev/null |
		grep -Eq "^(Negotiated TLS1.3 group: $2|(Peer|Server) Temp Key: $2,)"; then
		echo "bench: $1: nginx did not negotiate $2" >&2
		nginx_stop
		return 1
	fi
	s_time_pair "$port" 1.3 || b=1
	nginx_stop
	return "${b:-0}"
}

# haproxy_rate CONFIG KEY TLS: new connections/s to HAProxy (nbthread 2).
haproxy_rate() {
	local hap i rc=0
	mkdir -p "$tmp/haproxy"
	sed -e "s|@OUT@|$tmp/haproxy|g" -e "s|@PORT@|$port|g" -e "s|@PEM@|$tmp/$2.pem|g" \
		-e "s|@TLS@|$3|g" -e "s|@EXTRA@||" -e "s|@GLOBAL@||" "$ossl/tests/haproxy.cfg.in" >"$tmp/haproxy/haproxy.cfg"
	env $(env_of "$1") haproxy -W -db -f "$tmp/haproxy/haproxy.cfg" >"$tmp/haproxy/log" 2>&1 &
	hap=$!
	for i in $(seq 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
		sleep 0.1
	done
	s_time_pair "$port" "$3" || rc=1
	kill "$hap" 2>/dev/null
	wait "$hap" 2>/dev/null
	pkill -f "haproxy -W -db -f $tmp/haproxy/haproxy.cfg" 2>/dev/null
	return $rc
}

: >"$tmp/results"
for r in $(seq 1 "$rounds"); do
	echo "bench: round $r of $rounds" >&2
	for c in $configs; do
		v=$(speed "$c" rsa2048 'rsa( 2048 bits|2048)' sign/s) || die "$c: openssl speed rsa2048 failed"
		echo "rsa2048-sign/s $c $v" >>"$tmp/results"
		# The quick operations, where the scrub after each private
		# operation (3.0 0017, 3.5 0026: 16 KiB of stack and the vector
		# registers) weighs the most.
		v=$(speed "$c" ecdsap256 '256 bits ecdsa \(nistp256\)' sign/s) || die "$c: openssl speed ecdsap256 failed"
		echo "p256-sign/s $c $v" >>"$tmp/results"
		v=$(speed "$c" ed25519 '253 bits EdDSA \(Ed25519\)' sign/s) || die "$c: openssl speed ed25519 failed"
		echo "ed25519-sign/s $c $v" >>"$tmp/results"
		v=$(speed "$c" ecdhx25519 '253 bits ecdh \(X25519\)' op/s) || die "$c: openssl speed ecdhx25519 failed"
		echo "x25519-derive/s $c $v" >>"$tmp/results"
		if [ "$branch" = 3.5 ]; then
			v=$(speed "$c" ML-DSA-65 ML-DSA-65 sign/s) || die "$c: openssl speed ML-DSA-65 failed"
			echo "mldsa65-sign/s $c $v" >>"$tmp/results"
			v=$(speed "$c" ML-KEM-768 ML-KEM-768 decaps/s) || die "$c: openssl speed ML-KEM-768 failed"
			echo "mlkem768-decaps/s $c $v" >>"$tmp/results"
		fi
		for t in 1.2 1.3; do
			v=$(hs "$c" "$t") || die "$c: handshake_bench TLS $t failed"
			echo "tls$t-handshakes/s $c $v" >>"$tmp/results"
		done
		for g in $groups; do
			v=$(nginx_rate "$c" "$g") || die "$c: nginx with $g: s_time failed ($(tail -n 1 "$tmp/st1" 2>/dev/null))"
			echo "nginx-$g-conn/s $c $v" >>"$tmp/results"
		done
		for k in rsa2048 p256; do
			for t in 1.2 1.3; do
				v=$(haproxy_rate "$c" "$k" "$t") ||
					die "$c: haproxy $k TLS $t: s_time failed ($(tail -n 1 "$tmp/st1" 2>/dev/null); $(tail -n 1 "$tmp/haproxy/log"))"
				echo "haproxy-$k-tls$t-conn/s $c $v" >>"$tmp/results"
			done
		done
	done
done

echo "secarena OpenSSL $branch benchmark: $(nproc) CPUs, $rounds rounds of ${secs}s, arena backend $backend"
echo "medians; ratio = build / stock"
awk -v configs="$configs" '
	{ v[$1, $2, ++n[$1, $2]] = $3; if (!($1 in seen)) { seen[$1]; m[++nm] = $1 } }
	function median(k, c,   i, j, t, a, cnt) {
		cnt = n[k, c]
		for (i = 1; i <= cnt; i++) a[i] = v[k, c, i]
		for (i = 1; i <= cnt; i++) for (j = i + 1; j <= cnt; j++)
			if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return cnt % 2 ? a[(cnt + 1) / 2] : (a[cnt / 2] + a[cnt / 2 + 1]) / 2
	}
	END {
		nc = split(configs, cs, " ")
		printf "%-28s", "metric"
		for (i = 1; i <= nc; i++) printf " %16s", cs[i]
		printf "\n"
		for (j = 1; j <= nm; j++) {
			base = median(m[j], "stock")
			printf "%-28s", m[j]
			for (i = 1; i <= nc; i++) printf " %16.1f", median(m[j], cs[i])
			printf "\n%-28s", "  ratio to stock"
			for (i = 1; i <= nc; i++) printf " %16.3f", median(m[j], cs[i]) / base
			# What the arena alone costs: the same build with it off.
			printf "\n%-28s %16s %16s %16s %16.3f\n", "  arena / patched-off", "", "", "",
				median(m[j], "patched+arena") / median(m[j], "patched-off")
		}
	}' "$tmp/results"
