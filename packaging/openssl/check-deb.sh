#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# packaging/openssl/check-deb.sh RELEASE CHANGES DEBIAN_VERSION
#
# Checks the packages that build-deb.sh built (the files CHANGES lists)
# against Debian's own binary packages of DEBIAN_VERSION, downloaded with
# the same private apt configuration (WORK/apt): a drop-in replacement has
# the same packages, the same exported symbols and run-time dependencies,
# a version above Debian's, and our code inside. Then lintian on CHANGES
# and on Debian's packages, so that the tags our change adds stand apart
# from Debian's own. Prints one line per check; exits non-zero if one fails.
#
# Environment: SECARENA_DEB_WORK (as build-deb.sh), SECARENA_DEB_ROOT=ROOT
# (run ldd, apt-get -s and lintian in that root, e.g. for trixie),
# SECARENA_DEB_LINTIAN=0 (skip lintian).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
release=${1:?usage: check-deb.sh RELEASE CHANGES DEBIAN_VERSION}
changes=$(realpath "${2:?usage: check-deb.sh RELEASE CHANGES DEBIAN_VERSION}")
debver=${3:?usage: check-deb.sh RELEASE CHANGES DEBIAN_VERSION}
W=$(realpath -m "${SECARENA_DEB_WORK:-$top/build/openssl-deb/$release}")
root=${SECARENA_DEB_ROOT:-}
dir=$(dirname "$changes")
C=$W/check
rm -rf "$C"
mkdir -p "$C/ours" "$C/debian"

# shellcheck source=scripts/debian-archive.sh
. "$top/scripts/debian-archive.sh"

fails=0
pass() { echo "PASS  $*"; }
fail() { echo "FAIL  $*"; fails=$((fails + 1)); }
info() { echo "INFO  $*"; }
in_env() {
	if [ -n "$root" ]; then
		"$top/scripts/in-root.sh" "$root" "$@"
	else
		"$@"
	fi
}
if [ -n "$root" ]; then
	case $changes in "$top"/*) ;; *) echo "check-deb: $changes must be under $top to be seen in $root" >&2; exit 2 ;; esac
fi

version=$(sed -n 's/^Version: *//p' "$changes")
mapfile -t files < <(awk '/^Files:/ { on = 1; next } /^[^ ]/ { on = 0 } on { print $NF }' "$changes" |
	grep -E '\.u?deb$')
pkgname() { dpkg-deb -f "$dir/$1" Package; }
# Versions as regular expressions (. ~ + as any character) for sed -E.
re_ours=$(printf '%s' "$version" | sed 's/[.~+]/./g')

# ---- version ----
bad=0
for f in "${files[@]}"; do
	[ "$(dpkg-deb -f "$dir/$f" Version)" = "$version" ] || { fail "$f: version $(dpkg-deb -f "$dir/$f" Version)"; bad=1; }
done
[ "$bad" = 0 ] && pass "${#files[@]} packages, all version $version"
if dpkg --compare-versions "$version" gt "$debver"; then
	pass "$version > $debver (Debian's, built from)"
else
	fail "$version does not sort above $debver"
fi

