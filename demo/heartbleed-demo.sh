#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# demo/heartbleed-demo.sh OUT: the before/after table of make demo.
#
# Runs as root where /dev/secarena exists (the demo VM, or a host that
# loaded the module).  Starts Debian's nginx twice on loopback with the same
# RSA-2048 key and certificate: on Debian's OpenSSL (port 8443) and on the
# patched OpenSSL with OPENSSL_SECARENA (port 9443).  After real HTTPS
# requests (curl) it reads every nginx process from outside the way a key
# hunter would (tools/leakscan: each private component, big- and
# little-endian, whole and in 16-byte pieces, the key file's PEM and DER),
# tries the arena through /proc/PID/mem, dumps a worker's core (SIGABRT)
# and scans the core, and prints one table.  Exit status 0 only if the
# secarena column is clean and the stock column shows the key (so the scan
# is known to see keys that are there).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: heartbleed-demo.sh OUT}
inst=${OPENSSL_INSTALL:-$top/build/openssl/install}
leakscan=$top/tools/leakscan/build/leakscan
stat=$top/tools/secarena-stat/build/secarena-stat
requests=${DEMO_REQUESTS:-20}
say() { echo "demo: $*"; }
die() { echo "demo: $*" >&2; exit 2; }

for f in "$inst/bin/openssl" "$leakscan" "$stat"; do
	[ -x "$f" ] || die "missing $f (scripts/demo.sh builds it)"
done
command -v nginx >/dev/null || die "Debian's nginx is not installed"
command -v curl >/dev/null || die "curl is not installed"
[ -c /dev/secarena ] || die "no /dev/secarena: load secarena.ko first"

rm -rf "$out"
mkdir -p "$out"
# Cores are written by the worker (user nobody after nginx drops root):
# a world-writable directory on a local filesystem.
cores=$(mktemp -d /tmp/secarena-demo-cores.XXXXXX)
chmod 1777 "$cores"
old_pattern=$(cat /proc/sys/kernel/core_pattern)
cleanup() {
	echo "$old_pattern" >/proc/sys/kernel/core_pattern
	for c in stock secarena; do
		[ -s "$out/$c/nginx.pid" ] && kill "$(cat "$out/$c/nginx.pid")" 2>/dev/null
	done
	rm -rf "$cores"
}
trap cleanup EXIT
echo "$cores/core.%p" >/proc/sys/kernel/core_pattern

key=$out/server.key crt=$out/server.crt
if [ -s "${DEMO_KEY:-}" ] && [ -s "${DEMO_CERT:-}" ]; then
	cp "$DEMO_KEY" "$key" && cp "$DEMO_CERT" "$crt"
else
	say "generating an RSA-2048 key and certificate"
	openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=localhost -days 2 \
		-keyout "$key" -out "$crt" 2>/dev/null || die "openssl req failed"
fi

start_nginx() { # start_nginx NAME PORT ENV...
	local name=$1 port=$2 d=$out/$1 i
	shift 2
	mkdir -p "$d/tmp"
	cat >"$d/nginx.conf" <<-EOF
		# make demo: $name
		daemon on;
		worker_processes 2;
		worker_rlimit_core 256m;
		working_directory $cores;
		pid $d/nginx.pid;
		error_log $d/error.log;
		events { worker_connections 64; }
		http {
			access_log off;
			client_body_temp_path $d/tmp;
			proxy_temp_path $d/tmp;
			fastcgi_temp_path $d/tmp;
			uwsgi_temp_path $d/tmp;
			scgi_temp_path $d/tmp;
			server {
				listen 127.0.0.1:$port ssl;
				ssl_certificate $crt;
				ssl_certificate_key $key;
				location / { return 200 "hello from $name\n"; }
			}
		}
	EOF
	env "$@" nginx -c "$d/nginx.conf" -e "$d/error.log" >"$d/start.log" 2>&1 ||
		die "$name nginx did not start: $(tail -n 3 "$d/start.log" "$d/error.log" 2>/dev/null)"
	for i in $(seq 100); do
		[ -s "$d/nginx.pid" ] && [ "$(pgrep -P "$(cat "$d/nginx.pid")" | wc -l)" = 2 ] && return 0
		sleep 0.1
	done
	die "$name nginx has no two workers"
}

say "starting nginx on Debian's OpenSSL (port 8443) and on secarena (port 9443)"
start_nginx stock 8443
start_nginx secarena 9443 LD_LIBRARY_PATH="$inst/lib" OPENSSL_SECARENA=backend=device,strict=yes

say "$requests HTTPS requests to each (curl)"
for c in stock:8443 secarena:9443; do
	ok=0
	for i in $(seq "$requests"); do
		curl -sk --max-time 20 "https://127.0.0.1:${c#*:}/" | grep -q "^hello from ${c%%:*}$" &&
			ok=$((ok + 1))
	done
	[ "$ok" = "$requests" ] || die "${c%%:*}: only $ok of $requests requests answered"
	eval "answered_${c%%:*}=$ok"
