#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Host tests of secarena-stat: it runs on fake sysfs and /proc trees
# (SECARENA_STAT_SYSFS, SECARENA_STAT_PROC), so no module is needed. Also
# lints the man pages and the VM script. TAP on stdout, plan last. Exits 0
# even when tests fail, since the TAP lines carry that; non-zero only when
# the build fails.
# The bash -c snippets take their values as $1, $2: single quotes on purpose.
# shellcheck disable=SC2016
set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
top=$(cd "$here/../.." && pwd)
man_dir=$top/Documentation/man

if ! make -s -C "$here" all >&2; then
	echo "Bail out! build failed"
	exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# nobody must reach the fake trees and the binary for the permission tests.
chmod 755 "$tmp"
install -m 0755 "$here/build/secarena-stat" "$tmp/secarena-stat"
stat=$tmp/secarena-stat
page=$(getconf PAGESIZE)

n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1${2:+ # $2}"; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
# check NAME CMD...: one test from a command's status; its output on failure.
check() {
	local name=$1 log=$tmp/check.log
	shift
	if "$@" >"$log" 2>&1; then
		ok "$name"
	else
		not_ok "$name" "$(head -c 300 "$log" | tr '\n' ' ')"
	fi
}
# same NAME EXPECTED ACTUAL
same() {
	if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "expected '$2', got '$3'"; fi
}
# run TREE ARGS...: secarena-stat on a fake tree; sets out, err, rc.
run() {
	local tree=$1
	shift
	rc=0
	SECARENA_STAT_SYSFS=$tree/sys SECARENA_STAT_PROC=$tree/proc \
		"$stat" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	out=$(cat "$tmp/out")
	err=$(cat "$tmp/err")
}

# A module with every attribute of module/device.c, and four processes:
# 100 maps two arenas, 200 maps none, 300 has an awkward comm, 400 has
# exited (no maps file any more). Two users hold the 19 pages: root, and a
# uid without a name, listed newest first as the module does.
big_uid=3999999999
mk_tree() {
	local t=$1 a
	mkdir -p "$t/sys/class/misc/secarena" "$t/sys/module/secarena/parameters" \
		"$t/proc/100" "$t/proc/200" "$t/proc/300" "$t/proc/400" "$t/proc/self"
	for a in arenas=3 mapped=2 pages_in_use=19 pages_peak=40 \
		max_arena_pages=16384 max_total_pages=262144 max_user_pages=65536 \
		refused_limit=5 refused_user_limit=4 refused_hibernation=1 \
		refused_foreign_mmap=2 fork_copy_failed=0 revoked_hibernation=6; do
		echo "${a#*=}" >"$t/sys/class/misc/secarena/${a%=*}"
	done
	printf '%s 5\n0 14\n' "$big_uid" >"$t/sys/class/misc/secarena/users"
	echo 10:123 >"$t/sys/class/misc/secarena/dev"
	echo 16384 >"$t/sys/module/secarena/parameters/max_arena_pages"
	echo 262144 >"$t/sys/module/secarena/parameters/max_total_pages"
	echo 65536 >"$t/sys/module/secarena/parameters/max_user_pages"

	echo keyd >"$t/proc/100/comm"
	cat >"$t/proc/100/maps" <<-MAPS
	55d0c0a00000-55d0c0a01000 r--p 00000000 fe:01 1234                       /usr/bin/key d
	7f1200000000-7f1200005000 rw-s 00000000 00:05 77                         /dev/secarena
	7f1200010000-7f1200020000 rw-s 00000000 00:05 78                         /dev/secarena (deleted)
	7f1200030000-7f1200031000 rw-s 00000000 00:05 79                         /dev/secarenax
	7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]
	7ffd00030000-7ffd00031000 rw-p 00000000 00:00 0 
	MAPS
	echo other >"$t/proc/200/comm"
	echo "00400000-00401000 r-xp 00000000 fe:01 9 /dev/secarena-not" >"$t/proc/200/maps"
	# Quote, backslash, newline, tab, ESC, é, and a lone byte: 15 bytes.
	printf 'a"b\\c\nd\te\033\xc3\xa9\xff\n' >"$t/proc/300/comm"
	echo "7f3400000000-7f3400003000 rw-s 00000000 00:05 80 /dev/secarena" >"$t/proc/300/maps"
	echo gone >"$t/proc/400/comm"
}

