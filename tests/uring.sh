#!/bin/bash
# The uring backend from the command line: its settings (--uring) in
# every combination that matters, threads and processes, each a whole pass
# of tiny.txt; bad settings and --port without SERVER refused with exit 2;
# and, in a private network namespace (port 7003 is fixed), a run against
# dbench 4.0's tbench_srv and one against ours, as tests/interop.sh does
# for tcp; --reconnect 1 alone and against both servers; tbench_srv
# --uring against our clients and dbench's, and idle under a full fd
# table. Also shm's --spin. The uring parts are skipped, saying so, when built without
# liburing.
set -euo pipefail
# shellcheck source=tests/testlib.sh
. "${top_srcdir:-.}/tests/testlib.sh"

BUILD="$(cd "${top_builddir:-.}" && pwd)"
TINY="$SRCDIR/loadfiles/tiny.txt"
THEIR_SRV=/usr/bin/tbench_srv
THEIR_TBENCH=/usr/bin/tbench
ONE_CONNECT_PER_EXCHANGE='([.operations[] | select(.name == "Connect") | .count] | add) ==
	([.operations[] | select(.name != "Connect" and .name != "Deltree") | .count] | add)'
CLIENT_TXT=/usr/share/dbench/client.txt

# once SETTINGS MODE: one pass of tiny.txt, a Throughput line, exit 0.
once() {
	local rc=0
	timeout 300 "$BUILD/tbench" -b uring ${1:+--uring "$1"} "$2" --run-once -q \
		-c "$TINY" 2 >"$TL_TMP/out" 2>"$TL_TMP/err" || rc=$?
	if [ "$rc" -eq 0 ] && grep -q '^Throughput' "$TL_TMP/out"; then
		ok "uring ${1:-(no settings)} $2: $(grep '^Throughput' "$TL_TMP/out")"
	else
		not_ok "uring ${1:-(no settings)} $2: exit $rc"
		tail -n 5 "$TL_TMP/err" | sed 's/^/    /'
	fi
}

# --- inside a private network namespace: the servers on port 7003 ----------
if [ "${1:-}" = "--in-netns" ]; then
	ip link set lo up
	srv_pid=""
	# shellcheck disable=SC2317  # called by the trap
	stop_srv() {
		if [ -n "$srv_pid" ]; then
			kill "$srv_pid" 2>/dev/null || true
			wait "$srv_pid" 2>/dev/null || true
		fi
		srv_pid=""
	}
	trap 'stop_srv; rm -rf "$TL_TMP"' EXIT
	# against WHAT COMMAND...: a run against the server there, exit 0 and a Throughput line.
	against() {
		local what="$1" rc=0
		shift
		timeout 300 "$@" >"$TL_TMP/out" 2>"$TL_TMP/err" || rc=$?
		if [ "$rc" -eq 0 ] && grep -q '^Throughput' "$TL_TMP/out"; then
			ok "$what: $(grep '^Throughput' "$TL_TMP/out")"
		else
			not_ok "$what: exit $rc"
			tail -n 5 "$TL_TMP/err" | sed 's/^/    /'
		fi
	}
	wait_port() {
		local i
		for ((i = 0; i < 1200; i++)); do
			(exec 3<>/dev/tcp/127.0.0.1/7003) 2>/dev/null && return 0
			kill -0 "$srv_pid" 2>/dev/null || return 1
			sleep 0.05
		done
		return 1
	}
	for srv in "$THEIR_SRV" "$BUILD/tbench_srv"; do
		"$srv" >"$TL_TMP/srv.log" 2>&1 &
		srv_pid=$!
		if ! wait_port; then
			not_ok "$srv did not listen on 7003"
			stop_srv
			continue
		fi
		for args in "--processes" "--threads" "--copy-replies" "--threads --copy-replies"; do
			for settings in "" "files,buffers,zc=4096"; do
				# shellcheck disable=SC2086  # args is a list of options
				against "uring $args ${settings:+--uring $settings }vs $srv" \
					"$BUILD/tbench" -b uring $args ${settings:+--uring "$settings"} -t 2 -c "$CLIENT_TXT" 2 127.0.0.1
			done
		done
		rc=0
		timeout 300 "$BUILD/tbench" -b uring --reconnect 1 --run-once -q -c "$TINY" 2 127.0.0.1 \
			--json "$TL_TMP/rc.json" >"$TL_TMP/out" 2>"$TL_TMP/err" || rc=$?
		if [ "$rc" -eq 0 ] && jq -e "$ONE_CONNECT_PER_EXCHANGE" "$TL_TMP/rc.json" >/dev/null; then
			ok "uring --reconnect 1 vs $srv: one Connect per exchange"
		else
			not_ok "uring --reconnect 1 vs $srv: exit $rc"
			tail -n 5 "$TL_TMP/err" | sed 's/^/    /'
		fi
		stop_srv
	done
	# tbench_srv --uring: our tcp and uring backends and dbench's tbench against it.
	"$BUILD/tbench_srv" --uring --loops 2 >"$TL_TMP/srv.log" 2>&1 &
	srv_pid=$!
	if ! wait_port; then
		not_ok "tbench_srv --uring did not listen on 7003"
	else
		for client in "$BUILD/tbench -b tcp" "$BUILD/tbench -b tcp --copy-replies" \
			"$BUILD/tbench -b uring" "$BUILD/tbench -b uring --copy-replies --threads" \
			"$THEIR_TBENCH"; do
			# shellcheck disable=SC2086  # client is a command and its options
			against "$client vs tbench_srv --uring" $client -t 2 -c "$CLIENT_TXT" 3 127.0.0.1
		done
	fi
	stop_srv
	check "tbench_srv --uring logged no error" bash -c "! grep -v '^tbench_srv: listening' '$TL_TMP/srv.log'"
	# A full fd table: each accept fails (EMFILE) with the connection still
	# queued, so accepting again at once would spin; the loop pauses instead.
	(ulimit -n 12 && exec "$BUILD/tbench_srv" --uring --loops 1) >"$TL_TMP/srv.log" 2>&1 &
	srv_pid=$!
	if ! wait_port; then
		not_ok "tbench_srv --uring under ulimit -n 12 did not listen on 7003"
	else
		# Held open, never read. A refused connection is a failure that
		# says why (the server's log), not the end of the script.
		refused=0
		for ((i = 0; i < 20; i++)); do
			# shellcheck disable=SC2034
			exec {held}<>/dev/tcp/127.0.0.1/7003 || refused=$((refused + 1))
		done 2>/dev/null
		if ! check "EMFILE: 20 connections queued, none refused ($refused)" test "$refused" -eq 0; then
			kill -0 "$srv_pid" 2>/dev/null || echo "# tbench_srv exited"
			sed 's/^/#   /' "$TL_TMP/srv.log"
		fi
		sleep 0.3
		ticks() { awk '{ print $14 + $15 }' "/proc/$srv_pid/stat"; }   # utime + stime
		t0="$(ticks)" && sleep 1 && t1="$(ticks)"
		# Spinning takes most of a CPU second; the pauses take next to none.
		check "EMFILE: tbench_srv --uring idles ($((t1 - t0)) of $(getconf CLK_TCK) ticks in 1 s)" \
			test $((t1 - t0)) -lt $(($(getconf CLK_TCK) / 5))
		check "EMFILE: said once" test "$(grep -c 'Too many open files.*said once' "$TL_TMP/srv.log")" -eq 1
	fi
	stop_srv
	tl_done
	exit
