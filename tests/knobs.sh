#!/bin/bash
# shellcheck disable=SC2016  # jq programs are single-quoted on purpose
# The sweep's knobs in tbench and tbench_srv, from the outside: --cpus and
# --server-cpus pin the tasks (read from /proc while a run goes, processes
# and threads), tbench_srv --cpus; TCP_CONGESTION set and read back (and a
# name the kernel lacks refused, naming those it has); --family ipv6 with
# tbench's own server, against tbench_srv -l ::1 and in --netns; --mtu in
# --netns read back; --sysctl in --netns set and read back, the host's
# unchanged, a name the kernel lacks or keeps host-wide failing the run;
# --start-at waits for its instant, and a late one fails;
# bad values are bad usage.
set -euo pipefail
# shellcheck source=tests/testlib.sh
. "${top_srcdir:-.}/tests/testlib.sh"
command -v jq >/dev/null || { echo "SKIP: jq not installed"; exit 77; }

SRV="${top_builddir:-.}/tbench_srv"
STATS="${top_builddir:-.}/tbench-stats"
TINY="$SRCDIR/loadfiles/tiny.txt"
TMP="$TL_TMP"
PIDS=()   # every server and run started in the background: killed on exit
trap 'kill -9 "${PIDS[@]}" 2>/dev/null || true; rm -rf "$TMP"' EXIT

skip() { echo "skip - $*"; }

jq_ok() {
	if jq -e "$2" "$3" >/dev/null; then ok "$1"; else not_ok "$1: $(jq -c "$4" "$3")"; fi
}

mapfile -t CPUS < <(tl_allowed_cpus)
CLIENT_CPU="${CPUS[0]}"
SERVER_CPU="${CPUS[1]:-${CPUS[0]}}"

