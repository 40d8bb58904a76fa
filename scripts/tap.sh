# SPDX-License-Identifier: GPL-2.0
# Sourced by the check scripts: TAP lines into $TAP, numbered from 1.
# shellcheck shell=bash
tap_n=0
tap() { # tap ok|not-ok NAME [DETAIL]
	tap_n=$((tap_n + 1))
	if [ "$1" = ok ]; then
		echo "ok $tap_n $2" | tee -a "$TAP"
	else
		echo "not ok $tap_n $2${3:+ # $3}" | tee -a "$TAP"
	fi
}
# tap_time START NAME: how long a step took, on stdout as a TAP comment,
# so that CI's log shows where its time went.
tap_time() {
	echo "# time: $((SECONDS - $1)) s: $2"
}
# tap_run NAME CMD...: one test from a command's exit status; output to a log.
tap_run() {
	local name=$1 log t0=$SECONDS
	shift
	log="$TAP_LOGS/$(printf '%s' "$name" | tr -c 'A-Za-z0-9._-' '_').log"
	if "$@" >"$log" 2>&1; then
		tap ok "$name"
	else
		tap not-ok "$name" "see $log"
		tail -n 20 "$log" | sed 's/^/#   /'
	fi
	tap_time "$t0" "$name"
}
# tap_import PREFIX FILE: the results of another TAP stream, renumbered.
tap_import() {
	local prefix=$1 line rest
	while IFS= read -r line; do
		case "$line" in
		"ok "*)
			rest=${line#ok }
			rest=${rest/ - / }
			tap_n=$((tap_n + 1))
			echo "ok $tap_n $prefix ${rest#* }" | tee -a "$TAP" ;;
		"not ok "*)
			rest=${line#not ok }
			rest=${rest/ - / }
			tap_n=$((tap_n + 1))
			echo "not ok $tap_n $prefix ${rest#* }" | tee -a "$TAP" ;;
		esac
	done <"$2"
}
# tap_make_in DIR PREFIX TARGET...: a make target in DIR that prints TAP.
# Its results count one by one; a target that fails without a failing
# result (a build error, a crash) is a failure of its own.
tap_make_in() {
	local dir=$1 prefix=$2 log status=0 t0=$SECONDS
	shift 2
	log="$TAP_LOGS/$(printf '%s' "$prefix $*" | tr -c 'A-Za-z0-9._-' '_').log"
	make -C "$dir" "$@" >"$log" 2>&1 || status=$?
	tap_import "$prefix" "$log"
	if [ "$status" != 0 ] && ! grep -q '^not ok ' "$log"; then
		tap not-ok "$prefix: make $* exited with status $status" "see $log"
		tail -n 20 "$log" | sed 's/^/#   /'
	elif ! grep -qE '^(not )?ok ' "$log"; then
		tap not-ok "$prefix: make $* printed no result" "see $log"
	fi
	tap_time "$t0" "$prefix: make $*"
}

# tap_make PREFIX TARGET...: the same in userlib/.
tap_make() {
	tap_make_in "$top/userlib" "$@"
}
