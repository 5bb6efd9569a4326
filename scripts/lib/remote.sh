# tbench-sweep's other hosts (sourced, not run): a tbench_srv on another
# host (--server-host), the clients of every run on several hosts at once
# (--client-hosts), all reached with ssh (--ssh CMD, as rsync's -e).
#
# Each host runs a guard for as long as the sweep lives: a shell that the
# sweep starts over ssh, which saves what the sweep may change there (the
# offloads, MTU and root qdisc of --server-dev), keeps a temporary
# directory (the server's pid and log, the clients' JSON, what --push
# copied), and reads a heartbeat line from its ssh session every few
# seconds. When the heartbeat stops -- the sweep ended in any way, Ctrl-C
# and kill -9 included, or the connection dropped -- the guard stops the
# server, restores the device, removes its directory and ends. Every
# command the sweep runs on a host afterwards first checks that its guard
# still runs, so nothing is changed on a host that nobody will restore.
#
# State (for remote_cleanup): REMOTE_GUARD_PIDS (host -> the local ssh of its
# guard), REMOTE_BEAT_PIDS (their heartbeats), REMOTE_CLIENT_PIDS (the ssh of
# the clients running now).
# shellcheck shell=bash

REMOTE_SSH_CMD=ssh REMOTE_SSH=()
REMOTE_SERVER_HOST="" REMOTE_SERVER_DEV="" REMOTE_SERVER_ADDR="" REMOTE_PUSH=0
REMOTE_CLIENT_HOSTS=()
REMOTE_START_LEAD=5          # seconds from launching the clients to their common start
REMOTE_DEADLINE_SLACK="${TBENCH_HOST_SLACK:-30}"   # seconds a client host may take past the run's end
REMOTE_HEARTBEAT_S=2
REMOTE_GUARD_TIMEOUT_S="${TBENCH_GUARD_TIMEOUT:-20}"   # a guard waits this long for a heartbeat
REMOTE_PORT=7003
# shellcheck disable=SC2034  # read by net_route (netns.sh) and write_meta
REMOTE_DEVS=""               # "@HOST:IFACE": the server's device, as net_route gives it
REMOTE_SRV_ARGS="-"          # the arguments of the tbench_srv running there now
# shellcheck disable=SC2034
REMOTE_META="[]"             # every other host's facts, for meta.json
REMOTE_ERROR=""
REMOTE_BEAT_PIDS=() REMOTE_CLIENT_PIDS=()
declare -A REMOTE_DIR=() REMOTE_BIN=() REMOTE_GUARD_PIDS=() REMOTE_GUARD_LOG=()

# ---- options --------------------------------------------------------------------

# Status 0 when OPT is one of these options (and it took VALUE if it needs one).
remote_option() { # OPT [VALUE]
	case "$1" in
	--ssh) REMOTE_SSH_CMD="$2" ;;
	--server-host) REMOTE_SERVER_HOST="$2" ;;
	--server-dev) REMOTE_SERVER_DEV="$2" ;;
	--server-addr) REMOTE_SERVER_ADDR="$2" ;;
	--client-hosts) IFS=, read -r -a REMOTE_CLIENT_HOSTS <<<"$2" ;;
	--start-lead) REMOTE_START_LEAD="$2" ;;
	--push) REMOTE_PUSH=1 ;;
	*) return 1 ;;
	esac
}

