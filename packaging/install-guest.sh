#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# packaging/install-guest.sh RELEASE OUT PHASE...
#
# Runs inside a VM booted on a fresh root of packaging/install-root.sh, with
# our apt repository in its sources (install-test.sh prepares both). Does
# what an operator does and checks each step, TAP in OUT/results.tap:
#   PHASE install   apt-get install our packages; DKMS built and loaded the
#                   module; modules-load.d and the udev rule; the openssl.cnf
#                   section; Debian's nginx over HTTPS; the leak scan of
#                   master and workers (0 hits); the section removed, the
#                   same scan shows the key (the control)
#   PHASE upgraded  booted on a kernel installed after ours: DKMS built the
#                   module for it, modules-load.d loads it, nginx on the arena
#   PHASE remove    apt-get remove and purge, back to Debian's OpenSSL:
#                   nothing of secarena left on the system
set -uo pipefail

release=$1 out=$2
shift 2
tap=$out/results.tap
n=$(grep -c '^\(not \)\?ok ' "$tap" 2>/dev/null || echo 0)
kver=$(uname -r)
result() { # result ok|not-ok NAME [DETAIL]
	n=$((n + 1))
	if [ "$1" = ok ]; then
		echo "ok $n install $release $kver: $2" >>"$tap"
	else
		echo "not ok $n install $release $kver: $2${3:+ # $3}" >>"$tap"
	fi
}
# check NAME CMD...: one result from a command, its output in the log.
check() {
	local name=$1
	shift
	echo "## $name: $*" >>"$log"
	if "$@" >>"$log" 2>&1; then result ok "$name"; else result not-ok "$name" "see $log"; fi
}
export DEBIAN_FRONTEND=noninteractive PATH=/usr/sbin:/usr/bin:/sbin:/bin
# virtme-ng's init hides apt's lists and cache and the logs under tmpfs
# mounts (it expects the host's root, read-only); on this root of our own
# they are the machine's: show them again.
for d in /var/lib/apt /var/cache /var/log; do
	while mountpoint -q "$d"; do umount "$d" || break; done
done
libssl=libssl3
[ "$release" = trixie ] && libssl=libssl3t64
key=/etc/ssl/private/secarena-test.key
cnf=/etc/ssl/openssl.cnf

