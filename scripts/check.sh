#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make check: host checks, then the VM suite on each kernel, then the count.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
rm -rf "$build/results" "$build/vm-out"
"$top/scripts/host-checks.sh" "$build"
echo "check: host checks in $SECONDS s"
t=$SECONDS
"$top/scripts/vmtest.sh" || echo "not ok 0 vmtest did not run to the end" >>"$build/results/host.tap"
echo "check: VM suite in $((SECONDS - t)) s; all in $SECONDS s"
for t in "$build"/vm-out/*/device-bench.txt; do
	[ -f "$t" ] && { echo "== device benchmark"; cat "$t"; }
done
echo "== failures"
grep -h '^not ok ' "$build/results/host.tap" "$build"/vm-out/*/results.tap 2>/dev/null || echo "(none)"
exec "$top/scripts/summary.sh" "$build/results/host.tap" "$build"/vm-out/*/results.tap
