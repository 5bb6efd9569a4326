#!/bin/bash
# shellcheck disable=SC2016  # jq programs are single-quoted on purpose
# Faults a hostile peer or a clumsy user brings, against every backend, as
# processes and as threads: the server killed or stopped, SIGINT and SIGTERM,
# one server stopped while the others run, --json on a full file system,
# standard output full or closed; an external server that starts just after
# tbench, killed. Each run must end within a bound with
# exit 1, a message naming the cause, and a valid JSON file (or a clear
# error that it could not be written): never a hang, an orphan, a
# truncated file or exit 0.
#
#   tests/faults.sh                  tcp, pipe and unix (make check)
#   tests/faults.sh --all --table F  every backend; a markdown table in F
set -euo pipefail
# shellcheck source=tests/testlib.sh
. "${top_srcdir:-.}/tests/testlib.sh"
SRV="${top_builddir:-.}/tbench_srv"

BACKENDS=(tcp pipe unix)
TABLE=
while [ $# -gt 0 ]; do
	case "$1" in
	--all) BACKENDS=(tcp unix pipe socketpair splice nop tcp-zc mptcp shm uring) ;;
	--table) TABLE="$2"; shift ;;
	*) echo "usage: $0 [--all] [--table FILE]" >&2; exit 2 ;;
	esac
	shift
done

LIMIT=60        # the time limit of every run: no fault may cost it
TIMEOUT=3       # --timeout: a stalled exchange ends the run after it
BOUND=45        # seconds a faulty run may take, on a loaded machine
EXT_PID=        # an external tbench_srv, for tcp
ROWS=()

cleanup() {
	[ -z "$EXT_PID" ] || { kill -9 "$EXT_PID"; wait "$EXT_PID"; } 2>/dev/null || true
	pkill -9 -P $$ 2>/dev/null || true
	rm -rf "$TL_TMP"
}
trap cleanup EXIT

# Every process below PID, deepest first.
descendants() {
	local child
	for child in $(pgrep -P "$1" || true); do
		descendants "$child"
		echo "$child"
	done
}

# The processes that serve the run's clients: tcp's external tbench_srv
# (all of its processes), or the servers a backend's clients brought.
server_pids() {
	local backend="$1" pid="$2"
	if [ "$backend" = tcp ]; then
		echo "$EXT_PID"
		pgrep -P "$EXT_PID" || true
	else
		local client
		for client in $(pgrep -P "$pid" || true); do
			pgrep -P "$client" || true
		done
	fi
}

# One server of one client: the first connection's for tcp, else the
# first client's own.
one_server_pid() {   # one_server_pid BACKEND PID
	if [ "$1" = tcp ]; then
		pgrep -P "$EXT_PID" | head -n 1
	else
		server_pids "$1" "$2" | head -n 1
	fi
}

# Sends SIGNAL to the run's server processes. A per-connection server may
# have ended between listing and signalling: not an error.
signal_servers() {   # signal_servers SIGNAL BACKEND PID
	local server
	for server in $(server_pids "$2" "$3"); do
		kill "-$1" "$server" 2>/dev/null || true
	done
}

record() {   # record BACKEND MODEL FAULT RC SECONDS MESSAGE
	ROWS+=("| $1 | $2 | $3 | $4 | $5 | ${6//|/\\|} |")
}

