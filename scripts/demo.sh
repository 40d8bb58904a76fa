#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make demo: build the module, the patched OpenSSL and the tools, boot
# Debian's 6.1 kernel in a VM, and there run demo/heartbleed-demo.sh: nginx
# on Debian's OpenSSL beside nginx on secarena, scanned from outside.
#   DEMO_KERNEL=kver   another installed kernel for the VM
#   DEMO_HOST=1        no VM: use the running kernel (it must load modules;
#                      a secarena module already loaded is used as it is)
# Exits with the demo's status: non-zero unless the secarena column is clean.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
out=$build/demo
step() { echo "demo: [$(( $(date +%s) - t0 ))s] $*"; }
t0=$(date +%s)

if [ "${DEMO_HOST:-0}" = 1 ]; then
	k=$(uname -r)
else
	k=${DEMO_KERNEL:-$(cd /boot && ls vmlinuz-6.1.* | sed 's/^vmlinuz-//' | sort -V | tail -n 1)}
fi
step "building secarena.ko for $k"
"$top/scripts/build-module.sh" "$k" "$build/module/$k" >/dev/null
step "building the patched OpenSSL (first time: source download and about two minutes)"
"$top/userlib/openssl/build.sh" 2>&1 | sed 's/^/demo:   /'
step "building leakscan and secarena-stat"
make -s -C "$top/tools/leakscan" >/dev/null
make -s -C "$top/tools/secarena-stat" >/dev/null
mkdir -p "$out"
# The key is made here: RSA key generation is slow under emulation.
openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=localhost -days 2 \
	-keyout "$out/demo.key" -out "$out/demo.crt" 2>/dev/null
demo="DEMO_KEY=$out/demo.key DEMO_CERT=$out/demo.crt $top/demo/heartbleed-demo.sh $out/run"

if [ "${DEMO_HOST:-0}" = 1 ]; then
	loaded=0
	if [ ! -c /dev/secarena ]; then
		insmod "$build/module/$k/secarena.ko" || {
			echo "demo: this kernel cannot load secarena.ko; run make demo without DEMO_HOST=1" >&2
			exit 2
		}
		loaded=1
	fi
	step "running the demo on the host"
	rc=0
	env $demo || rc=$?
	[ "$loaded" = 1 ] && rmmod secarena
	exit "$rc"
fi

kvm=--disable-kvm
[ "${VMTEST_KVM:-0}" = 1 ] && kvm=
step "booting $k in a VM (TCG emulation: about a minute before the demo starts)"
rc=0
# Through a pipe: qemu reopens a stdout that is a file, truncating it.
# shellcheck disable=SC2086
(cd / && timeout 900 vng --run "/boot/vmlinuz-$k" $kvm --force-9p --memory 1G --cpus 2 \
	--rwdir="$out" --exec "insmod $build/module/$k/secarena.ko && env $demo; rc=\$?; rmmod secarena; exit \$rc" \
	</dev/null) | cat || rc=$?
step "done (status $rc; logs and scans in $out/run)"
exit "$rc"