# After parse_options: usage errors, and MODE=remote with a server host.
remote_check_options() {
	local h
	read -r -a REMOTE_SSH <<<"$REMOTE_SSH_CMD"
	[ "${#REMOTE_SSH[@]}" -gt 0 ] || usage_error "--ssh: an empty command"
	if [ -z "$REMOTE_SERVER_HOST" ]; then
		if [ -n "$REMOTE_SERVER_DEV$REMOTE_SERVER_ADDR${REMOTE_CLIENT_HOSTS[*]}" ] || [ "$REMOTE_PUSH" -eq 1 ]; then
			usage_error "--server-dev, --server-addr, --push and --client-hosts need --server-host"
		fi
		return 0
	fi
	[ "$MODE" = lo ] || usage_error "--server-host: not with --veth or --dev (the server is on $REMOTE_SERVER_HOST)"
	[ -n "$REMOTE_SERVER_DEV" ] ||
		usage_error "--server-host needs --server-dev IFACE: the device of $REMOTE_SERVER_HOST whose offloads each run sets"
	for h in "$REMOTE_SERVER_HOST" "${REMOTE_CLIENT_HOSTS[@]}"; do
		[[ "$h" =~ ^([A-Za-z0-9._-]+@)?[A-Za-z0-9._:-]+$ ]] || usage_error "bad host name '$h' ([USER@]HOST)"
	done
	[ -z "$REMOTE_SERVER_DEV" ] || [[ "$REMOTE_SERVER_DEV" =~ ^[A-Za-z0-9._@-]+$ ]] ||
		usage_error "--server-dev: bad interface name '$REMOTE_SERVER_DEV'"
	is_secs "$REMOTE_START_LEAD" || usage_error "--start-lead: '$REMOTE_START_LEAD' is not a number of seconds"
	MODE=remote
	# shellcheck disable=SC2034  # read by net_route (netns.sh) and write_meta
	REMOTE_DEVS="${REMOTE_SERVER_DEV:+@$REMOTE_SERVER_HOST:$REMOTE_SERVER_DEV}"
}

# ---- running things there ----------------------------------------------------------

# WORD quoted for a POSIX shell: ssh hands the remote command to one.
remote_quote() {
	printf "'%s'" "${1//\'/\'\\\'\'}"
}

remote_cmdline() { # WORDS...
	local w line=""
	for w in "$@"; do line+=" $(remote_quote "$w")"; done
	echo "${line# }"
}

# Runs WORDS on HOST as they are (no guard check): for setting up.
remote_exec() { # HOST WORDS...
	local host="$1"
	shift
	"${REMOTE_SSH[@]}" "$host" "$(remote_cmdline "$@")"
}

# Runs CMD on HOST if its guard still runs (status 97 and a message if not).
# The command registers (cmd.PID) and then looks again; a guard that ends
# removes guard.pid first, then waits for the registered commands: so an
# ethtool that got past the check cannot land after the restore.
# shellcheck disable=SC2016  # each runs on the other host, where it expands
REMOTE_CHECKED='d="$1"; shift
if [ -f "$d/guard.pid" ] && kill -0 "$(cat "$d/guard.pid")" 2>/dev/null && true 2>/dev/null >"$d/cmd.$$" &&
	[ -f "$d/guard.pid" ]; then exec "$@"; fi
rm -f "$d/cmd.$$" 2>/dev/null
echo "$(uname -n): the tbench guard has ended (it restored this host): not running $1" >&2
exit 97'
remote_run() { # HOST CMD...
	local host="$1"
	shift
	remote_exec "$host" sh -c "$REMOTE_CHECKED" tbench-checked "${REMOTE_DIR[$host]:-/nonexistent}" "$@"
}

# The guard (see the top of this file). Arguments: DEV (may be empty),
# TIMEOUT. It prints "dir DIR", "saved ...", "ready", and "restored ..."
# at the end.
# shellcheck disable=SC2016
REMOTE_GUARD='dev="$1" timeout="$2" saved="" mtu="" qdisc=""
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
if [ "$rc" -gt 128 ]; then restore "no heartbeat for $timeout s"; else restore "the sweep ended (heartbeat input closed)"; fi'

# (Re)starts tbench_srv on its host: DIR BIN PORT [ARGS...]. In a session
# of its own, so that the guard stops it and its connection processes.
# shellcheck disable=SC2016
REMOTE_SERVER='dir="$1" bin="$2" port="$3"
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
exit 1'

# A client host's tbench, stopped (SIGINT: it writes what it measured; then
# SIGKILL, which a stopped or hung one cannot ignore) when the ssh
# session's input ends: the sweep gave up on it or ended.
# shellcheck disable=SC2016
REMOTE_CLIENT='exec 3<&0
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
exit "$rc"'

# A line every few seconds for as long as the sweep (this shell) lives.
# A write that fails says so: the guard's ssh stopped reading (or ended),
# and the guard will restore its host.
remote_heartbeat() { # HOST
	trap '' PIPE
	while kill -0 "$$" 2>/dev/null; do
		if ! echo alive 2>/dev/null; then
			echo "$PROG: $1: $(date +%T): the heartbeat cannot reach its guard (its ssh ended or stopped reading)" >&2
			return 0
		fi
		sleep "$REMOTE_HEARTBEAT_S"
	done
}

