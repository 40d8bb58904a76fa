#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# leakscan on post-quantum keys (src/parts_pq.c): ML-KEM, ML-DSA and
# SLH-DSA. Needs an OpenSSL of 3.5 or later, both as the openssl command and
# as the libcrypto leakscan loads, so it runs in the Debian 13 root
# (userlib/openssl/tests/run-tests.sh, OPENSSL_BRANCH=3.5, through
# scripts/in-root.sh); run-tests.sh of this folder covers the other types.
# Checks each component against "openssl pkey -text" and against an
# independent decoding in python3, then places copies with leak_target and
# compares leakscan's counts with expect.awk's. Prints TAP; exits 1 only
# when it cannot run at all.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(dirname "$HERE")
LS=$TOP/build/leakscan
LT=$TOP/build/leak_target

for f in "$LS" "$LT"; do
	[ -x "$f" ] || { echo "Bail out! $f not built (make -C $TOP)"; exit 1; }
done
openssl genpkey -algorithm ML-DSA-44 -out /dev/null 2>/dev/null ||
	{ echo "Bail out! $(openssl version) has no ML-DSA: run this with OpenSSL 3.5 or later"; exit 1; }
command -v python3 >/dev/null || { echo "Bail out! python3 not found"; exit 1; }

T=$(mktemp -d /tmp/leakscan-pq.XXXXXX)
TPID=
cleanup() {
	[ -n "$TPID" ] && kill "$TPID" 2>/dev/null && wait "$TPID" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

n=0
tap() { # tap ok|not-ok NAME [DETAIL]
	n=$((n + 1))
	if [ "$1" = ok ]; then echo "ok $n - $2"; else echo "not ok $n - $2${3:+ # $3}"; fi
}
is() { # is NAME GOT WANT
	if [ "$2" = "$3" ]; then tap ok "$1"; else tap not-ok "$1" "got '$2', want '$3'"; fi
}

dumped() { # dumped KEY NAME FORM: the hex of one component
	awk -v n="$2" -v f="$3" '$1 == n && $2 == f { print $3 }' "$T/$1.comp"
}
# The hex of one field of "openssl pkey -text" (seed, dk, priv).
ossl_field() { # ossl_field KEY LABEL
	openssl pkey -in "$T/$1.pem" -text -noout |
		awk -v l="$2:" '$1 == l { on = 1; next } on && /^ / { printf "%s", $0; next } { on = 0 }' |
		tr -d ' :'
}
hexsub() { # hexsub HEX OFFSET [LEN]: bytes OFFSET.. of HEX
	if [ $# = 3 ]; then echo "${1:$(($2 * 2)):$(($3 * 2))}"; else echo "${1:$(($2 * 2))}"; fi
}
# "name form length" of every component and public line, in dump order.
layout() {
	awk '{ printf "%s/%s:%d ", $1, $2, length($3) / 2 }' "$T/$1.comp"
}

genkey() { # genkey KEY ALGORITHM
	openssl genpkey -algorithm "$2" -out "$T/$1.pem" 2>"$T/$1.err" &&
		"$LS" --dump-components "$T/$1.pem" >"$T/$1.comp" 2>>"$T/$1.err"
}

# ---- components: names and lengths, then their bytes ----
# ML-KEM-k: s is 384k bytes encoded, 512k as 16-bit words; the public run
# ek || H(ek) is 384k + 64.
for k in 2 3 4; do
	key=mlkem$((256 * k)) alg=ML-KEM-$((256 * k))
	if ! genkey "$key" "$alg"; then
		tap not-ok "$alg: key generated and dumped" "$(tr '\n' ' ' <"$T/$key.err")"
		continue
	fi
	lay=$(layout "$key")
	is "$alg: components s/raw, s/mem16, z, d and the public run" \
		"$(echo "$lay" | tr ' ' '\n' | grep -Ev '^(der|pem|spki)/|^$' | tr '\n' ' ')" \
		"s/raw:$((384 * k)) s/mem16:$((512 * k)) z/raw:32 d/raw:32 pubderived/pub:$((384 * k + 64)) "
	dk=$(ossl_field "$key" dk) seed=$(ossl_field "$key" seed)
	is "$alg: d || z is the seed of openssl pkey -text" \
		"$(dumped "$key" d raw)$(dumped "$key" z raw)" "$seed"
	is "$alg: s/raw and z are the head and tail of dk" \
		"$(dumped "$key" s raw) $(dumped "$key" z raw)" \
		"$(hexsub "$dk" 0 $((384 * k))) $(hexsub "$dk" $((768 * k + 64)))"
	is "$alg: the public run is dk's ek || H(ek)" \
		"$(dumped "$key" pubderived pub)" "$(hexsub "$dk" $((384 * k)) $((384 * k + 64)))"
	# 12-bit little-endian packing into 16-bit words, decoded on its own.
	is "$alg: s/mem16 is s unpacked 12 bits to a word" "$(dumped "$key" s mem16)" \
		"$(python3 -c 'import sys
b = bytes.fromhex(sys.argv[1]); v = int.from_bytes(b, "little")
print(b"".join(((v >> (12 * i)) & 0xfff).to_bytes(2, "little") for i in range(len(b) * 8 // 12)).hex())' \
			"$(dumped "$key" s raw)")"
done

# ML-DSA-44/65/87: (k, l, eta); sk = rho || K || tr || s1 || s2 || t0.
for p in 44:4:4:2 65:6:5:4 87:8:7:2; do
	IFS=: read -r set k l eta <<<"$p"
	key=mldsa$set alg=ML-DSA-$set bits=$([ "$eta" = 2 ] && echo 3 || echo 4)
	if ! genkey "$key" "$alg"; then
		tap not-ok "$alg: key generated and dumped" "$(tr '\n' ' ' <"$T/$key.err")"
		continue
	fi
	want="K/raw:32 s1s2t0/raw:$((32 * ((k + l) * bits + 13 * k))) "
	for i in $(seq 0 $((l - 1))); do want="${want}s1[$i]/mem32:1024 "; done
	for i in $(seq 0 $((k - 1))); do want="${want}s2[$i]/mem32:1024 "; done
	for i in $(seq 0 $((k - 1))); do want="${want}t0[$i]/mem32:1024 "; done
	is "$alg: components K, s1s2t0, one word vector per polynomial, xi, tr" \
		"$(layout "$key" | tr ' ' '\n' | grep -Ev '^(der|pem|spki)/|^$' | tr '\n' ' ')" \
		"${want}xi/raw:32 pubderived/pub:64 "
	sk=$(ossl_field "$key" priv)
	is "$alg: xi is the seed, K, s1s2t0 and tr are sk's fields" \
		"$(dumped "$key" xi raw) $(dumped "$key" K raw) $(dumped "$key" s1s2t0 raw) $(dumped "$key" pubderived pub)" \
		"$(ossl_field "$key" seed) $(hexsub "$sk" 32 32) $(hexsub "$sk" 128) $(hexsub "$sk" 64 64)"
	# eta - v (s1, s2) and 2^12 - v (t0), as residues mod q in 32-bit words.
	decode='import sys
b = bytes.fromhex(sys.argv[1]); k, l, eta, bits = map(int, sys.argv[2:6]); poly = int(sys.argv[6])
q = 8380417; v = int.from_bytes(b, "little")
w, mid, start = (bits, eta, poly * 256 * bits) if poly < k + l else (13, 4096, (k + l) * 256 * bits + (poly - k - l) * 256 * 13)
print(b"".join(((mid - ((v >> (start + w * i)) & ((1 << w) - 1))) % q).to_bytes(4, "little") for i in range(256)).hex())'
	s12=$(dumped "$key" s1s2t0 raw)
	is "$alg: s1[0], s2[$((k - 1))] and t0[$((k - 1))] decoded on their own" \
		"$(dumped "$key" "s1[0]" mem32) $(dumped "$key" "s2[$((k - 1))]" mem32) $(dumped "$key" "t0[$((k - 1))]" mem32)" \
		"$(python3 -c "$decode" "$s12" "$k" "$l" "$eta" "$bits" 0) $(python3 -c "$decode" "$s12" "$k" "$l" "$eta" "$bits" $((l + k - 1))) $(python3 -c "$decode" "$s12" "$k" "$l" "$eta" "$bits" $((l + 2 * k - 1)))"
done

# SLH-DSA: SK.seed || SK.prf || PK.seed || PK.root, n bytes each.
for p in SHA2-128s:16 SHAKE-256f:32; do
	alg=SLH-DSA-${p%:*} nb=${p#*:} key=slh$nb
	if ! genkey "$key" "$alg"; then
		tap not-ok "$alg: key generated and dumped" "$(tr '\n' ' ' <"$T/$key.err")"
		continue
	fi
	sk=$(ossl_field "$key" priv)
	is "$alg: SK.seed and SK.prf, the secret half of priv" \
		"$(layout "$key" | tr ' ' '\n' | grep -Ev '^(der|pem|spki)/|^$' | tr '\n' ' ')|$(dumped "$key" SK.seed raw)$(dumped "$key" SK.prf raw)" \
		"SK.seed/raw:$nb SK.prf/raw:$nb |$(hexsub "$sk" 0 $((2 * nb)))"
done

# ---- counts: leak_target places the copies, expect.awk predicts ----
components() { # the per-component counts of $T/out.json, as expect.awk prints them
	python3 -c 'import json, sys
for c in json.load(open(sys.argv[1]))["pids"][0]["components"]:
    o, a = c["outside"], c["arena"]
    print(c["component"], c["form"], o["whole"], o["pieces_found"], o["piece_hits"],
          a["whole"], a["pieces_found"], a["piece_hits"])' "$T/out.json"
}
json() { # json EXPR: a value of $T/out.json, "j" being the document
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$T/out.json" "$1"
}
# recipe NAME KEY TOKENS: leak_target with TOKENS, one leakscan --json
recipe() {
	local name=$1 key=$2 i

	shift 2
	: >"$T/target.out"	# not left to the job: it may truncate too late
	"$LT" "$T/$key.comp" "$@" >"$T/target.out" 2>"$T/target.err" &
	TPID=$!
	for i in $(seq 100); do
		grep -q '^ready$' "$T/target.out" && break
		sleep 0.05
	done
	if ! grep -q '^ready$' "$T/target.out"; then
		tap not-ok "$name: target started" "$(tr '\n' ' ' <"$T/target.err")"
		return 1
	fi
	"$LS" --json "$T/$key.pem" "$TPID" >"$T/out.json" 2>"$T/out.err"
	RC=$?
	local diff
	diff=$(diff <(awk -v recipe="$*" -v arena=0 -f "$HERE/expect.awk" "$T/$key.comp") <(components) | head -5)
	if [ -z "$diff" ]; then tap ok "$name: counts match the oracle"; else tap not-ok "$name: counts match the oracle" "$(echo "$diff" | tr '\n' ' ')"; fi
	kill "$TPID" 2>/dev/null
	wait "$TPID" 2>/dev/null
	TPID=
}
comp() { # comp NAME FORM: "whole found/pieces hits" outside, from $T/out.json
	python3 -c 'import json, sys
for c in json.load(open(sys.argv[1]))["pids"][0]["components"]:
    if c["component"] == sys.argv[2] and c["form"] == sys.argv[3]:
        o = c["outside"]; print("%d %d/%d %d" % (o["whole"], o["pieces_found"], o["pieces"], o["piece_hits"]))' \
		"$T/out.json" "$1" "$2"
}

if [ -s "$T/mldsa65.comp" ]; then
	recipe "ML-DSA-65" mldsa65 "s1[2]:mem32:2" K:raw:1 s1s2t0:piece7:3 xi:raw:1 "t0[5]:mem32:1" &&
		is "ML-DSA-65: s1[2]/mem32 whole=2, no pieces; s1s2t0 piece 7 three times" \
			"$(comp "s1[2]" mem32) | $(comp s1s2t0 raw)" "2 0/0 0 | 0 1/244 3"
	# A process that holds only the public key (and tr, which it derives)
	# holds no secret: the DER pieces inside tr are public.
	recipe "ML-DSA-65 public key and tr" mldsa65 spki:pub:2 pubderived:pub:2 &&
		is "ML-DSA-65 public key and tr: nothing outside, tr's DER pieces public" \
			"$(json 'j["total"]["outside"]') $RC $(json '[p["public_pieces"] >= 4 for p in j["key"]["patterns"] if p["component"] == "der"][0]')" \
			"0 0 True"
fi
if [ -s "$T/mlkem768.comp" ]; then
	recipe "ML-KEM-768" mlkem768 s:mem16:1 z:raw:2 s:piece3:1 d:raw:1 der:raw:1 &&
		# The DER (seed and expanded form) holds z twice: in d || z and
		# at the end of dk.
		is "ML-KEM-768: s/mem16 whole=1 and all its 96 pieces; z whole=2, +2 in the DER" \
			"$(comp s mem16) | $(comp z raw | cut -d' ' -f1)" "1 96/96 96 | 4"
	recipe "ML-KEM-768 public key and H(ek)" mlkem768 spki:pub:2 pubderived:pub:1 &&
		is "ML-KEM-768 public key and H(ek): nothing outside" \
			"$(json 'j["total"]["outside"]') $RC" "0 0"
fi
if [ -s "$T/slh16.comp" ]; then
	recipe "SLH-DSA-SHA2-128s" slh16 SK.seed:raw:1 SK.prf:raw:2 spki:pub:1 &&
		is "SLH-DSA-SHA2-128s: SK.seed whole=1, SK.prf whole=2, exit 1" \
			"$(comp SK.seed raw | cut -d' ' -f1) $(comp SK.prf raw | cut -d' ' -f1) $RC" "1 2 1"
fi
echo "1..$n"
exit 0
