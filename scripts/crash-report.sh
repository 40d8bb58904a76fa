#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# crash-report.sh CONSOLE: the first line of a kernel crash report in a
# guest's console log (vmtest.sh), prefixed "ours: " when the report (that
# line and the 80 after it) names secarena in its trace, else "not ours: ";
# nothing when there is no crash report. The module list names secarena
# whenever it is loaded, which says nothing about the crash: it is left
# out. vmtest.sh runs a guest again, once, after a crash that is not ours.
set -euo pipefail

[ -r "${1:-}" ] || { echo "usage: crash-report.sh CONSOLE_LOG" >&2; exit 2; }
awk '/Kernel panic|BUG: |Oops|general protection fault|Unable to handle/ && !start { start = NR; first = $0 }
	start && NR <= start + 80 && /secarena/ && !/Modules linked in/ { ours = 1 }
	END { if (start) { sub(/^\[ *[0-9.]+\] */, "", first); print (ours ? "ours: " : "not ours: ") first } }' "$1"
