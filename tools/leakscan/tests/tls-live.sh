# SPDX-License-Identifier: GPL-2.0
#
# leakscan on a real TLS server: the system's stock "openssl s_server", one
# "openssl s_client -keylogfile" connection kept open, then a scan of the
# server with the client's key log. Stock OpenSSL keeps its secrets in
# ordinary memory, so this is the positive control of the secret search:
# each protocol must show whole copies. Sourced by run-tests.sh.

# wait_for FILE PATTERN: up to 5 s for an extended regex to appear
wait_for() {
	for _ in $(seq 100); do
		grep -Eq "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# live_start NAME S_CLIENT-ARGS...: server and client, connected and past one
# round of application data; sets LIVE (a directory), SPID and CPID. Both
# read their stdin from a fifo this shell keeps open, so neither sees EOF.
live_start() {
	local port

	LIVE=$T/live-$1
	shift
	mkdir -p "$LIVE"
	mkfifo "$LIVE/srv.in" "$LIVE/cli.in"
	openssl s_server -accept 0 -key "$T/rsa.pem" -cert "$T/rsa.crt" \
		<"$LIVE/srv.in" >"$LIVE/srv.out" 2>&1 &
	SPID=$!
	TPIDS+=("$SPID")
	exec {SRV_FD}>"$LIVE/srv.in"
	wait_for "$LIVE/srv.out" '^ACCEPT ' || return 1
	port=$(sed -n 's/^ACCEPT .*:\([0-9]*\)$/\1/p' "$LIVE/srv.out")
	openssl s_client -connect "localhost:$port" -keylogfile "$LIVE/keylog" \
		-sess_out "$LIVE/sess.pem" "$@" <"$LIVE/cli.in" >"$LIVE/cli.out" 2>&1 &
	CPID=$!
	TPIDS+=("$CPID")
	exec {CLI_FD}>"$LIVE/cli.in"
	echo leakscan-ping >&"$CLI_FD"
	# the server echoes what it reads: its handshake is complete
	wait_for "$LIVE/srv.out" '^leakscan-ping' && wait_for "$LIVE/sess.pem" 'END SSL SESSION'
}

# live_after_close NAME EXTRA-ARGS...: the client closes; the server's counts
# then are only reported (a TAP comment): what stays is up to OpenSSL's frees
live_after_close() {
	local name=$1

	shift
	exec {CLI_FD}>&-
	wait "$CPID" 2>/dev/null
	wait_for "$LIVE/srv.out" '^(DONE|CONNECTION CLOSED)' && sleep 0.2
	"$LS" --keylog "$LIVE/keylog" "$@" "$T/rsa.pem" "$SPID" >"$LIVE/closed.txt" 2>&1
	echo "# $name, after the client closed: $(grep 'outside-arena:' "$LIVE/closed.txt")" >>"$RESULTS"
}

live_stop() {
	exec {SRV_FD}>&- {CLI_FD}>&-
	kill "$CPID" "$SPID" 2>/dev/null
	wait "$CPID" "$SPID" 2>/dev/null
}

# whole LABEL [FORM]: outside whole hits of connection 1's secret (or key)
whole() {
	jq -r --arg c "tls:$1#1" --arg f "${2:-raw}" \
		'[.pids[0].components[] | select(.component == $c and .form == $f) | .outside.whole] | add // "none"' \
		"$LIVE/scan.json"
}

# live_scan NAME EXTRA-ARGS...: the key and the client's key log, searched
# in the server; JSON in $LIVE/scan.json, the text summary as a TAP comment
live_scan() {
	local name=$1

	shift
	"$LS" --json --keylog "$LIVE/keylog" "$@" "$T/rsa.pem" "$SPID" >"$LIVE/scan.json" 2>"$LIVE/scan.err"
	LIVE_RC=$?
	"$LS" --keylog "$LIVE/keylog" "$@" "$T/rsa.pem" "$SPID" >"$LIVE/scan.txt" 2>&1
	echo "# $name: $(grep 'outside-arena:' "$LIVE/scan.txt")" >>"$RESULTS"
}

test_live_tls12() {
	local name="s_server TLS 1.2 ECDHE-RSA-AES128-GCM-SHA256" ms

	if ! live_start tls12 -tls1_2 -cipher ECDHE-RSA-AES128-GCM-SHA256; then
		skip "$name" "s_server/s_client did not connect: $(tail -n 3 "$LIVE/cli.out" | tr '\n' ' ')"
		live_stop
		return
	fi
	live_scan "$name"
	ms=$(whole MASTER_SECRET)
	check "$name: master secret found whole ($ms), exit 1" is ms "$([ "$ms" -ge 1 ] && echo yes) $LIVE_RC" "yes 1"
	check "$name: the keylog had one CLIENT_RANDOM line" is keylog \
		"$(jq -c '[.secrets.keylogs[0].entries, .secrets.connections]' "$LIVE/scan.json")" "[1,1]"
	live_after_close "$name"
	live_stop
}

# test_live_tls13 SUITE KEYFORM: app traffic secrets and their record keys
test_live_tls13() {
	local suite=$1 form=$2 name="s_server TLS 1.3 $1" c s ck sk hs ex psk

	if ! live_start "$suite" -tls1_3 -ciphersuites "$suite"; then
		skip "$name" "s_server/s_client did not connect: $(tail -n 3 "$LIVE/cli.out" | tr '\n' ' ')"
		live_stop
		return
	fi
	psk=$(openssl sess_id -in "$LIVE/sess.pem" -text -noout | sed -n 's/^ *Resumption PSK: //p')
	live_scan "$name" --secret "resumption_psk=$psk"
	c=$(whole CLIENT_TRAFFIC_SECRET_0) s=$(whole SERVER_TRAFFIC_SECRET_0)
	ck=$(whole CLIENT_TRAFFIC_SECRET_0 "$form") sk=$(whole SERVER_TRAFFIC_SECRET_0 "$form")
	hs="$(whole CLIENT_HANDSHAKE_TRAFFIC_SECRET)/$(whole SERVER_HANDSHAKE_TRAFFIC_SECRET)"
	ex=$(whole EXPORTER_SECRET)
	check "$name: traffic secrets found whole (client $c, server $s; handshake $hs, exporter $ex)" \
		is traffic "$([ "$c" -ge 1 ] && [ "$s" -ge 1 ] && echo yes) $LIVE_RC" "yes 1"
	check "$name: derived $form found whole (client $ck, server $sk)" \
		is keys "$([ "$ck" -ge 1 ] && [ "$sk" -ge 1 ] && echo yes)" yes
	check "$name: resumption PSK (--secret) found whole ($(jq '.pids[0].components[] | select(.component == "secret:resumption_psk") | .outside.whole' "$LIVE/scan.json"))" \
		is psk "$(jq '.pids[0].components[] | select(.component == "secret:resumption_psk") | .outside.whole >= 1' "$LIVE/scan.json")" true
	live_after_close "$name" --secret "resumption_psk=$psk"
	live_stop
}

setup_live() {
	openssl req -x509 -key "$T/rsa.pem" -subj /CN=leakscan-test -days 1 \
		-out "$T/rsa.crt" 2>/dev/null
}
