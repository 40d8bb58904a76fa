#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The Debian packages and their install tests, TAP into
# BUILD/results/packages.tap:
#   - per release of PACKAGE_RELEASES (default: bookworm trixie): secarena's
#     packages (their build runs the library's suites), Debian's openssl with
#     the series, lintian on both (no error; no warning of ours)
#   - the signed apt repository of them all
#   - the install test (packaging/install-test.sh) of each release of
#     INSTALL_RELEASES (default: bookworm trixie): apt-get install in a VM on a
#     fresh root, DKMS, udev, openssl.cnf, nginx and the leak scans, a
#     kernel upgrade, removal
# Usage: check-packages.sh BUILD
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
mkdir -p "$build/results/logs"
TAP="$build/results/packages.tap"
TAP_LOGS="$build/results/logs"
: >"$TAP"
# shellcheck source=scripts/tap.sh
. "$top/scripts/tap.sh"
cd "$top" || exit 1

# lintian_clean FILE: lintian printed no error and no warning.
lintian_clean() {
	[ -s "$1" ] || { echo "no lintian output in $1"; return 1; }
	! grep -E '^[EW]: ' "$1"
}
# check_log_tap PREFIX LOG: the PASS and FAIL lines of
# packaging/openssl/check-deb.sh (build-deb.sh's last step), one result each.
check_log_tap() {
	local kind rest
	[ -s "$2" ] || { tap not-ok "$1: package checks ran" "no $2"; return; }
	while read -r kind rest; do
		case $kind in
		PASS) tap ok "$1: $rest" ;;
		FAIL) tap not-ok "$1: $rest" ;;
		esac
	done <"$2"
}

suites=()
for r in ${PACKAGE_RELEASES:-bookworm trixie}; do
	d=$build/debs/$r
	tap_run "debs $r: secarena's packages build and their tests pass" \
		packaging/build-secarena-deb.sh "$r" "$d"
	tap_run "debs $r: lintian on secarena's packages: no error, no warning" \
		lintian_clean "$d/lintian.txt"
	rm -f "$build/openssl-deb/$r/logs/check.log"
	tap_run "debs $r: Debian's openssl with the series builds" \
		env SECARENA_DEBS="$d" SECARENA_DEB_WORK="$build/openssl-deb/$r" \
		packaging/openssl/build-deb.sh "$r" "$d-openssl"
	check_log_tap "debs $r openssl" "$build/openssl-deb/$r/logs/check.log"
	suites+=("$r=$d:$d-openssl")
done
tap_run "signed apt repository of ${PACKAGE_RELEASES:-bookworm trixie}" \
	packaging/apt-repo.sh "$build/apt-repo" "${suites[@]}"

for r in ${INSTALL_RELEASES:-bookworm trixie}; do
	o=$build/install-test/$r
	packaging/install-test.sh "$r" "$build/apt-repo" "$o" >"$TAP_LOGS/install-$r.log" 2>&1
	if [ -f "$o/results.tap" ]; then
		tap_import "" "$o/results.tap"
	fi
	grep -q '^ok ' "$o/results.tap" 2>/dev/null ||
		tap not-ok "install $r: the test ran no check" "see $TAP_LOGS/install-$r.log"
	# The root is 1.5 GB: keep the results, not the system.
	rm -rf --one-file-system "$o/root"
done
exit 0
