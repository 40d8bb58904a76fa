#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Extract what the build takes from Debian's linux-source-6.1 (never committed):
# the kselftest harness, lib.mk, the TAP runner and checkpatch.pl.
# Usage: kernel-tools.sh DIR   (idempotent; DIR gets tools/ and scripts/)
set -euo pipefail

dir=${1:?usage: kernel-tools.sh DIR}
tarball=$(ls /usr/src/linux-source-6.1.tar.xz 2>/dev/null || true)
[ -n "$tarball" ] || { echo "kernel-tools: /usr/src/linux-source-6.1.tar.xz missing (run scripts/install-deps.sh)" >&2; exit 1; }
stamp="$dir/.extracted"
[ -f "$stamp" ] && [ "$stamp" -nt "$tarball" ] && exit 0

mkdir -p "$dir"
tar -xJf "$tarball" -C "$dir" --strip-components=1 --wildcards \
	'linux-source-6.1/tools/testing/selftests/kselftest*' \
	'linux-source-6.1/tools/testing/selftests/lib.mk' \
	'linux-source-6.1/scripts/checkpatch.pl' \
	'linux-source-6.1/scripts/spelling.txt' \
	'linux-source-6.1/scripts/const_structs.checkpatch'
touch "$stamp"
