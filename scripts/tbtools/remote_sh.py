"""The shell programs tbench-sweep runs on its other hosts (remote.py),
each started as `sh -c PROGRAM NAME ARGS...` or `bash -c ...` with every
argument a quoted word: they read their arguments, never have them
pasted in. They run there, where only a POSIX shell (bash for some) is
sure to be."""

# Runs its arguments (DIR CMD...) if DIR's guard still runs (status 97 and a
# message if not). The command registers (cmd.PID) and then looks again; a
# guard that ends removes guard.pid first, then waits for the registered
# commands: so an ethtool that got past the check cannot land after the restore.
CHECKED = r"""d="$1"; shift
if [ -f "$d/guard.pid" ] && kill -0 "$(cat "$d/guard.pid")" 2>/dev/null && true 2>/dev/null >"$d/cmd.$$" &&
	[ -f "$d/guard.pid" ]; then exec "$@"; fi
rm -f "$d/cmd.$$" 2>/dev/null
echo "$(uname -n): the tbench guard has ended (it restored this host): not running $1" >&2
exit 97"""

# The guard (remote.py's docstring). Arguments: DEV (may be empty), TIMEOUT.
# It prints "dir DIR", "saved ...", "ready", and "restored ..." at the end.
GUARD = r"""dev="$1" timeout="$2" saved="" mtu="" qdisc=""
dir="$(mktemp -d "${TMPDIR:-/tmp}/tbench-guard.XXXXXX")" || exit 1
echo "$$" >"$dir/guard.pid"
if [ -n "$dev" ]; then
	if [ ! -e "/sys/class/net/$dev" ]; then echo "error: $(uname -n) has no device $dev"; rm -rf "$dir"; exit 1; fi
	saved="$(ethtool -k "$dev" 2>/dev/null | awk -F": " "
		/^tcp-segmentation-offload:/ { split(\$2, v, \" \"); printf \"tso %s \", v[1] }
		/^generic-segmentation-offload:/ { split(\$2, v, \" \"); printf \"gso %s \", v[1] }
		/^generic-receive-offload:/ { split(\$2, v, \" \"); printf \"gro %s \", v[1] }")"
	mtu="$(cat "/sys/class/net/$dev/mtu")"
	qdisc="$(tc qdisc show dev "$dev" root 2>/dev/null | awk "{ print \$3; exit }")"
fi
restore() { # WHY
	trap "" HUP INT TERM PIPE
	echo "$(date +%T) $1: restoring" 2>/dev/null
	rm -f "$dir/guard.pid"
	for ((i = 0; i < 50; i++)); do   # the commands already past the check end first (10 s at most)
		busy=0
		for f in "$dir"/cmd.*; do [ ! -e "$f" ] || ! kill -0 "${f##*.}" 2>/dev/null || busy=1; done
		[ "$busy" -eq 1 ] || break
		sleep 0.2
	done
	if [ -s "$dir/srv.pid" ]; then
		pid="$(cat "$dir/srv.pid")"
		kill -TERM -- "-$pid" 2>/dev/null
		for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 -- "-$pid" 2>/dev/null || break; sleep 0.2; done
		kill -KILL -- "-$pid" 2>/dev/null
	fi
	if [ -n "$dev" ]; then
		# shellcheck disable=SC2086
		[ -z "$saved" ] || ethtool -K "$dev" $saved 2>/dev/null
		[ "$(cat "/sys/class/net/$dev/mtu")" = "$mtu" ] || ip link set dev "$dev" mtu "$mtu"
		now="$(tc qdisc show dev "$dev" root 2>/dev/null | awk "{ print \$3; exit }")"
		[ "$qdisc" != "0:" ] || [ "$now" = "0:" ] || tc qdisc del dev "$dev" root
	fi
	rm -rf "$dir"
	echo "restored ${dev:-no device}: ${saved}mtu ${mtu:-unchanged}" 2>/dev/null
	exit 0
}
for sig in HUP INT TERM PIPE; do trap "restore SIG$sig" "$sig"; done
echo "dir $dir"
echo "saved ${dev:-no device}: ${saved}mtu ${mtu:-none} qdisc ${qdisc:-none}"
echo ready
rc=0
while :; do read -r -t "$timeout" _ || { rc=$?; break; }; done   # (the status of a while loop is 0)
if [ "$rc" -gt 128 ]; then restore "no heartbeat for $timeout s"; else restore "the sweep ended (heartbeat input closed)"; fi"""

# (Re)starts tbench_srv on its host: DIR BIN PORT [ARGS...]. In a session of
# its own, so that the guard stops it and its connection processes.
SERVER = r"""dir="$1" bin="$2" port="$3"
shift 3
if [ -s "$dir/srv.pid" ]; then
	pid="$(cat "$dir/srv.pid")"
	kill -TERM -- "-$pid" 2>/dev/null
	for _ in $(seq 50); do kill -0 -- "-$pid" 2>/dev/null || break; sleep 0.1; done
	kill -KILL -- "-$pid" 2>/dev/null
	rm -f "$dir/srv.pid"
fi
echo "+ $bin --port $port -q $*" >>"$dir/srv.log"
setsid "$bin" --port "$port" -q "$@" >>"$dir/srv.log" 2>&1 </dev/null &
echo "$!" >"$dir/srv.pid"
for _ in $(seq 600); do   # 60 s at most: slow to start on a loaded machine (ASan)
	# Its own listening socket: another server on the port is no success.
	if ss -Hltnp "sport = :$port" 2>/dev/null | grep -q "pid=$!,"; then exit 0; fi
	if ! kill -0 "$!" 2>/dev/null; then echo "tbench_srv did not start: $(tail -n 1 "$dir/srv.log")" >&2; exit 1; fi
	sleep 0.1
done
echo "tbench_srv is not listening on port $port after 60 s: $(tail -n 1 "$dir/srv.log")" >&2
exit 1"""

# A client host's tbench (its arguments), stopped (SIGINT: it writes what it
# measured; then SIGKILL, which a stopped or hung one cannot ignore) when the
# ssh session's input ends: the sweep gave up on it or ended.
CLIENT = r"""exec 3<&0
"$@" </dev/null &
pid=$!
{
	while read -r _; do :; done
	kill -INT "$pid" 2>/dev/null
	for _ in $(seq 25); do kill -0 "$pid" 2>/dev/null || exit 0; sleep 0.2; done
	kill -KILL "$pid" 2>/dev/null
} <&3 &
watch=$!
rc=0
wait "$pid" || rc=$?
kill "$watch" 2>/dev/null
exit "$rc"
"""

# A host's facts, one a line: name, kernel release and version, machine,
# CPU model, CPUs online, memory in kB (an empty line where it cannot say).
FACTS = r"""uname -n; uname -r; uname -v; uname -m
echo "$(sed -n "s/^model name[[:space:]]*: //p" /proc/cpuinfo | head -n 1)"
echo "$(nproc)"
echo "$(sed -n "s/^MemTotal: *\([0-9]*\) kB$/\1/p" /proc/meminfo)"
"""