fi

# shm's --spin, parsed with the options as --uring is: ranges, the JSON.
expect_exit 0 "shm --spin 20" "$BUILD/tbench" -b shm --spin 20 2 --run-once -q -c "$TINY" \
	--json "$TL_TMP/spin.json"
check "--spin recorded in --json" jq -e '.settings.spin_us == 20' "$TL_TMP/spin.json"
for bad in lots -1 1000001; do
	expect_exit 2 "--spin $bad refused" "$BUILD/tbench" -b shm --spin "$bad" -q 1
	check "the error names --spin" grep -q -- "--spin takes whole microseconds" "$TL_TMP/err"
done

if ! "$BUILD/tbench" -b help 2>&1 | grep -q '^ *uring '; then
	echo "SKIP: the rest: built without liburing (apt-get install liburing-dev, then configure again)"
	tl_done
	exit
fi

for mode in --threads --processes; do
	for settings in "" files buffers zc=4096 "files,buffers,zc=1000"; do
		once "$settings" "$mode"
	done
done
# SQPOLL: a kernel thread polls; on a small machine a slow pass, so one client.
once sqpoll --threads
# Multishot receives into provided buffers (5.19 and 6.0): refused with exit
# 2 on an older kernel, which is a skip saying why, never a pass.
if "$BUILD/tbench" -b uring --uring multishot --run-once -q -c "$TINY" 1 >/dev/null 2>"$TL_TMP/ms.err"; then
	for mode in --threads --processes; do
		once multishot "$mode"
		once "multishot,files,zc=4096" "$mode"
	done
	# The event-loop server: loops of one server of tbench's own.
	for shape in loop loop=3; do
		for mode in --threads --processes; do
			expect_exit 0 "uring --uring-server $shape $mode" "$BUILD/tbench" -b uring \
				--uring-server "$shape" "$mode" 3 --run-once -q -c "$TINY" --json "$TL_TMP/loop.json"
			check "uring --uring-server $shape: Throughput" grep -q '^Throughput' "$TL_TMP/out"
			check "uring --uring-server $shape: --json says the shape" jq -e \
				'.settings.uring.server_shape == "loop" and .settings.uring.loops > 0' "$TL_TMP/loop.json"
		done
	done
	# Every loop serves its share: connection k goes to loop (k - 1) mod N,
	# whichever loop accepted it (the one to wake first drains the burst).
	# Each server thread's voluntary switches, read during the run: a loop
	# serving a client switches thousands of times, an idle one once or twice.
	"$BUILD/tbench" -b uring --uring-server loop=2 --processes 2 -t 3 --warmup 0 -q -c "$TINY" \
		>/dev/null 2>&1 &
	run=$!
	switches=""
	while kill -0 "$run" 2>/dev/null; do   # the last reading before the run ends
		for child in $(pgrep -P "$run"); do
			tasks=(/proc/"$child"/task/*)
			[ "${#tasks[@]}" -eq 3 ] || continue
			now=""
			for task in "${tasks[@]}"; do
				[ "${task##*/}" != "$child" ] || continue   # the loops are its other threads
				# A thread gone as the run ends: no figure, not a failed test.
				now+=" $(awk '/^voluntary_ctxt_switches/ { print $2 }' "$task/status" 2>/dev/null || true)"
			done
			read -r -a got <<<"$now"
			[ "${#got[@]}" -ne 2 ] || switches=$now   # a whole reading only
		done
		sleep 0.2
	done
	wait "$run" || true
	read -r -a per_loop <<<"$switches"
	if [ "${#per_loop[@]}" -eq 2 ]; then
		check "loop=2, 2 clients: both loops serve (voluntary switches:$switches)" \
			test "${per_loop[0]}" -ge 100 -a "${per_loop[1]}" -ge 100
	else
		not_ok "loop=2, 2 clients: want the server's 2 loop threads, found:$switches"
	fi
	expect_exit 2 "--uring-server loop with SERVER refused" "$BUILD/tbench" -b uring \
		--uring-server loop -q 1 127.0.0.1
	expect_exit 2 "--uring-server bad refused" "$BUILD/tbench" -b uring --uring-server loop=0 -q 1
	check "the error names --uring-server" grep -q -- "--uring-server: 'loop=0'" "$TL_TMP/err"