# Dies with WHY, or with the guard's own words when HOST's guard has ended:
# then that, not WHY, is what went wrong.
remote_die() { # HOST WHY...
	local host="$1" log="${REMOTE_GUARD_LOG[$1]:-}"
	shift
	if [ -n "$log" ] && grep -q ': restoring$\|^restored' "$log" 2>/dev/null; then
		die "$host: its guard ended during the sweep's set-up: $(grep -v '^saved\|^dir\|^ready' "$log" | tail -n 3 | paste -sd' ')"
	fi
	die "$host: $*"
}

# ---- setting up --------------------------------------------------------------------

# Starts HOST's guard (DEV: the device it saves and restores, may be empty)
# and waits until it is ready; REMOTE_DIR[HOST] is its directory.
remote_start_guard() { # HOST DEV
	local host="$1" log="$OUT/runs/guard-$1.log" fifo="$TB_TMP/beat-$1" _ dir
	mkfifo "$fifo"
	remote_heartbeat "$host" >"$fifo" &
	REMOTE_BEAT_PIDS+=("$!")
	"${REMOTE_SSH[@]}" "$host" "$(remote_cmdline bash -c "$REMOTE_GUARD" tbench-guard "$2" \
		"$REMOTE_GUARD_TIMEOUT_S")" <"$fifo" >"$log" 2>&1 &
	REMOTE_GUARD_PIDS[$host]=$!
	REMOTE_GUARD_LOG[$host]="$log"
	for _ in $(seq 600); do   # 60 s at most (ssh is slow on a loaded machine); ends when ssh does
		if grep -q '^ready$' "$log" 2>/dev/null; then
			dir="$(sed -n 's/^dir //p' "$log")"
			REMOTE_DIR[$host]="$dir"
			echo "$PROG: $host: guard ready ($(sed -n 's/^saved //p' "$log"); restored when the sweep ends)" >&2
			return 0
		fi
		kill -0 "${REMOTE_GUARD_PIDS[$host]}" 2>/dev/null || break
		sleep 0.1
	done
	die "$host: its guard did not start over '${REMOTE_SSH[*]}': $(grep -v '^saved\|^dir' "$log" | tail -n 3 | paste -sd' ')" \
		"(can '${REMOTE_SSH[*]} $host true' log in without a password, and does $host have bash?)"
}

# The program NAME of this suite on HOST, on stdout: copied there from
# LOCAL with --push, else found on its PATH, and of this suite either way.
remote_program() { # HOST NAME LOCAL
	local host="$1" name="$2" path version
	if [ "$REMOTE_PUSH" -eq 1 ]; then
		path="${REMOTE_DIR[$host]}/$name"
		# shellcheck disable=SC2016
		remote_run "$host" sh -c 'cat >"$1" && chmod 755 "$1"' tbench-push "$path" <"$3" ||
			remote_die "$host" "could not copy $3 to $path (--push)"
	else
		# shellcheck disable=SC2016
		path="$(remote_run "$host" sh -c 'command -v "$1"' tbench-which "$name" </dev/null)" ||
			remote_die "$host" "no $name on its PATH: install it there, or copy this one with --push"
	fi
	version="$(remote_run "$host" "$path" --version </dev/null 2>&1 | head -n 1)" || true
	[[ "$version" == *"tbench suite"* ]] ||
		remote_die "$host" "$path is not the $name of this suite (its --version says '$version'):" \
			"install it there, or copy this one with --push"
	echo "$PROG: $host: using $path ($version)" >&2
	echo "$path"
}

# The address the clients connect to: --server-addr, else the host name ssh
# uses for the server host (ssh -G: an alias of an ssh config resolves).
remote_server_address() {
	local addr=""
	if [ -n "$REMOTE_SERVER_ADDR" ]; then echo "$REMOTE_SERVER_ADDR"; return; fi
	addr="$("${REMOTE_SSH[@]}" -G "$REMOTE_SERVER_HOST" 2>/dev/null </dev/null | awk '$1 == "hostname" { print $2; exit }')" || true
	echo "${addr:-${REMOTE_SERVER_HOST#*@}}"
}

