#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# secarena-stat against the real module. Runs INSIDE the test VM, as root,
# with secarena loaded and nothing else holding arenas changing meanwhile.
# tests/hold_arena maps arenas of known geometry; secarena-stat must show
# their processes with the exact mapping sizes, and its counters must match
# sysfs and move by exactly what the helpers hold; so must the users
# attribute and table, for root's helpers and for one run as nobody. TAP on
# stdout, plan last; exits 0 even when tests fail.
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
if command -v setpriv >/dev/null; then
	asnobody=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
else
	asnobody=()
fi

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
# Not in $(...): the pid must reach this shell. As hold_as, if set.
hold_as=()
hold() {
	local out=$tmp/hold.$#.$1
	: >"$out"	# a helper of the same name before must not answer for this one
	"${hold_as[@]}" "$hold" "$@" >"$out" 2>&1 &
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
# procs: the process table of secarena-stat's output on stdin, so that no
# uid in the users table passes for a PID.
procs() { sed -n '/^PID /,$p'; }
# row PID: "SIZE PAGES" of each mapping of PID in the table.
row() {
	"$stat" -p "$1" | procs | awk -v p="$1" '$1 == p { print $(NF - 1), $NF }' | tr '\n' ' '
}
# users_with LINES UID PAGES: the "UID PAGES" LINES with PAGES more for
# UID, by uid, joined with "|".
users_with() {
	printf '%s\n' "$1" | tr '|' '\n' |
		awk -v u="$2" -v n="$3" 'NF == 2 { p[$1] = $2 } END { p[u] += n; for (k in p) print k, p[k] }' |
		sort -n | paste -sd '|'
}
users_now() { sort -n "$sysdir/users" | paste -sd '|'; }
# users_table: "UID USER PAGES KiB" rows of secarena-stat's users table on
# stdin, and users_expect the same made from users_now's lines.
users_table() { sed -n '/^UID /,/^$/p' | sed '1d;/^$/d' | tr -s ' ' | paste -sd '|'; }
users_expect() {
	local uid pages name
	tr '|' '\n' <<<"$1" | while read -r uid pages; do
		name=$(getent passwd "$uid" | cut -d: -f1)
		echo "$uid ${name:--} $pages $((pages * page / 1024))"
	done | paste -sd '|'
}

a0=$(sysfs arenas) m0=$(sysfs mapped) u0=$(sysfs pages_in_use)
users0=$(users_now)
root0=$(tr '|' '\n' <<<"$users0" | awk '$1 == 0 { print $2 }')
root0=${root0:-0}

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
got=$("$stat" -p "$pid1" | procs | awk -v p="$pid1" '$1 == p { print $2, $3 }')
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
	max_user_pages refused_limit refused_user_limit refused_hibernation \
	refused_foreign_mmap fork_copy_failed revoked_hibernation; do
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

# Users: root's helpers hold 3 + 4 data pages, charged to uid 0.
same "secarena-stat: users is root's only (0400)" 400 "$(stat -c %a "$sysdir/users")"
users1=$(users_with "$users0" 0 7)
same "secarena-stat: users has uid 0 with 7 pages more" "$users1" "$(users_now)"
same "secarena-stat: users table shows uid 0, root, $((root0 + 7)) pages" \
	"0 root $((root0 + 7)) $(((root0 + 7) * page / 1024))" \
	"$(users_table <"$tmp/table" | tr '|' '\n' | awk '$1 == 0')"
same "secarena-stat: users table is the users attribute, by uid" \
	"$(users_expect "$users1")" "$(users_table <"$tmp/table")"

if command -v python3 >/dev/null; then
	"$stat" --json >"$tmp/json"
	if python3 - "$tmp/json" "$pid1" "$pid2" "$page" "$((a0 + 2))" "$((u0 + 7))" \
		"$((root0 + 7))" >"$tmp/py" 2>&1 <<'PY'
import json, pwd, sys
d = json.load(open(sys.argv[1]))
pid1, pid2, page, arenas, in_use, root_pages = map(int, sys.argv[2:])
want = []
for line in open("/sys/class/misc/secarena/users"):
    uid, pages = map(int, line.split())
    try:
        name = pwd.getpwuid(uid).pw_name
    except KeyError:
        name = None
    want.append({"uid": uid, "user": name, "pages": pages})
assert d["users"] == sorted(want, key=lambda u: u["uid"]), d["users"]
assert {"uid": 0, "user": "root", "pages": root_pages} in d["users"], d["users"]
procs = {p["pid"]: p for p in d["processes"]}
assert [m["size"] for m in procs[pid1]["mappings"]] == [5 * page], procs
assert [m["size"] for m in procs[pid2]["mappings"]] == [8 * page], procs
assert procs[pid1]["comm"] == "hold_arena", procs
assert d["module"]["arenas"] == arenas, d["module"]
assert d["module"]["pages_in_use"] == in_use, d["module"]
assert d["module"]["pages_peak"] >= in_use, d["module"]
PY
	then
		ok "secarena-stat: --json has both helpers, the counters and the users"
	else
		not_ok "secarena-stat: --json has both helpers, the counters and the users" "$(tail -n 1 "$tmp/py")"
	fi
else
	ok "secarena-stat: --json has both helpers, the counters and the users # SKIP no python3"
fi

# As nobody, root's processes and the users cannot be read.
if [ ${#asnobody[@]} != 0 ]; then
	"${asnobody[@]}" "$stat" >"$tmp/out" 2>"$tmp/err"
	same "secarena-stat: as nobody, exit 0" 0 $?
	if grep -qE '^secarena-stat: [0-9]+ processes not readable: run as root$' "$tmp/err"; then
		ok "secarena-stat: as nobody, unreadable processes noted"
	else
		not_ok "secarena-stat: as nobody, unreadable processes noted" "$(head -c 200 "$tmp/err")"
	fi
	same "secarena-stat: as nobody, unreadable users noted once" 1 \
		"$(grep -cx 'secarena-stat: users not readable: run as root' "$tmp/err")"
	same "secarena-stat: as nobody, no users table" 0 "$(grep -c '^UID ' "$tmp/out")"
	"${asnobody[@]}" "$stat" -p "$pid1" >/dev/null 2>&1
	same "secarena-stat: as nobody, -p of root's helper exits 3" 3 $?
else
	ok "secarena-stat: as nobody # SKIP no setpriv"
fi

# Another user's arena: its own line. 6 pages are 1 guard, 4 data pages, 1 guard.
hold_as=("${asnobody[@]}")
if [ ${#asnobody[@]} = 0 ]; then
	ok "secarena-stat: a helper as nobody # SKIP no setpriv"
elif ! hold 6 >"$tmp/msg"; then
	not_ok "secarena-stat: hold_arena 6 mapped as nobody" "$(cat "$tmp/msg")"
else
	pid3=$hpid
	ok "secarena-stat: hold_arena 6 mapped as nobody"
	nobody=$(id -u nobody)
	users2=$(users_with "$users1" "$nobody" 4)
	same "secarena-stat: users has nobody with 4 pages more" "$users2" "$(users_now)"
	rc=0
	"$stat" >"$tmp/table" 2>"$tmp/err" || rc=$?
	same "secarena-stat: with nobody's helper, exit 0, nothing on stderr" "0 " "$rc $(cat "$tmp/err")"
	same "secarena-stat: users table is the users attribute, nobody's line too" \
		"$(users_expect "$users2")" "$(users_table <"$tmp/table")"
	nobody4=$(tr '|' '\n' <<<"$users2" | awk -v u="$nobody" '$1 == u { print $2 }')
	same "secarena-stat: users table shows nobody with $nobody4 pages" \
		"$nobody nobody $nobody4 $((nobody4 * page / 1024))" \
		"$(users_table <"$tmp/table" | tr '|' '\n' | awk -v u="$nobody" '$1 == u')"
	same "secarena-stat: -p shows nobody's helper, 6 pages" "$((6 * page)) 6 " "$(row "$pid3")"
fi
hold_as=()

# Gone: the counters come back and the processes leave the list.
kill "${pids[@]}"
wait "${pids[@]}" 2>/dev/null
pids=()
same "secarena-stat: arenas back after the helpers exit" "$a0" "$(sysfs arenas)"
same "secarena-stat: mapped back after the helpers exit" "$m0" "$(sysfs mapped)"
same "secarena-stat: pages_in_use back after the helpers exit" "$u0" "$(sysfs pages_in_use)"
same "secarena-stat: users back after the helpers exit" "$users0" "$(users_now)"
"$stat" -p "$pid1" >/dev/null 2>&1
same "secarena-stat: -p of the exited helper exits 3" 3 $?
left=$("$stat" | procs | awk -v a="$pid1" -v b="$pid2" '$1 == a || $1 == b')
same "secarena-stat: exited helpers not listed" "" "$left"
finish
