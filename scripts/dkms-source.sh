#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# scripts/dkms-source.sh DIR: lay out the module source as DKMS wants it,
# DIR/secarena-VERSION/{Kbuild,module,uapi,dkms.conf}.  VERSION is the one
# place the version lives; dkms.conf must carry the same (refused if not),
# so that `dkms add` of this tree and `make dkms-install` agree.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:?usage: dkms-source.sh DIR}
ver=$(cat "$top/VERSION")
grep -qx "PACKAGE_VERSION=\"$ver\"" "$top/dkms.conf" || {
	echo "dkms-source: dkms.conf PACKAGE_VERSION is not VERSION ($ver)" >&2
	exit 1
}
dest=$dir/secarena-$ver
rm -rf "$dest"
mkdir -p "$dest"
cp -r "$top/Kbuild" "$top/module" "$top/uapi" "$top/dkms.conf" "$dest/"
echo "$dest"
