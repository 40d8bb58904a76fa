#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Runs inside the VM as root, with secarena.ko loaded by the caller (and
# left loaded): exhaust, then kcore_wipe, as one TAP stream with its plan.
# Usage: [STRESS_MEMCG_RACE=1] vm-run.sh [BINDIR [OUTDIR]]   (logs in OUTDIR)
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../../build/stress/limits}
out=${2:-$(mktemp -d)}
mkdir -p "$out"
params=/sys/module/secarena/parameters
lines=()
n=0
add() { # add ok|not-ok NAME [DETAIL]
	n=$((n + 1))
	if [ "$1" = ok ]; then
		lines+=("ok $n - $2${3:+ # $3}")
	else
		lines+=("not ok $n - $2${3:+ # $3}")
	fi
}

if [ ! -d "$params" ] || [ ! -c /dev/secarena ]; then
	echo "1..1"
	echo "not ok 1 - secarena is loaded # no $params or /dev/secarena"
	exit 1
fi
# The programs restore what they change; this is for a crash of theirs.
saved_arena=$(cat "$params/max_arena_pages")
saved_total=$(cat "$params/max_total_pages")
kmsg_start=$(dmesg | wc -l)
# STRESS_MEMCG_RACE=1 adds exhaust's free-for-all memcg test, which can
# end in a memcg OOM kill (see exhaust.c): off by default.

for prog in exhaust kcore_wipe; do
	log="$out/$prog.log"
	start=$(date +%s.%N)
	args=()
	if [ "$prog" = exhaust ] && [ "${STRESS_MEMCG_RACE:-0}" = 1 ]; then
		args=(--memcg-race)
	fi
	timeout 600 "$bin/$prog" "${args[@]}" >"$log" 2>"$out/$prog.stderr"
	status=$?
	secs=$(echo "$(date +%s.%N) - $start" | bc)
	while IFS= read -r line; do
		case "$line" in
		"not ok "*) rest=${line#not ok }; rest=${rest#* - }
			n=$((n + 1)); lines+=("not ok $n - $prog: $rest") ;;
		"ok "*) rest=${line#ok }; rest=${rest#* - }
			n=$((n + 1)); lines+=("ok $n - $prog: $rest") ;;
		"# "*) lines+=("# $prog: ${line#\# }") ;;
		esac
	done <"$log"
	if grep -q '^1\.\.[0-9]' "$log" && [ "$status" -le 1 ]; then
		add ok "$prog: ran to its plan" "exit $status, $(printf '%.0f' "$secs") s"
	else
		add not-ok "$prog: ran to its plan" "exit status $status, $(printf '%.0f' "$secs") s, see $log"
	fi
done

[ "$(cat "$params/max_arena_pages")" = "$saved_arena" ] &&
	[ "$(cat "$params/max_total_pages")" = "$saved_total" ] &&
	add ok "module parameters as before the run" ||
	add not-ok "module parameters as before the run" \
		"max_arena_pages $(cat "$params/max_arena_pages"), max_total_pages $(cat "$params/max_total_pages")"
echo "$saved_arena" >"$params/max_arena_pages"
echo "$saved_total" >"$params/max_total_pages"

leftover=$(find /sys/fs/cgroup -maxdepth 1 -name 'secarena-limits-*' 2>/dev/null)
[ -z "$leftover" ] && add ok "no cgroup left behind" || add not-ok "no cgroup left behind" "$leftover"

new=$(dmesg | tail -n +"$((kmsg_start + 1))")
oom=$(echo "$new" | grep -c 'invoked oom-killer' || true)
[ "$oom" = 0 ] && add ok "kernel log: no OOM killer" || add not-ok "kernel log: no OOM killer" "$oom reports"
bad=$(echo "$new" | grep -E 'BUG:|WARNING:|Oops|Call Trace|general protection' | head -1)
[ -z "$bad" ] && add ok "kernel log: no BUG, WARNING or trace" || add not-ok "kernel log: no BUG, WARNING or trace" "$bad"
echo "$new" >"$out/dmesg-new.log"

echo "1..$n"
printf '%s\n' "${lines[@]}"
grep -q '^not ok ' <(printf '%s\n' "${lines[@]}") && exit 1
exit 0
