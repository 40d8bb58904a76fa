#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Checks that need no VM: uapi header, W=1 builds, checkpatch, selftest
# build, documentation, install and DKMS metadata, libsecarena's suites. TAP into BUILD/results/host.tap.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
mkdir -p "$build/results/logs"
TAP="$build/results/host.tap"
TAP_LOGS="$build/results/logs"
: >"$TAP"
# shellcheck source=scripts/tap.sh
. "$top/scripts/tap.sh"
cd "$top"

# The Debian 12 kernels (DKMS, install) and the whole matrix (W=1 builds;
# Debian 13's inside the trixie root, which this makes on first use).
kernels=$(scripts/kernels.sh host | cut -d' ' -f1)
matrix=$(scripts/kernels.sh all) || matrix=$(scripts/kernels.sh host)

tap_run "uapi header builds in C99 pedantic and C++" scripts/uapi-check.sh
tap_run "the kernel matrix is complete (scripts/kernels.sh all)" scripts/kernels.sh all
while read -r k root <&3; do
	if [ "$root" = / ]; then
		tap_run "module builds with W=1 and no warning on $k" \
			scripts/build-module.sh "$k" "$build/module/$k"
	else
		tap_run "module builds with W=1 and no warning on $k (Debian 13 root)" \
			env CHROOT="$root" scripts/build-module.sh "$k" "$build/module/$k"
	fi
done 3<<<"$matrix"
scripts/kernel-tools.sh "$build/ksft"
for f in module/*.c module/*.h uapi/linux/secarena.h; do
	tap_run "checkpatch clean: $f" perl "$build/ksft/scripts/checkpatch.pl" \
		--no-tree --quiet --show-types -f "$f"
done
tap_run "selftests build" scripts/build-selftests.sh "$build/ksft"
if [ ! -f "$TAP_LOGS/selftests_build.log" ] || grep -q "warning:" "$TAP_LOGS/selftests_build.log"; then
	tap not-ok "selftests build without warnings"
else
	tap ok "selftests build without warnings"
fi
tap_run "documentation rst parses without warnings" scripts/check-rst.sh
tap_run "crash-report.sh tells a crash in secarena from one outside it" scripts/crash-report-test.sh
first=$(echo "$kernels" | head -n 1)
tap_run "make install/uninstall into DESTDIR ($first)" scripts/install-check.sh "$first"
# libsecarena: host suites on memfd_secret and mlock, the same under
# ASan+UBSan, the threads and fork suites under TSan, a bounded libFuzzer
# run, and the static binary for the VM.
tap_make "libsecarena" check
tap_make "libsecarena asan+ubsan" check-asan
tap_make "libsecarena tsan" check-tsan
tap_make "libsecarena" fuzz FUZZ_TIME="${FUZZ_TIME:-60}"
tap_run "libsecarena device suite builds for the VM" make -C userlib vmtest-bin
tap_make_in tools/secarena-stat "secarena-stat" check
# OpenSSL on libsecarena: the leak scanner's own tests, then the patched
# build, its switches and the leak scans (memfd_secret here; the device in
# the VM). OpenSSL's own make test with the arena on (six minutes) runs in
# make check-matrix.
tap_make_in tools/leakscan "leakscan" check
# The live scans run stock and the arena; stock with OpenSSL's own secure
# heap, which is reported and not asserted, in make check-matrix.
OPENSSL_MAKE_TEST=0 LIVE_SCAN_CONFIGS=stock,secarena tap_make_in userlib/openssl "openssl" check
# OpenSSL 3.5 (Debian 13): its series built, the switches, and post-quantum
# keys against Debian 13's libcrypto (OpenSSL's make test and the live
# scans of 3.5 run in make check-matrix).
LIVE_SCAN_CONFIGS=stock,secarena tap_make_in userlib/openssl "openssl 3.5" check-3.5-quick
# secarena's own Debian packages for Debian 12 (their library suites ran
# above: nocheck); Debian's openssl and the install test are in
# make check-matrix (scripts/check-packages.sh).
tap_run "debs bookworm: secarena's packages build (dpkg-buildpackage)" \
	env SECARENA_DEB_NOCHECK=1 packaging/build-secarena-deb.sh bookworm "$build/debs/bookworm"
tap_run "debs bookworm: lintian --pedantic on secarena's packages: no error, no warning" \
	sh -c "command -v lintian && test -s '$build/debs/bookworm/lintian.txt' && ! grep -E '^[EW]: ' '$build/debs/bookworm/lintian.txt'"
tap_run "dkms.conf version matches VERSION" \
	grep -qx "PACKAGE_VERSION=\"$(cat VERSION)\"" dkms.conf
# DKMS itself builds the module for both kernels (private DKMS tree).
# shellcheck disable=SC2086
scripts/dkms-check.sh $kernels >"$TAP_LOGS/dkms.tap" 2>&1
tap_import "dkms:" "$TAP_LOGS/dkms.tap"
grep -q '^1\.\.[1-9]' "$TAP_LOGS/dkms.tap" || tap not-ok "dkms: check printed no plan" "see $TAP_LOGS/dkms.tap"
exit 0