else
	echo "SKIP: multishot and --uring-server loop: $(head -n 1 "$TL_TMP/ms.err")"
fi
# --reconnect: a new socket, ring and server of its own every operation.
for mode in --threads --processes; do
	expect_exit 0 "uring --reconnect 1 $mode" "$BUILD/tbench" -b uring "$mode" 2 --reconnect 1 \
		--run-once -q -c "$TINY" --json "$TL_TMP/rc.json"
	check "uring $mode: one Connect per exchange" jq -e "$ONE_CONNECT_PER_EXCHANGE" "$TL_TMP/rc.json"
done
for bad in turbo zc=0 files,zc=70001; do
	expect_exit 2 "--uring $bad refused" "$BUILD/tbench" -b uring --uring "$bad" -q 1
	check "the error names --uring and the setting" grep -q -- "--uring: '${bad#files,}' is not a setting" "$TL_TMP/err"
done
expect_exit 0 "--uring files,zc=1000" "$BUILD/tbench" -b uring --uring files,zc=1000 1 --run-once -q \
	-c "$TINY" --json "$TL_TMP/uring.json"
check "--uring recorded in --json" jq -e '.settings.uring | {sqpoll, files, buffers, zc_min} ==
	{sqpoll: false, files: true, buffers: false, zc_min: 1000}' "$TL_TMP/uring.json"
# The ring's flags as the kernel took them, best first; SQPOLL keeps its own.
check "--json says the ring's flags" jq -e '.settings.uring.ring_flags |
	IN("single_issuer,defer_taskrun", "coop_taskrun,taskrun_flag", "none")' "$TL_TMP/uring.json"
check "--json says whether the ring's fd is registered" jq -e '.settings.uring.registered_ring |
	type == "boolean"' "$TL_TMP/uring.json"
if jq -e '.settings.uring.ring_flags != "single_issuer,defer_taskrun"' "$TL_TMP/uring.json" >/dev/null; then
	check "a fallback of the ring's flags is said on stderr" grep -q 'refused IORING_SETUP_SINGLE_ISSUER' "$TL_TMP/err"
fi
expect_exit 0 "--uring sqpoll" "$BUILD/tbench" -b uring --uring sqpoll --threads 1 --run-once -q \
	-c "$TINY" --json "$TL_TMP/sq.json"
check "sqpoll: the ring's flags say sqpoll alone" jq -e '.settings.uring.ring_flags == "sqpoll"' "$TL_TMP/sq.json"
expect_exit 0 "tcp run: uring's keys still written" "$BUILD/tbench" -b tcp 1 --run-once -q -c "$TINY" \
	--json "$TL_TMP/tcp.json"
check "no ring made: ring_flags and registered_ring null" jq -e '.settings.uring |
	.ring_flags == null and .registered_ring == null' "$TL_TMP/tcp.json"
expect_exit 2 "--port without SERVER refused" "$BUILD/tbench" -b uring --port 7003 -q 1

if [ "$(id -u)" -ne 0 ] || ! unshare -n true 2>/dev/null || ! command -v ip >/dev/null; then
	echo "SKIP: against tbench_srv: needs root and network namespaces (unshare -n, ip)"
elif [ ! -x "$THEIR_SRV" ] || [ ! -r "$CLIENT_TXT" ]; then
	echo "SKIP: against tbench_srv: install Debian's dbench 4.0 (apt-get install dbench)"
else
	rc=0
	unshare -n "$0" --in-netns || rc=$?
	if [ "$rc" -eq 0 ]; then ok "against tbench_srv (dbench's and ours)"; else not_ok "against tbench_srv"; fi
fi
tl_done