# HOST's facts, as JSON: kernel, CPU, memory, the program used there, and
# DEV's MTU, driver and offload flags before the sweep changed anything.
remote_host_meta() { # HOST ROLE DEV
	local host="$1" facts=() dev=null
	mapfile -t facts < <(remote_run "$host" sh -c 'uname -n; uname -r; uname -v; uname -m
		sed -n "s/^model name[[:space:]]*: //p" /proc/cpuinfo | head -n 1; nproc
		sed -n "s/^MemTotal: *\([0-9]*\) kB$/\1/p" /proc/meminfo' </dev/null)
	if [ -n "$3" ]; then
		dev="$(jq -n --arg dev "$3" \
			--arg mtu "$(remote_run "$host" cat "/sys/class/net/$3/mtu" </dev/null || true)" \
			--arg driver "$(remote_run "$host" ethtool -i "$3" </dev/null 2>/dev/null | sed -n 's/^driver: //p' || true)" \
			--argjson flags "$(net_features_json "@$host" "$3")" \
			'{device: $dev, mtu: ($mtu | tonumber? // null), driver: $driver, offload_flags_at_start: $flags}')"
	fi
	jq -n --arg role "$2" --arg ssh "$host" --arg name "${facts[0]:-}" --arg kernel "${facts[1]:-}" \
		--arg kernel_version "${facts[2]:-}" --arg machine "${facts[3]:-}" --arg cpu "${facts[4]:-}" \
		--arg cores "${facts[5]:-}" --arg mem "${facts[6]:-}" --arg program "${REMOTE_BIN[$host]:-}" \
		--argjson device "$dev" \
		'{role: $role, ssh_host: $ssh, name: $name, kernel: $kernel, kernel_version: $kernel_version,
		  machine: $machine, cpu_model: $cpu, cores_online: ($cores | tonumber? // null),
		  memory_kb: ($mem | tonumber? // null), program: $program, device: $device}'
}

# (Re)starts the server host's tbench_srv with ARGS, unless it runs with
# them already. Status 1 and REMOTE_ERROR saying why when it does not start.
remote_server_start() { # [ARGS...]
	local h="$REMOTE_SERVER_HOST"
	[ "$*" != "$REMOTE_SRV_ARGS" ] || return 0
	REMOTE_SRV_ARGS="$*"
	if ! REMOTE_ERROR="$(remote_run "$h" bash -c "$REMOTE_SERVER" tbench-server "${REMOTE_DIR[$h]}" \
		"${REMOTE_BIN[$h]}" "$REMOTE_PORT" "$@" </dev/null 2>&1)"; then
		REMOTE_SRV_ARGS="-"
		REMOTE_ERROR="$h: ${REMOTE_ERROR:-tbench_srv did not start}"
		return 1
	fi
	REMOTE_ERROR=""
}

# Everything on the other hosts, before the first run: guards, programs,
# the server, their facts. Sets SERVER, the address the clients use.
remote_setup() { # TBENCH TBENCH_SRV
	local h help meta=() srv_args=()
	[ -n "$REMOTE_SERVER_HOST" ] || return 0
	remote_start_guard "$REMOTE_SERVER_HOST" "$REMOTE_SERVER_DEV"
	REMOTE_BIN[$REMOTE_SERVER_HOST]="$(remote_program "$REMOTE_SERVER_HOST" tbench_srv "$2")"
	[ "$THREADS" -eq 0 ] || srv_args=(--threads)
	remote_server_start "${srv_args[@]}" ||
		remote_die "$REMOTE_SERVER_HOST" "${REMOTE_ERROR#"$REMOTE_SERVER_HOST: "}"
	SERVER="$(remote_server_address)"
	echo "$PROG: tbench_srv on $REMOTE_SERVER_HOST, port $REMOTE_PORT; clients connect to $SERVER" >&2
	meta+=("$(remote_host_meta "$REMOTE_SERVER_HOST" server "$REMOTE_SERVER_DEV")")
	for h in "${REMOTE_CLIENT_HOSTS[@]}"; do
		remote_start_guard "$h" ""
		REMOTE_BIN[$h]="$(remote_program "$h" tbench "$1")"
		# Read whole: "| grep -q" would end early, and ssh's SIGPIPE fail the pipeline (pipefail).
		help="$(remote_run "$h" "${REMOTE_BIN[$h]}" --help </dev/null 2>&1)" || true
		[[ "$help" == *--start-at* ]] ||
			die "$h: ${REMOTE_BIN[$h]} has no --start-at, which starts the client hosts together: use this suite's newer tbench (--push copies it)"
		meta+=("$(remote_host_meta "$h" client "")")
	done
	# shellcheck disable=SC2034  # read by write_meta
	REMOTE_META="$(printf '%s\n' "${meta[@]}" | jq -s -c .)"
}

# ---- the clients on several hosts ---------------------------------------------------

# The tbench command CMD for HOST: its tbench, --start-at START, and its
# own --json file; one word a line.
remote_client_command() { # HOST START CMD...
	local host="$1" start="$2" i args
	shift 2
	args=("$@")
	printf '%s\n' "${REMOTE_BIN[$host]}" --start-at "$start"
	for ((i = 1; i < ${#args[@]}; i++)); do
		if [ "${args[$i]}" = --json ]; then
			printf '%s\n' --json "${REMOTE_DIR[$host]}/run.json"
			i=$((i + 1))
		else
			printf '%s\n' "${args[$i]}"
		fi
	done
}

# Waits for the PIDS until the epoch second DEADLINE at the latest.
remote_wait_until() { # DEADLINE PIDS...
	local deadline="$1" pid left=1
	shift
	while [ "$left" -eq 1 ] && [ "$(date +%s)" -le "$deadline" ]; do
		left=0
		for pid in "$@"; do ! kill -0 "$pid" 2>/dev/null || left=1; done
		[ "$left" -eq 0 ] || sleep 0.2
	done
}

# Copies HOST's run.json to LOCAL; status 1 when it left none.
remote_fetch_json() { # HOST LOCAL LOG
	if remote_run "$1" cat "${REMOTE_DIR[$1]}/run.json" </dev/null >"$2" 2>>"$3" && [ -s "$2" ]; then
		remote_run "$1" rm -f "${REMOTE_DIR[$1]}/run.json" </dev/null 2>>"$3" || true
		return 0
	fi
	rm -f "$2"
	return 1
}

# Status 0 when the runs to SERVER go from the client hosts.
remote_clients_for() { # SERVER
	[ "${#REMOTE_CLIENT_HOSTS[@]}" -gt 0 ] && [ -n "$1" ]
}

# Why a client host's run ended with status RC, from its output in LOG.
remote_failure() { # RC LOG
	local why
	why="$(grep -i 'error\|fail\|late\|refused\|guard' "$2" | tail -n 1 || true)"
	case "$1" in
	255) echo "ssh failed (exit 255)${why:+: $why}" ;;
	129 | 13[0-9] | 14[0-9] | 15[0-9]) echo "exit $1: its tbench was killed by signal $(($1 - 128))${why:+: $why}" ;;
	*) echo "exit $1: ${why:-no reason given}" ;;
	esac
}

# The row of HOST's own run (runs/ID.HOST.json) appended to the sweep's
# hosts.csv: the run's ID, the host, then the columns of runs.csv as far
# as that JSON gives them (a point's knob columns are in runs.csv).
remote_host_row() { # BASE HOST RC
	local csv="$OUT/hosts.csv" row
	row="$("$STATS" row --set "exit_code=$3" "$1.$2.json")" || return 1
	{
		if [ -s "$csv" ]; then cat "$csv"; else echo "run,host,$("$STATS" row --header)"; fi
		echo "${1##*/},$2,$row"
	} >"$csv.tmp.$BASHPID"
	mv -f "$csv.tmp.$BASHPID" "$csv"
}

# Runs the tbench command CMD (its first word the local tbench, with
# --json JSON.part) on every client host at once, from a common instant,
# and merges their JSON into JSON.part (each host's beside it); their
# output goes to LOG. Started in the background (&), as the sweep starts
# tbench: SIGTERM stops the hosts' runs. Status 0 when every host's run
# was ok; else remote_clients_why names the hosts and says why.
remote_clients_run() { # JSON.part LOG CMD...
	local part="$1" log="$2" base="${1%.json.part}" h i rc start deadline hostlog reason
	local rcmd=() pids=() jsons=() names=() failures=()
	shift 2
	trap 'kill -TERM "${REMOTE_CLIENT_PIDS[@]}" 2>/dev/null; exit 143' TERM
	rm -f "$TB_TMP/remote-why"
	start=$(($(date +%s) + ${REMOTE_START_LEAD%.*} + 1))
	deadline=$((start + ($(secs_to_ms "$WARMUP") + $(secs_to_ms "$TIME")) / 1000 + REMOTE_DEADLINE_SLACK))
	echo "client hosts ${REMOTE_CLIENT_HOSTS[*]}: start at $start ($(date -d "@$start" -Iseconds)," \
		"deadline $(date -d "@$deadline" -Iseconds))" >>"$log"
	for h in "${REMOTE_CLIENT_HOSTS[@]}"; do
		mapfile -t rcmd < <(remote_client_command "$h" "$start" "$@")
		echo "+ $h: ${rcmd[*]}" >>"$log"
		remote_run "$h" bash -c "$REMOTE_CLIENT" tbench-client "${rcmd[@]}" \
			< <(remote_heartbeat) >"$base.$h.log" 2>&1 &
		pids+=("$!")
	done
	REMOTE_CLIENT_PIDS=("${pids[@]}")
	remote_wait_until "$deadline" "${pids[@]}"
	for i in "${!REMOTE_CLIENT_HOSTS[@]}"; do
		h="${REMOTE_CLIENT_HOSTS[$i]}" hostlog="$base.$h.log" rc=0 reason=""
		if kill -0 "${pids[$i]}" 2>/dev/null; then
			kill -TERM "${pids[$i]}" 2>/dev/null || true
			reason="no result $REMOTE_DEADLINE_SLACK s after the run's end (lagging): stopped"
		fi
		wait "${pids[$i]}" || rc=$?
		[ "$rc" -eq 0 ] || [ -n "$reason" ] || reason="$(remote_failure "$rc" "$hostlog")"
		{ echo "--- $h (exit $rc):"; cat "$hostlog"; } >>"$log"
		rm -f "$hostlog"
		if remote_fetch_json "$h" "$base.$h.json" "$log"; then
			jsons+=("$base.$h.json")
			names+=("$h")
			remote_host_row "$base" "$h" "$rc" 2>>"$log" || true
		elif [ -z "$reason" ]; then
			reason="it left no JSON"
		fi
		[ -z "$reason" ] || failures+=("client host $h: $reason")
	done
	REMOTE_CLIENT_PIDS=()
	if [ "${#jsons[@]}" -gt 0 ] &&
		! "$STATS" merge --names "$(IFS=,; echo "${names[*]}")" "${jsons[@]}" >"$part" 2>>"$log"; then
		failures+=("the client hosts' JSON could not be merged: $(tail -n 1 "$log")")
		rm -f "$part"
	fi
	[ "${#failures[@]}" -eq 0 ] || printf '%s\n' "${failures[@]}" >"$TB_TMP/remote-why"
	[ "${#failures[@]}" -eq 0 ]
}

# Why the last remote_clients_run failed, on one line ("" when it did not).
remote_clients_why() {
	[ ! -f "$TB_TMP/remote-why" ] || paste -sd';' "$TB_TMP/remote-why" | sed 's/;/; /g'
	rm -f "$TB_TMP/remote-why"
}

# ---- clean-up --------------------------------------------------------------------------

# Stops what runs on the other hosts and waits (a while) for every guard to
# say it restored its host. Safe to call at any point, more than once.
remote_cleanup() {
	local pid h _
	for pid in "${REMOTE_CLIENT_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
	REMOTE_CLIENT_PIDS=()
	# The heartbeats end: each guard reads the end of its input and restores.
	for pid in "${REMOTE_BEAT_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
	REMOTE_BEAT_PIDS=()
	for h in "${!REMOTE_GUARD_PIDS[@]}"; do
		pid="${REMOTE_GUARD_PIDS[$h]}"
		for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		if kill -0 "$pid" 2>/dev/null; then
			kill -TERM "$pid" 2>/dev/null || true
			echo "$PROG: WARNING: $h's guard did not end within 15 s; it restores $h when its ssh session ends" >&2
		elif grep -q '^restored' "${REMOTE_GUARD_LOG[$h]}" 2>/dev/null; then
			echo "$PROG: $h: $(grep '^restored' "${REMOTE_GUARD_LOG[$h]}" | tail -n 1)" >&2
		else
			echo "$PROG: WARNING: $h's guard ended without saying it restored $h (see ${REMOTE_GUARD_LOG[$h]})" >&2
		fi
		wait "$pid" 2>/dev/null || true
	done
	REMOTE_GUARD_PIDS=()
}