# One run with one fault; checks the outcome and records a row.
run_fault() {
	local backend="$1" model="$2" fault="$3"
	local out="$TL_TMP/$backend-$model-$fault" args=() server=() rc=0 start
	args=(-b "$backend" 4 -t "$LIMIT" --warmup 0 --timeout "$TIMEOUT" -c "$SRCDIR/loadfiles/tiny.txt")
	[ "$model" = threads ] && args+=(--threads)
	[ "$backend" = tcp ] && server=(127.0.0.1 --port "$PORT")
	local json="$out.json"
	start=$SECONDS
	case "$fault" in
	stdout-full) "$TBENCH" "${args[@]}" "${server[@]}" -t 2 --json "$json" >/dev/full 2>"$out.err" || rc=$? ;;
	stdout-closed) "$TBENCH" "${args[@]}" "${server[@]}" -t 2 --json "$json" >&- 2>"$out.err" || rc=$? ;;
	json-full)
		if ! unshare -m true 2>/dev/null; then
			record "$backend" "$model" "$fault" - - "skipped: no mount namespace (needs root)"
			echo "# $backend $model $fault: skipped, no mount namespace"
			return
		fi
		mkdir -p "$TL_TMP/full"
		# The tmpfs goes with the namespace: what is left on it is listed from inside.
		unshare -m bash -c 'mount -t tmpfs -o size=16k tbfull "$1" && head -c 15872 /dev/zero >"$1/fill" || exit 99
			rc=0; "${@:3}" || rc=$?; ls -A "$1" >"$2"; exit "$rc"' _ "$TL_TMP/full" "$out.left" \
			"$TBENCH" "${args[@]}" "${server[@]}" -t 2 --json "$TL_TMP/full/run.json" >"$out.out" 2>"$out.err" || rc=$?
		json=
		;;
	*)
		"$TBENCH" "${args[@]}" "${server[@]}" --json "$json" >"$out.out" 2>"$out.err" &
		local pid=$!
		tl_wait_for " execute " "$out.out" || true
		case "$fault" in
		sigint) kill -INT "$pid" 2>/dev/null || echo "# $backend $model: tbench ended before SIGINT" ;;
		sigterm) kill -TERM "$pid" 2>/dev/null || echo "# $backend $model: tbench ended before SIGTERM" ;;
		server-killed) signal_servers KILL "$backend" "$pid" ;;
		server-stopped) signal_servers STOP "$backend" "$pid" ;;
		# the others go on: this one is stuck, not the machine slow
		server-one-stopped) kill -STOP "$(one_server_pid "$backend" "$pid")" ;;
		esac
		wait "$pid" || rc=$?
		if [[ "$fault" == server-*stopped ]]; then signal_servers CONT "$backend" "$pid"; fi
		;;
	esac
	local took=$((SECONDS - start)) msg
	msg="$(grep -m1 -E '^tbench: (run failed|interrupted|writing|standard output|--json)' "$out.err" || head -1 "$out.err")"
	record "$backend" "$model" "$fault" "$rc" "$took" "$msg"
	local what="$backend $model $fault"
	check "$what: exit 1 (got $rc)" [ "$rc" -eq 1 ]
	check "$what: ended within $BOUND s, not the $LIMIT s limit ($took s)" [ "$took" -lt "$BOUND" ]
	check "$what: says why" [ -n "$msg" ]
	[ "$rc" -eq 1 ] || sed -n '1,5s/^/    /p' "$out.err"
	if [ -n "$json" ]; then
		check "$what: a valid JSON file, status not ok" jq -e '.result.status != "ok"' "$json"
	else
		check "$what: no JSON left, whole or half" [ "$(cat "$out.left" 2>/dev/null)" = fill ]
		check "$what: one message, naming the file and the errno text" \
			grep -q '^tbench: run failed: --json .*/full/run.json: No space left on device' "$out.err"
		check "$what: no Throughput line" bash -c '! grep -q "^Throughput" "$1"' _ "$out.out"
	fi
	[[ "$fault" == server-* ]] &&
		check "$what: the message names the server or the timeout" \
			grep -Eq 'server|peer|--timeout|closed|reset|pipe' "$out.err"
	check "$what: no process of the run left" no_process_left
}

# No process whose command line names this test's directory (every run's
# --json does): the runs' clients and servers are all gone. A few seconds'
# grace: an orphaned server (its client killed) ends by its parent-death
# signal, and under load its exit can lag the run's.
no_process_left() {
	local _
	for _ in $(seq 100); do
		pgrep -f -- "$TL_TMP/" >/dev/null || return 0
		sleep 0.1
	done
	return 1
}

