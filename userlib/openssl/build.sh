#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# userlib/openssl/build.sh [BUILD_DIR]    (default: <top>/build/openssl)
#
# Fetches Debian 12's OpenSSL 3.0 source with apt, extracts the upstream tree into
# BUILD_DIR/src, applies userlib/openssl/patches/*.patch in order, builds libsecarena
# (make -C userlib) and OpenSSL on it, and installs into BUILD_DIR/install
# (bin/openssl, lib/libcrypto.so.3, lib/libssl.so.3, ssl/openssl.cnf).
# Idempotent: every step leaves a stamp, and a second run with nothing changed only
# checks them. Needs root only while the source has not been downloaded yet.
#
# Environment: OPENSSL_DEB_VERSION=3.0.x-y   take this Debian version of the source
#              JOBS=N                        make -j (default 2)
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
B=$(realpath -m "${1:-$top/build/openssl}")
jobs=${JOBS:-2}
preferred_version=3.0.17-1~deb12u2
src_list=/etc/apt/sources.list.d/secarena-openssl-src.list

t0=$(date +%s)
log() { printf 'openssl-build: [%3ss] %s\n' "$(($(date +%s) - t0))" "$*"; }
die() { printf 'openssl-build: error: %s\n' "$*" >&2; exit 1; }
sha() { sha256sum | cut -c1-64; }
# Last lines of a log, for a failed step.
fail_log() { tail -n 40 "$1" >&2 || true; die "$2 (full log: $1)"; }

mkdir -p "$B/dl" "$B/stamps" "$B/logs"

# ---- 1. source: apt-get source --download-only ----

orig_tarball() { ls "$B"/dl/openssl_*.orig.tar.gz 2>/dev/null | sort -V | tail -n 1 || true; }

# 0 if some apt source already has a deb-src entry for bookworm.
have_bookworm_deb_src() {
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] && grep -Eq '^[[:space:]]*deb-src[[:space:]].*[[:space:]]bookworm([[:space:]]|$)' "$f" &&
			return 0
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		# deb822: a stanza whose Types has deb-src and whose Suites has bookworm.
		awk 'BEGIN { RS = ""; IGNORECASE = 1; found = 0 }
		     /(^|\n)Types:[^\n]*deb-src/ && /(^|\n)Suites:[^\n]*(^|[ \t])bookworm([ \t]|\n|$)/ &&
		     !/(^|\n)Enabled:[ \t]*no/ { found = 1 }
		     END { exit !found }' "$f" && return 0
	done
	return 1
}

# "URI SIGNED_BY" of the system's deb source for a suite (SIGNED_BY may be empty).
deb_source_of() {
	local suite=$1 f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk -v suite="$suite" 'BEGIN { RS = "" }
		     {
			n = split($0, l, "\n"); types = uri = suites = sb = ""
			for (i = 1; i <= n; i++) {
				if (l[i] ~ /^Types:/) types = l[i]
				if (l[i] ~ /^URIs:/) { split(l[i], a, /[ \t]+/); uri = a[2] }
				if (l[i] ~ /^Suites:/) suites = l[i] " "
				if (l[i] ~ /^Signed-By:/) { split(l[i], a, /[ \t]+/); sb = a[2] }
			}
			if (types ~ /[ \t]deb([ \t]|$)/ && index(suites, " " suite " ")) {
				print uri, sb; exit
			}
		     }' "$f"
	done | head -n 1
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		awk -v suite="$suite" '$1 == "deb" {
			i = 2; if ($2 ~ /^\[/) while ($i !~ /\]$/) i++; if ($2 ~ /^\[/) i++
			if ($(i + 1) == suite) { print $i, ""; exit } }' "$f"
	done | head -n 1
}

