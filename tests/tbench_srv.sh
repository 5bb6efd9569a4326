#!/bin/bash
# tbench_srv from the outside: usage and exit codes, readiness and the
# chosen port, every address by default, the tcp and unix backends against
# it (IPv4, IPv6, unix), --max-clients, --timeout, the raised fd limit,
# SIGTERM/SIGINT, and a server killed mid-run: tbench must end with exit 1
# within 10 seconds (on a loaded machine), naming backend, client and peer. Then tbench killed
# with SIGKILL: no process of its own servers may outlive it.
set -euo pipefail

# shellcheck source=tests/testlib.sh
. "${top_srcdir:-.}/tests/testlib.sh"

BUILD="${top_builddir:-.}"
SRV="$BUILD/tbench_srv"
TINY="$SRCDIR/loadfiles/tiny.txt"
TMP="$TL_TMP"
PIDS=()

cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		kill -9 "$p" 2>/dev/null || true
	done
	rm -rf "$TMP"
}
trap cleanup EXIT

# grep_ok WHAT PATTERN FILE
grep_ok() {
	if grep -q -- "$2" "$3"; then ok "$1"; else not_ok "$1: no '$2' in:"; sed -n '1,5s/^/    /p' "$3"; fi
}

# wait_for FILE PATTERN [PID]: poll (no fixed sleep) until the line appears;
# fail at once if PID has exited.
wait_for() {
	local tries=1200
	while [ "$tries" -gt 0 ]; do
		tries=$((tries - 1))
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		if [ -n "${3:-}" ] && ! kill -0 "$3" 2>/dev/null; then
			return 1
		fi
		sleep 0.05
	done
	echo "    gave up waiting for '$2' in $1"
	return 1
}

# start_srv NAME ARGS...: run tbench_srv in the background until it
# listens; sets SRV_PID and SRV_PORT. 1 if it could not listen.
start_srv() {
	local name="$1"
	shift
	# Emptied here, not by the background job's redirection, which may come
	# after wait_for has read an earlier server's line from the same file.
	: >"$TMP/$name.out"
	"$SRV" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
	SRV_PID=$!
	PIDS+=("$SRV_PID")
	if ! wait_for "$TMP/$name.out" "listening on" "$SRV_PID"; then
		wait "$SRV_PID" || true
		return 1
	fi
	SRV_PORT="$(sed -n 's/.*:\([0-9]*\) (.*/\1/p' "$TMP/$name.out")"
}

# stop_srv SIGNAL: the server must exit 0, promptly.
stop_srv() {
	local rc=0
	kill "-$1" "$SRV_PID"
	wait "$SRV_PID" || rc=$?
	if [ "$rc" -eq 0 ]; then ok "SIG$1 stops tbench_srv with exit 0"; else not_ok "SIG$1: exit $rc"; fi
}

ms_now() { echo $(($(date +%s%N) / 1000000)); }

# --- usage --------------------------------------------------------------
expect_exit 0 "--help" "$SRV" --help
grep_ok "--help lists --max-clients" "--max-clients" "$TMP/out"
expect_exit 0 "--version" "$SRV" --version
expect_exit 2 "unknown option" "$SRV" --bogus
expect_exit 2 "stray argument" "$SRV" 7003
expect_exit 2 "--port out of range" "$SRV" --port 70000
expect_exit 2 "--max-connections not a number" "$SRV" --max-connections lots
expect_exit 2 "--max-clients out of range" "$SRV" --max-clients 2000000
expect_exit 2 "--timeout negative" "$SRV" --timeout -1
expect_exit 2 "tbench: SERVER that does not resolve" "$TBENCH" -b tcp 1 no-such-host.invalid -c "$TINY" --run-once -q
grep_ok "names the SERVER" "SERVER no-such-host.invalid" "$TMP/err"
expect_exit 2 "unknown -T option" "$SRV" -T TCP_BOGUS
grep_ok "-T error lists the known options" "SO_SNDBUF" "$TMP/err"
expect_exit 2 "--unix with --port" "$SRV" --unix "$TMP/s" --port 1
expect_exit 2 "tbench: unknown -T option" "$TBENCH" -b tcp 1 -T NOPE
expect_exit 2 "tbench: TCP option on the unix backend" "$TBENCH" -b unix 1 -T TCP_NODELAY

# --- TCP: port 0, port in use, a run against it --------------------------
start_srv main --port 0
if [ -n "$SRV_PORT" ] && [ "$SRV_PORT" -gt 0 ]; then ok "--port 0 reports the port ($SRV_PORT)"; else not_ok "no port in: $(cat "$TMP/main.out")"; fi
grep_ok "every address and a process per connection by default" \
	"listening on .*:$SRV_PORT (every address; a process per connection)" "$TMP/main.out"
