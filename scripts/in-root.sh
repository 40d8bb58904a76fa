#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Run a command chrooted in a root filesystem of scripts/trixie-root.sh,
# with the source tree at its own path inside (bind-mounted read-write),
# /proc, /sys, /dev and a fresh /tmp, all in a mount namespace of its own:
# they go away when the command ends, however it ends, and nothing is
# mounted on the host. The host's kernel serves it, so memfd_secret and
# the arena's other host backends work as they do outside.
# Usage: in-root.sh ROOT CMD [ARG...]   (ROOT: e.g. build/roots/trixie)
# The environment is reset to PATH, HOME, LANG and what IN_ROOT_ENV
# names (a space-separated list of variables to pass through).
set -euo pipefail

root=${1:?usage: in-root.sh ROOT CMD [ARG...]}
shift
[ $# -gt 0 ] || { echo "in-root: no command" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "in-root: must run as root (chroot)" >&2; exit 1; }
root=$(cd "$root" && pwd)
[ -x "$root/bin/sh" ] || { echo "in-root: $root is not a root filesystem" >&2; exit 1; }
top=$(cd "$(dirname "$0")/.." && pwd)

pass=()
for v in ${IN_ROOT_ENV:-}; do
	[ -n "${!v+x}" ] && pass+=("$v=${!v}")
done

# The tree's mount point is made after /tmp's tmpfs is mounted: a tree
# under /tmp (a clone in /tmp) would otherwise be hidden by it.
exec unshare --mount --propagation private sh -c '
	r=$1 t=$2; shift 2
	mount -t proc proc "$r/proc" && mount -t sysfs sysfs "$r/sys" &&
		mount --rbind /dev "$r/dev" && mount -t tmpfs -o mode=1777 tmp "$r/tmp" &&
		mkdir -p "$r$t" && mount --bind "$t" "$r$t" && exec chroot "$r" "$@"' sh "$root" "$top" \
	env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "${pass[@]}" "$@"