add_deb_src() {
	local main sec uri sb line
	main=$(deb_source_of bookworm | head -n 1)
	[ -n "$main" ] || main="http://deb.debian.org/debian /usr/share/keyrings/debian-archive-keyring.gpg"
	sec=$(deb_source_of bookworm-security | head -n 1)
	{
		echo "# Added by secarena userlib/openssl/build.sh: OpenSSL source for the patch series."
		for line in "$main bookworm" ${sec:+"$sec bookworm-security"}; do
			# shellcheck disable=SC2086
			set -- $line
			uri=$1
			if [ $# = 3 ]; then sb=$2; suite=$3; else sb=""; suite=$2; fi
			# The same Signed-By as the deb entry, or apt refuses the conflicting values.
			echo "deb-src ${sb:+[signed-by=$sb] }$uri $suite main"
		done
	} >"$src_list"
}

fetch_source() {
	local candidates v upstream added=0
	[ "$(id -u)" = 0 ] || die "the OpenSSL source is not in $B/dl yet: run as root once (apt)"
	if ! have_bookworm_deb_src; then
		log "adding deb-src for bookworm to $src_list"
		add_deb_src
		added=1
	fi
	if [ -z "$(apt-cache showsrc openssl 2>/dev/null | sed -n 's/^Version: //p')" ]; then
		if [ "$added" = 1 ]; then
			log "apt-get update (source indexes of $src_list only)"
			apt-get update -qq -o Dir::Etc::SourceList="$src_list" \
				-o Dir::Etc::SourceParts=/dev/null -o APT::Get::List-Cleanup=0 ||
				die "apt-get update failed"
		else
			log "apt-get update"
			apt-get update -qq || die "apt-get update failed"
		fi
	fi
	# Order: OPENSSL_DEB_VERSION; 3.0.17-1~deb12u2 (downloads whole); bookworm's own;
	# then the security suite's, newest first (its .dsc may 404: the orig tarball,
	# the upstream source, is enough).
	candidates=$( {
		[ -n "${OPENSSL_DEB_VERSION:-}" ] && echo "0 $OPENSSL_DEB_VERSION"
		apt-cache madison openssl 2>/dev/null | awk -F' *[|] *' -v pref="$preferred_version" '
			$3 ~ /Sources/ { r = ($3 ~ /-security/) ? 3 : 2; if ($2 == pref) r = 1; print r, $2 }'
	} | sort -k1,1n -k2,2Vr | awk '!seen[$2]++ { print $2 }')
	[ -n "$candidates" ] || die "no openssl source package known to apt (deb-src missing?)"
	for v in $candidates; do
		upstream=${v#*:}
		upstream=${upstream%-*}
		log "apt-get source --download-only openssl=$v"
		(cd "$B/dl" && apt-get source -qq --download-only "openssl=$v") \
			>"$B/logs/apt-source.log" 2>&1 || true
		if [ -f "$B/dl/openssl_$upstream.orig.tar.gz" ]; then
			[ -f "$B/dl/openssl_$v.dsc" ] || [ -f "$B/dl/openssl_${v#*:}.dsc" ] ||
				log "only the orig tarball of $v downloaded: enough (upstream source)"
			return 0
		fi
		log "openssl=$v did not download (see $B/logs/apt-source.log)"
	done
	die "no OpenSSL source could be downloaded"
}

tarball=$(orig_tarball)
if [ -z "$tarball" ]; then
	fetch_source
	tarball=$(orig_tarball)
fi
upstream=$(basename "$tarball" .orig.tar.gz)
upstream=${upstream#openssl_}
log "source: $(basename "$tarball") (OpenSSL $upstream)"

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

mapfile -t patches < <(ls "$here"/patches/*.patch 2>/dev/null | sort)
[ "${#patches[@]}" -gt 0 ] || die "no patches in $here/patches"
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
		if ! out=$(cd "$B/src" && patch -p1 -N -f --dry-run <"$p" 2>&1); then
			printf '%s\n' "$out" >&2
			rm -rf "$B/src" "$B/applied" "$B"/stamps/*
			die "patch $name does not apply to OpenSSL $upstream"
		fi
		(cd "$B/src" && patch -p1 -N -f -s <"$p")
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