expect_exit 0 "tbench to 127.0.0.1 of a server on every address" "$TBENCH" -b tcp 2 127.0.0.1 --port "$SRV_PORT" -c "$TINY" --run-once -q
if grep -q "listening on \[::\]:" "$TMP/main.out"; then
	expect_exit 0 "tbench to ::1 of a server on every address" "$TBENCH" -b tcp 2 ::1 --port "$SRV_PORT" -c "$TINY" --run-once -q
else
	echo "# no IPv6 here: ::1 not tried"
fi
expect_exit 1 "second server on the same port" "$SRV" --port "$SRV_PORT"
grep_ok "says the port is in use and what to do" "in use.*pass --port" "$TMP/err"
expect_exit 0 "tbench -b tcp 2 127.0.0.1 --port P" "$TBENCH" -b tcp 2 127.0.0.1 --port "$SRV_PORT" -c "$TINY" --run-once -q
grep_ok "Throughput line" "^Throughput" "$TMP/out"
expect_exit 0 "tbench --processes against it" "$TBENCH" -b tcp 4 localhost --port "$SRV_PORT" -c "$TINY" --run-once -q --processes -T TCP_NODELAY,SO_SNDBUF=65536
stop_srv TERM

expect_exit 1 "connection refused" "$TBENCH" -b tcp 2 127.0.0.1 --port "$SRV_PORT" -c "$TINY" --run-once -q
grep_ok "refusal names backend, client and peer" "client [0-9]*: tcp: connecting to 127.0.0.1:$SRV_PORT: Connection refused" "$TMP/err"

# --- --threads, --max-clients (and its old name), SIGINT ----------------------
for mode in --fork --threads; do
	start_srv "max$mode" --port 0 "$mode" --max-connections 2
	expect_exit 0 "$mode server, 2 clients" "$TBENCH" -b tcp 2 127.0.0.1 --port "$SRV_PORT" -c "$TINY" --run-once -q
	expect_exit 1 "$mode: 4 clients over --max-connections 2" "$TBENCH" -b tcp 4 127.0.0.1 --port "$SRV_PORT" -c "$TINY" --warmup 0 -t 5 -q
	grep_ok "$mode: the server logged the refusal" "refused: already serving 2 connections (--max-clients 2)" "$TMP/max$mode.err"
	stop_srv INT
done

# --- --timeout: a peer stalled inside a frame is dropped, with one line; one
# quiet between frames is kept and served; the server goes on ---------------
# 3 s, not less: the normal client after it waits for its siblings between
# its connect and its first frame, longer on a loaded machine.
start_srv idle --port 0 --timeout 3
exec {IDLE_FD}<>"/dev/tcp/127.0.0.1/$SRV_PORT"
exec {HALF_FD}<>"/dev/tcp/127.0.0.1/$SRV_PORT"
printf '\000\000\000\144\000\000' >&"$HALF_FD"   # 6 bytes of a 104-byte frame
if wait_for "$TMP/idle.err" "too slow: 6 bytes of a frame in over 3 s (--timeout); closed it" "$SRV_PID"; then
	ok "a peer stalled inside a frame is dropped after --timeout, in one line"
else
	not_ok "no drop of the stalled peer in: $(cat "$TMP/idle.err")"
fi
sleep 1   # the quiet peer: over the timeout by a second at least
# A frame of 8 bytes asking for a 4-byte reply: 8 bytes come back.
printf '\000\000\000\010\000\000\000\004\000\000\000\000' >&"$IDLE_FD"
GOT="$(timeout 10 head -c 8 <&"$IDLE_FD" | wc -c)" || true
if [ "$GOT" -eq 8 ]; then
	ok "a peer quiet for longer than --timeout is kept and served"
else
	not_ok "the quiet peer got $GOT of 8 reply bytes: $(cat "$TMP/idle.err")"
fi
if [ "$(grep -c 'closed it' "$TMP/idle.err")" -eq 1 ]; then
	ok "one log line: the stalled peer's"
else
	not_ok "log lines: $(cat "$TMP/idle.err")"
