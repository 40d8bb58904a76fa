#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The uapi header builds alone in C99 (pedantic) and C++, warning-free.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '#include <linux/secarena.h>\nint main(void) { struct secarena_config c; struct secarena_info i; c.data_size = 0; i.flags = SECARENA_INFO_MAPPED; return (int)c.data_size + (int)(i.flags & 0) + (int)(SECARENA_IOC_CONFIGURE & 0); }\n' >"$tmp/t.c"
cp "$tmp/t.c" "$tmp/t.cc"
gcc -std=c99 -Wall -Wextra -pedantic -Werror -I"$top/uapi" -o "$tmp/c" "$tmp/t.c"
g++ -std=c++11 -Wall -Wextra -pedantic -Werror -I"$top/uapi" -o "$tmp/cc" "$tmp/t.cc"