# tasks_of PID: PID's threads, as /proc/PID/task/TID paths.
tasks_of() { ls -d "/proc/$1/task/"* 2>/dev/null || true; }
cpus_of() { sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$1/status" 2>/dev/null || true; }
# children_of PID: its child processes, one a line.
children_of() { cat "/proc/$1/task/"*/children 2>/dev/null | tr -s ' ' '\n' | sed '/^$/d' || true; }

# count_pinned CPU TASK...: how many of the tasks may run on CPU alone.
count_pinned() {
	local cpu="$1" n=0 t
	shift
	for t in "$@"; do
		[ "$(cpus_of "$t")" = "$cpu" ] && n=$((n + 1))
	done
	echo "$n"
}

# start_run NAME ARGS...: tbench in the background, until it executes.
start_run() {
	local name="$1"
	shift
	"$TBENCH" -c "$TINY" --warmup 0 "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
	RUN_PID=$!
	PIDS+=("$RUN_PID")
	tl_wait_for "execute" "$TMP/$name.out"
}

finish_run() {
	local rc=0
	wait "$RUN_PID" || rc=$?
	if [ "$rc" -eq 0 ]; then ok "$1: the run ended with exit 0"; else not_ok "$1: exit $rc"; sed -n '1,5s/^/    /p' "$TMP/$1.err"; fi
}

# --- bad values: exit 2, nothing started ------------------------------------
expect_exit 2 "--cpus not a list" "$TBENCH" --cpus 0-x 1
check "names the flag" grep -q -- "--cpus '0-x'" "$TMP/err"
expect_exit 2 "--cpus past CPU_SETSIZE" "$TBENCH" --cpus 4096 1
expect_exit 2 "--server-cpus empty" "$TBENCH" --server-cpus "" 1
if [ "${#CPUS[@]}" -lt 1024 ]; then
	outside=$(( ${CPUS[-1]} + 1 ))
	expect_exit 2 "--cpus outside the allowed CPUs" "$TBENCH" --cpus "$outside" 1
	check "names the allowed CPUs" grep -q "allowed: " "$TMP/err"
fi
expect_exit 2 "--family ipv5" "$TBENCH" --family ipv5 1
expect_exit 2 "--family with a backend that speaks no IP" "$TBENCH" -b pipe --family ipv4 1
expect_exit 2 "--mtu without --netns" "$TBENCH" --mtu 1500 1
expect_exit 2 "--mtu too small" "$TBENCH" --netns --mtu 10 1
expect_exit 2 "--sysctl without --netns" "$TBENCH" --sysctl net.ipv4.tcp_autocorking=0 1
check "names --sysctl and --netns" grep -q -- "--sysctl needs --netns" "$TMP/err"
expect_exit 2 "--sysctl of a name outside net." "$TBENCH" --netns --sysctl kernel.pid_max=4096 1
check "names --sysctl and the name" grep -q -- "--sysctl kernel.pid_max: only net" "$TMP/err"
expect_exit 2 "--sysctl without a value" "$TBENCH" --netns --sysctl net.ipv4.tcp_autocorking 1
expect_exit 2 "--start-at not a number" "$TBENCH" --start-at soon 1
expect_exit 2 "-T TCP_CONGESTION without a name" "$TBENCH" -T TCP_CONGESTION= 1
expect_exit 2 "--server-cpus with SERVER" "$TBENCH" --server-cpus 0 1 127.0.0.1
expect_exit 2 "--server-cpus with --unix" "$TBENCH" -b unix --unix "$TMP/sock" --server-cpus 0 1
expect_exit 2 "tbench_srv --cpus not a list" "$SRV" --cpus ,
expect_exit 2 "tbench_srv -T TCP_CONGESTION=a/b" "$SRV" -T TCP_CONGESTION=a/b

# --- pinning, read from /proc while the run goes ------------------------------
# Runs of 10 s: /proc is read after the "execute" line, and a test shell the
# machine starves (make check -j, an ASan build) must still find them going.
if [ "$CLIENT_CPU" = "$SERVER_CPU" ]; then
	skip "one CPU allowed here: clients and servers pinned to the same one, told apart by nothing"
fi
# Processes: clients are tbench's children; a pipe server is its client's child.
if start_run pipe -b pipe -t 10 --cpus "$CLIENT_CPU" --server-cpus "$SERVER_CPU" 2; then
	mapfile -t clients < <(children_of "$RUN_PID")
	servers=()
	for c in "${clients[@]}"; do
		for s in $(children_of "$c"); do servers+=("/proc/$s"); done
	done
	n=$(count_pinned "$CLIENT_CPU" "${clients[@]/#//proc/}")
	if [ "$n" -eq 2 ] && [ "${#clients[@]}" -eq 2 ]; then ok "--cpus: both client processes on CPU $CLIENT_CPU"; else not_ok "--cpus: $n of ${#clients[@]} client processes on CPU $CLIENT_CPU"; fi
	n=$(count_pinned "$SERVER_CPU" "${servers[@]}")
	if [ "$n" -eq 2 ]; then ok "--server-cpus: both pipe servers on CPU $SERVER_CPU"; else not_ok "--server-cpus: $n of ${#servers[@]} pipe servers on CPU $SERVER_CPU"; fi
	finish_run pipe
else
	not_ok "pipe run with --cpus never reached the execute phase"
fi
# Threads: every client and server is a thread of tbench.
if start_run threads -b socketpair --threads -t 10 --cpus "$CLIENT_CPU" --server-cpus "$SERVER_CPU" 3; then
	mapfile -t tasks < <(tasks_of "$RUN_PID")
	nc=$(count_pinned "$CLIENT_CPU" "${tasks[@]}")
	ns=$(count_pinned "$SERVER_CPU" "${tasks[@]}")
	if [ "$CLIENT_CPU" = "$SERVER_CPU" ]; then
		if [ "$nc" -ge 6 ]; then ok "--threads: 6 threads on CPU $CLIENT_CPU"; else not_ok "--threads: $nc threads on CPU $CLIENT_CPU, want 6"; fi
	elif [ "$nc" -eq 3 ] && [ "$ns" -eq 3 ]; then
		ok "--threads: 3 client threads on CPU $CLIENT_CPU, 3 server threads on CPU $SERVER_CPU"
	else
		not_ok "--threads: $nc threads on CPU $CLIENT_CPU, $ns on CPU $SERVER_CPU, want 3 and 3"
	fi
	finish_run threads
else
	not_ok "socketpair run with --threads --cpus never reached the execute phase"
fi
# tcp's own server: a listener process, a process per connection under it.
if start_run tcp -b tcp -t 10 --cpus "$CLIENT_CPU" --server-cpus "$SERVER_CPU" 2; then
	conns=()
	for c in $(children_of "$RUN_PID"); do
		for s in $(children_of "$c"); do conns+=("/proc/$s"); done
	done
	n=$(count_pinned "$SERVER_CPU" "${conns[@]}")
	if [ "$n" -eq 2 ]; then ok "--server-cpus: tcp's own connection processes on CPU $SERVER_CPU"; else not_ok "tcp: $n of ${#conns[@]} connection processes on CPU $SERVER_CPU"; fi
	finish_run tcp
else
	not_ok "tcp run with --server-cpus never reached the execute phase"
fi
# unix's own server: as tcp's, a listener and a thread per connection with --threads.
if start_run unix -b unix --threads -t 10 --cpus "$CLIENT_CPU" --server-cpus "$SERVER_CPU" 2; then
	mapfile -t tasks < <(tasks_of "$RUN_PID")
	n=$(count_pinned "$SERVER_CPU" "${tasks[@]}")
	want=2
	[ "$CLIENT_CPU" != "$SERVER_CPU" ] || want=4   # the clients are there too
	if [ "$n" -eq "$want" ]; then ok "unix --threads: its server's 2 connection threads on CPU $SERVER_CPU"; else not_ok "unix --threads: $n threads on CPU $SERVER_CPU, want $want"; fi
	finish_run unix
else
	not_ok "unix run with --server-cpus never reached the execute phase"
fi
# tbench_srv --cpus: its connection processes.
"$SRV" -p 0 --cpus "$SERVER_CPU" >"$TMP/srv.out" 2>"$TMP/srv.err" &
SRV_PID=$!
PIDS+=("$SRV_PID")
if port="$(tl_server_port "$TMP/srv.out")"; then
	if start_run srvcpus -b tcp -t 10 2 127.0.0.1 --port "$port"; then
		mapfile -t conns < <(children_of "$SRV_PID")
		n=$(count_pinned "$SERVER_CPU" "${conns[@]/#//proc/}")
		if [ "$n" -eq 2 ]; then ok "tbench_srv --cpus: both connection processes on CPU $SERVER_CPU"; else not_ok "tbench_srv --cpus: $n of ${#conns[@]} on CPU $SERVER_CPU"; fi
		finish_run srvcpus
	else
		not_ok "run against tbench_srv --cpus never reached the execute phase"
	fi
else
	not_ok "tbench_srv --cpus did not listen: $(head -1 "$TMP/srv.err")"
fi
kill "$SRV_PID" 2>/dev/null || true
wait "$SRV_PID" 2>/dev/null || true

# --- TCP_CONGESTION, and the socket read back ------------------------------------
# Without CAP_NET_ADMIN a socket may take only the allowed ones.
cc_list=available
[ "$(id -u)" -eq 0 ] || cc_list=allowed
available=" $(cat "/proc/sys/net/ipv4/tcp_${cc_list}_congestion_control" 2>/dev/null || true) "
tried=0
for cc in cubic bbr reno; do
	[[ "$available" == *" $cc "* ]] || continue
	tried=$((tried + 1))
	expect_exit 0 "-T TCP_CONGESTION=$cc" "$TBENCH" -b tcp -c "$TINY" --run-once -q 2 \
		-T "TCP_NODELAY,SO_SNDBUF=65536,TCP_CONGESTION=$cc" --json "$TMP/$cc.json"
	jq_ok "socket read back: $cc, nodelay, sndbuf doubled by the kernel" \
		".socket.cc == \"$cc\" and .socket.nodelay == true and .socket.sndbuf == 131072 and .socket.family == \"ipv4\"" \
		"$TMP/$cc.json" '.socket'
done
[ "$tried" -ge 2 ] || skip "only $tried of cubic, bbr, reno $cc_list here:$available"
expect_exit 1 "a congestion control the kernel lacks fails the run" "$TBENCH" -b tcp -c "$TINY" --run-once -q 2 -T TCP_CONGESTION=nosuchcc
check "the error lists the available ones" grep -q "nosuchcc.*available: " "$TMP/err"
expect_exit 1 "tbench_srv refuses it too" "$SRV" -p 0 -T TCP_CONGESTION=nosuchcc
expect_exit 0 "a backend without a socket" "$TBENCH" -b pipe -c "$TINY" --run-once -q 1 --json "$TMP/pipe.json"
jq_ok "socket and family null, CPU lists null" \
	'.socket == null and .settings.family == null and .settings.cpus == null and .settings.start_at == null' \
	"$TMP/pipe.json" '.settings'
expect_exit 0 "unix: the socket read back too" "$TBENCH" -b unix -c "$TINY" --run-once -q 1 -T SO_SNDBUF=65536 --json "$TMP/unix.json"
jq_ok "unix: family unix, no congestion control, sndbuf as set" \
	'.socket.family == "unix" and .socket.cc == null and .socket.nodelay == null and .socket.sndbuf == 131072 and .settings.family == null' \
	"$TMP/unix.json" '.socket'

# --- IPv6 -------------------------------------------------------------------------
if grep -q '^0\{31\}1 ' /proc/net/if_inet6 2>/dev/null; then
	expect_exit 0 "--family ipv6 with tbench's own server" "$TBENCH" -b tcp --family ipv6 -c "$TINY" --run-once -q 2 --json "$TMP/v6.json"
	jq_ok "family ipv6, read back" '.settings.family == "ipv6" and .socket.family == "ipv6"' "$TMP/v6.json" '.socket'
	# read whole, then searched: under pipefail a "| grep -q" that stops early
	# can kill its writer with SIGPIPE and look like no match
	if backends="$("$TBENCH" -b help)" && grep -q '^  uring ' <<<"$backends"; then
		expect_exit 0 "uring --family ipv6, its own servers on ::1" "$TBENCH" -b uring --family ipv6 -c "$TINY" --run-once -q 2 \
			-T TCP_NODELAY,TCP_CONGESTION=reno --json "$TMP/u6.json"
		jq_ok "uring: ipv6 and reno read back" '.socket.family == "ipv6" and .socket.cc == "reno"' "$TMP/u6.json" '.socket'
	else
		skip "no uring backend in this build (no liburing)"
	fi
	"$SRV" -p 0 -l ::1 >"$TMP/srv6.out" 2>"$TMP/srv6.err" &
	SRV_PID=$!
	PIDS+=("$SRV_PID")
	if port="$(tl_server_port "$TMP/srv6.out")"; then
		expect_exit 0 "--family ipv6 against tbench_srv -l ::1" "$TBENCH" -b tcp --family ipv6 -c "$TINY" --run-once -q 2 ::1 --port "$port"
		expect_exit 2 "--family ipv4 for an IPv6 address" "$TBENCH" -b tcp --family ipv4 -c "$TINY" --run-once -q 2 ::1 --port "$port"
	else
		not_ok "tbench_srv -l ::1 did not listen: $(head -1 "$TMP/srv6.err")"
	fi
	kill "$SRV_PID" 2>/dev/null || true
	wait "$SRV_PID" 2>/dev/null || true
else
	skip "no ::1 on this host's lo: IPv6 not tried here"
fi
expect_exit 0 "--family ipv4" "$TBENCH" -b tcp --family ipv4 -c "$TINY" --run-once -q 1 --json "$TMP/v4.json"
jq_ok "family ipv4, read back" '.settings.family == "ipv4" and .socket.family == "ipv4"' "$TMP/v4.json" '.socket'

# --- --netns --sysctl: set and read back in the run's namespace, never the host's ------
# The value asked is the other one than the host's: a write that reached the
# host would show in its /proc/sys.
sysctl_in_netns() {
	local host want
	host="$(cat /proc/sys/net/ipv4/tcp_autocorking)"
	want=$((1 - host))
	expect_exit 0 "--netns --sysctl net.ipv4.tcp_autocorking=$want" "$TBENCH" --netns \
		--sysctl "net.ipv4.tcp_autocorking=$want" -b tcp -c "$TINY" --run-once -q 1 --json "$TMP/sysctl.json"
	jq_ok "netns.sysctls: asked and read back $want" \
		".netns.sysctls == [{\"name\": \"net.ipv4.tcp_autocorking\", \"asked\": \"$want\", \"read\": \"$want\"}]" \
		"$TMP/sysctl.json" '.netns'
	if [ "$(cat /proc/sys/net/ipv4/tcp_autocorking)" = "$host" ]; then
		ok "the host's tcp_autocorking is still $host"
	else
		not_ok "the host's tcp_autocorking changed to $(cat /proc/sys/net/ipv4/tcp_autocorking)"
	fi
	local row
	row="$("$STATS" row --columns sysctl,sysctl_read "$TMP/sysctl.json")"
	if [ "$row" = "net.ipv4.tcp_autocorking=$want	net.ipv4.tcp_autocorking=$want" ]; then
		ok "runs.csv: sysctl as asked, sysctl_read as read back"
	else
		not_ok "row: $row"
	fi
	expect_exit 1 "--sysctl of a name the kernel lacks fails the run" "$TBENCH" --netns \
		--sysctl net.ipv4.no_such_sysctl=1 -b nop -c "$TINY" --run-once -q 1
	check "names it" grep -q -- "--sysctl net.ipv4.no_such_sysctl: no such sysctl" "$TMP/err"
	expect_exit 1 "--sysctl of a host-wide one fails the run" "$TBENCH" --netns \
		--sysctl net.core.rmem_max=65536 -b nop -c "$TINY" --run-once -q 1
	check "names it" grep -q -- "--sysctl net.core.rmem_max: .* cannot be written" "$TMP/err"
}

# --- --netns: MTU, and IPv6 on its own loopback ------------------------------------
if "$TBENCH" --netns -b nop 1 --run-once -q -c "$TINY" >/dev/null 2>"$TMP/netns.err"; then
	expect_exit 0 "--netns --mtu 1500" "$TBENCH" --netns --mtu 1500 -b tcp -c "$TINY" --run-once -q 2 --json "$TMP/mtu.json"
	jq_ok "netns.mtu read back 1500" '.netns.private and .netns.mtu == 1500' "$TMP/mtu.json" '.netns'
	expect_exit 0 "--netns --family ipv6" "$TBENCH" --netns --family ipv6 -b tcp -c "$TINY" --run-once -q 2 --json "$TMP/nsv6.json"
	jq_ok "IPv6 in the namespace" '.socket.family == "ipv6" and (.netns.mtu | type) == "number"' "$TMP/nsv6.json" '.'
	sysctl_in_netns
else
	skip "--netns refused here ($(head -1 "$TMP/netns.err")): --mtu and --sysctl not tried"
fi

# --- --start-at ------------------------------------------------------------------
# The run may not start before the instant; how much later it ends depends on
# the machine's load, so no upper bound is asserted. 10 s ahead (date +%s
# truncates, so 9-10 s): a loaded machine's set-up must not eat the lead.
start_at=$(( $(date +%s) + 10 ))
expect_exit 0 "--start-at 10 s ahead" "$TBENCH" -b pipe -c "$TINY" --run-once 1 --start-at "$start_at" --json "$TMP/at.json"
ended=$(date +%s)
if [ "$ended" -ge "$start_at" ]; then ok "the run ended after its start time"; else not_ok "ended at $ended, before --start-at $start_at"; fi
check "says it waits" grep -q "waiting .* for --start-at" "$TMP/out"
jq_ok "settings.start_at recorded" ".settings.start_at == $start_at" "$TMP/at.json" '.settings.start_at'
expect_exit 1 "--start-at 10 s in the past" "$TBENCH" -b pipe -c "$TINY" --run-once -q 1 --start-at $(( $(date +%s) - 10 ))
check "says by how much it was late" grep -q "set-up ended [0-9.]* s after that instant" "$TMP/err"

tl_done
