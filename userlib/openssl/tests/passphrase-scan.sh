#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# userlib/openssl/tests/passphrase-scan.sh OUT BACKEND [KEYS]
#
# Encrypted private keys, loaded as servers load them, then read from
# outside: tests/key_holder --pass loads each key type (KEYS, comma-separated;
# default RSA-2048, P-256, Ed25519, Ed448, X25519, X448, DSA-2048, DH-2048)
# from an encrypted PKCS#8 PEM file (PEM_read_bio_PrivateKey with a password
# callback, as nginx's ssl_password_file), an encrypted PKCS#8 DER file
# (d2i_PKCS8PrivateKey_bio) and a PKCS#12 file (PKCS12_parse), uses it once
# and waits; tools/leakscan then reads the whole process, every thread's
# stack included, for the key (from the plain key file), for the passphrase
# and, for the PKCS#8 files, for the AES-256 key PBKDF2 derives from it
# (--secret). key_holder wipes its own copy of the passphrase once the key is
# loaded, so every copy found is OpenSSL's.
#   secarena (the patched build, OPENSSL_SECARENA on BACKEND, strict): 0 hits
#            of the key, the passphrase and the derived key outside the
#            arena, one arena, unreadable: one result per key type and file;
#   stock    (Debian's OpenSSL): scanned the same way and counted, not
#            asserted: whether its passphrase is still on a stack depends on
#            what later calls happened to overwrite (0 to 1 hits in 24
#            processes in the runs so far).
# Then Debian's nginx (master and two workers) with the first key type's
# encrypted PEM file and ssl_password_file, after 3 HTTPS requests: the same
# counts in every process, for both configurations.
# The controls, asserted: the derived key, with the IV of the file,
# decrypts the file's ciphertext to the plain key's PKCS#8 DER (so the
# scan looks for the right bytes), and a key_holder that keeps its own copy
# of the passphrase (KEY_HOLDER_KEEP_PASS) is found with it, whole.
# OPENSSL_INSTALL: the patched build (default build/openssl/install).
# TAP on stdout, plan last; exits 0 when it ran.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
out=${1:?usage: passphrase-scan.sh OUT BACKEND [KEYS]}
backend=${2:?backend}
keys=${3:-rsa2048,p256,ed25519,ed448,x25519,x448,dsa2048,dh2048}
install=${OPENSSL_INSTALL:-$top/build/openssl/install}
leakscan=$top/tools/leakscan/build/leakscan
holder=$top/userlib/openssl/build/key_holder

n=0
tap() { # tap ok|not-ok NAME [DETAIL]
	n=$((n + 1))
	if [ "$1" = ok ]; then echo "ok $n - $2"; else echo "not ok $n - $2${3:+ # $3}"; fi
}
finish() { echo "1..$n"; exit 0; }

mkdir -p "$out/keys" "$out/logs"
for f in "$leakscan" "$holder" "$install/lib/libcrypto.so.3"; do
	[ -e "$f" ] || { tap not-ok "passphrase scan prerequisites" "missing $f"; finish; }
done
command -v python3 >/dev/null || { tap not-ok "passphrase scan prerequisites" "no python3"; finish; }

hex() { od -An -v -tx1 | tr -d ' \n'; }

# genkey NAME: plain key, passphrase, and the three encrypted files.
genkey() {
	local name=$1 k=$out/keys/$1 args
	case $name in
	rsa*) args=(-algorithm RSA -pkeyopt "rsa_keygen_bits:${name#rsa}") ;;
	p256) args=(-algorithm EC -pkeyopt ec_paramgen_curve:P-256) ;;
	ed25519 | ed448 | x25519 | x448) args=(-algorithm "$name") ;;
	dh2048) args=(-algorithm DH -pkeyopt group:ffdhe2048) ;;
	dsa2048)
		openssl genpkey -genparam -algorithm DSA -pkeyopt dsa_paramgen_bits:2048 \
			-out "$k.param" 2>/dev/null || return 1
		args=(-paramfile "$k.param") ;;
	mldsa*) args=(-algorithm "ML-DSA-${name#mldsa}") ;;
	mlkem*) args=(-algorithm "ML-KEM-${name#mlkem}") ;;
	*) return 1 ;;
	esac
	openssl genpkey "${args[@]}" -out "$k.key" 2>/dev/null || return 1
	# 24 letters and digits: long enough to search (16 bytes at least), and
	# nothing else in a process looks like it.
	LC_ALL=C tr -dc 'A-Za-z0-9' </dev/urandom | head -c 24 >"$k.pass"
	openssl pkcs8 -topk8 -in "$k.key" -out "$k.p8.pem" -v2 aes-256-cbc -v2prf hmacWithSHA256 \
		-iter 2048 -passout "file:$k.pass" 2>/dev/null &&
		openssl pkcs8 -topk8 -in "$k.key" -outform DER -out "$k.p8.der" -v2 aes-256-cbc \
			-v2prf hmacWithSHA256 -iter 2048 -passout "file:$k.pass" 2>/dev/null &&
		openssl pkcs12 -export -nocerts -inkey "$k.key" -out "$k.p12" -passout "file:$k.pass" 2>/dev/null
}

