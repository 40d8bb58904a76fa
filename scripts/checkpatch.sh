#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# checkpatch.pl --no-tree -f on every kernel-side file; fails on any report.
# Usage: checkpatch.sh KSFT_DIR (where kernel-tools.sh extracted checkpatch.pl)
set -euo pipefail

dir=${1:?usage: checkpatch.sh KSFT_DIR}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
status=0
for f in module/*.c module/*.h uapi/linux/secarena.h; do
	if ! perl "$dir/scripts/checkpatch.pl" --no-tree --quiet --show-types -f "$f"; then
		status=1
	fi
done
exit $status