t1=$tmp/t1
mk_tree "$t1"
users=$t1/sys/class/misc/secarena/users
# The name the tool should find for a uid, as NSS has it; "" if none.
name_of() { getent passwd "$1" | cut -d: -f1; }
big_name=$(name_of "$big_uid")
# users_rows: the users table's rows, "UID USER PAGES KiB" each.
users_rows() { sed -n '/^UID /,/^$/p' "$tmp/out" | sed '1d;/^$/d' | tr -s ' '; }

# --- tables -----------------------------------------------------------
run "$t1"
cat >"$tmp/expect" <<EOF2
arenas                       3
mapped                       2
pages_in_use                 19
pages_peak                   40
max_arena_pages              16384
max_total_pages              262144
max_user_pages               65536
refused_limit                5
refused_user_limit           4
refused_hibernation          1
refused_foreign_mmap         2
fork_copy_failed             0
revoked_hibernation          6
parameters/max_arena_pages   16384
parameters/max_total_pages   262144
parameters/max_user_pages    65536

$(printf '%-10s %-16s %10s %12s' UID USER PAGES KiB)
$(printf '%-10s %-16s %10s %12s' 0 root 14 $((14 * page / 1024)))
$(printf '%-10s %-16s %10s %12s' "$big_uid" "${big_name:--}" 5 $((5 * page / 1024)))

$(printf '%-7s %-16s %-25s %12s %8s' PID COMM START-END SIZE PAGES)
$(printf '%-7s %-16s %-25s %12s %8s' 100 keyd 7f1200000000-7f1200005000 20480 $((20480 / page)))
$(printf '%-7s %-16s %-25s %12s %8s' 100 keyd 7f1200010000-7f1200020000 65536 $((65536 / page)))
$(printf '%-7s %-16s %-25s %12s %8s' 300 'a"b\x5cc\x0ad\x09e\x1b\xc3\xa9\xff' 7f3400000000-7f3400003000 12288 $((12288 / page)))
EOF2
check "table: exact counters, parameters, users by uid and mappings" diff -u "$tmp/expect" "$tmp/out"
same "table: exit 0" 0 "$rc"
same "table: nothing on stderr (exited process skipped quietly)" "" "$err"

# --- JSON -------------------------------------------------------------
run "$t1" --json
cp "$tmp/out" "$tmp/t1.json"
check "json: parses with python3 -m json.tool" python3 -m json.tool "$tmp/t1.json"
check "json: exact module counters and parameters" python3 - "$tmp/t1.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["module"]
want = {"arenas": 3, "mapped": 2, "pages_in_use": 19, "pages_peak": 40,
        "max_arena_pages": 16384, "max_total_pages": 262144,
        "max_user_pages": 65536, "refused_limit": 5,
        "refused_user_limit": 4, "refused_hibernation": 1,
        "refused_foreign_mmap": 2, "fork_copy_failed": 0,
        "revoked_hibernation": 6,
        "parameters": {"max_arena_pages": 16384, "max_total_pages": 262144,
                       "max_user_pages": 65536}}
assert m == want, m
assert list(m) == list(want), list(m)
PY
check "json: users by uid, name or null" python3 - "$tmp/t1.json" "$big_uid" "$big_name" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
big_name = sys.argv[3] or None
want = [{"uid": 0, "user": "root", "pages": 14},
        {"uid": int(sys.argv[2]), "user": big_name, "pages": 5}]