# The AES-256 key PBKDF2-HMAC-SHA256 makes from the passphrase and the salt
# of an encrypted PKCS#8 DER file (its OCTET STRINGs: the salt, the IV, the
# ciphertext; 2048 rounds), checked by decrypting the ciphertext with it to
# the plain key's PKCS#8 DER. Prints the key; 1 if the check fails.
pbkdf2_key() { # pbkdf2_key DERFILE PASSFILE PLAINKEY
	local octets
	octets=$(openssl asn1parse -inform DER -in "$1" 2>/dev/null |
		sed -n 's/.*OCTET STRING *\[HEX DUMP\]://p' | tr '\n' ' ')
	openssl pkcs8 -topk8 -nocrypt -in "$3" -outform DER -out "$1.plain" 2>/dev/null || return 1
	python3 -c 'import hashlib, subprocess, sys
pw = open(sys.argv[1], "rb").read()
salt, iv, ct = (bytes.fromhex(x) for x in sys.argv[3].split())
key = hashlib.pbkdf2_hmac("sha256", pw, salt, 2048, 32)
pt = subprocess.run(["openssl", "enc", "-d", "-aes-256-cbc", "-K", key.hex(), "-iv", iv.hex()],
                    input=ct, capture_output=True).stdout
sys.exit(1) if pt != open(sys.argv[2], "rb").read() else print(key.hex())' "$2" "$1.plain" "$octets"
}

config_env() {
	case $1 in
	stock) echo "SECARENA_PASSPHRASE_SCAN=stock" ;;
	secarena) echo "LD_LIBRARY_PATH=$install/lib OPENSSL_SECARENA=backend=$backend,strict=yes" ;;
	esac
}

field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p"; }

# start_holder LOG CONFIG [VAR=VALUE...] -- KEY_HOLDER_ARGS...: key_holder
# in the background, its pid in $pid; 0 once it printed "ready", 1 if it
# did not within 10 s or exited.
start_holder() {
	local log=$1 config=$2 extra=()
	shift 2
	while [ "$1" != -- ]; do extra+=("$1"); shift; done
	shift
	: >"$log"	# an old "ready" must not stand for this start's
	# shellcheck disable=SC2046
	env $(config_env "$config") "${extra[@]}" "$holder" "$@" >"$log" 2>&1 &
	pid=$!
	for _ in $(seq 100); do
		grep -qs '^ready' "$log" && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	grep -qs '^ready' "$log"
}

stock_hits=0 stock_runs=0
for key in ${keys//,/ }; do
	if ! genkey "$key"; then
		tap not-ok "$key: key and its encrypted files made"
		continue
	fi
	k=$out/keys/$key
	secrets=(--secret "passphrase=$(hex <"$k.pass")")
	# The PEM file is a second encryption, with a salt of its own.
	sed '1d;$d' "$k.p8.pem" | openssl base64 -d >"$k.p8pem.der"
	if derived_der=$(pbkdf2_key "$k.p8.der" "$k.pass" "$k.key") &&
		derived_pem=$(pbkdf2_key "$k.p8pem.der" "$k.pass" "$k.key"); then
		tap ok "$key: control, the PBKDF2 keys computed from the passphrase decrypt both PKCS#8 files"
	else
		tap not-ok "$key: control, the PBKDF2 keys computed from the passphrase decrypt both PKCS#8 files"
		continue
	fi
	for form in pem der p12; do
		case $form in
		pem) file=$k.p8.pem extra=(--secret "pbkdf2_key=$derived_pem") ;;
		der) file=$k.p8.der extra=(--secret "pbkdf2_key=$derived_der") ;;
		p12) file=$k.p12 extra=() ;;
		esac
		for config in stock secarena; do
			name="$key $form $config"
			log=$out/logs/holder-$key-$form-$config.log
			if ! start_holder "$log" "$config" -- --pass "$k.pass" "--$form" "$file"; then
				tap not-ok "$name: key loaded and used" "$(tr '\n' ' ' <"$log")"
				kill "$pid" 2>/dev/null
				wait "$pid" 2>/dev/null
				continue
			fi
			"$leakscan" "${secrets[@]}" "${extra[@]}" "$k.key" "$pid" >"$out/logs/scan-$key-$form-$config.txt" 2>&1
			kill "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
			line=$(grep -E "^leakscan: pid $pid: outside-arena:" "$out/logs/scan-$key-$form-$config.txt")
			if [ -z "$line" ]; then
				tap not-ok "$name: scanned" "$(tail -n 1 "$out/logs/scan-$key-$form-$config.txt")"
				continue
			fi
			w=$(echo "$line" | field whole) p=$(echo "$line" | field pieces)
			pem=$(echo "$line" | field pem) der=$(echo "$line" | field der)
			s=$(echo "$line" | field secrets)
			ar=$(echo "$line" | field regions) rd=$(echo "$line" | field readable)
			if [ "$config" = stock ]; then
				stock_hits=$((stock_hits + s))
				stock_runs=$((stock_runs + 1))
				continue
			fi
			[ "$((w + p + pem + der + s))" = 0 ] && [ "$ar" = 1 ] && [ "$rd" = 0 ] &&
				tap ok "$name: no byte of the key, the passphrase or its derived key outside the arena" ||
				tap not-ok "$name: nothing outside the arena" \
					"key whole=$w pieces=$p pem=$pem der=$der, passphrase/derived hits=$s, arena regions=$ar readable=$rd"
		done
	done