# The section an operator adds (Documentation/admin-guide/secarena.rst):
# one line in [openssl_init], one section of our own.
add_section() {
	cp "$cnf" /root/openssl.cnf.debian
	sed -i 's/^\[openssl_init\]$/&\nsecarena = secarena_sect/' "$cnf"
	printf '\n[secarena_sect]\nstrict = yes\n' >>"$cnf"
	grep -q '^secarena = secarena_sect$' "$cnf"
}
start_nginx() {
	nginx -s stop 2>/dev/null
	for _ in $(seq 50); do pgrep -x nginx >/dev/null || break; sleep 0.2; done
	nginx 2>"$out/nginx-start-$phase.txt" && for _ in $(seq 50); do
		curl -sk -o /dev/null https://127.0.0.1:8443/ && return 0
		sleep 0.2
	done
	return 1
}
# requests N: N HTTPS requests, each must answer 200.
requests() {
	local i code
	for i in $(seq "$1"); do
		code=$(curl -sk -o /dev/null -w '%{http_code}' https://127.0.0.1:8443/) || return 1
		[ "$code" = 200 ] || { echo "request $i: HTTP $code"; return 1; }
	done
}
# scan WANT: leakscan of every nginx process; WANT 0 (no hit outside an
# arena) or 1 (hits: the control).
scan() {
	local rc
	leakscan "$key" $(pgrep -x nginx) >"$out/leakscan-$phase-$1.txt" 2>&1
	rc=$?
	cat "$out/leakscan-$phase-$1.txt"
	[ "$rc" = "$1" ]
}
nginx_site() {
	cat >/etc/nginx/conf.d/secarena-test.conf <<NGX
server {
	listen 127.0.0.1:8443 ssl;
	ssl_certificate /etc/ssl/certs/secarena-test.crt;
	ssl_certificate_key $key;
	location / { return 200 "ok\n"; }
}
NGX
}
# Every nginx process maps /dev/secarena (secarena-stat's process table).
nginx_in_arenas() {
	local p
	secarena-stat
	for p in $(pgrep -x nginx); do
		grep -q ' /dev/secarena' "/proc/$p/maps" || { echo "pid $p maps no arena"; return 1; }
	done
}
# Files named after secarena, outside /root (the test), our apt source and
# its key (which the operator added and removes), apt's own caches, and this
# test's fixtures (named secarena-test: key, certificate, nginx site, and
# install-root.sh's apt and initramfs settings).
nothing_left() {
	local left
	left=$(find / -xdev \( -path /proc -o -path /sys -o -path /root -o \
		-path /srv/secarena-apt -o -path /var/lib/apt/lists -o -path /var/cache/apt \) -prune -o \
		-iname '*secarena*' ! -iname '*secarena-test*' -print |
		grep -v -x -e /etc/apt/sources.list.d/secarena.sources \
			-e /usr/share/keyrings/secarena-archive-keyring.gpg)
	echo "$left"
	[ -z "$left" ]
}
module_file() { ls "/lib/modules/$kver/updates/dkms/"secarena.ko* 2>/dev/null; }

for phase in "$@"; do
log=$out/$phase.log
: >"$log"
case $phase in
install)
	check "apt-get install secarena-dkms secarena-tools" apt-get install -y secarena-dkms secarena-tools
	# The archive's newest OpenSSL may be newer than the one the repository
	# was built from (this machine's mirror serves no source of the newest
	# security upload): the pin of the admin guide keeps secarena's.
	check "apt pin installed from secarena-tools" \
		cp /usr/share/secarena/secarena-openssl.pref /etc/apt/preferences.d/
	check "apt-get install openssl $libssl" apt-get install -y --allow-downgrades openssl "$libssl"
	check "$libssl is the +secarena build" sh -c \
		"dpkg-query -W -f '\${Version}' $libssl | tee /dev/stderr | grep -q '+secarena'"
	check "dkms status: secarena installed for $kver" sh -c \
		"dkms status secarena | tee /dev/stderr | grep -q '$kver.*installed'"
	check "module file in updates/dkms" module_file
	check "postinst loaded the module" grep -q '^secarena ' /proc/modules
	check "modules-load.d loads it at boot" sh -c \
		'rmmod secarena && ! grep -q "^secarena " /proc/modules &&
		 /lib/systemd/systemd-modules-load && grep -q "^secarena " /proc/modules'
	check "/dev/secarena root:root 0666" sh -c \
		'stat -c "%U:%G %a" /dev/secarena | tee /dev/stderr | grep -qx "root:root 666"'
	# shellcheck disable=SC2016 # expanded by the inner shell
	check "udev applies 60-secarena.rules" sh -c \
		'udevadm test "$(udevadm info -q path -n /dev/secarena)" 2>&1 | tee /dev/stderr |
		 grep -q "60-secarena.rules"'
	check "RSA-2048 key and certificate" sh -c \
		"openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=secarena-test -days 2 \
		 -keyout $key -out /etc/ssl/certs/secarena-test.crt"
	nginx_site
	check "openssl.cnf section added" add_section
	check "nginx starts" start_nginx
	# nginx logs a failed OPENSSL_init_ssl() as an alert and goes on
	# without the section: what it printed says whether libcrypto took it.
	check "nginx: OpenSSL took the section (no OPENSSL_init_ssl alert)" \
		sh -c "cat '$out/nginx-start-$phase.txt'; ! grep -q 'OPENSSL_init_ssl() failed' '$out/nginx-start-$phase.txt'"
	check "20 HTTPS requests" requests 20
	check "nginx master and workers map arenas" nginx_in_arenas
	check "leak scan: 0 hits outside the arena" scan 0
	check "section removed" cp /root/openssl.cnf.debian "$cnf"
	check "nginx restarted stock" start_nginx
	check "20 HTTPS requests, stock" requests 20
	check "leak scan, stock: the key is in the heap (control)" scan 1
	nginx -s stop
	add_section >/dev/null
	;;
upgraded)
	check "dkms status: secarena installed for $kver" sh -c \
		"dkms status secarena | tee /dev/stderr | grep -q '$kver.*installed'"
	check "modules-load.d loads it" sh -c \
		'/lib/systemd/systemd-modules-load && grep -q "^secarena " /proc/modules'
	check "nginx starts on the arena" start_nginx
	check "20 HTTPS requests" requests 20
	check "nginx master and workers map arenas" nginx_in_arenas
	check "leak scan: 0 hits outside the arena" scan 0
	nginx -s stop
	;;
remove)
	/lib/systemd/systemd-modules-load
	cp /root/openssl.cnf.debian "$cnf"
	check "apt pin removed" rm /etc/apt/preferences.d/secarena-openssl.pref
	check "apt-get remove secarena-dkms secarena-tools" apt-get remove -y secarena-dkms secarena-tools
	check "module unloaded" sh -c '! grep -q "^secarena " /proc/modules'
	check "no module file left" sh -c '! ls /lib/modules/*/updates/dkms/secarena.ko* 2>/dev/null'
	# shellcheck disable=SC2016 # expanded by the inner shell
	check "dkms knows no secarena" sh -c '[ -z "$(dkms status secarena)" ] && [ ! -e /var/lib/dkms/secarena ]'
	check "module source removed" test ! -e /usr/src/secarena-0.1.0
	deb=$(apt-cache policy "$libssl" | awk '/^ +([*]{3} )?[0-9]/ { v = $1 == "***" ? $2 : $1; if (v !~ /secarena/) { print v; exit } }')
	check "back to Debian's OpenSSL $deb" apt-get install -y --allow-downgrades "$libssl=$deb" "openssl=$deb"
	check "apt-get purge" apt-get purge -y secarena-dkms secarena-tools
	check "dpkg knows no secarena package" sh -c '! dpkg -l | grep -i secarena'
	check "no secarena file left (but our apt source and key)" nothing_left
	;;
*) echo "install-guest: unknown phase '$phase'" >&2; exit 2 ;;
esac
touch "$out/$phase.done"
done
