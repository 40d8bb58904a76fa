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
#   patched-off    our build (build/openssl/install), arena not switched on
#   patched+arena  our build with OPENSSL_SECARENA (BENCH_BACKEND, default
#                  device when /dev/secarena exists, else memfd_secret)
#
# Measures RSA-2048 sign/s (openssl speed) and full TLS 1.2 and 1.3
# handshakes/s with an RSA-2048 key (handshake_bench: client and server in
# one process, no resumption).  The four builds take turns in every round
# (ROUNDS, default 5; SECONDS per measurement, default 3), so drift of the
# machine hits them alike; the table gives each one's median and its ratio
# to stock.  Nothing here is a pass/fail test: it prints numbers.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
ossl=$(dirname "$here")
top=$(cd "$ossl/../.." && pwd)
inst=$top/build/openssl/install
shim=$ossl/build/stock_secure_heap.so
hsb=$ossl/build/handshake_bench
rounds=${1:-5}
secs=${2:-3}

die() { echo "bench: $*" >&2; exit 1; }
case $rounds$secs in *[!0-9]*) die "ROUNDS and SECONDS are whole numbers" ;; esac
[ "$rounds" -ge 1 ] && [ "$secs" -ge 1 ] || die "ROUNDS and SECONDS must be at least 1"
[ -x "$inst/bin/openssl" ] || die "no patched build in $inst: run make -C userlib/openssl openssl"
[ -f "$shim" ] && [ -x "$hsb" ] || die "run make -C userlib/openssl first"
command -v openssl >/dev/null || die "Debian's openssl is not installed"

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

speed() { # sign/s of RSA-2048
	env $(env_of "$1") "$(openssl_of "$1")" speed -seconds "$secs" rsa2048 2>/dev/null |
		awk '$1 == "rsa" && $2 == "2048" { print $6; f = 1 } END { exit !f }'
}
hs() { # handshakes/s
	env $(env_of "$1") "$hsb" "$tmp/key.pem" "$tmp/cert.pem" "$2" "$secs" |
		awk '$5 == "per_second" { print $6; f = 1 } END { exit !f }'
}

: >"$tmp/results"
for r in $(seq 1 "$rounds"); do
	echo "bench: round $r of $rounds" >&2
	for c in $configs; do
		v=$(speed "$c") || die "$c: openssl speed failed"
		echo "rsa2048-sign/s $c $v" >>"$tmp/results"
		for t in 1.2 1.3; do
			v=$(hs "$c" "$t") || die "$c: handshake_bench TLS $t failed"
			echo "tls$t-handshakes/s $c $v" >>"$tmp/results"
		done
	done
done

echo "secarena OpenSSL benchmark: $(nproc) CPUs, $rounds rounds of ${secs}s, arena backend $backend"
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
		printf "%-22s", "metric"
		for (i = 1; i <= nc; i++) printf " %16s", cs[i]
		printf "\n"
		for (j = 1; j <= nm; j++) {
			base = median(m[j], "stock")
			printf "%-22s", m[j]
			for (i = 1; i <= nc; i++) printf " %16.1f", median(m[j], cs[i])
			printf "\n%-22s", "  ratio to stock"
			for (i = 1; i <= nc; i++) printf " %16.3f", median(m[j], cs[i]) / base
			printf "\n"
		}
	}' "$tmp/results"