# ---- the package set is Debian's (dbgsym aside) ----
dsc=$(ls "$W"/dl/"${debver#*:}"/*.dsc)
want=$(sed -n 's/^Binary: *//p' "$dsc" | tr ', ' '\n\n' | grep . | sort | xargs)
have=$(for f in "${files[@]}"; do pkgname "$f"; done | grep -v -- '-dbgsym$' | sort | xargs)
if [ "$want" = "$have" ]; then pass "packages: $have"; else fail "packages: built '$have', Debian's .dsc lists '$want'"; fi

# ---- Debian's own binary packages of the same version, for comparison ----
apt_private "$W/apt" "$release"
apt_private_update "$W/apt"
# The binaries of DEBIAN_VERSION may have left the archive's index when a
# newer version replaced them (seen: trixie's 3.5.7-1~deb13u2, whose
# source stays listed): then the newest Debian binaries of the release, the
# same upstream branch and ABI, stand in for them.
refver=$debver
if ! apt-cache "${APT_PRIVATE[@]}" madison openssl | awk -F' *[|] *' '$3 ~ /Packages/ { print $2 }' |
	grep -qxF "$debver"; then
	refver=$(apt-cache "${APT_PRIVATE[@]}" policy openssl | sed -n 's/^ *Candidate: *//p')
	info "Debian's binaries of $debver are no longer in the archive: comparing with $refver"
fi
debs=()
for p in $have; do
	case $p in *-udeb | *-dbgsym) continue ;; esac # udebs: not in the main archive's Packages
	(cd "$C/debian" && apt-get "${APT_PRIVATE[@]}" -qq download "$p=$refver") >/dev/null 2>&1 &&
		debs+=("$p") || info "Debian's $p $refver did not download"
done
info "Debian's packages of $refver for comparison: ${debs[*]}"
re_ref=$(printf '%s' "$refver" | sed 's/[.~+]/./g')
# Where the new version sorts among the binaries the archive offers.
for v in $(apt-cache "${APT_PRIVATE[@]}" madison openssl |
	awk -F' *[|] *' '$3 ~ /Packages/ { split($3, w, " "); print $2 "@" w[2] }'); do
	if dpkg --compare-versions "$version" gt "${v%%@*}"; then
		info "$version > ${v%%@*} (${v#*@})"
	else
		info "$version < ${v%%@*} (${v#*@}): apt takes Debian's where ${v#*@} is enabled"
	fi
done

libpkg=$(for p in $have; do case $p in libssl3 | libssl3t64) echo "$p" ;; esac; done)
[ -n "$libpkg" ] || fail "no libssl3 / libssl3t64 package"
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
for f in "${files[@]}"; do
	dpkg-deb -x "$dir/$f" "$C/ours/$(pkgname "$f")"
