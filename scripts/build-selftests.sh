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
make -s -C "$dst" SECARENA_UAPI="$top/uapi"
