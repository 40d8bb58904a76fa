#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# secarena-stat against the real module. Runs INSIDE the test VM, as root,
# with secarena loaded and nothing else holding arenas changing meanwhile.
# tests/hold_arena maps arenas of known geometry; secarena-stat must show
# their processes with the exact mapping sizes, and its counters must match
# sysfs and move by exactly what the helpers hold. TAP on stdout, plan
# last; exits 0 even when tests fail.
# Usage: vm-test.sh [BUILD_DIR]   (default: build/ next to this script,
#        holding secarena-stat and hold_arena from "make")
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/build}
stat=$build/secarena-stat
hold=$build/hold_arena
page=$(getconf PAGESIZE)
sysdir=/sys/class/misc/secarena

n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1${2:+ # $2}"; }
same() {
	if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "expected '$2', got '$3'"; fi
}
sysfs() { cat "$sysdir/$1" 2>/dev/null; }
finish() { echo "1..$n"; exit 0; }

tmp=$(mktemp -d)
pids=()
# shellcheck disable=SC2317 # run by the trap
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

if [ ! -d "$sysdir" ] || [ ! -x "$stat" ] || [ ! -x "$hold" ]; then
	not_ok "secarena-stat: preconditions" "module loaded, $stat and $hold built"
	finish
fi

# hold PAGES [GUARDS]: start a helper, wait for its "ready"; sets hpid.
# Not in $(...): the pid must reach this shell.
hold() {
	local out=$tmp/hold.$#.$1
	"$hold" "$@" >"$out" 2>&1 &
	hpid=$!
	pids+=("$hpid")
	for _ in $(seq 100); do
		grep -qx ready "$out" && return 0
		kill -0 "$hpid" 2>/dev/null || break
		sleep 0.1
	done
	echo "hold_arena $*: $(head -c 200 "$out")"
	return 1
}
# row PID: "SIZE PAGES" of each mapping of PID in the table.
row() {
	"$stat" -p "$1" | awk -v p="$1" '$1 == p { print $(NF - 1), $NF }' | tr '\n' ' '
}

a0=$(sysfs arenas) m0=$(sysfs mapped) u0=$(sysfs pages_in_use)

# Unconfigured: 5 pages are 1 guard, 3 data pages, 1 guard.
if ! hold 5 >"$tmp/msg"; then
	not_ok "secarena-stat: hold_arena 5 mapped" "$(cat "$tmp/msg")"
	finish
fi
pid1=$hpid
ok "secarena-stat: hold_arena 5 mapped"
same "secarena-stat: arenas counts the helper" $((a0 + 1)) "$(sysfs arenas)"
same "secarena-stat: mapped counts the helper" $((m0 + 1)) "$(sysfs mapped)"
same "secarena-stat: pages_in_use grows by 3 data pages" $((u0 + 3)) "$(sysfs pages_in_use)"
same "secarena-stat: -p shows the whole vma, 5 pages" "$((5 * page)) 5 " "$(row "$pid1")"
range=$(awk '$NF == "/dev/secarena" { print $1 }' "/proc/$pid1/maps")
got=$("$stat" -p "$pid1" | awk -v p="$pid1" '$1 == p { print $2, $3 }')
same "secarena-stat: comm and range as in /proc/PID/maps" "hold_arena $range" "$got"

# Configured: 8 pages are 2 guards, 4 data pages, 2 guards.
if ! hold 8 2 >"$tmp/msg"; then
	not_ok "secarena-stat: hold_arena 8 2 mapped" "$(cat "$tmp/msg")"
	finish
fi
pid2=$hpid
ok "secarena-stat: hold_arena 8 2 mapped"
same "secarena-stat: pages_in_use grows by 3 + 4" $((u0 + 7)) "$(sysfs pages_in_use)"
same "secarena-stat: -p shows 8 pages" "$((8 * page)) 8 " "$(row "$pid2")"

# Every counter in the table as sysfs has it.
"$stat" >"$tmp/table" 2>"$tmp/err"
same "secarena-stat: exit 0 as root" 0 $?
bad=
for a in arenas mapped pages_in_use pages_peak max_arena_pages max_total_pages \
	refused_limit refused_hibernation refused_foreign_mmap fork_copy_failed; do
	want=$(sysfs "$a")
	got=$(awk -v a="$a" '$1 == a { print $2 }' "$tmp/table")
	[ "$want" = "$got" ] || bad+="$a=$got (sysfs $want) "
done
for f in /sys/module/secarena/parameters/*; do
	want=$(cat "$f")
	got=$(awk -v a="parameters/${f##*/}" '$1 == a { print $2 }' "$tmp/table")
	[ "$want" = "$got" ] || bad+="${f##*/}=$got (sysfs $want) "
done
same "secarena-stat: every counter and parameter matches sysfs" "" "$bad"
same "secarena-stat: root reads every process" "" "$(cat "$tmp/err")"

if command -v python3 >/dev/null; then
	"$stat" --json >"$tmp/json"
	if python3 - "$tmp/json" "$pid1" "$pid2" "$page" "$((a0 + 2))" "$((u0 + 7))" \
		>"$tmp/py" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
pid1, pid2, page, arenas, in_use = map(int, sys.argv[2:])
procs = {p["pid"]: p for p in d["processes"]}
assert [m["size"] for m in procs[pid1]["mappings"]] == [5 * page], procs
assert [m["size"] for m in procs[pid2]["mappings"]] == [8 * page], procs
assert procs[pid1]["comm"] == "hold_arena", procs
assert d["module"]["arenas"] == arenas, d["module"]
assert d["module"]["pages_in_use"] == in_use, d["module"]
assert d["module"]["pages_peak"] >= in_use, d["module"]
PY
	then
		ok "secarena-stat: --json has both helpers and the counters"
	else
		not_ok "secarena-stat: --json has both helpers and the counters" "$(tail -n 1 "$tmp/py")"
	fi
else
	ok "secarena-stat: --json has both helpers and the counters # SKIP no python3"
fi

# As nobody, root's processes cannot be read.
if command -v setpriv >/dev/null; then
	asnobody=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
	"${asnobody[@]}" "$stat" >/dev/null 2>"$tmp/err"
	same "secarena-stat: as nobody, exit 0" 0 $?
	if grep -qE '^secarena-stat: [0-9]+ processes not readable: run as root$' "$tmp/err"; then
		ok "secarena-stat: as nobody, unreadable processes noted"
	else
		not_ok "secarena-stat: as nobody, unreadable processes noted" "$(head -c 200 "$tmp/err")"
	fi
	"${asnobody[@]}" "$stat" -p "$pid1" >/dev/null 2>&1
	same "secarena-stat: as nobody, -p of root's helper exits 3" 3 $?
else
	ok "secarena-stat: as nobody # SKIP no setpriv"
fi

# Gone: the counters come back and the processes leave the list.
kill "$pid1" "$pid2"
wait "$pid1" "$pid2" 2>/dev/null
pids=()
same "secarena-stat: arenas back after the helpers exit" "$a0" "$(sysfs arenas)"
same "secarena-stat: mapped back after the helpers exit" "$m0" "$(sysfs mapped)"
same "secarena-stat: pages_in_use back after the helpers exit" "$u0" "$(sysfs pages_in_use)"
"$stat" -p "$pid1" >/dev/null 2>&1
same "secarena-stat: -p of the exited helper exits 3" 3 $?
left=$("$stat" | awk -v a="$pid1" -v b="$pid2" '$1 == a || $1 == b')
same "secarena-stat: exited helpers not listed" "" "$left"
finish
