#!/bin/bash
# shellcheck disable=SC2016  # jq programs are single-quoted on purpose
# mptcp and tbench_srv --mptcp, in a private network namespace (unshare -n):
# MPTCP really used against tbench_srv --mptcp and against its own server;
# a fallback to TCP, counted and noted, against our plain tbench_srv and
# dbench 4.0's; dbench's tbench and our tcp served by tbench_srv --mptcp; an
# extra subflow counted once an endpoint asks for one; and with
# net.mptcp.enabled = 0, exit 2 naming it, from tbench and tbench_srv.
set -euo pipefail
# shellcheck source=tests/testlib.sh
. "${top_srcdir:-.}/tests/testlib.sh"
BUILD="$(cd "${top_builddir:-.}" && pwd)"
SRV="$BUILD/tbench_srv"
TINY="$SRCDIR/loadfiles/tiny.txt"
THEIR_TBENCH=/usr/bin/tbench
THEIR_SRV=/usr/bin/tbench_srv
CLIENT_TXT=/usr/share/dbench/client.txt
srv=""

skip() {
	echo "SKIP: $*"
	exit 77
}

jq_ok() {
	check "$1" jq -e "$2" "$3"
}

# shellcheck disable=SC2317  # called by the EXIT trap
stop_server() {
	if [ -n "$srv" ]; then
		kill "$srv" 2>/dev/null || true
		wait "$srv" 2>/dev/null || true
		srv=""
	fi
}

# start_server WHAT COMMAND...: until port 7003 of the namespace answers.
start_server() {
	local what="$1" i
	shift
	"$@" >"$TL_TMP/srv.log" 2>&1 &
	srv=$!
	for ((i = 0; i < 600; i++)); do
		if (exec 3<>/dev/tcp/127.0.0.1/7003) 2>/dev/null; then
			ok "$what listens on 7003"
			return 0
		fi
		kill -0 "$srv" 2>/dev/null || break
		sleep 0.1
	done
	not_ok "$what did not listen: $(head -3 "$TL_TMP/srv.log")"
	return 1
}

# mptcp_run WHAT WANT CLIENTS [OPTIONS...]: tbench -b mptcp to 127.0.0.1;
# WANT: mptcp (every connection MPTCP) or fallback (every one plain TCP).
mptcp_run() {
	local what="$1" want="$2" n="$3"
	shift 3
	expect_exit 0 "$what" "$TBENCH" -b mptcp "$@" "$n" --run-once -q -c "$TINY" \
		--json "$TL_TMP/m.json" 127.0.0.1
	if [ "$want" = mptcp ]; then
		jq_ok "$what: $n MPTCP connections, no fallback" \
			".backend_counters.mptcp_connections == $n and .backend_counters.tcp_fallbacks == 0" \
			"$TL_TMP/m.json"
	else
		jq_ok "$what: $n fallbacks to TCP" \
			".backend_counters.tcp_fallbacks == $n and .backend_counters.mptcp_connections == 0" \
			"$TL_TMP/m.json"
		check "$what: noted on stderr" grep -q 'answered as plain TCP' "$TL_TMP/err"
	fi
}

against_mptcp_server() {
	start_server "tbench_srv --mptcp" "$SRV" --mptcp || return 0
	check "its line says MPTCP" grep -q 'listening on .*MPTCP; a process per connection' "$TL_TMP/srv.log"
	mptcp_run "mptcp (processes) to tbench_srv --mptcp" mptcp 3
	mptcp_run "mptcp --threads to tbench_srv --mptcp" mptcp 2 --threads
	expect_exit 0 "our tcp to tbench_srv --mptcp" "$TBENCH" -b tcp 2 --run-once -q -c "$TINY" 127.0.0.1
	if [ -x "$THEIR_TBENCH" ] && [ -r "$CLIENT_TXT" ]; then
		expect_exit 0 "dbench 4.0's tbench to tbench_srv --mptcp" "$THEIR_TBENCH" -t 2 -c "$CLIENT_TXT" 2 127.0.0.1
		check "  with a Throughput line" grep -q '^Throughput [0-9.]* MB/sec' "$TL_TMP/out"
	else
		echo "# skipped: dbench 4.0's tbench against tbench_srv --mptcp ($THEIR_TBENCH not installed)"
	fi
	stop_server
}