fi
exec {IDLE_FD}>&- {HALF_FD}>&-
expect_exit 0 "a normal client is served after" "$TBENCH" -b tcp 2 127.0.0.1 --port "$SRV_PORT" -c "$TINY" --run-once -q
stop_srv TERM
# By design (a loadfile's Sleep or --start-at holds a client quiet for
# minutes), an idle peer is no stalled one: --help says so, as the man
# page does, and --threads keeps it too.
expect_exit 0 "tbench_srv --help" "$SRV" --help
help_keeps_idle() {   # popt wraps the help text: its lines joined first
	tr -s ' \n' ' ' <"$TL_TMP/out" | grep -q "one idle between frames is kept, however long"
}
check "--help: --timeout keeps a peer idle between frames" help_keeps_idle
start_srv idlethr --port 0 --threads --timeout 1
exec {IDLE_FD}<>"/dev/tcp/127.0.0.1/$SRV_PORT"
sleep 2.5   # idle for over twice --timeout
printf '\000\000\000\010\000\000\000\004\000\000\000\000' >&"$IDLE_FD"
GOT="$(timeout 10 head -c 8 <&"$IDLE_FD" | wc -c)" || true
check "--threads: a peer idle for over --timeout is kept and served (got $GOT of 8 bytes)" [ "$GOT" -eq 8 ]
exec {IDLE_FD}>&-
stop_srv TERM

# --- the descriptor limit: the soft one raised to the hard one ---------------
HARD="$(ulimit -Hn)"
if [ "$HARD" != unlimited ] && [ "$HARD" -gt 256 ]; then
	(ulimit -Sn 256 && exec "$SRV" --port 0 >"$TMP/fd.out" 2>"$TMP/fd.err") &
	SRV_PID=$!
	PIDS+=("$SRV_PID")
	wait_for "$TMP/fd.out" "listening on" "$SRV_PID" || true
	SOFT="$(awk '/^Max open files/ { print $4 }' "/proc/$SRV_PID/limits")"
	if [ "$SOFT" = "$HARD" ]; then ok "soft fd limit 256 raised to $HARD"; else not_ok "soft fd limit $SOFT, hard $HARD"; fi
	stop_srv TERM
else
	echo "# hard fd limit $HARD: nothing to raise, not checked"
fi

# --- IPv6 ---------------------------------------------------------------------
if start_srv v6 --listen ::1 --port 0; then
	grep_ok "IPv6 address shown in brackets" "\[::1\]:" "$TMP/v6.out"
	expect_exit 0 "tbench -b tcp 2 ::1" "$TBENCH" -b tcp 2 ::1 --port "$SRV_PORT" -c "$TINY" --run-once -q
	stop_srv TERM
else
	echo "# no IPv6 loopback here: $(cat "$TMP/v6.err")"
fi

# --- unix ---------------------------------------------------------------------
SOCK="$TMP/srv.sock"
start_srv unix --unix "$SOCK"
expect_exit 0 "tbench -b unix --unix PATH" "$TBENCH" -b unix 4 --unix "$SOCK" -c "$TINY" --run-once -q
expect_exit 1 "a second server on the same socket" "$SRV" --unix "$SOCK"
grep_ok "says it is in use" "already listening" "$TMP/err"
stop_srv TERM
if [ -e "$SOCK" ]; then not_ok "socket left behind"; else ok "socket removed at the stop"; fi
expect_exit 1 "unix: nothing listening" "$TBENCH" -b unix 1 --unix "$SOCK" -c "$TINY" --run-once -q
grep_ok "unix refusal names client and path" "client 0: unix: connecting to $SOCK" "$TMP/err"

# --- own servers: nothing else needed, nothing left behind --------------------
mkdir "$TMP/tmpdir"
expect_exit 0 "tbench -b tcp 4 alone" "$TBENCH" -b tcp 4 -c "$TINY" --run-once -q
expect_exit 0 "tbench 4 (tcp is the default)" "$TBENCH" 4 -c "$TINY" --run-once -q
expect_exit 0 "tbench -b unix 4 alone" env TMPDIR="$TMP/tmpdir" "$TBENCH" -b unix 4 -c "$TINY" --run-once -q --processes
if [ -z "$(ls -A "$TMP/tmpdir")" ]; then ok "unix removed its private directory"; else not_ok "left: $(ls "$TMP/tmpdir")"; fi

# --- a server killed mid-run ----------------------------------------------------
# kill_once SRV_ARGS -- TBENCH_ARGS: sets RC and DT (ms from the kill to tbench's exit).
kill_once() {
	local t0 run
	local srv_args=()
	while [ "$1" != "--" ]; do srv_args+=("$1"); shift; done
	shift
	start_srv kill --port 0 "${srv_args[@]}"
	: >"$TMP/run.out"   # as in start_srv
	"$TBENCH" -b tcp 4 127.0.0.1 --port "$SRV_PORT" -t 60 --warmup 0 "$@" \
		>"$TMP/run.out" 2>"$TMP/run.err" &
	run=$!
	PIDS+=("$run")
	wait_for "$TMP/run.out" "execute" "$run" || true   # running: a progress line is out
	t0="$(ms_now)"
	kill -9 "$SRV_PID"
	wait "$SRV_PID" 2>/dev/null || true
	RC=0
	wait "$run" || RC=$?
	DT=$(($(ms_now) - t0))
}

