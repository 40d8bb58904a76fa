#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# packaging/build-secarena-deb.sh RELEASE OUTDIR
#
# Builds the secarena source package (debian/ of this tree) and its binary
# packages for one Debian release, with dpkg-buildpackage, and runs lintian
# on the result:
#   bookworm  on this host (Debian 12)
#   trixie    inside the Debian 13 root of scripts/trixie-root.sh, whose
#             glibc, compiler and debhelper are Debian 13's
# The version is the tree's (VERSION) with the release's suffix, +deb12uN or
# +deb13uN (SECARENA_DEB_REVISION=N, default 1): one version per release,
# so that both sit in one apt repository and a dist-upgrade from 12 to 13
# moves to the newer build. The source is what git knows of the tree
# (tracked files and untracked ones that .gitignore does not hide), so a
# build of the working tree and of a clean clone are the same.
# Leaves in OUTDIR: the .dsc, .tar.xz, .debs, .buildinfo, .changes and
# lintian.txt (every tag lintian printed). Exits non-zero when the build
# fails or lintian reports an error.
# SECARENA_DEB_NOCHECK=1 skips the library's test suites in the build.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
release=${1:?usage: build-secarena-deb.sh bookworm|trixie OUTDIR}
out=${2:?usage: build-secarena-deb.sh bookworm|trixie OUTDIR}
rev=${SECARENA_DEB_REVISION:-1}
case $release in
bookworm) suffix=+deb12u$rev ;;
trixie) suffix=+deb13u$rev ;;
*) echo "build-secarena-deb: unknown release '$release' (bookworm or trixie)" >&2; exit 2 ;;
esac
[ "$(id -u)" = 0 ] || { echo "build-secarena-deb: must run as root (build dependencies)" >&2; exit 1; }
t0=$SECONDS
log() { echo "build-secarena-deb[$release]: [$((SECONDS - t0))s] $*" >&2; }

# The tools dpkg-buildpackage needs, and the build dependencies of
# debian/control, installed where the build runs.
build_deps="debhelper dh-dkms dpkg-dev build-essential libssl-dev pkgconf lintian fakeroot"

mkdir -p "$out"
out=$(cd "$out" && pwd)
# The Debian 13 root sees the tree (in-root.sh binds it), nothing else.
if [ "$release" = trixie ] && [ "${out#"$top"/}" = "$out" ]; then
	echo "build-secarena-deb: OUTDIR must be inside $top for trixie (the root sees only the tree)" >&2
	exit 2
fi
ver=$(cat "$top/VERSION")$suffix
work=$out/src
rm -rf "$work"
mkdir -p "$work/secarena-$ver"
(cd "$top" && git ls-files -z --cached --others --exclude-standard |
	xargs -0 cp --parents -P -t "$work/secarena-$ver")

# The release's changelog entry on top of the tree's.
{
	printf 'secarena (%s) %s; urgency=medium\n\n' "$ver" "$release"
	printf '  * Build of secarena %s for Debian %s.\n\n' "$(cat "$top/VERSION")" \
		"$([ "$release" = bookworm ] && echo 12 || echo 13)"
	printf ' -- %s  %s\n\n' "$(sed -n 's/^Maintainer: //p' "$top/debian/control")" "$(date -R -u)"
	cat "$top/debian/changelog"
} >"$work/secarena-$ver/debian/changelog"

opts=""
[ "${SECARENA_DEB_NOCHECK:-0}" = 1 ] && opts="nocheck"
build() { # build: in the current environment (host or root)
	cat <<SH
set -e
export DEBIAN_FRONTEND=noninteractive DEB_BUILD_OPTIONS="$opts parallel=2"
missing=""
for p in $build_deps; do
	dpkg-query -W -f='\${Status}' "\$p" 2>/dev/null | grep -q 'ok installed' || missing="\$missing \$p"
done
if [ -n "\$missing" ]; then
	apt-get install -y -qq -o DPkg::Lock::Timeout=900 --no-install-recommends \$missing >/dev/null
fi
cd "$work/secarena-$ver"
dpkg-buildpackage -us -uc --build=full >"$out/build.log" 2>&1 ||
	{ tail -n 40 "$out/build.log" >&2; exit 1; }
cd ..
lintian --info --display-info --pedantic --tag-display-limit 0 secarena_${ver}_*.changes \
	>"$out/lintian.txt" 2>&1 || true
SH
}

log "building $ver"
if [ "$release" = bookworm ]; then
	bash -c "$(build)"
else
	root=$("$top/scripts/trixie-root.sh")
	"$top/scripts/in-root.sh" "$root" bash -c "$(build)"
fi
mv "$work"/secarena_"$ver"* "$work"/*secarena*_"$ver"_*.deb "$out"/
log "built: $(cd "$out" && ls ./*_"$ver"_*.deb | xargs -n1 basename | xargs)"
sed -n 's/^\([EWIPX]\): .*/\1/p' "$out/lintian.txt" | sort | uniq -c |
	awk '{ printf "%s %s  ", $2, $1 } END { print "" }' | sed 's/^/lintian: /' >&2
if grep -q '^E: ' "$out/lintian.txt"; then
	grep '^E: ' "$out/lintian.txt" >&2
	echo "build-secarena-deb: lintian reports errors (all tags: $out/lintian.txt)" >&2
	exit 1
fi
log "done"