done

field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p"; }
declare -A cell
clean=1 control=0
say "scanning every nginx process from outside (leakscan)"
for c in stock secarena; do
	master=$(cat "$out/$c/nginx.pid")
	procs="$master $(pgrep -P "$master" | sort -n | tr '\n' ' ')"
	w=0
	for p in $procs; do
		if [ "$p" = "$master" ]; then role=master; else w=$((w + 1)); role=worker$w; fi
		"$leakscan" "$key" "$p" >"$out/$c/scan-$role.txt" 2>&1
		line=$(grep -E "^leakscan: pid $p: outside-arena:" "$out/$c/scan-$role.txt")
		[ -n "$line" ] || die "leakscan failed on $c $role (see $out/$c/scan-$role.txt)"
		wh=$(echo "$line" | field whole) pc=$(echo "$line" | field pieces)
		pem=$(echo "$line" | field pem) der=$(echo "$line" | field der)
		cell[$c,$role]="$wh whole, $pc pieces, $((pem + der)) PEM/DER"
		if [ "$c" = secarena ]; then
			[ "$((wh + pc + pem + der))" = 0 ] || clean=0
		else
			[ "$wh" -gt 0 ] && control=1
		fi
	done
	worker=$(pgrep -P "$master" | sort -n | head -n 1)
	# The arena through /proc/PID/mem: the first data page after the
	# leading guard page of the worker's /dev/secarena mapping.
	start=$(awk '$6 == "/dev/secarena" { split($1, a, "-"); print a[1]; exit }' "/proc/$worker/maps")
	if [ -z "$start" ]; then
		cell[$c,mem]="no arena"
		[ "$c" = secarena ] && clean=0
	else
		err=$(dd if="/proc/$worker/mem" of=/dev/null bs=4096 count=1 \
			skip=$(( (0x$start >> 12) + 1 )) 2>&1 >/dev/null)
		case $err in
		*"Input/output error"*) cell[$c,mem]="refused (EIO)" ;;
		*"1+0 records in"*) cell[$c,mem]="READ"; clean=0 ;;
		*) cell[$c,mem]="$(echo "$err" | head -n 1)"; clean=0 ;;
		esac
	fi
	# Arena usage, as secarena-stat sees the worker's mappings.
	if [ "$c" = secarena ]; then
		use=$("$stat" -p "$worker" 2>&1 | awk -v p="$worker" '$1 == p { n++; kib += $4 / 1024 }
			END { if (n) printf "%d arena(s), %d KiB mapped", n, kib }')
		cell[$c,use]=${use:-none}
		[ -n "$use" ] || clean=0
	else
		cell[$c,use]="-"
	fi
	# A worker's core dump.
	# The core is complete once the worker is gone or a zombie.
	kill -ABRT "$worker"
	for i in $(seq 200); do
		st=$(awk '{ print $3 }' "/proc/$worker/stat" 2>/dev/null)
		[ -z "$st" ] || [ "$st" = Z ] && break
		sleep 0.1
	done
	if [ -s "$cores/core.$worker" ]; then
		"$leakscan" --file "$key" "$cores/core.$worker" >"$out/$c/core-scan.txt" 2>&1
		line=$(grep -E 'outside-arena:' "$out/$c/core-scan.txt" | head -n 1)
		wh=$(echo "$line" | field whole) pc=$(echo "$line" | field pieces)
		if [ -z "$line" ]; then
			cell[$c,core]="scan failed"
			clean=0
		elif [ "$((wh + pc))" = 0 ]; then
			cell[$c,core]="no key material"
		else
			cell[$c,core]="KEY: $wh whole, $pc pieces"
			[ "$c" = secarena ] && clean=0
		fi
		rm -f "$cores/core.$worker"
	else
		cell[$c,core]="no core written"
		[ "$c" = secarena ] && clean=0
	fi
done

printf '\n%-30s %-34s %s\n' "nginx, RSA-2048, $requests requests" "Debian's OpenSSL 3.0" "patched OpenSSL + secarena"
for r in master worker1 worker2; do
	printf '%-30s %-34s %s\n' "key hits in $r" "${cell[stock,$r]:-?}" "${cell[secarena,$r]:-?}"
done
printf '%-30s %-34s %s\n' "arena via /proc/PID/mem" "${cell[stock,mem]}" "${cell[secarena,mem]}"
printf '%-30s %-34s %s\n' "core dump of a worker" "${cell[stock,core]}" "${cell[secarena,core]}"
printf '%-30s %-34s %s\n' "arena usage (worker)" "${cell[stock,use]}" "${cell[secarena,use]}"
echo
[ "$control" = 1 ] || { say "the scan found no key in stock nginx: it cannot be trusted"; exit 1; }
if [ "$clean" = 1 ]; then
	say "secarena: no byte of the key outside the arena, and the arena cannot be read"
	exit 0
fi
say "secarena column is NOT clean (details in $out)"
exit 1
