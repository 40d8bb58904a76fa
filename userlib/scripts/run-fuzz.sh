#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# make fuzz: run the libFuzzer target for a bounded time, report one TAP line.
# Usage: run-fuzz.sh FUZZER SECONDS
set -euo pipefail

fuzzer=$1 seconds=$2
dir=$(dirname "$fuzzer")
mkdir -p "$dir/corpus"
log="$dir/fuzz.log"
status=0
"$fuzzer" -max_total_time="$seconds" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
	-artifact_prefix="$dir/" "$dir/corpus" >"$log" 2>&1 || status=$?
execs=$(awk '/stat::number_of_executed_units/ {print $2}' "$log")
if [ "$status" = 0 ]; then
	echo "ok 1 fuzz: ${execs:-?} inputs in ${seconds}s, no failure"
	echo "1..1"
else
	echo "not ok 1 fuzz: failed after ${execs:-?} inputs (see $log, $dir/crash-*)"
	grep -E 'ERROR|libsecarena:|SUMMARY' "$log" | head -n 5 | sed 's/^/#   /'
	echo "1..1"
	exit 1
fi
