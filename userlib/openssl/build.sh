#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# userlib/openssl/build.sh [-b BRANCH] [BUILD_DIR]
#
# Fetches the OpenSSL source of BRANCH from Debian with apt, extracts the upstream
# tree into BUILD_DIR/src, applies userlib/openssl/patches/BRANCH/*.patch in order
# (no fuzz: a hunk that needs it fails the build), builds libsecarena (make -C
# userlib) and OpenSSL on it, and installs into BUILD_DIR/install (bin/openssl,
# lib/libcrypto.so.3, lib/libssl.so.3, include/, ssl/openssl.cnf).
#   BRANCH 3.0: Debian 12's source (bookworm), BUILD_DIR default <top>/build/openssl
#   BRANCH 3.5: Debian 13's source (trixie),   BUILD_DIR default <top>/build/openssl-3.5
# (OPENSSL_BRANCH=... is the same as -b.)  The source comes through a private apt
# configuration in BUILD_DIR/apt (scripts/debian-archive.sh): the host's own apt
# sources are not touched. Idempotent: every step leaves a stamp, and a second run
# with nothing changed only checks them. Needs root only while the source has not
# been downloaded yet.
#
# Environment: OPENSSL_DEB_VERSION=V   take this Debian version of the source
#              JOBS=N                  make -j (default 2)
#
# How libsecarena gets into libcrypto: libsecarena.a is linked into libcrypto.so.3
# (Configure ... -L<userlib/build> -l:libsecarena.a), not libsecarena.so.0.
#  - Its objects are built -fPIC with hidden visibility except the secarena_* API, and
#    libcrypto's version script (libcrypto.ld: "local: *") makes that API local too:
#    libcrypto.so.3 exports exactly the OPENSSL_3.0.0 symbols it always did, so it
#    cannot clash with, or be interposed by, a libsecarena.so.0 that the application
#    (or another library) loads itself: each keeps its own allocator and arenas.
#  - No new run-time dependency: the patched libcrypto.so.3 stays a drop-in for
#    Debian's (LD_LIBRARY_PATH, unmodified nginx or openssl binaries), and nothing
#    else in the process can call secarena_done() or secarena_wipe_in_use() under
#    OpenSSL's secure heap.
#  - Price: a fix in libsecarena needs libcrypto relinked (this script does it when
#    libsecarena.a changes), and static users of libcrypto.a also link libsecarena.a
#    (it is in libcrypto.pc's Libs.private).
# The end of the build prints what ldd and nm say about it.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
userlib=$(dirname "$here")
top=$(dirname "$userlib")
branch=${OPENSSL_BRANCH:-3.0}
if [ "${1:-}" = -b ]; then
	branch=${2:?build.sh: -b needs a branch}
	shift 2
fi
# Per branch: the Debian release whose source it builds and the default
# build directory.
case $branch in
3.0) suite=bookworm B=${1:-$top/build/openssl} ;;
3.5) suite=trixie B=${1:-$top/build/openssl-3.5} ;;
*) echo "openssl-build: error: unknown branch '$branch' (3.0 or 3.5)" >&2; exit 2 ;;
esac
B=$(realpath -m "$B")
jobs=${JOBS:-2}
# shellcheck source=scripts/debian-archive.sh
. "$top/scripts/debian-archive.sh"

t0=$(date +%s)
log() { printf 'openssl-build: [%3ss] %s\n' "$(($(date +%s) - t0))" "$*"; }
die() { printf 'openssl-build: error: %s\n' "$*" >&2; exit 1; }
sha() { sha256sum | cut -c1-64; }
# Last lines of a log, for a failed step.
fail_log() { tail -n 40 "$1" >&2 || true; die "$2 (full log: $1)"; }

mkdir -p "$B/dl" "$B/stamps" "$B/logs"

# ---- 1. source: apt-get source --download-only ----

orig_tarball() { ls "$B"/dl/openssl_*.orig.tar.gz 2>/dev/null | sort -V | tail -n 1 || true; }

# The source versions apt knows for the release, in the order to try:
# OPENSSL_DEB_VERSION; the release's own (point release) versions, newest
# first; then its security suite's. The release's version is the one its
# openssl binary packages were built from, and its files stay in the
# archive, where the security suite's newest is sometimes not there yet.
source_candidates() {
	{
		[ -n "${OPENSSL_DEB_VERSION:-}" ] && echo "0 $OPENSSL_DEB_VERSION"
		apt-cache "${APT_PRIVATE[@]}" madison openssl 2>/dev/null |
			awk -F' *[|] *' '$3 ~ /Sources/ { print ($3 ~ /-security/ ? 2 : 1), $2 }'
	} | sort -k1,1n -k2,2Vr | awk '!seen[$2]++ { print $2 }'
}

