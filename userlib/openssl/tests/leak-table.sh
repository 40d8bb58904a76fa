#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# userlib/openssl/tests/leak-table.sh LEAKS.TSV
#
# The leak table of a live-scan.sh run: one row per server, key and TLS
# version; per configuration the hits outside the arena summed over the
# server's processes, as "whole copies/16-byte pieces/PEM lines" of the key,
# then "+T" for the TLS secrets and record keys found (whole and pieces),
# and whether the protected area (OpenSSL's secure heap, or the secarena
# arena) could be read by the scanner.  "+open" rows (s_server+open,
# nginx+open) were scanned with one connection in use.
set -euo pipefail
tsv=${1:?usage: leak-table.sh LEAKS.TSV}
awk -F'\t' '
NR == 1 { next }
{
	row = $1 " " $3 ($4 == "-" ? "" : " TLS" $4)
	if (!(row in seen)) { seen[row] = 1; order[++nrows] = row }
	k = row SUBSEP $2
	w[k] += $6; p[k] += $7; l[k] += $8 + $9; t[k] += $12 + $13
	if ($10 > 0) { areas[k] += $10; readable[k] += $11 }
	have[k] = 1
}
function cell(k,    s) {
	if (!(k in have))
		return "-"
	s = w[k] "/" p[k] "/" l[k] "+" t[k]
	if (areas[k] > 0)
		s = s (readable[k] > 0 ? " readable" : " sealed")
	return s
}
END {
	printf "%-28s %-22s %-22s %-22s\n", "server key tls", "stock", "stock+secure-heap", "secarena"
	printf "%-28s %-22s %-22s %-22s\n", "", "whole/pieces/pem+tls", "(heap)", "(arena)"
	for (i = 1; i <= nrows; i++) {
		r = order[i]
		printf "%-28s %-22s %-22s %-22s\n", r, cell(r SUBSEP "stock"),
			cell(r SUBSEP "stock-secheap"), cell(r SUBSEP "secarena")
	}
}' "$tsv"
