#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# userlib/openssl/export-patches.sh BRANCH SRC BASE NAME SUBJECT_FILE FILE...
#
# Maintainer tool: writes patches/BRANCH/NAME.patch (BRANCH: 3.0, 3.5) from a git work tree of the
# OpenSSL source (SRC) in which the series is developed: the diff of FILE...
# from commit BASE to the work tree, after a header taken from SUBJECT_FILE
# (first line: subject; the rest: the body saying which copy it moves and
# why).  Nothing in the build or the tests calls it.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
branch=$1 src=$2 base=$3 name=$4 hdr=$5
shift 5
[ -d "$here/patches/$branch" ] || { echo "export-patches: no series patches/$branch" >&2; exit 1; }
out=$here/patches/$branch/$name.patch
[ -d "$src/.git" ] || { echo "export-patches: $src is not a git tree" >&2; exit 1; }
[ -s "$hdr" ] || { echo "export-patches: no header in $hdr" >&2; exit 1; }
{
	echo "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001"
	echo "From: secarena <secarena@localhost>"
	echo "Date: $(date -R)"
	echo "Subject: [PATCH] $(head -n 1 "$hdr")"
	tail -n +2 "$hdr"
	echo "---"
	git -C "$src" diff --stat=72 "$base" -- "$@"
	echo
	git -C "$src" diff "$base" -- "$@"
} >"$out"
echo "export-patches: wrote $out"