against_tcp_servers() {
	start_server "our tbench_srv (TCP)" "$SRV" --threads || return 0
	mptcp_run "mptcp to our plain tbench_srv" fallback 2
	stop_server
	if [ -x "$THEIR_SRV" ]; then
		start_server "dbench 4.0's tbench_srv" "$THEIR_SRV" || return 0
		mptcp_run "mptcp to dbench 4.0's tbench_srv" fallback 2
		mptcp_run "mptcp --threads to dbench 4.0's tbench_srv" fallback 2 --threads
		stop_server
	else
		echo "# skipped: mptcp against dbench 4.0's tbench_srv ($THEIR_SRV not installed)"
	fi
}

own_server() {
	local model
	for model in --processes --threads; do
		expect_exit 0 "mptcp $model, its own server" "$TBENCH" -b mptcp "$model" 3 --run-once -q \
			-c "$TINY" --json "$TL_TMP/own.json"
		jq_ok "own server $model: 3 MPTCP connections" \
			'.backend_counters.mptcp_connections == 3 and .backend_counters.tcp_fallbacks == 0' \
			"$TL_TMP/own.json"
	done
}

# An endpoint on 127.0.0.2 that opens a subflow: connections get a second
# one, soon after they are made (asynchronously, so a timed run).
extra_subflow() {
	if ! ip mptcp limits set subflow 2 add_addr_accepted 2 2>/dev/null ||
		! ip mptcp endpoint add 127.0.0.2 dev lo subflow 2>/dev/null; then
		echo "# skipped: ip mptcp cannot add an endpoint here"
		return 0
	fi
	expect_exit 0 "mptcp with a subflow endpoint" "$TBENCH" -b mptcp 2 -t 2 --warmup 1 -q \
		-c "$TINY" --json "$TL_TMP/sub.json"
	jq_ok "the extra subflows are counted" \
		'.backend_counters.subflows > .backend_counters.mptcp_connections' "$TL_TMP/sub.json"
	ip mptcp endpoint flush
}

mptcp_off() {
	sysctl -qw net.mptcp.enabled=0
	expect_exit 2 "net.mptcp.enabled=0: tbench -b mptcp refuses" "$TBENCH" -b mptcp 1 --run-once -q -c "$TINY"
	check "and names net.mptcp.enabled" grep -q 'mptcp: MPTCP is turned off.*net.mptcp.enabled' "$TL_TMP/err"
	expect_exit 2 "net.mptcp.enabled=0: tbench_srv --mptcp refuses" "$SRV" --mptcp --port 0
	check "and names net.mptcp.enabled" grep -q 'net.mptcp.enabled' "$TL_TMP/err"
	sysctl -qw net.mptcp.enabled=1
}

# --- inside the private network namespace -----------------------------------
if [ "${1:-}" = "--in-netns" ]; then
	trap 'stop_server; rm -rf "$TL_TMP"' EXIT
	ip link set lo up
	[ "$(sysctl -n net.mptcp.enabled)" = 1 ] || sysctl -qw net.mptcp.enabled=1
	against_mptcp_server
	against_tcp_servers
	own_server
	extra_subflow
	mptcp_off
	expect_exit 2 "tbench_srv --mptcp --unix refused" "$SRV" --mptcp --unix "$TL_TMP/s"
	tl_done
	exit
fi

# --- outside: what is needed, then the namespace -----------------------------
if [ ! -x "$TBENCH" ] || [ ! -x "$SRV" ]; then
	skip "build tbench and tbench_srv first"
fi
command -v jq >/dev/null || skip "jq not installed"
command -v ip >/dev/null || skip "ip (iproute2) not found"
[ "$(id -u)" -eq 0 ] || skip "needs root for a private network namespace (unshare -n)"
unshare -n true 2>/dev/null || skip "unshare -n failed: no network namespaces here"
[ -e /proc/sys/net/mptcp/enabled ] || skip "this kernel has no MPTCP (no /proc/sys/net/mptcp)"
unshare -n "$0" --in-netns
