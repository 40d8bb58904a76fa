#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# crash-report.sh on three made-up console logs: a 9p fault with secarena
# loaded (not ours), a fault in secarena's own code (ours), no crash.
# Exit 1 with the difference when one answer is not the expected one.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
printf '%s\n' '[    1.2] virtme-ng-init: starting' \
	'[  812.3] BUG: unable to handle page fault for address: ffff8880deadbeef' \
	'[  812.3] RIP: 0010:p9_client_rpc+0x1b2/0x3c0' \
	'[  812.4] Modules linked in: secarena(O) 9pnet_virtio' \
	'[  812.5] Kernel panic - not syncing: Fatal exception' >"$t/9p.log"
printf '%s\n' '[   40.1] general protection fault, probably for non-canonical address' \
	'[   40.1] RIP: 0010:secarena_vm_open+0x42/0x1a0 [secarena]' \
	'[   40.2] Modules linked in: secarena(O)' >"$t/ours.log"
printf '%s\n' '[    1.2] virtme-ng-init: starting' '[   90.0] secarena: loaded' >"$t/none.log"
bad=0
check() { # check LOG WANT
	local got
	got=$("$here/crash-report.sh" "$t/$1")
	[ "$got" = "$2" ] || { echo "$1: got '$got', want '$2'"; bad=1; }
}
check 9p.log "not ours: BUG: unable to handle page fault for address: ffff8880deadbeef"
check ours.log "ours: general protection fault, probably for non-canonical address"
check none.log ""
exit "$bad"
