# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by run-tests.sh and vm-tests.sh, which define tap().
# shellcheck shell=bash

# import_tap PREFIX LOG: a script's TAP results as ours; no plan is a failure.
import_tap() {
	local prefix=$1 log=$2 line rest
	while read -r line; do
		case "$line" in
		"ok "*) rest=${line#ok }; tap ok "$prefix: ${rest#* - }" ;;
		"not ok "*) rest=${line#not ok }; tap not-ok "$prefix: ${rest#* - }" ;;
		esac
	done < <(grep -E '^(not )?ok ' "$log")
	grep -q '^1\.\.[1-9]' "$log" || tap not-ok "$prefix: printed its plan"
}
