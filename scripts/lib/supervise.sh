# Ctrl-C and SIGTERM for a long-running script (sourced, not run).
#
# bash 5.2 can fail to parse a trap's command when the signal lands while it
# expands a $(...): the trap never runs, the shell exits 2 ("unexpected EOF
# while looking for matching `)'") and an interrupted sweep is recorded as a
# failed one. So the script runs twice: the supervisor, the process the user
# started, does nothing but wait, which is where a trap parses cleanly; the
# worker does the work and traps nothing but EXIT. On a signal the
# supervisor writes the exit status it wants into SUPERVISE_DIR/stop and
# stops the worker's current child (SUPERVISE_DIR/child); the worker looks
# at the file between steps (supervise_check) and leaves through its EXIT
# trap. A worker started in the background has SIGINT ignored, so Ctrl-C at
# the terminal reaches only the supervisor and the programs that catch it.
#
# Use: supervise_main "$@" first thing in the script; it returns in the
# worker and exits in the supervisor.
# shellcheck shell=bash

SUPERVISE_DIR="${TB_SUPERVISE_DIR:-}"     # set in the worker only
SUPERVISE_PID="${TB_SUPERVISE_PID:-$$}"   # the supervisor: names what the run makes
export -n TB_SUPERVISE_DIR TB_SUPERVISE_PID
SUPERVISE_SIGNALLED=0

# In the supervisor: what a signal does.
supervise_on_signal() { # NAME EXIT-STATUS
	trap '' INT TERM     # once is enough: the worker is on its way out
	SUPERVISE_SIGNALLED=1
	local child=""
	echo >&2
	echo "$PROG: $1: stopping" >&2
	echo "$2" >"$SUPERVISE_DIR/stop"
	[ ! -s "$SUPERVISE_DIR/child" ] || read -r child <"$SUPERVISE_DIR/child" || true
	[ -z "$child" ] || kill -TERM "$child" 2>/dev/null || true
}

supervise_main() { # ARGS...
	[ -z "$SUPERVISE_DIR" ] || return 0
	local worker rc
	SUPERVISE_DIR="$(mktemp -d "${TMPDIR:-/tmp}/$PROG.XXXXXX")" || exit 1
	trap 'supervise_on_signal SIGINT 130' INT
	trap 'supervise_on_signal SIGTERM 143' TERM
	# The worker keeps stdin (a background job would get /dev/null), closed or not.
	{ : <&0; } 2>/dev/null || exec </dev/null
	TB_SUPERVISE_DIR="$SUPERVISE_DIR" TB_SUPERVISE_PID=$$ "$BASH" "${BASH_SOURCE[-1]}" "$@" <&0 &
	worker=$!
	# A signal ends a wait early; the worker's own status comes with a wait
	# that no signal interrupted (bash keeps it for another wait).
	while :; do
		SUPERVISE_SIGNALLED=0
		rc=0
		wait "$worker" || rc=$?
		[ "$SUPERVISE_SIGNALLED" -eq 1 ] || break
	done
	rm -rf "$SUPERVISE_DIR"
	exit "$rc"
}

# In the worker: the exit status the supervisor asked for; nothing if it
# did not ask.
supervise_asked() {
	local status
	[ -e "$SUPERVISE_DIR/stop" ] || return 0
	read -r status <"$SUPERVISE_DIR/stop" || true
	echo "${status:-130}"
}

# In the worker: leave (through the EXIT trap) if the supervisor asked, or
# is gone (killed with -9: nobody would stop this worker).
supervise_check() {
	local status
	status="$(supervise_asked)"
	if [ -z "$status" ]; then
		! kill -0 "$SUPERVISE_PID" 2>/dev/null || return 0
		rm -rf "$SUPERVISE_DIR"    # the supervisor's, which cannot any more
		status=130
	fi
	exit "$status"
}

# In the worker: the child a signal should stop now (none: no argument).
# Asked to stop just before it was named, it is stopped here.
supervise_child() { # [PID]
	echo "${1:-}" >"$SUPERVISE_DIR/child"
	[ -z "${1:-}" ] || [ ! -e "$SUPERVISE_DIR/stop" ] || kill -TERM "$1" 2>/dev/null || true
}
