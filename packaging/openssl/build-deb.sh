#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# packaging/openssl/build-deb.sh RELEASE OUTDIR
#
# Debian's own openssl source package of RELEASE (bookworm: OpenSSL 3.0,
# trixie: OpenSSL 3.5), with secarena's patch series added as quilt patches
# after Debian's, libsecarena.a linked into libcrypto.so.3 and a changelog
# entry <debian version>+secarena1, built into binary packages that replace
# Debian's one for one (openssl, libssl3 / libssl3t64, libssl-dev, ...).
# The .deb, .udeb, .buildinfo and .changes files are copied to OUTDIR.
#
# Why Debian's source package and not build.sh's upstream tree: Debian's
# packages carry Debian's own patches (its security fixes, its Configure
# target, its paths and its multiarch layout) and its symbols/shlibs files;
# a package built from anything else would not be a drop-in for libssl3.
#
#   bookworm  builds on this host (Debian 12). It installs, with the host's
#             own apt sources: libsecarena0 and libsecarena-dev from
#             SECARENA_DEBS, the build dependencies of Debian's openssl
#             (debhelper, m4, bc and what they pull in), quilt and lintian.
#   trixie    builds in a private copy of the Debian 13 root that
#             scripts/trixie-root.sh keeps (WORK/root): Debian 13's openssl
#             needs dpkg-dev >= 1.22.5, and the copy keeps the build
#             dependencies out of the root the VM suite boots.
#
# Environment:
#   SECARENA_DEBS=DIR        libsecarena-dev_*.deb and libsecarena0_*.deb to
#                            build against (default: <top>/build/debs/RELEASE)
#   OPENSSL_DEB_VERSION=V    build this Debian version of openssl, not the
#                            newest that downloads
#   SECARENA_DEB_CHECK=1     run the package's own test suite (default: nocheck)
#   SECARENA_DEB_LINTIAN=0   skip lintian (default: run it on the .changes)
#   SECARENA_DEB_WORK=DIR    work directory (default: <top>/build/openssl-deb/RELEASE;
#                            for trixie it must be under <top>, which is what
#                            scripts/in-root.sh makes visible in the root)
#   JOBS=N                   parallel=N in DEB_BUILD_OPTIONS (default 2)
#   DEBFULLNAME, DEBEMAIL    the changelog entry's author (default: the
#                            Maintainer of <top>/debian/control)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
release=${1:-}
outdir=${2:-}
[ -n "$release" ] && [ -n "$outdir" ] || { echo "usage: $0 bookworm|trixie OUTDIR" >&2; exit 2; }
case $release in
bookworm) branch=3.0 ;;
trixie) branch=3.5 ;;
*) echo "build-deb: unknown release '$release' (bookworm or trixie)" >&2; exit 2 ;;
esac
[ "$(id -u)" = 0 ] || { echo "build-deb: must run as root (apt-get, chroot)" >&2; exit 1; }

