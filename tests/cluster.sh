#!/bin/bash
# tbench-sweep across hosts, for real: four network namespaces on a bridge
# (ctl, where the sweep runs; srv, c1 and c2, each running a real sshd with
# a host key and a user key made here), reached with
# --ssh "ssh -F <generated config>". A remote-server sweep, a sweep from two
# client hosts merged into one point (programs copied with --push), a client
# host that fails, one that cannot be reached, a sweep killed with -9 and a
# dropped ssh connection; after each, srv's device has its offloads and MTU
# back and no tbench, tbench_srv or guard is left. Needs root, ip netns,
# openssh-server and -client; skipped (77) without them.
# ok and not_ok always succeed, so "test && ok || not_ok" is safe here.
# shellcheck disable=SC2015
set -euo pipefail
# shellcheck source=tests/testlib.sh
. "${top_srcdir:-.}/tests/testlib.sh"

skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces, sshd)"
for p in ip ethtool jq ssh ssh-keygen ss; do
	command -v "$p" >/dev/null || skip "$p not installed (apt-get install iproute2 ethtool jq openssh-client)"
done
[ -x /usr/sbin/sshd ] || skip "no /usr/sbin/sshd (apt-get install openssh-server)"

SWEEP="$SRCDIR/scripts/tbench-sweep"
TBENCH="$(cd "$(dirname "$TBENCH")" && pwd)/$(basename "$TBENCH")"
BUILD="$(dirname "$TBENCH")"
STATS="$BUILD/tbench-stats"
export TBENCH TBENCH_STATS="$STATS" TBENCH_SRV="$BUILD/tbench_srv"
# The guards wait tbtools/remote.py's default (20 s) for a heartbeat: a short
# timeout only where a check needs one (dropped_connection), so that a
# stall of a loaded machine does not restore srv in the middle of a sweep.
unset TBENCH_GUARD_TIMEOUT
LOAD="$SRCDIR/loadfiles/tiny.txt"
NS="tbcl$$"
NET=10.213.0
HOSTS=(srv c1 c2)
declare -A ADDR=([srv]=$NET.2 [c1]=$NET.3 [c2]=$NET.4)
SSHD_PIDS=()

in_ns() { local h="$1"; shift; ip netns exec "$NS-$h" "$@"; }