fetch_source() {
	local v upstream
	[ "$(id -u)" = 0 ] || die "the OpenSSL source is not in $B/dl yet: run as root once (apt)"
	apt_private "$B/apt" "$suite" || die "no apt configuration for $suite"
	log "apt-get update ($suite source indexes, private lists in $B/apt)"
	apt_private_update "$B/apt" || die "apt-get update for $suite failed"
	candidates=$(source_candidates)
	[ -n "$candidates" ] || die "apt knows no openssl source in $suite"
	# A version whose .dsc or debian tarball 404s may still leave its orig
	# tarball, the upstream source, which is all the build needs.
	for v in $candidates; do
		upstream=${v#*:}
		upstream=${upstream%-*}
		log "apt-get source --download-only openssl=$v"
		(cd "$B/dl" && apt-get "${APT_PRIVATE[@]}" source -qq --download-only "openssl=$v") \
			>"$B/logs/apt-source.log" 2>&1 || true
		if [ -f "$B/dl/openssl_$upstream.orig.tar.gz" ]; then
			[ -f "$B/dl/openssl_${v#*:}.dsc" ] ||
				log "only the orig tarball of $v downloaded: enough (upstream source)"
			return 0
		fi
		log "openssl=$v did not download (see $B/logs/apt-source.log)"
	done
	die "no OpenSSL source of $suite could be downloaded"
}

tarball=$(orig_tarball)
if [ -z "$tarball" ]; then
	fetch_source
	tarball=$(orig_tarball)
fi
upstream=$(basename "$tarball" .orig.tar.gz)
upstream=${upstream#openssl_}
log "source: $(basename "$tarball") (OpenSSL $upstream, branch $branch)"

# ---- 2. extract the upstream tree ----

extract() {
	local tmp
	log "extracting into $B/src"
	rm -rf "$B/src" "$B/applied" "$B/src.tmp" "$B"/stamps/*
	mkdir -p "$B/src.tmp"
	tar -xzf "$tarball" -C "$B/src.tmp"
	tmp=$(ls -d "$B"/src.tmp/openssl-* | head -n 1)
	[ -n "$tmp" ] && [ -f "$tmp/Configure" ] || die "$tarball holds no openssl-*/Configure"
	mv "$tmp" "$B/src"
	rmdir "$B/src.tmp"
	basename "$tarball" >"$B/src/.secarena-tarball"
}

if [ ! -f "$B/src/.secarena-tarball" ] ||
	[ "$(cat "$B/src/.secarena-tarball")" != "$(basename "$tarball")" ]; then
	extract
fi

# ---- 3. the patch series ----

mapfile -t patches < <(ls "$here/patches/$branch"/*.patch 2>/dev/null | sort)
[ "${#patches[@]}" -gt 0 ] || die "no patches in $here/patches/$branch"
series_hash=$(cat "${patches[@]}" | sha)
applied_hash=$(cat "$B/applied/.hash" 2>/dev/null || true)

# Undo the applied series (newest first), so that unchanged files keep their
# timestamps and make rebuilds only what the new series touches.
unapply() {
	local p list
	mapfile -t list < <(ls "$B"/applied/*.patch 2>/dev/null | sort -r)
	for p in "${list[@]}"; do
		(cd "$B/src" && patch -p1 -R -s -f --dry-run <"$p" >/dev/null 2>&1) || return 1
		(cd "$B/src" && patch -p1 -R -s -f <"$p" >/dev/null) || return 1
		rm -f "$p"
	done
	rm -rf "$B/applied"
}

if [ "$series_hash" != "$applied_hash" ]; then
	if [ -d "$B/applied" ]; then
		log "patch series changed: reverting the applied one"
		unapply || { log "could not revert cleanly: starting from a fresh tree"; extract; }
	fi
	mkdir -p "$B/applied"
	for p in "${patches[@]}"; do
		name=$(basename "$p")
		# --fuzz=0: a hunk whose context moved is not evidence that it
		# landed in the right function.
		if ! out=$(cd "$B/src" && patch -p1 -N -f --fuzz=0 --dry-run <"$p" 2>&1); then
			printf '%s\n' "$out" >&2
			rm -rf "$B/src" "$B/applied" "$B"/stamps/*
			die "patch $name does not apply to OpenSSL $upstream"
		fi
		(cd "$B/src" && patch -p1 -N -f --fuzz=0 -s <"$p")
		cp "$p" "$B/applied/$name"
		log "applied $name"
	done
	echo "$series_hash" >"$B/applied/.hash"
else
	log "patches: up to date (${#patches[@]} applied)"
fi

# ---- 4. libsecarena ----

log "libsecarena: make -C userlib"
make -s -C "$userlib" >"$B/logs/libsecarena.log" 2>&1 || fail_log "$B/logs/libsecarena.log" "libsecarena build failed"
libsecarena_a=$userlib/build/libsecarena.a
[ -f "$libsecarena_a" ] || die "no $libsecarena_a"
lib_hash=$(sha <"$libsecarena_a")

# ---- 5. Configure ----

configure_args=(shared "--prefix=$B/install" --libdir=lib "--openssldir=$B/install/ssl"
	"-I$userlib/include" "-L$userlib/build" -l:libsecarena.a
	"-Wl,-rpath,$B/install/lib" -Wl,--enable-new-dtags
	# Bind every symbol at load: the lazy resolver saves the vector
	# registers on the stack, and right after a memcpy() of key bytes they
	# hold its last 16..64 bytes (seen: a 16-byte piece of dQ on nginx's
	# stack). Debian's own libcrypto is linked the same way.
	-Wl,-z,now -Wl,-z,relro)
config_hash=$( {
	printf '%s\n' "${configure_args[@]}"
	cat "$B/src/Configure"
	find "$B/src" \( -name build.info -o -path "$B/src/Configurations/*" \) -type f |
		sort | xargs cat
} | sha)

cd "$B/src"
if [ ! -f Makefile ] || [ "$(cat "$B/stamps/configure" 2>/dev/null)" != "$config_hash" ]; then
	log "./Configure ${configure_args[*]}"
	./Configure "${configure_args[@]}" >"$B/logs/configure.log" 2>&1 ||
		fail_log "$B/logs/configure.log" "Configure failed"
	echo "$config_hash" >"$B/stamps/configure"
	rm -f "$B/stamps/build" "$B/stamps/install"
else
	log "Configure: up to date"
fi

# OpenSSL's Makefile does not know libsecarena.a: relink what holds a copy of it.
if [ "$(cat "$B/stamps/libsecarena" 2>/dev/null)" != "$lib_hash" ]; then
	if [ -f libcrypto.so.3 ]; then
		log "libsecarena.a changed: relinking libcrypto and what links libcrypto.a"
		rm -f libcrypto.so.3 libcrypto.so
		[ -f libcrypto.a ] && touch libcrypto.a
	fi
	echo "$lib_hash" >"$B/stamps/libsecarena"
fi

# ---- 6. build and install ----

build_key=$(printf '%s %s %s\n' "$series_hash" "$config_hash" "$lib_hash" | sha)
if [ -f libcrypto.so.3 ] && [ -x apps/openssl ] &&
	[ "$(cat "$B/stamps/build" 2>/dev/null)" = "$build_key" ]; then
	log "build: up to date"
else
	log "make -j$jobs (log: $B/logs/make.log)"
	# A patched build.info makes OpenSSL's Makefile reconfigure itself and
	# stop, asking for the same make again: that first run is not a failure.
	if ! make -j"$jobs" >"$B/logs/make.log" 2>&1; then
		grep -q 'Please run the same make command again' "$B/logs/make.log" ||
			fail_log "$B/logs/make.log" "make failed"
		log "make: Makefile regenerated, running make again"
		make -j"$jobs" >"$B/logs/make.log" 2>&1 || fail_log "$B/logs/make.log" "make failed"
	fi
	echo "$build_key" >"$B/stamps/build"
	log "make: done"
fi

if [ -f "$B/install/lib/libcrypto.so.3" ] &&
	[ "$(cat "$B/stamps/install" 2>/dev/null)" = "$build_key" ]; then
	log "install: up to date"
else
	log "make install_sw install_ssldirs (into $B/install)"
	make install_sw install_ssldirs >"$B/logs/install.log" 2>&1 ||
		fail_log "$B/logs/install.log" "make install failed"
	echo "$build_key" >"$B/stamps/install"
fi

# ---- 7. what the link gave ----

lib=$B/install/lib/libcrypto.so.3
exported=$(nm -D --defined-only "$lib" | grep -c -E ' (secarena_|secure_malloc|arena_|buddy_)' || true)
local_api=$(nm "$lib" | grep -c -E ' t secarena_' || true)
needs=$(ldd "$lib" | grep -c secarena || true)
log "libcrypto.so.3: libsecarena linked in statically: $local_api local secarena_* functions," \
	"$exported exported, $needs libsecarena in ldd"
[ "$exported" = 0 ] && [ "$needs" = 0 ] && [ "$local_api" -gt 0 ] ||
	die "libcrypto.so.3 does not hold a private copy of libsecarena as expected"
log "done: $B/install ($("$B/install/bin/openssl" version))"