W=$(realpath -m "${SECARENA_DEB_WORK:-$top/build/openssl-deb/$release}")
secarena_debs=${SECARENA_DEBS:-$top/build/debs/$release}
jobs=${JOBS:-2}
suffix=+secarena1
mkdir -p "$outdir" "$W/logs"
outdir=$(cd "$outdir" && pwd)
if [ "$release" = trixie ]; then
	case $W/ in "$top"/*) ;; *) echo "build-deb: SECARENA_DEB_WORK must be under $top for trixie" >&2; exit 2 ;; esac
fi

# shellcheck source=scripts/debian-archive.sh
. "$top/scripts/debian-archive.sh"

t0=$SECONDS
times=()
log() { printf 'build-deb: [%4ss] %s\n' "$((SECONDS - t0))" "$*" >&2; }
die() { printf 'build-deb: error: %s\n' "$*" >&2; exit 1; }
fail_log() { tail -n 40 "$1" >&2 || true; die "$2 (full log: $1)"; }
# step LABEL CMD...: CMD with its output in logs/LABEL.log, timed.
step() {
	local label=$1 t=$SECONDS
	shift
	log "$label ..."
	# A subshell with set -e of its own: in a "cmd || handler" list bash
	# would ignore set -e inside the functions that CMD calls.
	set +e
	(set -e; "$@") >"$W/logs/$label.log" 2>&1
	local rc=$?
	set -e
	[ "$rc" = 0 ] || fail_log "$W/logs/$label.log" "$label failed"
	times+=("$(printf '%-22s %5d s' "$label" $((SECONDS - t)))")
	log "$label: $((SECONDS - t)) s"
}

# ---- where the build runs ----

# The host for bookworm; a private copy of the Debian 13 root for trixie,
# made anew when scripts/trixie-root.sh has changed the shared root (its
# stamp records the package list, the apt lists' date and the kernels).
root=
if [ "$release" = trixie ]; then
	make_root_copy() {
		local shared
		shared=$("$top/scripts/trixie-root.sh")
		if [ -d "$W/root" ] && cmp -s "$shared/var/lib/secarena-root.stamp" "$W/root.stamp"; then
			echo "reusing $W/root"
			return 0
		fi
		rm -rf --one-file-system "$W/root"
		cp -a "$shared" "$W/root"
		cp "$shared/var/lib/secarena-root.stamp" "$W/root.stamp"
	}
	step root-copy make_root_copy
	root=$W/root
fi
# in_env CMD...: CMD where the build runs (DEBIAN_FRONTEND and the build
# options pass through in-root.sh's reset environment).
in_env() {
	if [ -n "$root" ]; then
		IN_ROOT_ENV="DEBIAN_FRONTEND DEB_BUILD_OPTIONS SOURCE_DATE_EPOCH" \
			"$top/scripts/in-root.sh" "$root" "$@"
	else
		"$@"
	fi
}
export DEBIAN_FRONTEND=noninteractive
# The host is shared with other jobs that run apt: wait for dpkg's lock
# rather than fail.
apt_install=(apt-get -y -o DPkg::Lock::Timeout=1800 --no-install-recommends)

# ---- 1. Debian's source package, private apt configuration ----

# Versions of openssl's source in RELEASE and RELEASE-security, newest
# first (dpkg's order), or only OPENSSL_DEB_VERSION.
source_candidates() {
	local v vs=() i j t
	if [ -n "${OPENSSL_DEB_VERSION:-}" ]; then
		echo "$OPENSSL_DEB_VERSION"
		return
	fi
	mapfile -t vs < <(apt-cache "${APT_PRIVATE[@]}" madison openssl |
		awk -F' *[|] *' '$3 ~ / Sources$/ { print $2 }' | sort -u)
	for ((i = 1; i < ${#vs[@]}; i++)); do
		for ((j = i; j > 0; j--)); do
			dpkg --compare-versions "${vs[j - 1]}" lt "${vs[j]}" || break
			t=${vs[j]} vs[j]=${vs[j - 1]} vs[j - 1]=$t
		done
	done
	for v in "${vs[@]}"; do echo "$v"; done
}

# The newest version whose .dsc, orig and debian tarballs all download
# (a version listed in the index can still answer 404: seen for both the
# bookworm-security and the trixie versions). Each version gets its own
# directory, so that a partial download never mixes with another's files.
fetch_source() {
	local v d
	apt_private "$W/apt" "$release"
	SECARENA_APT_MAX_AGE=${SECARENA_APT_MAX_AGE:-3600} apt_private_update "$W/apt"
	for v in $(source_candidates); do
		d=$W/dl/${v#*:}
		mkdir -p "$d"
		echo "trying openssl=$v"
		if (cd "$d" && apt-get "${APT_PRIVATE[@]}" source --download-only "openssl=$v") &&
			[ -f "$d/openssl_${v#*:}.dsc" ]; then
			echo "$v" >"$W/dl/chosen"
			return 0
		fi
		echo "openssl=$v did not download: next"
		rm -rf "$d"
	done
	echo "no openssl source of $release could be downloaded" >&2
	return 1
}
step source fetch_source
deb_version=$(cat "$W/dl/chosen")
dsc=$W/dl/${deb_version#*:}/openssl_${deb_version#*:}.dsc
new_version=$deb_version$suffix
log "Debian's openssl $deb_version -> $new_version"

# ---- 2. unpack with Debian's patches, add ours after them ----

src=$W/build/openssl
unpack() {
	rm -rf "$W/build"
	mkdir -p "$W/build"
	dpkg-source -x "$dsc" "$src"
}
step unpack unpack

patches=$top/userlib/openssl/patches/$branch
mapfile -t ours < <(ls "$patches"/*.patch 2>/dev/null | sort)
[ "${#ours[@]}" -gt 0 ] || die "no patches in $patches"
# Adaptations of ours to Debian's patches, if one is ever needed, live in
# packaging/openssl/patches/BRANCH/ and go after the whole series.
mapfile -t adapt < <(ls "$here/patches/$branch"/*.patch 2>/dev/null | sort)

add_patches() {
	local p name
	# The series may end without a newline.
	[ -z "$(tail -c 1 "$src/debian/patches/series")" ] || echo >>"$src/debian/patches/series"
	for p in "${ours[@]}" "${adapt[@]}"; do
		name=secarena-$(basename "$p")
		cp "$p" "$src/debian/patches/$name"
		echo "$name" >>"$src/debian/patches/series"
		echo "$name"
	done
}
step add-patches add_patches

# ---- 3. Build-Depends, Configure, Built-Using, changelog ----

multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
edit_packaging() {
	local c=$src/debian/control r=$src/debian/rules pkgs
	# Build-Depends: append to the field, whatever its line breaks and a
	# trailing comma.
	perl -0pi -e 's/^(Build-Depends:[^\n]*(?:\n[ \t][^\n]*)*)/my $f = $1; $f =~ s{[\s,]+\z}{}; "$f,\n libsecarena-dev (>= 0.1.0)"/me or die "no Build-Depends\n"' "$c"
	# The packages that ship libcrypto.so.3, hence a copy of libsecarena:
	# libssl3 (bookworm) or libssl3t64 (trixie), and the udeb.
	pkgs=$(sed -n 's/^Package: *\(libssl3\|libssl3t64\|libcrypto3-udeb\) *$/\1/p' "$c" | xargs)
	case " $pkgs " in *" libssl3 "* | *" libssl3t64 "*) ;; *) die "no libssl3/libssl3t64 in debian/control" ;; esac
	# Built-Using: libsecarena is LGPL-2.1-or-later and its object code is
	# inside libcrypto.so.3, so its source must stay available as long as
	# the binary is distributed: the case Policy 7.8 reserves Built-Using
	# for. Static-Built-Using (dpkg >= 1.21.3): the rebuild tracking field
	# for static linking, which is the other half of why it is there (a fix
	# in libsecarena needs these packages rebuilt). Debian 13 only: Debian
	# 12's lintian does not know the field (unknown-field, a warning).
	local sbu=""
	# (\$'...': a real newline; perl takes the string as it is.)
	[ "$release" = bookworm ] || sbu=$'Static-Built-Using: ${secarena:Built-Using}\n'
	perl -pi -e 'BEGIN { %p = map { $_ => 1 } split / /, shift; $sbu = shift }
		$_ .= "Built-Using: \${secarena:Built-Using}\n$sbu"
			if /^Package: *(\S+)\s*$/ && $p{$1}' "$pkgs" "$sbu" "$c"
	# libcrypto.a (libssl-dev) holds the patched secure heap, which calls
	# libsecarena: static links of it need libsecarena.a too (libcrypto.pc's
	# Libs.private says -l:libsecarena.a).
	perl -0pi -e 's/^(Package: libssl-dev\n(?:[^\n]+\n)*?Depends: )/$1libsecarena-dev (>= 0.1.0), /m or die "no libssl-dev Depends\n"' "$c"
	grep -q '^execute_before_dh_gencontrol' "$r" && die "debian/rules already has execute_before_dh_gencontrol"
	# Appended, so that it comes after every CONFARGS of Debian's (both
	# releases define it with '=' and add to it with '+=').
	cat >>"$r" <<EOF

# secarena: link libsecarena.a (libsecarena-dev) into libcrypto, the way
# userlib/openssl/build.sh does: -l:libsecarena.a names the static archive,
# whose objects are PIC with hidden visibility but for the secarena_* API,
# and libcrypto's version script ("local: *") keeps that API local too.
# libcrypto.so.3 exports what Debian's does and gains no run-time
# dependency. Both build trees get it (apps and tests link libcrypto.a).
CONFARGS += -l:libsecarena.a
SECARENA_BUILT_USING := \$(shell dpkg-query -f '\$\${source:Package} (= \$\${source:Version})' -W libsecarena-dev:\$(DEB_HOST_ARCH))

execute_before_dh_gencontrol:
	test -n "\$(SECARENA_BUILT_USING)"
	for p in $pkgs; do \\
		echo 'secarena:Built-Using=\$(SECARENA_BUILT_USING)' >>debian/\$\$p.substvars; \\
	done
EOF
	changelog_entry
	echo "packages with libsecarena inside: $pkgs"
	diff -u "$W/build/control.orig" "$c" || true
}

changelog_entry() {
	local c=$src/debian/changelog who mail n
	# The project's packaging identity (debian/control of the secarena
	# source package) unless DEBFULLNAME / DEBEMAIL say otherwise.
	who=$(sed -n 's/^Maintainer: *\(.*[^ ]\) *<.*/\1/p' "$top/debian/control" 2>/dev/null | head -n 1)
	mail=$(sed -n 's/^Maintainer:.*<\(.*\)>.*/\1/p' "$top/debian/control" 2>/dev/null | head -n 1)
	who=${DEBFULLNAME:-$who}
	mail=${DEBEMAIL:-$mail}
	[ -n "$who" ] && [ -n "$mail" ] ||
		die "no changelog author: no Maintainer in $top/debian/control and no DEBFULLNAME/DEBEMAIL"
	n=${#ours[@]}
	{
		cat <<EOF
openssl ($new_version) $release; urgency=medium

  * Rebuild of Debian's openssl $deb_version with secarena's OpenSSL $branch
    patch series ($n patches, debian/patches/secarena-*, applied after
    Debian's own): OpenSSL's secure heap is libsecarena, whose arenas come
    from /dev/secarena (else memfd_secret, else mlock), and private keys,
    TLS secrets and cipher contexts are kept in it. Off unless switched on
    (OPENSSL_SECARENA, or a [secarena] section in openssl.cnf).
  * Link libsecarena.a into libcrypto.so.3 (Configure -l:libsecarena.a):
    no new run-time dependency, no new exported symbol.
  * Build-Depends: libsecarena-dev (>= 0.1.0). libssl-dev depends on it
    (static links of libcrypto.a need libsecarena.a).
  * Built-Using and Static-Built-Using: secarena, on the packages that
    ship libcrypto.so.3.

 -- $who <$mail>  $(LC_ALL=C date -R)

EOF
		cat "$c"
	} >"$c.new"
	mv "$c.new" "$c"
}
cp "$src/debian/control" "$W/build/control.orig"
step packaging edit_packaging
(cd "$src" && dpkg-parsechangelog -S Version | grep -qx "$new_version") || die "changelog version is not $new_version"

# ---- 4. build environment: libsecarena, build dependencies, quilt ----

shopt -s nullglob
sdebs=("$secarena_debs"/libsecarena-dev_*.deb "$secarena_debs"/libsecarena0_*.deb)
shopt -u nullglob
[ "${#sdebs[@]}" -ge 2 ] ||
	die "no libsecarena-dev_*.deb and libsecarena0_*.deb in $secarena_debs (SECARENA_DEBS=DIR)"
# Into the work tree: the root sees nothing of the host outside <top>.
rm -rf "$W/secarena-debs"
mkdir -p "$W/secarena-debs"
cp "${sdebs[@]}" "$W/secarena-debs/"
install_deps() {
	local d
	d=$(cd "$W/secarena-debs" && ls -- *.deb | sed "s|^|$W/secarena-debs/|")
	[ -z "$root" ] || in_env apt-get update
	# shellcheck disable=SC2086
	in_env "${apt_install[@]}" install $d
	in_env "${apt_install[@]}" install build-essential quilt fakeroot
	# apt-get build-dep DIR reads the edited debian/control.
	in_env sh -c "cd '$src' && apt-get build-dep -y -o DPkg::Lock::Timeout=1800 --no-install-recommends ./"
	in_env dpkg-query -W libsecarena-dev libsecarena0 dpkg-dev debhelper gcc
}
step build-deps install_deps

# quilt push -a with no fuzz: a hunk of ours that only applies with fuzz
# after Debian's patches is not evidence that it landed where it should.
# Offsets (context found a few lines away, unchanged) are reported.
quilt_push() {
	in_env sh -c "cd '$src' && QUILT_PATCHES=debian/patches QUILT_PC=.pc quilt push -a --fuzz=0" 2>&1 |
		tee "$W/logs/quilt.out"
	[ "${PIPESTATUS[0]}" = 0 ]
}
step quilt quilt_push
applied=$(grep -c '^Applying patch .*/secarena-' "$W/logs/quilt.out" || true)
[ "$applied" = $((${#ours[@]} + ${#adapt[@]})) ] ||
	die "quilt applied $applied of our $((${#ours[@]} + ${#adapt[@]})) patches (logs/quilt.log)"
if grep -q 'offset' "$W/logs/quilt.out"; then
	log "applied with offsets (no fuzz):"
	awk '/^Applying patch/ { p = $3 } /offset/ { print "  " p ": " $0 }' "$W/logs/quilt.out" >&2
fi

# ---- 5. dpkg-buildpackage -b ----

if [ "${SECARENA_DEB_CHECK:-0}" = 1 ]; then
	export DEB_BUILD_OPTIONS="parallel=$jobs"
else
	export DEB_BUILD_OPTIONS="nocheck parallel=$jobs"
fi
log "DEB_BUILD_OPTIONS=$DEB_BUILD_OPTIONS"
step dpkg-buildpackage in_env sh -c "cd '$src' && dpkg-buildpackage -b -uc -us"

# ---- 6. results ----

changes=$W/build/openssl_${new_version#*:}_$(dpkg-architecture -qDEB_HOST_ARCH).changes
[ -f "$changes" ] || die "no $changes"
copy_out() {
	local f
	for f in $(awk '/^Files:/ { on = 1; next } /^[^ ]/ { on = 0 } on { print $NF }' "$changes"); do
		cp "$W/build/$f" "$outdir/"
		echo "$f"
	done
	cp "$changes" "$outdir/"
	basename "$changes"
}
step copy-out copy_out
log "in $outdir:"
sed 's/^/  /' "$W/logs/copy-out.log" >&2

# ---- 7. verification (packaging/openssl/check-deb.sh) ----

if [ "${SECARENA_DEB_LINTIAN:-1}" = 1 ]; then
	step lintian-install in_env "${apt_install[@]}" install lintian
fi
# On the work tree's copy of the files: the Debian 13 root sees only <top>.
step check env SECARENA_DEB_LINTIAN="${SECARENA_DEB_LINTIAN:-1}" SECARENA_DEB_ROOT="$root" \
	SECARENA_DEB_WORK="$W" "$here/check-deb.sh" "$release" "$changes" "$deb_version"
sed 's/^/  /' "$W/logs/check.log" >&2

log "times:"
printf '  %s\n' "${times[@]}" >&2
log "done: $new_version, $((SECONDS - t0)) s in all"