teardown() {
	local pid h
	for pid in "${SSHD_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
	for pid in "${SSHD_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
	for h in ctl "${HOSTS[@]}"; do
		for pid in $(ip netns pids "$NS-$h" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
		ip netns del "$NS-$h" 2>/dev/null || true
	done
	rm -rf "$TL_TMP"
}
trap teardown EXIT

# ---- the cluster ---------------------------------------------------------------

make_cluster() {
	local h i=0
	ip netns add "$NS-ctl" 2>"$TL_TMP/err" || skip "cannot create a network namespace: $(cat "$TL_TMP/err")"
	in_ns ctl ip link set lo up
	in_ns ctl ip link add br0 type bridge 2>"$TL_TMP/err" || skip "no bridge device: $(cat "$TL_TMP/err")"
	in_ns ctl ip addr add "$NET.1/24" dev br0
	in_ns ctl ip link set br0 up
	for h in "${HOSTS[@]}"; do
		i=$((i + 1))
		ip netns add "$NS-$h"
		in_ns "$h" ip link set lo up
		ip link add eth0 netns "$NS-$h" type veth peer name "v$i" netns "$NS-ctl"
		in_ns ctl ip link set "v$i" master br0 up
		in_ns "$h" ip addr add "${ADDR[$h]}/24" dev eth0
		in_ns "$h" ip link set eth0 up
	done
}

# Keys, configurations and an sshd in each host's namespace.
start_sshds() {
	local h _
	ssh-keygen -q -t ed25519 -N '' -C tbench-cluster-host -f "$TL_TMP/hostkey"
	ssh-keygen -q -t ed25519 -N '' -C tbench-cluster-user -f "$TL_TMP/id"
	cp "$TL_TMP/id.pub" "$TL_TMP/authorized_keys"
	{
		for h in "${HOSTS[@]}"; do printf 'Host %s\n  HostName %s\n' "$h" "${ADDR[$h]}"; done
		printf 'Host c3\n  HostName %s\n' "$NET.9"   # nobody there
		cat <<EOF
Host *
  User root
  IdentityFile $TL_TMP/id
  IdentitiesOnly yes
  UserKnownHostsFile $TL_TMP/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  BatchMode yes
  ConnectTimeout 20
  LogLevel ERROR
EOF
	} >"$TL_TMP/ssh_config"
	echo "$NET.2,$NET.3,$NET.4,$NET.9 $(cut -d' ' -f1,2 "$TL_TMP/hostkey.pub")" >"$TL_TMP/known_hosts"
	for h in "${HOSTS[@]}"; do
		cat >"$TL_TMP/sshd-$h.conf" <<EOF
ListenAddress ${ADDR[$h]}
Port 22
HostKey $TL_TMP/hostkey
PidFile $TL_TMP/sshd-$h.pid
AuthorizedKeysFile $TL_TMP/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
MaxStartups 100
MaxSessions 100
SetEnv PATH=$BUILD:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
EOF
		# sshd insists on its privilege separation directory, /run/sshd: a
		# tmpfs on /run in a mount namespace of its own gives it one, so that
		# the host's /run is never changed (and two of these tests never share it).
		# shellcheck disable=SC2016
		in_ns "$h" unshare -m --propagation private sh -c \
			'mount -t tmpfs -o mode=755,size=1m tbsshd /run && mkdir -m 755 /run/sshd && exec "$@"' _ \
			/usr/sbin/sshd -D -e -f "$TL_TMP/sshd-$h.conf" 2>"$TL_TMP/sshd-$h.log" &
		SSHD_PIDS+=("$!")
	done
	for h in "${HOSTS[@]}"; do
		for _ in $(seq 600); do   # 60 s at most: sshd is slow to start on a loaded machine
			[ -z "$(in_ns "$h" ss -Hltn "sport = :22" 2>/dev/null)" ] || break
			sleep 0.1
		done
		if in_ns ctl ssh -F "$TL_TMP/ssh_config" "$h" true </dev/null 2>"$TL_TMP/err"; then
			ok "ssh to $h in its namespace"
		else
			not_ok "ssh to $h: $(cat "$TL_TMP/err") (sshd: $(tail -n 2 "$TL_TMP/sshd-$h.log"))"
			tl_done || exit 1
		fi
	done
}

# ---- what each check looks at ------------------------------------------------------

srv_device() { # the offloads and MTU of srv's eth0
	in_ns srv ethtool -k eth0
	in_ns srv cat /sys/class/net/eth0/mtu
}

# Every process in the hosts' namespaces but their sshd, with its command
# line, one a line (a shell's script has newlines of its own). Not the
# shells of a command the sweep is sending (remote_run's look at the
# guard, tbench-checked, before its exec): those end by themselves.
ns_processes() {
	local h pid comm cmd
	for h in "${HOSTS[@]}"; do
		for pid in $(ip netns pids "$NS-$h" 2>/dev/null); do
			comm="$(cat "/proc/$pid/comm" 2>/dev/null || true)"
			[ -n "$comm" ] && [ "$comm" != sshd ] && [[ "$comm" != sshd-* ]] || continue
			cmd="$(tr '\0\n\t' '   ' 2>/dev/null <"/proc/$pid/cmdline" || true)"
			{ [ "$comm" = bash ] || [ "$comm" = sh ]; } && [[ "$cmd" == *tbench-checked* ]] && continue
			echo "$h: $pid $comm (${cmd:0:100})"
		done
	done
}

# What is left for good: the processes there a second apart. A sweep still
# running runs short commands on the hosts (after its guard ended, each
# fails at once); those come and go, a leftover stays.
leftovers() {
	local first
	first="$(ns_processes)"
	[ -n "$first" ] || return 0
	sleep 1
	comm -12 <(sort <<<"$first") <(ns_processes | sort)
}

# The first process called NAME in HOST's namespace whose command line has
# WORD, and whose parent is not called NAME: tbench itself, not one of the
# clients it forked (which, PIDs having wrapped, may come first).
ns_pid() { # HOST NAME WORD
	local pid ppid
	for pid in $(ip netns pids "$NS-$1" 2>/dev/null); do
		[ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$2" ] || continue
		ppid="$(awk '{ print $4 }' "/proc/$pid/stat" 2>/dev/null || true)"
		[ "$(cat "/proc/${ppid:-0}/comm" 2>/dev/null)" != "$2" ] || continue
		[[ "$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline")" != *"$3"* ]] || { echo "$pid"; return; }
	done
}

# The guards' directories of sweep OUT (from their logs) that still exist.
guard_dirs_left() { # OUT
	local d
	while IFS= read -r d; do [ ! -e "$d" ] || echo "$d"; done < <(sed -n 's/^dir //p' "$1"/runs/guard-*.log 2>/dev/null)
}

# After a sweep into OUT: srv restored, nothing left running, no guard dir.
check_restored() { # WHAT OUT
	local left _
	# A guard whose heartbeat stopped restores within its timeout (20 s; 10 s
	# in dropped_connection): waited for up to 60 s, as ssh and the guard are
	# slow on a loaded machine.
	for _ in $(seq 300); do
		[ "$(srv_device)" != "$DEVICE_BEFORE" ] || [ -n "$(ns_processes)" ] || break
		sleep 0.2
	done
	[ "$(srv_device)" = "$DEVICE_BEFORE" ] && ok "$1: srv's eth0 has its offloads and MTU back" ||
		not_ok "$1: srv's eth0 is not as before: $(diff <(echo "$DEVICE_BEFORE") <(srv_device) | grep '^[<>]' | paste -sd' ')"
	left="$(leftovers)"
	[ -z "$left" ] && ok "$1: no tbench, tbench_srv or guard left on the hosts" ||
		not_ok "$1: left running: $(echo "$left" | paste -sd' ')"
	left="$(guard_dirs_left "$2")"
	[ -z "$left" ] && ok "$1: the guards removed their directories" || not_ok "$1: left: $left"
}

sweep() { # OUT ARGS...: the sweep in ctl, output in OUT.out and OUT.err
	local out="$1"
	shift
	# Its temporary files in ours: a sweep killed with -9 cannot remove them.
	mkdir -p "$TL_TMP/tmp"
	TMPDIR="$TL_TMP/tmp" in_ns ctl "$SWEEP" --ssh "ssh -F $TL_TMP/ssh_config" --out "$out" -q --backends tcp --reps 1 \
		-t 2 --warmup 0 "$@" -- -c "$LOAD" >"$out.out" 2>"$out.err" </dev/null
}

cols() { "$STATS" select --columns "$2" --tsv "$1/runs.csv"; }

# What a sweep into OUT said, and its guards' logs: after a failed check.
show_sweep() { # OUT
	echo "    the sweep's last words:"
	tail -n 12 "$1.err" | sed 's/^/      /'
	echo "    its guards' logs:"
	sed 's/^/      /' "$1"/runs/guard-*.log 2>/dev/null || true
}

# ---- the sweeps --------------------------------------------------------------------------

remote_server() {
	local out="$TL_TMP/server" rc=0 read_cols
	sweep "$out" --server-host srv --server-dev eth0 --clients 1,2 --offload on,off || rc=$?
	[ "$rc" -eq 0 ] && ok "remote-server sweep (exit 0)" ||
		{ not_ok "remote-server sweep: exit $rc"; sed 's/^/    /' "$out.err" | tail -n 8; }
	[ "$(cols "$out" status | sort | uniq -c | awk '{ print $1 $2 }')" = 4ok ] &&
		ok "remote server: 4 runs, all ok" ||
		{ not_ok "remote server: runs $(cols "$out" status,error | paste -sd' ')"; show_sweep "$out"; }
	# The read-back offloads: columns tso_read, gso_read where the knob columns are tso, gso.
	read_cols=tso,gso
	[[ "$(head -n 1 "$out/runs.csv")" != *,tso_read,* ]] || read_cols=tso_read,gso_read
	[ "$(cols "$out" "offload,$read_cols" | sort -u | paste -sd' ')" = "off	off	off on	on	on" ] &&
		ok "remote server: srv's eth0 read back as each run asked" ||
		not_ok "remote server: offload, $read_cols read back: $(cols "$out" "offload,$read_cols" | paste -sd' ')"
	[ "$(jq -r '.remote_hosts[0] | "\(.role) \(.ssh_host) \(.device.device) \(.kernel != "") \(.device.offload_flags_at_start | has("tcp-segmentation-offload"))"' "$out/meta.json")" = \
		"server srv eth0 true true" ] && ok "remote server: srv's kernel and offloads in meta.json" ||
		not_ok "remote server: meta.json remote_hosts: $(jq -c .remote_hosts "$out/meta.json")"
	grep -q "srv: using $BUILD/tbench_srv " "$out.err" && ok "remote server: srv's own tbench_srv, from its PATH" ||
		not_ok "remote server: which tbench_srv: $(grep 'srv: using' "$out.err")"
	check_restored "remote server" "$out"
	grep -q ' the sweep ended (heartbeat input closed): restoring$' "$out/runs/guard-srv.log" 2>/dev/null &&
		ok "remote server: srv's guard restored when the sweep ended" ||
		not_ok "remote server: srv's guard says: $(paste -sd' ' "$out/runs/guard-srv.log" 2>/dev/null)"
}

client_hosts() {
	local out="$TL_TMP/clients" rc=0 json ids
	sweep "$out" --server-host srv --server-dev eth0 --client-hosts c1,c2 --push --clients 1,2 --offload on \
		--start-lead 30 ||
		rc=$?
	[ "$rc" -eq 0 ] && ok "two client hosts (exit 0)" ||
		{ not_ok "two client hosts: exit $rc"; sed 's/^/    /' "$out.err" | tail -n 8; }
	[ "$(cols "$out" status | paste -sd,)" = ok,ok ] && ok "two client hosts: both points ok" ||
		not_ok "two client hosts: $(cols "$out" status,error | paste -sd' ')"
	for json in "$out"/runs/tcp_c2_*.json; do
		# no point at all (a failed sweep): said, and the test goes on
		[ -e "$json" ] || { not_ok "client hosts: no JSON of the 2-client point in $out/runs"; break; }
		case "$json" in *.c1.json | *.c2.json) continue ;; esac
		[ "$(jq -r '[.hosts[].name] | join(",")' "$json")" = c1,c2 ] && [ "$(jq .settings.clients "$json")" = 4 ] &&
			ok "client hosts: one point of c1 and c2, 4 clients" || not_ok "client hosts: $json: $(jq -c '[.hosts, .settings.clients]' "$json")"
		jq -e --slurpfile a "${json%.json}.c1.json" --slurpfile b "${json%.json}.c2.json" \
			'(.result.mb_per_sec - ($a[0].result.mb_per_sec + $b[0].result.mb_per_sec) | fabs) < 0.00001
			 and .result.latency.count == ($a[0].result.latency.count + $b[0].result.latency.count)
			 and .result.ops == ($a[0].result.ops + $b[0].result.ops)' "$json" >/dev/null &&
			ok "client hosts: MB/sec, operations and latency count are the hosts' sums" ||
			not_ok "client hosts: merged figures are not the sums ($json)"
		ids="$(jq -r '[.hosts[].start_at] | unique | length' "$json")" || true
		[ "$ids" = 1 ] && [ "$(jq '.hosts[0].start_at' "$json")" != null ] &&
			ok "client hosts: both started --start-at one instant" ||
			not_ok "client hosts: start_at of the hosts: $(jq -c '[.hosts[].start_at]' "$json")"
	done
	[ "$(cut -d, -f1,2 "$out/hosts.csv" | sort | paste -sd' ')" = \
		"run,host tcp_c1_on_r1,c1 tcp_c1_on_r1,c2 tcp_c2_on_r1,c1 tcp_c2_on_r1,c2" ] &&
		ok "client hosts: hosts.csv has a row per host and run" ||
		not_ok "client hosts: hosts.csv: $(cut -d, -f1,2 "$out/hosts.csv" 2>&1 | paste -sd' ')"
	grep -q 'c1: using /tmp/tbench-guard\.[^/]*/tbench ' "$out.err" &&
		grep -q 'srv: using /tmp/tbench-guard\.[^/]*/tbench_srv ' "$out.err" &&
		ok "--push: the hosts ran copies in their guards' directories" ||
		not_ok "--push: $(grep ': using' "$out.err" | paste -sd' ')"
	check_restored "client hosts" "$out"
}

# The PID of the sweep's tbench on c2, once it runs; nothing after 120 s: the
# guards, --push and the version checks over ssh, and tbench_srv's start,
# come first (slow on a loaded machine, with ASan).
c2_tbench() {
	local pid _
	for _ in $(seq 1200); do
		pid="$(ns_pid c2 tbench --start-at)"
		[ -z "$pid" ] || { echo "$pid"; return; }
		sleep 0.1
	done
}

# c2's tbench killed in the middle of the first run: that point fails,
# naming c2; the next is ok.
failing_host() {
	local out="$TL_TMP/failing" pid sweep_pid error
	sweep "$out" --server-host srv --server-dev eth0 --client-hosts c1,c2 --push --clients 1,2 --offload on \
		--start-lead 30 -t 6 &
	sweep_pid=$!
	pid="$(c2_tbench)"
	if [ -n "$pid" ]; then
		sleep 2
		kill -KILL "$pid" 2>/dev/null || true
	else
		not_ok "failing host: c2's tbench never appeared (waited 120 s): nothing was killed"
	fi
	wait "$sweep_pid" || true
	[ "$(cols "$out" status | paste -sd,)" = failed,ok ] && ok "a failing client host fails its point only" ||
		{ not_ok "failing host: $(cols "$out" status,error | paste -sd' ')"; show_sweep "$out"; }
	error="$(cols "$out" error | head -n 1)" || true
	[[ "$error" == *"client host c2: exit"* ]] && ok "the failed point names c2: $error" ||
		not_ok "failing host: error is '$error'"
	check_restored "failing host" "$out"
}

# c2's tbench stopped (SIGSTOP) mid-run: it lags past the deadline (the
# run's end + $TBENCH_HOST_SLACK s); the point fails naming c2, its tbench is
# killed there, and the sweep goes on.
lagging_host() {
	local out="$TL_TMP/lagging" pid sweep_pid errors
	TBENCH_HOST_SLACK=5 sweep "$out" --server-host srv --server-dev eth0 --client-hosts c1,c2 --push \
		--clients 1 --offload on --start-lead 30 -t 4 &
	sweep_pid=$!
	pid="$(c2_tbench)"
	if [ -n "$pid" ]; then
		kill -STOP "$pid" 2>/dev/null || true
	else
		not_ok "lagging host: c2's tbench never appeared (waited 120 s): nothing was stopped"
	fi
	wait "$sweep_pid" || true
	errors="$(cols "$out" error)" || true
	grep -q 'client host c2: no result 5 s after the run.s end (lagging)' <<<"$errors" &&
		ok "a lagging client host fails the point, named: $(cut -c1-90 <<<"$errors")" ||
		not_ok "lagging host: $(cols "$out" status,error | paste -sd' ')"
	check_restored "lagging host" "$out"
}

unreachable_host() {
	local out="$TL_TMP/unreachable" rc=0
	sweep "$out" --server-host srv --server-dev eth0 --client-hosts c1,c3 --clients 1 --offload on || rc=$?
	[ "$rc" -eq 1 ] && grep -q 'c3: its guard did not start' "$out.err" &&
		ok "an unreachable client host stops the sweep, named (exit 1)" ||
		not_ok "unreachable host: exit $rc: $(tail -n 2 "$out.err" | paste -sd' ')"
	check_restored "unreachable host" "$out"
}

# The sweep killed with -9 mid-run: no clean-up of its own runs; the guards
# restore srv when the heartbeat stops.
killed_sweep() {
	local out="$TL_TMP/killed" pid _
	set -m
	sweep "$out" --server-host srv --server-dev eth0 --clients 1 --offload off -t 30 &
	pid=$!
	set +m
	for _ in $(seq 300); do
		[ "$(in_ns srv ethtool -k eth0 | sed -n 's/^tcp-segmentation-offload: //p')" != off ] || break
		sleep 0.1
	done
	sleep 1
	# the whole process group: the sweep, its tbench and ssh processes
	local group
	group="$(pgrep -g "$pid" || true)"
	kill -KILL -- "-$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	check_restored "sweep killed with -9" "$out"
	# What a sweep killed with -9 cannot remove: the namespace it made here
	# (named by its PID), which the test made it leave.
	local p ns
	for p in $group; do
		for ns in "/run/netns/tbsweep-$p" "/run/netns/tbsweep-$p-"*; do
			[ ! -e "$ns" ] || ip netns del "${ns#/run/netns/}" 2>/dev/null || rm -f "$ns"
		done
	done
}

# The guard's ssh connection goes silent (its ssh client stopped): srv is
# restored when the guard's heartbeat times out, with the sweep still
# running; its runs after that fail, saying so.
dropped_connection() {
	local out="$TL_TMP/dropped" sweep_pid guard="" _
	# This sweep's guard restores srv 10 s after its heartbeat stops (exported
	# for this function only). Runs longer than that: the one running when it
	# restores fails.
	local -x TBENCH_GUARD_TIMEOUT=10
	sweep "$out" --server-host srv --server-dev eth0 --clients 1,2,4 --offload off -t "$((TBENCH_GUARD_TIMEOUT + 4))" &
	sweep_pid=$!
	for _ in $(seq 600); do
		[ "$(grep -c . "$out/runs.csv" 2>/dev/null || echo 0)" -lt 2 ] || break
		sleep 0.1
	done
	# The guard's ssh: its last words are the guard's name and arguments.
	guard="$(pgrep -f "^ssh -F $TL_TMP/ssh_config srv .*'tbench-guard' 'eth0'" | head -n 1 || true)"
	[ -n "$guard" ] && kill -STOP "$guard" && ok "dropped connection: the guard's ssh stopped after the first run" ||
		not_ok "dropped connection: no guard ssh found (runs: $(cols "$out" status 2>/dev/null | paste -sd,))"
	check_restored "dropped ssh connection (sweep still running)" "$out"
	[ -z "$guard" ] || kill -CONT "$guard" 2>/dev/null || true
	wait "$sweep_pid" || true
	grep -q failed <<<"$(cols "$out" status)" &&
		ok "dropped connection: a run after it failed: $(cols "$out" error | grep . | tail -n 1 | cut -c1-120)" ||
		not_ok "dropped connection: runs: $(cols "$out" status,error | paste -sd' ')"
	check_restored "dropped ssh connection (sweep ended)" "$out"
	grep -q ' no heartbeat for 10 s: restoring$' "$out/runs/guard-srv.log" 2>/dev/null &&
		ok "dropped connection: srv's guard says it had no heartbeat for 10 s" ||
		not_ok "dropped connection: srv's guard says: $(paste -sd' ' "$out/runs/guard-srv.log" 2>/dev/null)"
}

make_cluster
start_sshds
DEVICE_BEFORE="$(srv_device)"
remote_server
# The help read whole: "| grep -q" may end after its first part, and
# tbench's SIGPIPE fail the pipeline (pipefail), skipping these quietly.
help="$("$TBENCH" --help 2>&1 || true)"
if [[ "$help" == *--start-at* ]]; then
	client_hosts
	failing_host
	lagging_host
else
	echo "# skipped: two client hosts and a failing one: $TBENCH has no --start-at yet"
fi
unreachable_host
killed_sweep
dropped_connection
teardown
trap - EXIT
left="$(ip netns list 2>/dev/null | grep -c "^$NS-" || true)"
[ "$left" -eq 0 ] && ok "no namespace left" || not_ok "$left namespaces left"
pgrep -f "$TL_TMP" >/dev/null && not_ok "processes of the test left: $(pgrep -af "$TL_TMP")" ||
	ok "no sshd or other process of the test left"
tl_done