done

# nginx with ssl_password_file: what a server does with an encrypted key.
key=${keys%%,*} k=$out/keys/${keys%%,*}
port=${PASSPHRASE_SCAN_PORT:-18743}
if command -v nginx >/dev/null && command -v curl >/dev/null && [ -s "$k.p8.pem" ] &&
	openssl req -x509 -key "$k.key" -out "$k.crt" -subj /CN=localhost -days 2 2>/dev/null; then
	derived_pem=$(pbkdf2_key "$k.p8pem.der" "$k.pass" "$k.key")
	mkdir -p "$out/nginx/tmp"
	for config in stock secarena; do
		sed -e "s|@OUT@|$out/nginx|g" -e "s|@PORT@|$port|g" -e "s|@KEY@|$k.p8.pem|g" \
			-e "s|@CRT@|$k.crt|g" -e "s|@TLS@|TLSv1.3|g" -e "s|@EXTRA@|ssl_password_file $k.pass;|" \
			"$here/nginx.conf.in" >"$out/nginx/nginx.conf"
		# shellcheck disable=SC2046
		env $(config_env "$config") nginx -c "$out/nginx/nginx.conf" -e "$out/nginx/error.log" \
			>"$out/logs/nginx-$config.log" 2>&1 &
		srv=$!
		ok=0
		for _ in $(seq 100); do
			(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && { ok=1; break; }
			sleep 0.1
		done
		got=0
		for _ in 1 2 3; do
			curl -sk --max-time 20 "https://127.0.0.1:$port/" | grep -q '^secarena live scan$' && got=$((got + 1))
		done
		sleep 0.3
		bad="" hits=0
		for p in $srv $(pgrep -P "$srv"); do
			"$leakscan" "${secrets[@]}" --secret "pbkdf2_key=$derived_pem" "$k.key" "$p" \
				>"$out/logs/scan-nginx-$config-$p.txt" 2>&1
			line=$(grep -E "^leakscan: pid $p: outside-arena:" "$out/logs/scan-nginx-$config-$p.txt")
			[ -n "$line" ] || { bad="$bad $p:scan-failed"; continue; }
			w=$(echo "$line" | field whole) pc=$(echo "$line" | field pieces)
			s=$(echo "$line" | field secrets) ar=$(echo "$line" | field regions)
			rd=$(echo "$line" | field readable)
			hits=$((hits + s))
			[ "$config" = secarena ] && { [ "$((w + pc + s))" = 0 ] && [ "$ar" = 1 ] && [ "$rd" = 0 ] ||
				bad="$bad $p:key=$((w + pc)),passphrase=$s,regions=$ar,readable=$rd"; }
		done
		kill "$srv" 2>/dev/null
		wait "$srv" 2>/dev/null
		pkill -f "nginx -c $out/nginx/nginx.conf" 2>/dev/null
		if [ "$ok" != 1 ] || [ "$got" != 3 ]; then
			tap not-ok "nginx ssl_password_file $config: started and answered 3 requests" \
				"$(tail -n 2 "$out/nginx/error.log" | tr '\n' ' ')"
		elif [ "$config" = stock ]; then
			echo "# stock nginx: the passphrase or its derived key found $hits times"
		else
			[ -z "$bad" ] &&
				tap ok "nginx ssl_password_file $key secarena: no byte of the key, the passphrase or its derived key outside the arena, master and workers" ||
				tap not-ok "nginx ssl_password_file $key secarena: nothing outside the arena" "$bad"
		fi
	done
fi
echo "# stock: the passphrase or its derived key found $stock_hits times in $stock_runs processes"

# The scanner's control: a holder that keeps its own copy of the passphrase.
key=${keys%%,*} k=$out/keys/${keys%%,*}
if [ -s "$k.p8.pem" ]; then
	start_holder "$out/logs/holder-keep.log" secarena KEY_HOLDER_KEEP_PASS=1 -- \
		--pass "$k.pass" --pem "$k.p8.pem"
	"$leakscan" --secret "passphrase=$(hex <"$k.pass")" "$k.key" "$pid" >"$out/logs/scan-keep.txt" 2>&1
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	w=$(grep -E "secret:passphrase/raw outside: whole=" "$out/logs/scan-keep.txt" | sed 's/.*outside: whole=\([0-9]*\).*/\1/')
	[ "${w:-0}" -ge 1 ] &&
		tap ok "control: a holder that keeps its passphrase is found with it ($w whole)" ||
		tap not-ok "control: a holder that keeps its passphrase is found with it" "whole=${w:-none}"
fi
finish
