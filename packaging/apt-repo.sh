#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# packaging/apt-repo.sh REPO RELEASE=DIR[:DIR...]...
#
# Makes (or remakes) a signed apt repository in REPO from the .deb files in
# the DIRs of each RELEASE, one suite per RELEASE (bookworm, trixie),
# component main:
#   REPO/pool/RELEASE/*.deb
#   REPO/dists/RELEASE/{InRelease,Release,Release.gpg}
#   REPO/dists/RELEASE/main/binary-{amd64,all}/Packages{,.gz}
#   REPO/secarena-archive-keyring.gpg   the public key that signed it
# A machine uses it with
#   deb [signed-by=/usr/share/keyrings/secarena-archive-keyring.gpg] URI RELEASE main
#
# Signed, not [trusted=yes]: trusted=yes turns off apt's check of everything
# the repository serves, and a repository that replaces libssl is the last
# one to trust unsigned. signed-by ties the key to this repository alone,
# so it cannot vouch for Debian's archive or be vouched for by Debian's.
# The key: SECARENA_APT_GNUPGHOME (a GnuPG home holding the project's
# signing key) and SECARENA_APT_KEY (its fingerprint, or any name gpg
# accepts) sign with a real key. Without them a key of this build tree is
# made once in build/apt-key (no passphrase: it is for tests and for a
# machine's own local repository, and is worth what the tree's
# permissions are worth).
# Debug symbols (-dbgsym) and installer packages (.udeb) are left out.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
repo=${1:?usage: apt-repo.sh REPO RELEASE=DIR[:DIR...]...}
shift
[ $# -gt 0 ] || { echo "apt-repo: usage: apt-repo.sh REPO RELEASE=DIR[:DIR...]..." >&2; exit 2; }
for t in apt-ftparchive gpg; do
	command -v "$t" >/dev/null || {
		echo "apt-repo: $t is missing (apt-get install apt-utils gnupg)" >&2
		exit 1
	}
done

export GNUPGHOME=${SECARENA_APT_GNUPGHOME:-$top/build/apt-key}
key=${SECARENA_APT_KEY:-secarena test archive key}
if [ -z "${SECARENA_APT_GNUPGHOME:-}" ] && ! gpg --batch --list-secret-keys "$key" >/dev/null 2>&1; then
	mkdir -p -m 0700 "$GNUPGHOME"
	gpg --batch --quiet --passphrase '' --quick-gen-key "$key" ed25519 sign never
fi
gpg --batch --list-secret-keys "$key" >/dev/null 2>&1 || {
	echo "apt-repo: no secret key '$key' in $GNUPGHOME" >&2
	exit 1
}

mkdir -p "$repo"
repo=$(cd "$repo" && pwd)
for arg in "$@"; do
	rel=${arg%%=*}
	dirs=${arg#*=}
	case $rel in
	bookworm | trixie) ;;
	*) echo "apt-repo: unknown release '$rel' in '$arg' (bookworm or trixie)" >&2; exit 2 ;;
	esac
	[ "$rel" != "$arg" ] || { echo "apt-repo: '$arg': want RELEASE=DIR[:DIR...]" >&2; exit 2; }
	pool=$repo/pool/$rel
	rm -rf "$pool" "$repo/dists/$rel"
	mkdir -p "$pool"
	n=0
	IFS=: read -r -a dl <<<"$dirs"
	for dir in "${dl[@]}"; do
		[ -d "$dir" ] || { echo "apt-repo: $rel: no directory $dir" >&2; exit 1; }
		for deb in "$dir"/*.deb; do
			[ -e "$deb" ] || continue
			case $(basename "$deb") in *-dbgsym_*) continue ;; esac
			cp "$deb" "$pool/"
			n=$((n + 1))
		done
	done
	[ "$n" -gt 0 ] || { echo "apt-repo: $rel: no .deb in $dirs" >&2; exit 1; }
	d=$repo/dists/$rel
	for arch in amd64 all; do
		mkdir -p "$d/main/binary-$arch"
		(cd "$repo" && apt-ftparchive --arch "$arch" packages "pool/$rel") >"$d/main/binary-$arch/Packages"
		gzip -9n -k "$d/main/binary-$arch/Packages"
	done
	(cd "$d" && apt-ftparchive \
		-o APT::FTPArchive::Release::Origin=secarena \
		-o APT::FTPArchive::Release::Label=secarena \
		-o APT::FTPArchive::Release::Suite="$rel" \
		-o APT::FTPArchive::Release::Codename="$rel" \
		-o APT::FTPArchive::Release::Architectures="amd64 all" \
		-o APT::FTPArchive::Release::Components=main \
		-o APT::FTPArchive::Release::Description="secarena packages for Debian $rel" \
		release . >Release.new && mv Release.new Release)
	gpg --batch --yes --local-user "$key" --clearsign -o "$d/InRelease" "$d/Release"
	gpg --batch --yes --local-user "$key" --armor --detach-sign -o "$d/Release.gpg" "$d/Release"
	echo "apt-repo: $rel: $n packages" >&2
done
gpg --batch --yes --export "$key" >"$repo/secarena-archive-keyring.gpg"
echo "$repo"
