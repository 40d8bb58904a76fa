# SPDX-License-Identifier: GPL-2.0
#
# The test oracle: from a --dump-components file and a leak_target recipe,
# compute what leakscan must report, by plain substring counting over the
# copies the recipe places (no hashing, no chunks: an independent method).
#
#   awk -v recipe="TOKENS" -v arena=0|1 -f expect.awk COMPFILE
#
# Prints per component form, in file order:
#   name form out_whole out_found out_piece_hits arena_whole arena_found arena_piece_hits
# arena=1 means the recipe's arena zone is passed to leakscan as --arena-range.

# Occurrences of needle in hay (hex strings), at byte positions, overlapping.
function occ(hay, needle,    n, i, j, pos) {
	n = 0
	i = 1
	while ((j = index(substr(hay, i), needle)) > 0) {
		pos = i + j - 1
		if (pos % 2 == 1)
			n++
		i = pos + 1
	}
	return n
}

function piece(hex, j,    len, off) {
	len = length(hex) / 2
	off = j * 16
	if (off + 16 > len)
		off = len - 16
	return substr(hex, off * 2 + 1, 32)
}

function find(name, form,    i) {
	for (i = 1; i <= n; i++)
		if (names[i] == name && (form == "" || forms[i] == form))
			return i
	print "expect.awk: no component " name " " form > "/dev/stderr"
	exit 2
}

# One recipe token: remember the copy it places and where.
function token(t,    zone, f, nf, name, spec, form, i, p, hex) {
	if (t == "none" || t ~ /^junk:/)
		return
	zone = "heap"
	if (index(t, "/")) {
		zone = substr(t, 1, index(t, "/") - 1)
		t = substr(t, index(t, "/") + 1)
	}
	# the name may hold colons (tls:MASTER_SECRET#1): SPEC and COUNT are last
	nf = split(t, f, ":")
	name = f[1]
	for (i = 2; i <= nf - 2; i++)
		name = name ":" f[i]
	spec = f[nf - 1]
	p = -1
	if (spec ~ /^[0-9]+$/)
		form = "line" spec
	else if (spec ~ /piece/) {
		p = substr(spec, index(spec, "piece") + 5) + 0
		form = spec ~ /^piece/ ? "" : substr(spec, 1, index(spec, ".") - 1)
	} else
		form = spec
	if (name == "spki") {
		hex = spki
	} else if (name == "pubderived") {
		hex = pubderived
	} else {
		i = find(name, form)
		hex = p < 0 ? hexes[i] : piece(hexes[i], p)
	}
	if (zone == "noread")
		return	# never read, so never counted
	ncopies++
	copy[ncopies] = "5a" hex "5a"	# leak_target's GUARD bytes around it
	mult[ncopies] = f[nf] + 0
	inarena[ncopies] = zone == "arena" && arena
}

function count(needle, where,    k, c) {
	c = 0
	for (k = 1; k <= ncopies; k++)
		if (inarena[k] == where)
			c += mult[k] * occ(copy[k], needle)
	return c
}

function report(i, where,    len, np, j, c, found, hits) {
	len = length(hexes[i]) / 2
	if (len < 16)
		return "0 0 0"
	# PEM lines and ML-DSA's vectors in memory ("mem32", kind words) are
	# matched whole only.
	np = names[i] == "pem" || forms[i] == "mem32" ? 0 : int((len + 15) / 16)
	found = hits = 0
	for (j = 0; j < np; j++) {
		if (names[i] == "der" && (occ(spki, piece(hexes[i], j)) > 0 ||
		    occ(pubderived, piece(hexes[i], j)) > 0))
			continue
		c = count(piece(hexes[i], j), where)
		hits += c
		found += c > 0
	}
	return count(hexes[i], where) " " found " " hits
}

# The public key, and the public values derived from it (post-quantum
# keys): DER pieces they hold are not searched by leakscan.
$1 == "spki" {
	spki = $3
	next
}
$1 == "pubderived" {
	pubderived = $3
	next
}

{
	n++
	names[n] = $1
	forms[n] = $2
	hexes[n] = $3
}

END {
	nt = split(recipe, toks, " ")
	for (t = 1; t <= nt; t++)
		token(toks[t])
	for (i = 1; i <= n; i++)
		print names[i], forms[i], report(i, 0), report(i, 1)
}