assert doc["users"] == want, doc["users"]
assert list(doc) == ["module", "users", "processes", "unreadable"], list(doc)
PY
check "json: processes with exact sizes, comm escaped" python3 - "$tmp/t1.json" "$page" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
pg = int(sys.argv[2])
def mp(s, e):
    return {"start": hex(s), "end": hex(e), "size": e - s, "pages": (e - s) // pg}
want = [
    {"pid": 100, "comm": "keyd", "size": 0x5000 + 0x10000,
     "mappings": [mp(0x7f1200000000, 0x7f1200005000),
                  mp(0x7f1200010000, 0x7f1200020000)], "library": None},
    {"pid": 300, "comm": 'a"b\\c\nd\te\x1b\u00e9\ufffd', "size": 0x3000,
     "mappings": [mp(0x7f3400000000, 0x7f3400003000)], "library": None},
]
assert doc["processes"] == want, doc["processes"]
assert doc["unreadable"] == 0
PY
same "json: exit 0" 0 "$rc"

# --- users --------------------------------------------------------------
cp "$users" "$tmp/users.orig"
: >"$users"
run "$t1"
same "users empty: (none) under the header" \
	"$(printf '%-10s %-16s %10s %12s' UID USER PAGES KiB)|(none)" \
	"$(sed -n '/^UID /,/^$/p' "$tmp/out" | sed '/^$/d' | paste -sd '|')"
same "users empty: exit 0, nothing on stderr" "0 " "$rc $err"
run "$t1" --json
check "users empty: json []" python3 -c '
import json, sys
assert json.load(open(sys.argv[1]))["users"] == []
' "$tmp/out"

# The module writes a newline after each line; the tool takes a last line
# without one.
printf '7 3\n0 2' >"$users"
run "$t1"
name7=$(name_of 7)
same "users: last line without a newline" \
	"0 root 2 $((2 * page / 1024))|7 ${name7:--} 3 $((3 * page / 1024))" \
	"$(users_rows | paste -sd '|')"

# An older module has no users attribute: nothing, and not a word about it.
rm "$users"
run "$t1"
same "users missing: exit 0, nothing on stderr" "0 " "$rc $err"
same "users missing: no users table" "0" "$(grep -c '^UID ' "$tmp/out")"
same "users missing: the counters, then the processes" \
	"parameters/max_user_pages||PID" \
	"$(sed -n '/^parameters\/max_user_pages/,/^PID /p' "$tmp/out" | cut -d' ' -f1 | paste -sd '|')"
run "$t1" --json
check "users missing: json null" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert "users" in d and d["users"] is None, d
' "$tmp/out"

# Another read error (a directory in its place) is said, like a counter's.
mkdir "$users"
run "$t1"
same "users a directory: exit 0" 0 "$rc"
same "users a directory: the error named" "secarena-stat: $users: Is a directory" "$err"
same "users a directory: no users table" "0" "$(grep -c '^UID ' "$tmp/out")"
rmdir "$users"

# Malformed: file and line named, the rest still shown, exit 1.
bad_line() {
	local name=$1 line=$2
	shift 2
	# shellcheck disable=SC2059 # the formats are the tests
	printf -- "$@" >"$users"
	run "$t1"
	same "users malformed ($name): exit 1, file and line named" \
		"1 secarena-stat: $users:$line: not \"UID PAGES\"" "$rc $err"
}
bad_line "a letter" 2 '0 14\nx 5\n'
bad_line "a third field" 2 '0 14\n1000 5 7\n'
bad_line "an empty line" 2 '0 14\n\n'
bad_line "a sign" 1 '-1 5\n'
bad_line "a tab" 1 '0\t14\n'
bad_line "a space at the end" 1 '0 14 \n'
bad_line "a leading zero" 1 '0 014\n'
bad_line "a NUL" 1 '0 1\0002\n'
bad_line "uid beyond 32 bits" 1 '4294967296 1\n'
bad_line "pages beyond 64 bits" 1 '0 18446744073709551616\n'
printf '0 14\nroot 5\n' >"$users"
run "$t1"
same "users malformed: counters and pid 100's two rows still shown" "arenas 3|2" \
	"$(head -n 1 "$tmp/out" | tr -s ' ')|$(grep -c '^100 ' "$tmp/out")"
same "users malformed: no users table" "0" "$(grep -c '^UID ' "$tmp/out")"
run "$t1" --json
same "users malformed, --json: exit 1" 1 "$rc"
check "users malformed, --json: users null, the rest intact" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["users"] is None and d["module"]["arenas"] == 3, d
assert [p["pid"] for p in d["processes"]] == [100, 300], d
' "$tmp/out"
cp "$tmp/users.orig" "$users"

# --- -p PID -----------------------------------------------------------
run "$t1" -p 300
rows=$(sed -n '/^PID /,$p' "$tmp/out" | tail -n +2 | awk '{print $1}' | tr '\n' ' ')
same "-p 300: only that process" "300 " "$rows"
run "$t1" -p 200
same "-p of a process without arenas: exit 0" 0 "$rc"
same "-p of a process without arenas: (none)" "(none)" "$(tail -n 1 "$tmp/out")"
run "$t1" --pid=100 --json
check "--pid=100 --json: one process, two mappings" python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["processes"]
assert [(x["pid"], len(x["mappings"])) for x in p] == [(100, 2)], p
' "$tmp/out"

# --- errors -----------------------------------------------------------
run "$tmp/nothing"
same "module missing: exit 2" 2 "$rc"
same "module missing: message" \
	"secarena-stat: module not loaded (no $tmp/nothing/sys/class/misc/secarena): modprobe secarena" "$err"
run "$t1" --bogus
same "bad option: exit 64" 64 "$rc"
check "bad option: usage on stderr, nothing on stdout" \
	bash -c '[[ $1 == *"usage: secarena-stat"* && -z $2 ]]' _ "$err" "$out"
run "$t1" extra
same "stray argument: exit 64" 64 "$rc"
run "$t1" -p 12x
same "-p with a non-number: exit 64" 64 "$rc"
run "$t1" -p
same "-p without an argument: exit 64" 64 "$rc"
run "$t1" -p 999
same "-p of a nonexistent pid: exit 3" 3 "$rc"
same "-p of a nonexistent pid: message" "secarena-stat: no process 999" "$err"
run "$t1" -p 0
same "-p 0: exit 3" 3 "$rc"
run "$t1" -p 400
same "-p of a pid that has exited (no maps): exit 3" 3 "$rc"
run "$t1" --help
same "--help: exit 0" 0 "$rc"
check "--help: usage on stdout" grep -q '^usage: secarena-stat' "$tmp/out"
rc=0
SECARENA_STAT_SYSFS=$t1/sys SECARENA_STAT_PROC=$t1/proc "$stat" >/dev/full 2>"$tmp/err" || rc=$?
same "write error (/dev/full): exit 1" 1 "$rc"

# --- a module older or newer than the tool -----------------------------
t2=$tmp/t2
mk_tree "$t2"
rm "$t2/sys/class/misc/secarena/fork_copy_failed"
rm -r "$t2/sys/module/secarena/parameters"
echo 'x"y' >"$t2/sys/class/misc/secarena/refused_limit"
run "$t2"
same "missing attribute: '-' in the table" "fork_copy_failed             -" \
	"$(grep '^fork_copy_failed' "$tmp/out")"
run "$t2" --json
check "missing attribute and parameters: null, {}, odd text as a string" python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))["module"]
assert m["fork_copy_failed"] is None and m["parameters"] == {}, m
assert m["refused_limit"] == "x\"y", m
' "$tmp/out"

