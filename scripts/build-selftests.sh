#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build the kselftest target the way a kernel tree would: selftests/secarena
# is copied to tools/testing/selftests/secarena next to lib.mk and
# kselftest_harness.h from Debian's linux-source-6.1.
# Usage: build-selftests.sh KSFT_DIR   -> KSFT_DIR/tools/testing/selftests/secarena
set -euo pipefail

ksft=${1:?usage: build-selftests.sh KSFT_DIR}
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/kernel-tools.sh" "$ksft"
dst="$ksft/tools/testing/selftests/secarena"
mkdir -p "$dst"
cp -a "$top/selftests/secarena/." "$dst/"
# OUTPUT explicitly: lib.mk sets it only at MAKELEVEL 0 (not under make check).
make -s -C "$dst" OUTPUT="$dst" SECARENA_UAPI="$top/uapi"
for src in "$top"/selftests/secarena/secarena_*.c; do
	prog="$dst/$(basename "$src" .c)"
	[ -x "$prog" ] || { echo "build-selftests: $prog was not built" >&2; exit 1; }
done
