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
# tap_run NAME CMD...: one test from a command's exit status; output to a log.
tap_run() {
	local name=$1 log
	shift
	log="$TAP_LOGS/$(echo "$name" | tr -c 'A-Za-z0-9._-' '_').log"
	if "$@" >"$log" 2>&1; then
		tap ok "$name"
	else
		tap not-ok "$name" "see $log"
		tail -n 20 "$log" | sed 's/^/#   /'
	fi
}
