#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# packaging/build-all.sh BUILD [RELEASE...]   (make debs)
#
# Every package of every RELEASE (default: bookworm trixie), then the
# signed apt repository that serves them:
#   BUILD/debs/RELEASE/           secarena-dkms, libsecarena0, libsecarena-dev,
#                                 secarena-tools (build-secarena-deb.sh)
#   BUILD/debs/RELEASE-openssl/   Debian's openssl source package with the
#                                 series as quilt patches (openssl/build-deb.sh);
#                                 it links libsecarena-dev's libsecarena.a
#   BUILD/apt-repo/               apt-repo.sh, one suite per release
# A release whose packages fail stops the build (non-zero exit).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: build-all.sh BUILD [RELEASE...]}
shift
releases=${*:-bookworm trixie}
mkdir -p "$build"
build=$(cd "$build" && pwd)
t0=$SECONDS
suites=()
for r in $releases; do
	t=$SECONDS
	"$top/packaging/build-secarena-deb.sh" "$r" "$build/debs/$r"
	SECARENA_DEBS=$build/debs/$r "$top/packaging/openssl/build-deb.sh" "$r" "$build/debs/$r-openssl"
	suites+=("$r=$build/debs/$r:$build/debs/$r-openssl")
	echo "build-all: $r: $((SECONDS - t)) s" >&2
done
"$top/packaging/apt-repo.sh" "$build/apt-repo" "${suites[@]}" >/dev/null
echo "build-all: $releases in $((SECONDS - t0)) s; repository $build/apt-repo" >&2
