#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The kernel matrix: one line "KVER ROOT" per kernel, ROOT being / (Debian
# 12, the host's own root) or the trixie root filesystem (Debian 13,
# scripts/trixie-root.sh) that holds the kernel, its headers and the
# userspace its guests run.
#   all   Debian 12's 6.1 and bookworm-backports' 6.12 (host root), trixie's
#         6.12 and the newest 7.x of trixie-backports (trixie root)
#   ci    the oldest and the newest of those: 6.1 and 7.x (make check)
#   host  the host-root kernels only
# A kernel missing from a set's source is an error: scripts/install-deps.sh
# installs the host's, scripts/trixie-root.sh the trixie ones.
# Usage: kernels.sh [ci|all|host]   (default: ci)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
set=${1:-ci}
case "$set" in ci | all | host) ;; *) echo "kernels: unknown set '$set' (ci, all, host)" >&2; exit 64 ;; esac

host_kernels() { # the generic flavour: not -rt, -cloud
	(cd /boot && ls vmlinuz-6.1.*-amd64 vmlinuz-6.12.*+deb12-amd64 2>/dev/null) |
		sed 's/^vmlinuz-//' | grep -Ev -- '-(rt|cloud)-amd64$' | sort -V
}
trixie_kernels() { # trixie's 6.12 and backports' 7.x
	(cd "$1/boot" && ls vmlinuz-6.12.*+deb13-amd64 vmlinuz-7.*+deb13-amd64 2>/dev/null) |
		sed 's/^vmlinuz-//' | grep -Ev -- '-(rt|cloud)-amd64$' | sort -V
}
pick() { # pick SERIES LIST: the newest of LIST in SERIES (6.1, 6.12, 7)
	grep -E "^${1//./\\.}\." | tail -n 1
}

hk=$(host_kernels)
k61=$(echo "$hk" | pick 6.1) || true
[ -n "$k61" ] || { echo "kernels: no Debian 12 6.1 kernel in /boot (scripts/install-deps.sh)" >&2; exit 1; }
if [ "$set" = host ]; then
	echo "$hk" | sed 's|$| /|'
	exit 0
fi
root=$("$top/scripts/trixie-root.sh")
tk=$(trixie_kernels "$root")
k7=$(echo "$tk" | pick 7) || true
[ -n "$k7" ] || { echo "kernels: no 7.x kernel in $root/boot (scripts/trixie-root.sh)" >&2; exit 1; }
if [ "$set" = ci ]; then
	echo "$k61 /"
	echo "$k7 $root"
	exit 0
fi
k612=$(echo "$hk" | pick 6.12) || true
t612=$(echo "$tk" | pick 6.12) || true
[ -n "$k612" ] || { echo "kernels: no bookworm-backports 6.12 kernel in /boot (scripts/install-deps.sh)" >&2; exit 1; }
[ -n "$t612" ] || { echo "kernels: no trixie 6.12 kernel in $root/boot (scripts/trixie-root.sh)" >&2; exit 1; }
echo "$k61 /"
echo "$k612 /"
echo "$t612 $root"
echo "$k7 $root"