# --- maps that cannot be read ------------------------------------------
# Root reads any file, so the reader must be someone else: nobody.
as_user=()
if [ "$(id -u)" != 0 ]; then
	as_user=(env)
elif command -v setpriv >/dev/null; then
	as_user=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
fi
# runu TREE ARGS...: like run, as the unprivileged user.
runu() {
	local tree=$1
	shift
	rc=0
	"${as_user[@]}" env SECARENA_STAT_SYSFS="$tree/sys" SECARENA_STAT_PROC="$tree/proc" \
		"$stat" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	out=$(cat "$tmp/out")
	err=$(cat "$tmp/err")
}
# unreadable_tree DIR FILE MODE: a fake tree that only FILE's owner reads
# (MODE); as a non-root runner, not even that.
unreadable_tree() {
	mk_tree "$1"
	chmod -R a+rX "$1"
	chmod "$3" "$1/$2"
	[ "$(id -u)" = 0 ] || chmod 0000 "$1/$2"
}
t3=$tmp/t3
unreadable_tree "$t3" proc/300/maps 0600
if [ ${#as_user[@]} = 0 ]; then
	for t in "unreadable maps: exit 0" "unreadable maps: note" \
		"unreadable maps: others still listed" "unreadable maps: json count" \
		"-p of an unreadable process: exit 3"; do
		skip "$t" "running as root without setpriv"
	done
else
	runu "$t3"
	same "unreadable maps: exit 0" 0 "$rc"
	same "unreadable maps: note" "secarena-stat: 1 processes not readable: run as root" "$err"
	rows=$(sed -n '/^PID /,$p' "$tmp/out" | tail -n +2 | awk '{print $1}' | tr '\n' ' ')
	same "unreadable maps: others still listed" "100 100 " "$rows"
	runu "$t3" --json
	check "unreadable maps: json count" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["unreadable"] == 1 and [p["pid"] for p in d["processes"]] == [100], d
' "$tmp/out"
	runu "$t3" -p 300
	same "-p of an unreadable process: exit 3" 3 "$rc"
fi

# --- users that cannot be read -----------------------------------------
# The module makes it 0400: as nobody, said once, like the processes.
t4=$tmp/t4
unreadable_tree "$t4" sys/class/misc/secarena/users 0400
if [ ${#as_user[@]} = 0 ]; then
	for t in "unreadable users: exit 0" "unreadable users: one note" \
		"unreadable users: no users table" "unreadable users: --json null, note once"; do
		skip "$t" "running as root without setpriv"
	done
else
	runu "$t4"
	same "unreadable users: exit 0" 0 "$rc"
	same "unreadable users: one note" "secarena-stat: users not readable: run as root" "$err"
	same "unreadable users: no users table" "0" "$(grep -c '^UID ' "$tmp/out")"
	runu "$t4" --json
	check "unreadable users: --json null, note once" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["users"] is None and d["module"]["arenas"] == 3, d
assert sys.argv[2:] == ["0", "secarena-stat: users not readable: run as root"], sys.argv
' "$tmp/out" "$rc" "$err"
fi

# --- the VM helper -------------------------------------------------------
rc=0
"$here/build/hold_arena" >/dev/null 2>&1 || rc=$?
same "hold_arena: usage exit 64" 64 "$rc"

# --- libsecarena's status page ----------------------------------------------
# 500 maps an arena and its library was refused blocks while full; 600's page
# is not a status page; 700 uses another backend (no device mapping) and was
# refused a block larger than an arena. Each mem file holds the page at the
# mapping's start (a sparse file: the fake address is small).
status_page() { # status_page FILE OFFSET MAGIC ARENA_SIZE MAX ARENAS CAP REFUSED LAST HELD BACKEND
	python3 - "$@" <<'PY'
import struct, sys
f, off, magic = sys.argv[1], int(sys.argv[2], 0), sys.argv[3].encode()
v = [int(x) for x in sys.argv[4:11]]
page = magic + struct.pack("<II7Q", 1, 8 + 8 + 7 * 8 + 16, *v) + sys.argv[11].encode().ljust(16, b"\0")
with open(f, "wb") as out:
    out.seek(off)
    out.write(page.ljust(4096, b"\0"))
PY
}
t5=$tmp/t5
mk_tree "$t5"
mkdir -p "$t5/proc/500" "$t5/proc/600" "$t5/proc/700"
echo nginx >"$t5/proc/500/comm"
cat >"$t5/proc/500/maps" <<-MAPS
7f5000000000-7f5000003000 rw-s 00000000 00:05 81                         /dev/secarena
00010000-00011000 rw-p 00000000 00:01 82                         /memfd:secarena-status (deleted)
MAPS
status_page "$t5/proc/500/mem" 0x10000 SECARENA 4096 1 1 4096 3 2048 3072 device
echo liar >"$t5/proc/600/comm"
echo "00020000-00021000 rw-p 00000000 00:01 83 /memfd:secarena-status (deleted)" >"$t5/proc/600/maps"
status_page "$t5/proc/600/mem" 0x20000 NOTARENA 4096 1 1 4096 0 0 0 device
echo haproxy >"$t5/proc/700/comm"
echo "00030000-00031000 rw-p 00000000 00:01 84 /memfd:secarena-status (deleted)" >"$t5/proc/700/maps"
status_page "$t5/proc/700/mem" 0x30000 SECARENA 65536 8 2 131072 1 131072 65536 memfd_secret
run "$t5"
sed -n '/^PID  *COMM  *BACKEND/,$p' "$tmp/out" >"$tmp/library"
cat >"$tmp/expect" <<EOF2
$(printf '%-7s %-16s %-12s %9s %12s %12s %8s %12s' PID COMM BACKEND ARENAS ARENA-SIZE CAPACITY REFUSED LAST-REFUSED)
$(printf '%-7s %-16s %-12s %9s %12s %12s %8s %12s' 500 nginx device 1/1 4096 4096 3 2048)
$(printf '%-7s %-16s %s' 600 liar 'status unreadable: not a secarena status page')
$(printf '%-7s %-16s %-12s %9s %12s %12s %8s %12s' 700 haproxy memfd_secret 2/8 65536 131072 1 131072)

pid 500 refused 3 allocations; the latest asked for 2048 bytes while 3072 of 4096 bytes in 1 of at most 1 arenas were taken: raise arenas= or size=
  (for OpenSSL: in OPENSSL_SECARENA or the secarena section of openssl.cnf)

pid 700 refused 1 allocations; the latest asked for 131072 bytes, more than an arena of 65536 bytes holds: raise size=
  (for OpenSSL: in OPENSSL_SECARENA or the secarena section of openssl.cnf)
EOF2
check "status page: library rows, a bad page named, what to raise (arenas or size)" \
	diff -u "$tmp/expect" "$tmp/library"
same "status page: exit 0" 0 "$rc"
rows=$(sed -n '/^PID  *COMM  *START-END/,/^$/p' "$tmp/out" | sed '1d;/^$/d' | awk '{print $1}' | tr '\n' ' ')
same "status page: a process without a device mapping has no mapping row" "100 100 300 500 " "$rows"
run "$t5" --json
check "status page --json: library objects, error, null" python3 - "$tmp/out" <<'PY'
import json, sys
p = {x["pid"]: x["library"] for x in json.load(open(sys.argv[1]))["processes"]}
assert p[100] is None, p
assert p[500] == {"backend": "device", "arenas": 1, "max_arenas": 1, "arena_size": 4096,
                  "capacity": 4096, "refused": 3, "last_refused_size": 2048,
                  "held_at_last_refusal": 3072}, p[500]
assert p[600] == {"error": "not a secarena status page"}, p[600]
assert p[700]["backend"] == "memfd_secret" and p[700]["last_refused_size"] == 131072, p[700]
PY
run "$t5" -p 700
same "-p of a process with only a status page: no mapping, its library row" \
	"(none)|700" "$(sed -n '/^PID  *COMM  *START-END/{n;p}' "$tmp/out")|$(sed -n '/^PID  *COMM  *BACKEND/{n;p}' "$tmp/out" | awk '{print $1}')"

# --library: the same without the module (memfd_secret and mlock users).
t6=$tmp/t6
mkdir -p "$t6"
cp -r "$t5/proc" "$t6/proc"
run "$t6" --library
same "--library without the module: exit 0, nothing on stderr" "0|" "$rc|$err"
same "--library without the module: the library table alone" \
	"$(sed -n '/^PID  *COMM  *BACKEND/,/^$/p' "$tmp/library" | sed '/^$/d')" "$(sed '/^$/,$d' "$tmp/out")"
run "$t6" --library --json
check "--library --json: the processes with a page, nothing of the module" python3 - "$tmp/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert list(d) == ["processes", "unreadable"], list(d)
assert [p["pid"] for p in d["processes"]] == [500, 600, 700], d
assert d["processes"][0]["library"]["refused"] == 3, d
PY
run "$t1" --library
same "--library, no process has a page: the header and (none)" \
	"0|$(printf '%-7s %-16s %-12s %9s %12s %12s %8s %12s' PID COMM BACKEND ARENAS ARENA-SIZE CAPACITY REFUSED LAST-REFUSED)|(none)" \
	"$rc|$(paste -sd '|' "$tmp/out")"

chmod -R a+rX "$t5"
chmod 0600 "$t5/proc/500/mem"
if [ ${#as_user[@]} = 0 ]; then
	skip "status page unreadable: says so and to run as root" "running as root without setpriv"
else
	runu "$t5" -p 500
	same "status page unreadable: says so and to run as root" \
		"500 nginx status unreadable: Permission denied: run as root" \
		"$(sed -n '/^PID  *COMM  *BACKEND/{n;p}' "$tmp/out" | tr -s ' ')"
fi

# The same from a live process: libsecarena's real page, read through the
# real /proc/PID/mem (the module's counters still come from the fake tree).
if make -s -C "$here" build/refused_library >"$tmp/make.log" 2>&1; then
	coproc LIB { SECARENA_BACKEND=mlock exec "$here/build/refused_library" 8192 2 100000; }
	read -r ready <&"${LIB[0]}"
	if [ "$ready" = ready ]; then
		SECARENA_STAT_SYSFS=$t1/sys "$stat" -p "$LIB_PID" >"$tmp/out" 2>"$tmp/err"
		same "live process: its page read through /proc/PID/mem" \
			"$(printf '%-7s %-16s %-12s %9s %12s %12s %8s %12s' "$LIB_PID" refused_library mlock 2/2 8192 16384 2 100000)" \
			"$(sed -n '/^PID  *COMM  *BACKEND/{n;p}' "$tmp/out")"
		same "live process: the latest refusal was larger than an arena" \
			"pid $LIB_PID refused 2 allocations; the latest asked for 100000 bytes, more than an arena of 8192 bytes holds: raise size=" \
			"$(grep "^pid $LIB_PID refused" "$tmp/out")"
		SECARENA_STAT_SYSFS=$tmp/nothing "$stat" --library -p "$LIB_PID" >"$tmp/out" 2>"$tmp/err"
		same "live process, --library with no module at all: its row" \
			"$(printf '%-7s %-16s %-12s %9s %12s %12s %8s %12s' "$LIB_PID" refused_library mlock 2/2 8192 16384 2 100000)" \
			"$(sed -n 2p "$tmp/out")"
	else
		not_ok "live process: its page read through /proc/PID/mem" "refused_library said '$ready'"
		not_ok "live process: the latest refusal was larger than an arena" "not run"
		not_ok "live process, --library with no module at all: its row" "not run"
	fi
	eval "exec ${LIB[1]}>&-"
	wait "$LIB_PID"
else
	not_ok "live process: refused_library builds" "$(head -c 300 "$tmp/make.log")"
fi

# --- install ------------------------------------------------------------
dest=$tmp/dest
check "make install DESTDIR PREFIX" make -s -C "$here" install DESTDIR="$dest" PREFIX=/usr
check "installed sbin/secarena-stat 0755 and man8 page" bash -c '
[ "$(stat -c %a "$1/usr/sbin/secarena-stat")" = 755 ] &&
[ "$(stat -c %a "$1/usr/share/man/man8/secarena-stat.8")" = 644 ]' _ "$dest"
make -s -C "$here" uninstall DESTDIR="$dest" PREFIX=/usr >/dev/null 2>&1
check "make uninstall removes both" bash -c '
[ ! -e "$1/usr/sbin/secarena-stat" ] && [ ! -e "$1/usr/share/man/man8/secarena-stat.8" ]' _ "$dest"

# --- man pages ------------------------------------------------------------
for page_file in "$man_dir/secarena.4" "$man_dir/secarena-stat.8"; do
	name=$(basename "$page_file")
	warn=$(LC_ALL=C.UTF-8 MANWIDTH=80 man -l --warnings -E UTF-8 "$page_file" 2>&1 >/dev/null)
	same "man $name: no groff warnings" "" "$warn"
	if command -v mandoc >/dev/null; then
		warn=$(mandoc -T lint -W warning "$page_file" 2>&1)
		same "mandoc -T lint $name: clean" "" "$warn"
	else
		skip "mandoc -T lint $name: clean" "mandoc not installed"
	fi
done

# --- scripts --------------------------------------------------------------
check "vm-test.sh: bash -n" bash -n "$here/vm-test.sh"
if command -v shellcheck >/dev/null; then
	check "shellcheck vm-test.sh run-tests.sh" shellcheck "$here/vm-test.sh" "$here/tests/run-tests.sh"
else
	skip "shellcheck vm-test.sh run-tests.sh" "shellcheck not installed"
fi

echo "1..$n"
exit 0
