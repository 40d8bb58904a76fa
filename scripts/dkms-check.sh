#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# scripts/dkms-check.sh KVER...: build the module through DKMS itself
# (dkms add, build, status, remove) against each kernel's headers, in a
# private DKMS tree so that the machine's /usr/src and /var/lib/dkms are not
# touched.  Checks that dkms built secarena.ko for exactly that kernel
# (vermagic).  One TAP line per step on stdout; exit 1 if any failed.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
ver=$(cat "$top/VERSION")
[ $# -gt 0 ] || { echo "usage: dkms-check.sh KVER..." >&2; exit 2; }
command -v dkms >/dev/null || { echo "not ok 1 - dkms installed"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 bad=0
tap() {
	n=$((n + 1))
	if [ "$1" = ok ]; then echo "ok $n - $2"; else echo "not ok $n - $2${3:+ # $3}"; bad=1; fi
}
trees=(--sourcetree "$tmp/src" --dkmstree "$tmp/tree" --installtree "$tmp/inst")
mkdir -p "$tmp/src" "$tmp/tree" "$tmp/inst"
if "$top/scripts/dkms-source.sh" "$tmp/src" >/dev/null &&
	dkms add -m secarena -v "$ver" "${trees[@]}" >"$tmp/add.log" 2>&1; then
	tap ok "dkms add secarena/$ver"
else
	tap not-ok "dkms add secarena/$ver" "$(tail -n 3 "$tmp/add.log" 2>/dev/null | tr '\n' ' ')"
	echo "1..$n"
	exit 1
fi
for k in "$@"; do
	log=$tmp/build-$k.log
	if dkms build -m secarena -v "$ver" -k "$k" "${trees[@]}" \
		--kernelsourcedir "/lib/modules/$k/build" >"$log" 2>&1; then
		ko=$(find "$tmp/tree/secarena/$ver/$k" -name 'secarena.ko*' | head -n 1)
		magic=$(modinfo -F vermagic "$ko" 2>/dev/null | awk '{ print $1 }')
		if [ -n "$ko" ] && [ "$magic" = "$k" ]; then
			tap ok "dkms build for $k ($(basename "$ko"), vermagic $magic)"
		else
			tap not-ok "dkms build for $k" "module '${ko:-none}' has vermagic '$magic'"
		fi
	else
		tap not-ok "dkms build for $k" "$(grep -m 3 -iE 'error|warning' "$log" | tr '\n' ' ')"
	fi
	st=$(dkms status -m secarena -v "$ver" -k "$k" "${trees[@]}" 2>/dev/null)
	case $st in
	*": built"*) tap ok "dkms status for $k: built" ;;
	*) tap not-ok "dkms status for $k: built" "got '$st'" ;;
	esac
done
if dkms remove -m secarena -v "$ver" --all "${trees[@]}" >"$tmp/remove.log" 2>&1 &&
	[ -z "$(dkms status -m secarena "${trees[@]}" 2>/dev/null)" ]; then
	tap ok "dkms remove leaves no secarena entry"
else
	tap not-ok "dkms remove leaves no secarena entry" "$(tail -n 2 "$tmp/remove.log" | tr '\n' ' ')"
fi
echo "1..$n"
exit "$bad"
