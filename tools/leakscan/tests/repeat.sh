#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/leakscan/tests/repeat.sh [RUNS]
#
# The flakiness check of the suite (issue 19, part 5): tests/run-tests.sh
# RUNS times in a row (default 100), each run's TAP kept in
# build/repeat/run-N.tap. A run counts as failed when it has a "not ok"
# line, or when its plan is missing or differs from the number of results.
# Prints one line per run and a summary; exits 1 when any run failed.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-100}
case $runs in '' | *[!0-9]*) echo "repeat: RUNS must be a whole number, not '$runs'" >&2; exit 2 ;; esac
[ "$runs" -ge 1 ] || { echo "repeat: RUNS must be at least 1" >&2; exit 2; }
out=$here/../build/repeat
rm -rf "$out"
mkdir -p "$out"

bad=0
t0=$SECONDS
for i in $(seq 1 "$runs"); do
	tap=$out/run-$i.tap
	"$here/run-tests.sh" >"$tap" 2>"$out/run-$i.err"
	plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$tap")
	okn=$(grep -c '^ok ' "$tap")
	failn=$(grep -c '^not ok ' "$tap")
	if [ "$failn" -ne 0 ] || [ -z "$plan" ] || [ "$plan" -ne $((okn + failn)) ]; then
		bad=$((bad + 1))
		echo "run $i: FAILED ($okn ok, $failn not ok, plan ${plan:-missing})"
		grep '^not ok ' "$tap" | sed 's/^/  /'
	else
		echo "run $i: $okn/$plan ok"
	fi
done
echo "repeat: $runs runs in $((SECONDS - t0)) s: $((runs - bad)) passed whole, $bad with a failure"
[ "$bad" -eq 0 ]