# An external tbench_srv that starts a moment after tbench (no SERVER,
# --port P: "tbench_srv --port P & tbench --port P"), SIGKILLed with its
# connections' processes a second into the execute phase: every try must
# fail. tbench took port P for a server of its own when the tbench_srv did
# not listen yet at its one look, the tbench_srv then failed to start, and
# the run went on to exit 0 with a Throughput line (LKP took it for a
# result). Each delay a few times: that race was once in five at none.
late_server_killed() {
	local delay try port pid srv rc out pids
	for delay in 0 0 0.05 0.1 0.2 0.5; do
		for try in 1 2; do
			out="$TL_TMP/late-$delay-$try"
			port="$(tl_free_port)" || { not_ok "no free port found"; return 0; }
			"$TBENCH" -b tcp 4 -t 20 --warmup 0 --timeout "$TIMEOUT" -c "$SRCDIR/loadfiles/tiny.txt" \
				--port "$port" >"$out" 2>"$out.err" &
			pid=$!
			sleep "$delay"
			"$SRV" -l 127.0.0.1 --port "$port" >"$out.srv" 2>&1 &
			srv=$!
			tl_wait_for " execute " "$out" || true
			sleep 1
			pids="$srv $(pgrep -P "$srv" | tr '\n' ' ' || true)"
			# shellcheck disable=SC2086  # one PID a word
			kill -9 $pids 2>/dev/null || true
			rc=0
			wait "$pid" || rc=$?
			{ wait "$srv" || true; } 2>/dev/null
			check "server started $delay s after tbench, killed (try $try): exit 1 (got $rc)" [ "$rc" -eq 1 ]
			check "server started $delay s after tbench, killed (try $try): no Throughput line" \
				bash -c '! grep -q "^Throughput" "$1"' _ "$out"
			[ "$rc" -eq 1 ] || sed -n '1,3s/^/    /p' "$out.err" "$out.srv"
		done
	done
}

applies() {   # applies BACKEND MODEL FAULT: a fault needs a server process to hit
	case "$3" in
	server-*) [ "$1" != nop ] && { [ "$1" = tcp ] || [ "$2" = processes ]; } ;;
	*) true ;;
	esac
}

command -v jq >/dev/null || { echo "SKIP: jq not installed"; exit 77; }
# The external tbench_srv of the tcp runs, listening before we go on
# (a minute at most, on a loaded machine), on a port the kernel picks (a
# fixed one can be a client's in TIME_WAIT): PORT.
start_server() {
	# emptied here, not by the server's redirection: that one comes after the
	# fork, and the line read next could be the last server's
	: >"$TL_TMP/srv.out"
	"$SRV" -l 127.0.0.1 --port 0 >>"$TL_TMP/srv.out" 2>&1 &
	EXT_PID=$!
	PORT="$(tl_server_port "$TL_TMP/srv.out")" || true
}

start_server
for backend in "${BACKENDS[@]}"; do
	# A backend this build or kernel lacks (uring without liburing, mptcp
	# disabled: exit 2, naming what is missing) is a row that says so.
	rc=0
	"$TBENCH" -b "$backend" 1 -t 1 --warmup 0 -c "$SRCDIR/loadfiles/tiny.txt" >/dev/null 2>"$TL_TMP/probe.err" || rc=$?
	if [ "$rc" -eq 2 ]; then
		record "$backend" - - - - "skipped: $(head -n 1 "$TL_TMP/probe.err")"
		echo "# $backend: skipped, it does not run here: $(head -n 1 "$TL_TMP/probe.err")"
		continue
	fi
	for model in processes threads; do
		for fault in server-killed server-stopped server-one-stopped sigint sigterm json-full stdout-full stdout-closed; do
			if applies "$backend" "$model" "$fault"; then
				run_fault "$backend" "$model" "$fault"
			else
				record "$backend" "$model" "$fault" - - "n/a: no server process of its own to hit"
			fi
			# A fresh external server after every fault it took part in.
			if [ "$backend" = tcp ] && { [[ "$fault" == server-* ]] || ! kill -0 "$EXT_PID" 2>/dev/null; }; then
				kill -9 "$EXT_PID" 2>/dev/null || true
				wait "$EXT_PID" 2>/dev/null || true
				start_server
			fi
		done
	done
done
late_server_killed
if [ -n "$TABLE" ]; then
	{
		echo "| backend | model | fault | exit | seconds | first message |"
		echo "|---|---|---|---|---|---|"
		printf '%s\n' "${ROWS[@]}"
	} >"$TABLE"
fi
tl_done
