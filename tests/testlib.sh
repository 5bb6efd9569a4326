#!/bin/bash
# shellcheck disable=SC2034  # TBENCH and SRCDIR are for the tests that source this
# Shared helpers for the shell tests: sourced, not run.
# Each check prints "ok - what" or "not ok - what"; tl_done exits 1 if any failed.

TL_FAILED=0
TL_COUNT=0
TBENCH="${top_builddir:-.}/tbench"
SRCDIR="${top_srcdir:-.}"

ok() {
	TL_COUNT=$((TL_COUNT + 1))
	echo "ok - $*"
}

not_ok() {
	TL_COUNT=$((TL_COUNT + 1))
	TL_FAILED=$((TL_FAILED + 1))
	echo "not ok - $*"
}

# check DESCRIPTION COMMAND...: passes when the command succeeds.
check() {
	local what="$1"
	shift
	if "$@" >/dev/null; then ok "$what"; else not_ok "$what"; fi
}

# expect_exit CODE DESCRIPTION COMMAND...: passes when the command exits with CODE.
expect_exit() {
	local want="$1" what="$2" got=0
	shift 2
	"$@" >"$TL_TMP/out" 2>"$TL_TMP/err" || got=$?
	if [ "$got" -eq "$want" ]; then
		ok "$what (exit $got)"
	else
		not_ok "$what: exit $got, want $want"
		sed -n '1,5s/^/    /p' "$TL_TMP/err"   # no pipe into head: SIGPIPE under pipefail would end the test
	fi
}

# tl_wait_for PATTERN FILE: waits until FILE has a line matching PATTERN,
# a minute at most (a loaded machine is slow to start a run); 1 if never.
tl_wait_for() {
	local i
	for ((i = 0; i < 600; i++)); do
		grep -q -- "$1" "$2" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# tl_server_port FILE: the port a tbench_srv started with --port 0 says it
# listens on, once FILE (its output) has the line, a minute at most as
# tl_wait_for; 1, and nothing printed, if never.
tl_server_port() {
	tl_wait_for 'listening on' "$1" || return 1
	local port
	port="$(sed -n 's/.*listening on .*:\([0-9]*\) (.*/\1/p' "$1")"
	[ -n "$port" ] && echo "$port"
}

# tl_wait_port PORT [TENTHS]: waits until something accepts on 127.0.0.1:PORT,
# a minute at most by default (a loaded machine is slow to start a server);
# 1 if never.
tl_wait_port() {
	local i
	for ((i = 0; i < ${2:-600}; i++)); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# tl_free_port: a port of 127.0.0.1 nothing listens on, below the kernel's
# range of local ports: in that range a client of another test (make check
# -j) can take it between the look and the bind.
tl_free_port() {
	local port i low
	read -r low _ </proc/sys/net/ipv4/ip_local_port_range
	for ((i = 0; i < 50; i++)); do
		port=$((10000 + RANDOM % (low > 11000 ? low - 10000 : 1000)))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			echo "$port"
			return 0
		fi
	done
	return 1
}

# tl_stopped_server_run SECS OUT TBENCH-ARGS...: a tcp run of "$TBENCH"
# against a tbench_srv of its own, which is stopped (with the process of
# each connection) for SECS once the execute phase began. tbench's stdout
# goes to OUT, its stderr to OUT.err; prints tbench's exit status.
tl_stopped_server_run() {
	local secs="$1" out="$2" port srv pid rc=0
	shift 2
	# A port the kernel picks: a fixed one can be a client's in TIME_WAIT.
	"${top_builddir:-.}/tbench_srv" -l 127.0.0.1 --port 0 >"$out.srv" 2>&1 &
	srv=$!
	port="$(tl_server_port "$out.srv")" || true
	"$TBENCH" -b tcp "$@" 127.0.0.1 --port "$port" >"$out" 2>"$out.err" &
	pid=$!
	tl_wait_for " execute " "$out" || true
	# shellcheck disable=SC2046  # one PID a word
	kill -STOP "$srv" $(pgrep -P "$srv") 2>/dev/null || true
	sleep "$secs"
	# shellcheck disable=SC2046
	kill -CONT "$srv" $(pgrep -P "$srv") 2>/dev/null || true
	wait "$pid" || rc=$?
	kill "$srv" 2>/dev/null || true
	wait "$srv" 2>/dev/null || true
	echo "$rc"
}

# tl_allowed_cpus: the CPUs this shell may use, one a line ("0-2,5" -> 0 1 2 5).
tl_allowed_cpus() {
	local list part
	list="$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)"
	for part in ${list//,/ }; do
		if [[ "$part" == *-* ]]; then seq "${part%-*}" "${part#*-}"; else echo "$part"; fi
	done
}

tl_done() {
	echo "$TL_COUNT checks, $TL_FAILED failed"
	[ "$TL_FAILED" -eq 0 ]
}

# tl_left_running NAME...: the processes named NAME (tbench, tbench_srv)
# that this test started, one "PID command line" a line: every process
# started below it inherits TL_MARK, so other tests running beside it
# (make check -j) do not count.
tl_left_running() {
	local name pid
	for name in "$@"; do
		for pid in $(pgrep -x "$name" || true); do
			# grep -q reads from a process substitution: under pipefail, tr
			# killed by SIGPIPE would make a leftover look like none
			grep -qx "TL_MARK=$TL_MARK" < <(tr '\0' '\n' 2>/dev/null <"/proc/$pid/environ") &&
				echo "$pid $(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline")"
		done
	done
	return 0
}

# The tests run real sweeps beside each other (make check -j), which
# disturbs them; the summaries they check are of how the scripts work, not
# of the noise, so disturbed runs count (tests/noise.sh unsets this).
export TBENCH_KEEP_DISTURBED=1
# A sweep's yardstick (40 s of runs before its plan) is tested on its own
# (tests/yardstick.sh unsets this); the other tests' sweeps go without it,
# as with --no-yardstick, so that they stay short.
export TBENCH_NO_YARDSTICK=1

TL_MARK="$$.$RANDOM"
export TL_MARK
TL_TMP="$(mktemp -d)"
trap 'rm -rf "$TL_TMP"' EXIT
