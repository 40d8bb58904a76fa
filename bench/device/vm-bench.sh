#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Runs inside the VM as root, with secarena.ko loaded by the caller: run
# device-bench (built on the host with make -C bench/device; nothing is
# built here) and write its table to OUTFILE. Ratios never fail the run;
# only a failed step does (exit 1, the step and errno on stderr).
# Usage: vm-bench.sh OUTFILE [device-bench options: -n ITERATIONS -w WARMUP]
set -euo pipefail

out=${1:?usage: vm-bench.sh OUTFILE [-n ITERATIONS] [-w WARMUP]}
shift
bin=${DEVICE_BENCH:-$(cd "$(dirname "$0")" && pwd)/build/device-bench}
[ -x "$bin" ] || { echo "vm-bench: no $bin (make -C bench/device on the host)" >&2; exit 1; }
[ -c /dev/secarena ] || { echo "vm-bench: no /dev/secarena (insmod secarena.ko first)" >&2; exit 1; }

if ! "$bin" "$@" >"$out.tmp"; then
	rm -f "$out.tmp"
	echo "vm-bench: device-bench failed (see above)" >&2
	exit 1
fi
mv "$out.tmp" "$out"
