#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Runs inside the VM as root, secarena.ko already loaded by the caller
# (which also unloads it): the fuzzer with a fixed CI seed, then the
# module's state once every fuzzer process is gone. TAP on stdout.
# Env: FUZZ_OPS (default 100000), FUZZ_SEED (replay), FUZZ_PROCS,
# FUZZ_THREADS, FUZZ_TIMEOUT (s), FUZZ_BIN, FUZZ_LOGDIR (keeps the logs).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
bin=${FUZZ_BIN:-$here/../../build/stress/fuzz/secarena_fuzz}
ops=${FUZZ_OPS:-100000}
seed=${FUZZ_SEED:-20260517}
procs=${FUZZ_PROCS:-4}
threads=${FUZZ_THREADS:-3}
limit=${FUZZ_TIMEOUT:-900}
logdir=${FUZZ_LOGDIR:-$(mktemp -d)}
sysfs=/sys/class/misc/secarena
kver=$(uname -r)

tap=()
result() { # result ok|not-ok NAME [DETAIL]
	if [ "$1" = ok ]; then
		tap+=("ok $(( ${#tap[@]} + 1 )) - $kver: $2")
	else
		tap+=("not ok $(( ${#tap[@]} + 1 )) - $kver: $2${3:+ # $3}")
	fi
}
counter() { cat "$sysfs/$1" 2>/dev/null || echo missing; }

mkdir -p "$logdir"
dmesg_before=$(dmesg | wc -l)
copy_failed_before=$(counter fork_copy_failed)

start=$(date +%s.%N)
status=0
timeout --signal=KILL "$limit" "$bin" -s "$seed" -n "$ops" -p "$procs" -t "$threads" \
	>"$logdir/fuzz.tap" 2>"$logdir/fuzz.err" || status=$?
secs=$(echo "$(date +%s.%N) - $start" | bc)

while read -r line; do
	case "$line" in
	"not ok "*) rest=${line#not ok }; rest=${rest#* - }; detail=
		case "$rest" in *" # "*) detail=${rest#* # } ;; esac
		result not-ok "fuzz: ${rest%% # *}" "$detail" ;;
	"ok "*) rest=${line#ok }; result ok "fuzz: ${rest#* - }" ;;
	esac
done < <(grep -E '^(not )?ok [0-9]+ ' "$logdir/fuzz.tap")
if grep -q '^1\.\.[1-9]' "$logdir/fuzz.tap"; then
	result ok "fuzzer finished and printed its plan (${secs%.*} s)"
else
	result not-ok "fuzzer finished and printed its plan" "exit status $status after ${secs%.*} s"
fi
[ "$status" -le 1 ] || result not-ok "fuzzer exit status" "$status"

# Every process is gone; the last fput and exit_mmap may trail a little.
for _ in $(seq 50); do
	[ "$(counter arenas)" = 0 ] && [ "$(counter pages_in_use)" = 0 ] && break
	sleep 0.1
done
for c in arenas pages_in_use mapped; do
	v=$(counter $c)
	[ "$v" = 0 ] && result ok "$c back to 0" || result not-ok "$c back to 0" "$c=$v"
done
v=$(counter fork_copy_failed)
[ "$v" = "$copy_failed_before" ] && result ok "no fork copy failed" ||
	result not-ok "no fork copy failed" "fork_copy_failed $copy_failed_before -> $v"

dmesg | tail -n +"$((dmesg_before + 1))" >"$logdir/dmesg.log"
bad=$(grep -E 'BUG:|WARNING:|Oops|Call Trace|general protection' "$logdir/dmesg.log" | head -3)
[ -z "$bad" ] && result ok "dmesg clean" || result not-ok "dmesg clean" "$(echo "$bad" | head -1)"

echo "1..${#tap[@]}"
printf '%s\n' "${tap[@]}"
grep '^# ' "$logdir/fuzz.tap" | grep -v '^# secarena_fuzz ' || true
sed -n '1,40s/^/# /p' "$logdir/fuzz.err"
echo "# fuzzer wall time: ${secs} s; logs in $logdir"
