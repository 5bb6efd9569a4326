#!/bin/bash
# Interop with dbench 4.0 (Debian's package `dbench`): our `tbench -b tcp`
# against its tbench_srv, and its tbench against our tbench_srv. Each must
# finish a short run with a Throughput line and exit 0.
#
# dbench's tools use the fixed port 7003, so each direction runs in a
# private network namespace of its own (unshare -n, loopback brought up):
# parallel tests and the host's own servers never collide with it.
set -euo pipefail

BUILD="$(cd "${top_builddir:-.}" && pwd)"
THEIR_TBENCH=/usr/bin/tbench
THEIR_SRV=/usr/bin/tbench_srv
CLIENT_TXT=/usr/share/dbench/client.txt
TMP=""
PGIDS=()      # process groups we started (setsid): servers, clients, namespaces

skip() {
	echo "SKIP: $*"
	exit 77
}

# shellcheck disable=SC2317  # called by the EXIT trap
cleanup() {
	local g
	for g in "${PGIDS[@]}"; do
		kill -TERM -- "-$g" 2>/dev/null || true
	done
	for g in "${PGIDS[@]}"; do
		wait "$g" 2>/dev/null || true
	done
	if [ -n "$TMP" ]; then
		rm -rf "$TMP"
	fi
}
trap cleanup EXIT
trap 'exit 143' TERM INT   # so that the EXIT trap runs

# bg COMMAND...: start it as a process group of its own; LAST is its pid.
bg() {
	setsid "$@" &
	LAST=$!
	PGIDS+=("$LAST")
}

# Ready when port 7003 accepts a connection (no fixed sleep); 1 if PID died.
wait_port() {
	local tries=1200
	while [ "$tries" -gt 0 ]; do
		tries=$((tries - 1))
		if (exec 3<>/dev/tcp/127.0.0.1/7003) 2>/dev/null; then
			return 0
		fi
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# run WHAT COMMAND...: exit 0 and a Throughput line.
run() {
	local what="$1" rc=0
	shift
	bg "$@" >"$TMP/out" 2>"$TMP/err"
	wait "$LAST" || rc=$?
	if [ "$rc" -eq 0 ] && grep -q '^Throughput [0-9.e+]* MB/sec' "$TMP/out"; then
		echo "ok - $what: $(grep '^Throughput' "$TMP/out")"
	else
		echo "not ok - $what: exit $rc"
		tail -n 5 "$TMP/out" "$TMP/err" | sed 's/^/    /'
		return 1
	fi
}

ours_vs_theirs() {
	local status=0 srv
	bg "$THEIR_SRV" >"$TMP/srv.log" 2>&1
	srv=$LAST
	wait_port "$srv" || { echo "not ok - dbench's tbench_srv did not listen"; return 1; }
	run "our tbench -b tcp (processes, bodies discarded) vs dbench 4.0 tbench_srv" \
		"$BUILD/tbench" -b tcp -t 3 -c "$CLIENT_TXT" 4 127.0.0.1 || status=1
	run "our tbench -b tcp --threads vs dbench 4.0 tbench_srv" \
		"$BUILD/tbench" -b tcp -t 2 --threads -c "$CLIENT_TXT" 2 127.0.0.1 || status=1
	run "our tbench -b tcp --copy-replies vs dbench 4.0 tbench_srv" \
		"$BUILD/tbench" -b tcp -t 2 --copy-replies -c "$CLIENT_TXT" 2 127.0.0.1 || status=1
	return "$status"
}

theirs_vs_ours() {
	local status=0 srv mode rc
	# No option: every address, a process per connection, as mmtests and LKP start it.
	for mode in "" --threads; do
		bg "$BUILD/tbench_srv" ${mode:+"$mode"} >"$TMP/srv.log" 2>&1
		srv=$LAST
		wait_port "$srv" || { echo "not ok - our tbench_srv ${mode:-(no option)} did not listen"; return 1; }
		# dbench's tbench needs its loadfile, nothing else.
		run "dbench 4.0 tbench vs our tbench_srv ${mode:-(no option)}" \
			"$THEIR_TBENCH" -t 3 -c "$CLIENT_TXT" 4 127.0.0.1 || status=1
		rc=0
		kill -TERM "$srv"
		wait "$srv" || rc=$?
		if [ "$rc" -eq 0 ]; then
			echo "ok - our tbench_srv ${mode:-(no option)} exits 0 on SIGTERM"
		else
			echo "not ok - our tbench_srv ${mode:-(no option)}: exit $rc on SIGTERM"
			status=1
		fi
		if grep -qv '^tbench_srv: listening' "$TMP/srv.log"; then
			sed 's/^/#   server: /' "$TMP/srv.log"
		fi
	done
	return "$status"
}

# --- inside a private network namespace: one direction ----------------------
if [ "${1:-}" = "--in-netns" ]; then
	TMP="$(mktemp -d)"
	ip link set lo up
	case "$2" in
	ours-vs-theirs) ours_vs_theirs ;;
	theirs-vs-ours) theirs_vs_ours ;;
	*) echo "unknown direction $2"; exit 2 ;;
	esac
	exit 0
fi

# --- outside: check what is needed, then one namespace per direction --------
for f in "$THEIR_TBENCH" "$THEIR_SRV" "$CLIENT_TXT"; do
	[ -e "$f" ] || skip "$f not found: install Debian's dbench 4.0 (apt-get install dbench)"
done
if [ ! -x "$BUILD/tbench" ] || [ ! -x "$BUILD/tbench_srv" ]; then
	skip "build tbench and tbench_srv first"
fi
[ "$(id -u)" -eq 0 ] || skip "needs root for a private network namespace (unshare -n)"
unshare -n true 2>/dev/null || skip "unshare -n failed: no network namespaces here"
command -v ip >/dev/null || skip "ip (iproute2) not found"

failed=0
for direction in ours-vs-theirs theirs-vs-ours; do
	bg unshare -n "$0" --in-netns "$direction"
	wait "$LAST" || failed=1
done
exit "$failed"
