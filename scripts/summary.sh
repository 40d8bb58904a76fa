#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Count every TAP result of a check run; the last line is 'N passed, N failed'.
# Usage: summary.sh FILE.tap...   (exit 1 if any failed or nothing ran)
set -euo pipefail

pass=0 fail=0 skip=0
for f in "$@"; do
	[ -f "$f" ] || continue
	p=$(grep -cE '^ok ' "$f" || true)
	s=$(grep -cE '^ok .*# SKIP' "$f" || true)
	x=$(grep -cE '^not ok ' "$f" || true)
	pass=$((pass + p - s)) skip=$((skip + s)) fail=$((fail + x))
done
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ] && [ "$pass" -gt 0 ]