done
for f in "$C"/debian/*.deb; do
	[ -e "$f" ] && dpkg-deb -x "$f" "$C/debian/$(dpkg-deb -f "$f" Package)"
done
lib=$C/ours/$libpkg/usr/lib/$ma/libcrypto.so.3
dlib=$C/debian/$libpkg/usr/lib/$ma/libcrypto.so.3

# ---- libcrypto.so.3: exports, dependencies, our code ----
if [ -f "$lib" ]; then
	syms() { nm -D --defined-only --with-symbol-versions "$1" | awk '{ print $NF }' | sort; }
	n=$(nm -D --defined-only "$lib" | grep -c -E ' (secarena_|secure_malloc|arena_|buddy_)' || true)
	[ "$n" = 0 ] && pass "libcrypto.so.3 exports no secarena_* symbol" || fail "libcrypto.so.3 exports $n secarena symbols"
	if [ -f "$dlib" ]; then
		if diff <(syms "$dlib") <(syms "$lib") >"$C/syms.diff"; then
			pass "libcrypto.so.3 exports exactly Debian's $(syms "$lib" | wc -l) symbols"
		else
			fail "libcrypto.so.3 exports differ from Debian's: $C/syms.diff"
		fi
		needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | xargs; }
		[ "$(needed "$lib")" = "$(needed "$dlib")" ] &&
			pass "libcrypto.so.3 NEEDED: $(needed "$lib") (as Debian's)" ||
			fail "libcrypto.so.3 NEEDED $(needed "$lib"), Debian's $(needed "$dlib")"
		for l in libssl.so.3; do
			[ "$(syms "$C/ours/$libpkg/usr/lib/$ma/$l")" = "$(syms "$C/debian/$libpkg/usr/lib/$ma/$l")" ] &&
				pass "$l exports exactly Debian's symbols" || fail "$l exports differ from Debian's"
		done
	fi
	# ldd where the library can run (trixie's needs trixie's glibc).
	if out=$(in_env ldd "$lib" 2>&1); then
		echo "$out" | sed 's/^/      ldd: /'
		echo "$out" | grep -q secarena && fail "ldd shows libsecarena" || pass "ldd: no libsecarena"
	else
		info "ldd failed: $out"
	fi
	readelf -d "$lib" | grep -q 'FLAGS.*NOW' && pass "libcrypto.so.3 bound at load (BIND_NOW)" ||
		fail "libcrypto.so.3 is not BIND_NOW"
	for s in 'secure heap full' OPENSSL_SECARENA /dev/secarena; do
		grep -q -a -F "$s" "$lib" && pass "libcrypto.so.3 contains '$s'" || fail "libcrypto.so.3 lacks '$s'"
	done
	[ -f "$dlib" ] && ! grep -q -a -F OPENSSL_SECARENA "$dlib" && pass "Debian's libcrypto.so.3 lacks OPENSSL_SECARENA (the check sees a difference)"
else
	fail "no $lib"
fi

# ---- which packages carry libsecarena's code, and their Built-Using ----
for f in "${files[@]}"; do
	p=$(pkgname "$f")
	case $p in *-dbgsym) continue ;; esac
	inside=$(grep -r -l -a -F /dev/secarena "$C/ours/$p" 2>/dev/null | sed "s|$C/ours/$p||" | xargs || true)
	bu=$(dpkg-deb -f "$dir/$f" Built-Using)
	sbu=$(dpkg-deb -f "$dir/$f" Static-Built-Using)
	# Static-Built-Using on Debian 13 only (build-deb.sh says why).
	want_sbu=$bu
	[ "$release" = bookworm ] && want_sbu=
	if [ -n "$inside" ]; then
		case $bu in secarena\ \(=*) [ "$sbu" = "$want_sbu" ] &&
			pass "$p: libsecarena in $inside; Built-Using${sbu:+ and Static-Built-Using}: $bu" ||
			fail "$p: Static-Built-Using '$sbu'" ;;
		*) fail "$p holds libsecarena ($inside) but Built-Using is '$bu'" ;; esac
	elif [ -n "$bu$sbu" ]; then
		fail "$p: Built-Using '$bu' but no libsecarena inside"
	fi
done

# ---- relationships and sizes against Debian's ----
for p in "${debs[@]}"; do
	# (The loop's status is its last test's: true ends it.)
	f=$(for x in "${files[@]}"; do [ "$(pkgname "$x")" = "$p" ] && echo "$x"; done; true)
	d=$(ls "$C"/debian/"${p}"_*.deb)
	for fld in Pre-Depends Depends Breaks Replaces Provides Conflicts; do
		a=$(dpkg-deb -f "$d" "$fld" | sed -E "s/$re_ref/VERSION/g")
		b=$(dpkg-deb -f "$dir/$f" "$fld" | sed -E "s/$re_ours/VERSION/g")
		[ "$a" = "$b" ] || info "$p $fld: Debian's '$a', ours '$b'"
	done
	printf 'INFO  size %-26s Debian %8d B (Installed-Size %6s KiB), ours %8d B (%6s KiB)\n' "$p" \
		"$(stat -c %s "$d")" "$(dpkg-deb -f "$d" Installed-Size)" \
		"$(stat -c %s "$dir/$f")" "$(dpkg-deb -f "$dir/$f" Installed-Size)"
done

# ---- apt would take them as an upgrade of the installed packages ----
drop=()
for f in "${files[@]}"; do
	# libssl-dev too: a newer Debian libssl-dev on the machine would have
	# to go (it depends on libssl3 of its own version).
	case $(pkgname "$f") in "$libpkg" | openssl | openssl-provider-legacy | libssl-dev) drop+=("$dir/$f") ;; esac
done
if [ -n "$root" ]; then
	sim=$(in_env apt-get -s install "${drop[@]}" 2>&1 || true)
else
	sim=$(apt-get -s install "${drop[@]}" 2>&1 || true)
fi
echo "$sim" | grep -E '^(Inst|Remv)' | sed 's/^/      /'
if echo "$sim" | grep -q '^Remv'; then
	fail "apt-get -s install of $libpkg and openssl would remove packages"
elif echo "$sim" | grep -q '^Inst'; then
	pass "apt-get -s install of $libpkg and openssl: replaces in place, removes nothing"
	echo "$sim" | grep -q -i 'downgrad' &&
		info "that is a downgrade here: the installed Debian version is newer than $version"
else
	fail "apt-get -s install: $(echo "$sim" | tail -n 3 | xargs)"
fi

# ---- lintian: ours, then Debian's, tags ours adds ----
if [ "${SECARENA_DEB_LINTIAN:-1}" = 1 ]; then
	norm() { sed -E "s/$re_ours/VERSION/g; s/$re_ref/VERSION/g" | sort -u; }
	in_env lintian --version | sed 's/^/INFO  /'
	in_env lintian --tag-display-limit 0 --display-level '>=pedantic' "$changes" >"$C/lintian-ours.txt" 2>&1 || true
	if [ "${#debs[@]}" -gt 0 ]; then
		in_env sh -c "lintian --tag-display-limit 0 --display-level '>=pedantic' $C/debian/*.deb" >"$C/lintian-debian.txt" 2>&1 || true
	else
		: >"$C/lintian-debian.txt"
	fi
	for k in E W I P; do
		info "lintian $k: ours $(grep -c "^$k:" "$C/lintian-ours.txt" || true), Debian's $(grep -c "^$k:" "$C/lintian-debian.txt" || true)"
	done
	# udebs are not in Debian's comparison set (not in the main archive).
	norm <"$C/lintian-ours.txt" >"$C/l-ours"
	norm <"$C/lintian-debian.txt" >"$C/l-debian"
	comm -23 "$C/l-ours" "$C/l-debian" >"$C/l-new"
	comm -12 "$C/l-ours" "$C/l-debian" >"$C/lintian-preexisting.txt"
	# A udeb's tag that Debian's regular package of the same library has,
	# on a file of the same name (libssl3-udeb's usr/lib/libssl.so.3 and
	# libssl3t64's usr/lib/x86_64-linux-gnu/libssl.so.3): Debian's, not new.
	: >"$C/lintian-new.txt"
	: >"$C/lintian-udeb-as-debian.txt"
	awk 'function key(line,   t, f) {
		t = line; sub(/^[A-Z]: [^:]*: /, "", t); f = t
		sub(/ \[.*$/, "", t)
		if (!match(f, /\[[^]]*\]$/)) return ""
		f = substr(f, RSTART + 1, RLENGTH - 2); sub(/:[0-9]+$/, "", f); sub(/.*\//, "", f)
		return substr(line, 1, 1) " " t " " f
	}
	FNR == NR { if ($2 !~ /-udeb$/) deb[key($0)] = 1; next }
	{ k = key($0); out = ($2 ~ /-udeb$/ && k != "" && (k in deb)) ? udeb : new; print >out }' \
		udeb="$C/lintian-udeb-as-debian.txt" new="$C/lintian-new.txt" "$C/l-debian" "$C/l-new"
	echo "lintian tags of ours that Debian's own packages of $refver do not have:"
	sed 's/^/      /' "$C/lintian-new.txt"
	echo "lintian tags of our udebs that Debian's regular package of the same file has:"
	sed 's/^/      /' "$C/lintian-udeb-as-debian.txt"
	echo "lintian tags Debian's own packages have too: $(wc -l <"$C/lintian-preexisting.txt") ($C/lintian-preexisting.txt)"
	sed 's/^/      /' "$C/lintian-preexisting.txt"
	if grep -q '^E:' "$C/lintian-new.txt"; then fail "lintian: new errors"; else pass "lintian: no new error"; fi
fi

echo "check-deb: $fails failed"
[ "$fails" = 0 ]