# kill_mid_run WHAT SRV_ARGS -- TBENCH_ARGS: tbench must fail within 10 s.
# A loaded machine can miss that once; a hang misses it every time, so a
# slow first attempt is repeated before it counts as a failure.
kill_mid_run() {
	local what="$1"
	shift
	kill_once "$@"
	if [ "$RC" -eq 1 ] && [ "$DT" -ge 10000 ]; then
		echo "# $what: ${DT} ms, over 10000: once more ($(cut -d' ' -f1 /proc/loadavg) load)"
		kill_once "$@"
	fi
	if [ "$RC" -eq 1 ] && [ "$DT" -lt 10000 ]; then
		ok "$what: exit 1 after ${DT} ms"
	else
		not_ok "$what: exit $RC after ${DT} ms (want 1 within 10000 ms)"
	fi
	grep_ok "$what: names client and peer" "client [0-9].*tcp server 127.0.0.1:$SRV_PORT" "$TMP/run.err"
}
kill_mid_run "server killed, client threads" -- --threads
kill_mid_run "server killed, client processes" -- --processes
kill_mid_run "--threads server killed" --threads --

# --- tbench killed with SIGKILL: nothing of it runs on --------------------------
# descendants PID: every process under PID.
descendants() {
	local kid
	for kid in $(ps -o pid= --ppid "$1"); do
		echo "$kid"
		descendants "$kid"
	done
}

# sigkill_tbench BACKEND: tbench with processes, killed mid-run; within 10 s
# (generous, for a loaded machine) no process it started may remain.
sigkill_tbench() {
	local run kids left tries=1200
	: >"$TMP/k.out"   # as in start_srv
	env TMPDIR="$TMP/killdir" "$TBENCH" -b "$1" 4 --processes -c "$TINY" -t 60 --warmup 0 \
		>"$TMP/k.out" 2>"$TMP/k.err" &
	run=$!
	PIDS+=("$run")
	wait_for "$TMP/k.out" "execute" "$run" || true
	kids="$(descendants "$run")"
	kill -9 "$run"
	wait "$run" 2>/dev/null || true
	while [ "$tries" -gt 0 ]; do
		left=""
		for p in $kids; do
			if kill -0 "$p" 2>/dev/null; then left="$left $p"; fi
		done
		[ -z "$left" ] && break
		tries=$((tries - 1))
		sleep 0.05
	done
	if [ -n "$kids" ] && [ -z "$left" ]; then
		ok "$1: the $(echo "$kids" | wc -w) processes under tbench end with it"
	else
		not_ok "$1: after kill -9 of tbench, left running:${left:- (none found to start with)}"
		for p in $left; do kill -9 "$p" 2>/dev/null || true; done
	fi
}
mkdir "$TMP/killdir"
for backend in pipe socketpair splice tcp unix; do
	sigkill_tbench "$backend"
done
if [ -z "$(ls -A "$TMP/killdir")" ]; then ok "unix: no socket directory left after kill -9"; else not_ok "left: $(ls "$TMP/killdir")"; fi

# --- a client process killed: the run fails, unix leaves no directory --------
mkdir "$TMP/clientkill"
: >"$TMP/c.out"
env TMPDIR="$TMP/clientkill" "$TBENCH" -b unix 4 --processes -c "$TINY" -t 60 --warmup 0 \
	>"$TMP/c.out" 2>"$TMP/c.err" &
RUN=$!
PIDS+=("$RUN")
wait_for "$TMP/c.out" "execute" "$RUN" || true
VICTIM=""
for p in $(ps -o pid= --ppid "$RUN"); do   # a client: a child with no children (not the server)
	if [ -z "$(ps -o pid= --ppid "$p")" ]; then VICTIM="$p"; break; fi
done
RC=0
if [ -n "$VICTIM" ]; then
	kill -9 "$VICTIM"
	wait "$RUN" || RC=$?
	if [ "$RC" -eq 1 ]; then ok "a client killed: exit 1"; else not_ok "a client killed: exit $RC"; fi
	grep_ok "a client killed: says which and how" "client [0-9]* died: killed by signal 9" "$TMP/c.err"
	if [ -z "$(ls -A "$TMP/clientkill")" ]; then ok "unix: no directory left after a killed client"; else not_ok "left: $(ls "$TMP/clientkill")"; fi
else
	not_ok "no client process found under tbench $RUN"
fi

tl_done
