# tbench-sweep's network side (sourced, not run): for --veth and --dev,
# private namespaces, the veth pair and its tbench_srv, offloads set and read
# back with ethtool, and the clean-up that leaves the host as it was. The
# default (loopback) mode needs none of it: each run is tbench --netns.
#
# What it has made, for net_cleanup to undo (the only state kept here):
#   NET_NAMESPACES  namespaces created
#   NET_SRV_PID     the tbench_srv of --veth
#   NET_DEV_SAVED   "feature=value" of --dev's settings before the sweep
#   NET_MTU_SAVED   "ns:dev" -> MTU before the sweep set one (knob mtu)
#   NET_QDISC_SET   "ns:dev" -> 1 when the sweep put a tbf there (knob rate)
# The mode comes from the caller: net_setup MODE MTU DEV SRV-LOG TBENCH_SRV [SRV-ARGS...].
# shellcheck shell=bash

NET_NS="tbsweep-${SUPERVISE_PID:-$$}"   # the PID the user knows
NET_NS_SRV="$NET_NS-srv"
NET_NS_CLI="$NET_NS-cli"
NET_VETH_SRV=veth-srv
NET_VETH_CLI=veth-cli
NET_ADDR_SRV=10.199.0.1
NET_ADDR_CLI=10.199.0.2
NET_ADDR6_SRV=fd00:7462:6e63::1   # a unique local prefix, private to the pair too
NET_ADDR6_CLI=fd00:7462:6e63::2
# MPTCP's second path (net_mptcp_paths): a second veth pair.
NET_VETH2_SRV=veth-srv2
NET_VETH2_CLI=veth-cli2
NET_ADDR2_SRV=10.199.1.1
NET_ADDR2_CLI=10.199.1.2
NET_SRV_PORT=7003
# Not a name ip netns allows: a new namespace for one command, as each
# run of tbench --netns has (a user namespace too when not root).
NET_NS_NEW=/new
NET_NAMESPACES=()
NET_SRV_PID=""
NET_SRV_ARGS=""       # the extra arguments of the tbench_srv running now
NET_SRV_BIN="" NET_SRV_LOG="" NET_SRV_ERROR=""
NET_DEV_SAVED=()
declare -A NET_MTU_SAVED=() NET_QDISC_SET=()

in_ns() { # NS CMD... ("" = the host's namespace)
	local ns="$1"
	shift
	case "$ns" in
	"") "$@" ;;
	@*) remote_run "${ns#@}" "$@" ;;   # a device of another host (remote.sh): "@HOST"
	"$NET_NS_NEW")
		if [ "$(id -u)" -eq 0 ]; then unshare --net "$@"; else unshare --user --map-root-user --net "$@"; fi ;;
	*) ip netns exec "$ns" "$@" ;;
	esac
}

kill_wait() { # PID: ask nicely, then insist
	local pid="$1" _
	kill -TERM "$pid" 2>/dev/null || return 0
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.2
	done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

# ethtool -k DEV in NS -> "feature<TAB>value" lines (none if it cannot say)
net_features() { # NS DEV
	{ in_ns "$1" ethtool -k "$2" 2>/dev/null || true; } | awk -F': ' 'NR > 1 && NF >= 2 { sub(/^[ \t]+/, "", $1); print $1 "\t" $2 }'
}

net_features_json() { # NS DEV
	net_features "$1" "$2" | jq -R -n '[inputs | split("\t") | { (.[0]): .[1] }] | add // {}'
}

# "tso gso gro" as ethtool -k reads them back ("unknown" if it does not say)
net_read_offloads() { # NS DEV
	local f v tso=unknown gso=unknown gro=unknown
	while IFS=$'\t' read -r f v; do
		case "$f" in
		tcp-segmentation-offload) tso="${v%% *}" ;;
		generic-segmentation-offload) gso="${v%% *}" ;;
		generic-receive-offload) gro="${v%% *}" ;;
		esac
	done < <(net_features "$1" "$2")
	echo "$tso $gso $gro"
}

# Sets TSO/GSO/GRO ("" = left alone) on every device of DEVS ("ns:dev"
# words) and prints what they read back: "dev|tso|gso|gro", one value where
# the devices agree, "mixed" where not. ethtool's complaints go to stderr:
# the read-back is what counts.
net_apply_offloads() { # DEVS TSO GSO GRO
	local nd ns dev args rb first="" tso gso gro
	for nd in $1; do
		ns="${nd%%:*}"
		dev="${nd#*:}"
		args=()
		[ -z "$2" ] || args+=(tso "$2")
		[ -z "$3" ] || args+=(gso "$3")
		[ -z "$4" ] || args+=(gro "$4")
		[ "${#args[@]}" -eq 0 ] || in_ns "$ns" ethtool -K "$dev" "${args[@]}" >&2 || true
		read -r -a rb <<<"$(net_read_offloads "$ns" "$dev")"
		echo "offloads of ${ns:-host}:$dev: tso ${rb[0]} gso ${rb[1]} gro ${rb[2]}" >&2
		if [ -z "$first" ]; then
			first="$dev" tso="${rb[0]}" gso="${rb[1]}" gro="${rb[2]}"
		else
			[ "$tso" = "${rb[0]}" ] || tso=mixed
			[ "$gso" = "${rb[1]}" ] || gso=mixed
			[ "$gro" = "${rb[2]}" ] || gro=mixed
		fi
	done
	[ "$first" != "$NET_VETH_CLI" ] || first=veth
	echo "$first|$tso|$gso|$gro"
}

net_new_ns() { # NAME
	ip netns add "$1" || die "cannot create network namespace $1"
	NET_NAMESPACES+=("$1")
	ip -n "$1" link set lo up
}

net_start_veth() { # MTU SRV-LOG TBENCH_SRV [SRV-ARGS...]
	local mtu="$1"
	NET_SRV_LOG="$2" NET_SRV_BIN="$3"
	shift 3
	net_new_ns "$NET_NS_SRV"
	net_new_ns "$NET_NS_CLI"
	# Created inside the namespaces: the host never sees these devices.
	ip link add "$NET_VETH_SRV" netns "$NET_NS_SRV" mtu "$mtu" type veth \
		peer name "$NET_VETH_CLI" netns "$NET_NS_CLI" mtu "$mtu" ||
		die "cannot create the veth pair"
	ip -n "$NET_NS_SRV" addr add "$NET_ADDR_SRV/30" dev "$NET_VETH_SRV"
	ip -n "$NET_NS_CLI" addr add "$NET_ADDR_CLI/30" dev "$NET_VETH_CLI"
	# IPv6 too (for the knob family), without duplicate address detection's wait.
	ip -n "$NET_NS_SRV" addr add "$NET_ADDR6_SRV/64" dev "$NET_VETH_SRV" nodad 2>/dev/null || true
	ip -n "$NET_NS_CLI" addr add "$NET_ADDR6_CLI/64" dev "$NET_VETH_CLI" nodad 2>/dev/null || true
	ip -n "$NET_NS_SRV" link set "$NET_VETH_SRV" up
	ip -n "$NET_NS_CLI" link set "$NET_VETH_CLI" up
	net_start_server "$@" || die "$NET_SRV_ERROR"
}

# --veth for mptcp: a second veth pair between the namespaces, and an MPTCP
# endpoint on the client's end of it that opens a second subflow of every
# MPTCP connection from there (ip mptcp limits in both namespaces let them
# open and accept it). A rule routes what leaves from that address over the
# second pair, to the server's usual address: plain TCP never takes it.
# Status 1, saying why on stderr, when ip or the kernel cannot.
net_mptcp_paths() { # MTU
	local err
	if err="$({
		ip link add "$NET_VETH2_SRV" netns "$NET_NS_SRV" mtu "$1" type veth \
			peer name "$NET_VETH2_CLI" netns "$NET_NS_CLI" mtu "$1" &&
			ip -n "$NET_NS_SRV" addr add "$NET_ADDR2_SRV/30" dev "$NET_VETH2_SRV" &&
			ip -n "$NET_NS_CLI" addr add "$NET_ADDR2_CLI/30" dev "$NET_VETH2_CLI" &&
			ip -n "$NET_NS_SRV" link set "$NET_VETH2_SRV" up &&
			ip -n "$NET_NS_CLI" link set "$NET_VETH2_CLI" up &&
			ip -n "$NET_NS_CLI" rule add from "$NET_ADDR2_CLI" table 7003 &&
			ip -n "$NET_NS_CLI" route add "${NET_ADDR_SRV%.*}.0/30" dev "$NET_VETH2_CLI" table 7003 &&
			ip -n "$NET_NS_SRV" mptcp limits set subflows 2 add_addr_accepted 2 &&
			ip -n "$NET_NS_CLI" mptcp limits set subflows 2 add_addr_accepted 2 &&
			ip -n "$NET_NS_CLI" mptcp endpoint add "$NET_ADDR2_CLI" dev "$NET_VETH2_CLI" subflow
	} 2>&1)"; then
		return 0
	fi
	echo "MPTCP's second path over a second veth pair: ${err:-failed}" >&2
	return 1
}

# Makes --veth's tbench_srv the one with these extra arguments, restarting
# it when they differ: knobs such as its socket options and CPUs are its
# own, set when it starts. It listens on every address of its namespace,
# which has the pair's IPv4 and IPv6 ends. Status 1 and NET_SRV_ERROR
# saying why when it does not start.
net_start_server() { # [SRV-ARGS...]
	local _
	if [ -n "$NET_SRV_PID" ] && [ "$*" = "$NET_SRV_ARGS" ] && kill -0 "$NET_SRV_PID" 2>/dev/null; then return 0; fi
	[ -z "$NET_SRV_PID" ] || kill_wait "$NET_SRV_PID"
	NET_SRV_PID=""
	NET_SRV_ARGS="$*"
	echo "+ tbench_srv --port $NET_SRV_PORT -q $*" >>"$NET_SRV_LOG"
	ip netns exec "$NET_NS_SRV" "$NET_SRV_BIN" --port "$NET_SRV_PORT" -q "$@" >>"$NET_SRV_LOG" 2>&1 &
	NET_SRV_PID=$!
	# A minute at most: a loaded machine (an ASan build, make check -j) can
	# be slow to start it; a server that dies ends the wait at once.
	for _ in $(seq 600); do
		if [ -n "$(ip netns exec "$NET_NS_SRV" ss -Hltn "sport = :$NET_SRV_PORT" 2>/dev/null)" ]; then return 0; fi
		if ! kill -0 "$NET_SRV_PID" 2>/dev/null; then
			NET_SRV_PID=""
			NET_SRV_ERROR="tbench_srv $* did not start: $(tail -n 1 "$NET_SRV_LOG")"
			return 1
		fi
		sleep 0.1
	done
	NET_SRV_ERROR="tbench_srv $* is not listening on port $NET_SRV_PORT after 60 s"
	return 1
}

# ---- device knobs (mtu, rate) on the devices a run crosses ------------------------
# Each sets its value on every "ns:dev" of DEVS and reads it back; it prints
# why a device did not take it (nothing when all did). net_restore_devices
# undoes them: after each run, and on exit.

net_mtu_of() { # NS DEV
	{ in_ns "$1" ip -o link show dev "$2" 2>/dev/null || true; } | sed -n 's/.* mtu \([0-9]*\) .*/\1/p'
}

net_set_mtu() { # DEVS MTU
	local nd ns dev now err
	for nd in $1; do
		ns="${nd%%:*}" dev="${nd#*:}"
		[ -n "${NET_MTU_SAVED[$nd]:-}" ] || NET_MTU_SAVED[$nd]="$(net_mtu_of "$ns" "$dev")"
		err="$(in_ns "$ns" ip link set dev "$dev" mtu "$2" 2>&1)" || true
		now="$(net_mtu_of "$ns" "$dev")"
		echo "mtu of ${ns:-host}:$dev: ${now:-unknown}" >&2
		[ "$now" = "$2" ] || echo "mtu=$2: ${ns:-host}:$dev reads back MTU ${now:-unknown}${err:+ (ip: $err)}"
	done
}

# A tc rate (100mbit) in bytes per second, as tc -j reports it.
net_rate_bytes() { # RATE
	local n="${1%%[a-z]*}" unit="${1##*[0-9]}" mult=1
	case "$unit" in kbit) mult=1000 ;; mbit) mult=1000000 ;; gbit) mult=1000000000 ;; tbit) mult=1000000000000 ;; esac
	echo $((n * mult / 8))
}

net_set_rate() { # DEVS RATE
	local nd ns dev want burst got err root
	want="$(net_rate_bytes "$2")"
	# A burst of 10 ms at the rate, and at least two 64 KB GSO packets.
	burst=$((want / 100 > 131072 ? want / 100 : 131072))
	for nd in $1; do
		ns="${nd%%:*}" dev="${nd#*:}"
		if [ -z "${NET_QDISC_SET[$nd]:-}" ]; then
			# Restoring is deleting ours, which brings back the kernel's
			# default: refuse a device whose root qdisc someone set up.
			root="$({ in_ns "$ns" tc -j qdisc show dev "$dev" root 2>/dev/null || true; } | jq -r '.[0].handle // empty')"
			if [ "$root" != 0: ]; then
				echo "rate=$2: ${ns:-host}:$dev has a root qdisc of its own (handle ${root:-unknown}), which the sweep could not restore"
				continue
			fi
			NET_QDISC_SET[$nd]=1
		fi
		err="$(in_ns "$ns" tc qdisc replace dev "$dev" root tbf rate "$2" burst "$burst" latency 50ms 2>&1)" || true
		got="$({ in_ns "$ns" tc -j qdisc show dev "$dev" root 2>/dev/null || true; } |
			jq -r '.[0] | select(.kind == "tbf") | .options.rate // empty')"
		echo "rate of ${ns:-host}:$dev: tbf ${got:-none} bytes/s" >&2
		# tc keeps the rate in its own units: within 1 %.
		if [ -z "$got" ] || [ $(((got - want) * 100)) -gt "$want" ] || [ $(((want - got) * 100)) -gt "$want" ]; then
			echo "rate=$2: ${ns:-host}:$dev reads back tbf rate ${got:-none} bytes/s, not $want${err:+ (tc: $err)}"
		fi
	done
}

# Every MTU and qdisc the knobs changed back as they were; with "say",
# says so for the host's devices (--dev), as on exit.
net_restore_devices() { # [say]
	local nd ns dev
	for nd in "${!NET_MTU_SAVED[@]}"; do
		ns="${nd%%:*}" dev="${nd#*:}"
		[ "${1:-}" != say ] || [ -n "$ns" ] || echo "$PROG: restoring $dev: mtu ${NET_MTU_SAVED[$nd]}" >&2
		in_ns "$ns" ip link set dev "$dev" mtu "${NET_MTU_SAVED[$nd]}" 2>/dev/null ||
			echo "$PROG: WARNING: could not restore ${ns:-host}:$dev's MTU ${NET_MTU_SAVED[$nd]}" >&2
	done
	for nd in "${!NET_QDISC_SET[@]}"; do
		ns="${nd%%:*}" dev="${nd#*:}"
		[ "${1:-}" != say ] || [ -n "$ns" ] || echo "$PROG: restoring $dev: the kernel's default root qdisc" >&2
		in_ns "$ns" tc qdisc del dev "$dev" root 2>/dev/null || true
	done
	NET_MTU_SAVED=() NET_QDISC_SET=()
}

net_save_dev() { # DEV: its offloads, restored by net_cleanup
	local tso gso gro
	ip link show "$1" >/dev/null 2>&1 || die "--dev: no device $1"
	read -r tso gso gro <<<"$(net_read_offloads "" "$1")"
	[ "$tso" = unknown ] || NET_DEV_SAVED+=("tso=$tso")
	[ "$gso" = unknown ] || NET_DEV_SAVED+=("gso=$gso")
	[ "$gro" = unknown ] || NET_DEV_SAVED+=("gro=$gro")
	echo "$PROG: $1 offloads now ${NET_DEV_SAVED[*]}: restored on exit" >&2
}

net_setup() { # MODE MTU DEV SRV-LOG TBENCH_SRV [SRV-ARGS...]
	local mode="$1" mtu="$2" dev="$3"
	shift 3
	[ "$mode" != lo ] || return 0
	net_new_ns "$NET_NS"
	case "$mode" in
	veth) net_start_veth "$mtu" "$@" ;;
	dev) net_save_dev "$dev" ;;
	esac
}

# Where a backend's clients run and which devices its traffic crosses:
# "ns|server|devs" (devs: "ns:dev" words; empty for a backend that crosses
# no device, run with offload n/a, and in the loopback mode, where tbench
# --netns makes the namespace and sets the offloads itself).
net_route() { # MODE NET(0|1) BACKEND DEV SERVER
	local cli="$NET_NS"
	if [ "$1" = lo ]; then
		echo "||"
		return
	fi
	[ "$1" != veth ] || cli="$NET_NS_CLI"
	if [ "$2" -eq 0 ]; then
		echo "$cli||"
		return
	fi
	# What crosses the wire, from the backend's capabilities (tbench -b
	# list, read by tb_read_backends in common.sh).
	local cap=lo
	if [ "$1" = remote ] && backend_has "$3" server; then cap=remote
	elif [ "$1" = veth ] && backend_has "$3" multipath; then cap=multipath
	elif [ "$1" != remote ] && backend_has "$3" wire; then cap=wire
	fi
	case "$1:$cap" in
	veth:wire) echo "$NET_NS_CLI|$NET_ADDR_SRV|$NET_NS_CLI:$NET_VETH_CLI $NET_NS_SRV:$NET_VETH_SRV" ;;
	veth:multipath) echo "$NET_NS_CLI|$NET_ADDR_SRV|$NET_NS_CLI:$NET_VETH_CLI $NET_NS_SRV:$NET_VETH_SRV $NET_NS_CLI:$NET_VETH2_CLI $NET_NS_SRV:$NET_VETH2_SRV" ;;
	dev:wire) echo "|$5|:$4" ;;
	remote:remote) echo "|$5|$REMOTE_DEVS" ;;
	veth:*) echo "$NET_NS_CLI||$NET_NS_CLI:lo" ;;
	*) echo "$NET_NS||$NET_NS:lo" ;;
	esac
}

# Every device a run may use, with all its ethtool -k flags, as JSON; in the
# loopback mode the lo of a new namespace, as each run starts with it.
net_devices_json() { # MODE DEV
	local list=("$NET_NS:lo") nd ns dev mtu driver name entries=()
	[ "$1" != lo ] || list=("$NET_NS_NEW:lo")
	[ "$1" != veth ] || list=("$NET_NS_CLI:lo" "$NET_NS_CLI:$NET_VETH_CLI" "$NET_NS_SRV:$NET_VETH_SRV")
	[ "$1" != dev ] || list+=(":$2")
	for nd in "${list[@]}"; do
		ns="${nd%%:*}"
		dev="${nd#*:}"
		mtu="$({ in_ns "$ns" ip -o link show dev "$dev" 2>/dev/null || true; } | sed -n 's/.* mtu \([0-9]*\) .*/\1/p')"
		driver="$({ in_ns "$ns" ethtool -i "$dev" 2>/dev/null || true; } | sed -n 's/^driver: //p')"
		name="${ns:-host}"
		[ "$ns" != "$NET_NS_NEW" ] || name="each run's own (tbench --netns)"
		entries+=("$(jq -n --arg ns "$name" --arg dev "$dev" --arg mtu "$mtu" --arg driver "$driver" \
			--argjson flags "$(net_features_json "$ns" "$dev")" \
			'{namespace: $ns, device: $dev, driver: $driver, mtu: ($mtu | tonumber? // null),
			  offload_flags_at_start: $flags}')")
	done
	printf '%s\n' "${entries[@]}" | jq -s -c .
}

# Undoes what net_setup made; safe to call at any point, more than once.
net_cleanup() { # DEV
	local ns pid
	[ -z "$NET_SRV_PID" ] || kill_wait "$NET_SRV_PID"
	NET_SRV_PID=""
	# Whatever else still runs in our namespaces was started by us.
	for ns in "${NET_NAMESPACES[@]}"; do
		for pid in $(ip netns pids "$ns" 2>/dev/null); do kill_wait "$pid"; done
	done
	net_restore_devices say
	if [ "${#NET_DEV_SAVED[@]}" -gt 0 ]; then
		echo "$PROG: restoring $1: ${NET_DEV_SAVED[*]}" >&2
		# shellcheck disable=SC2046
		ethtool -K "$1" $(printf '%s ' "${NET_DEV_SAVED[@]//=/ }") 2>/dev/null ||
			echo "$PROG: WARNING: could not restore $1's offloads (${NET_DEV_SAVED[*]})" >&2
		NET_DEV_SAVED=()
	fi
	for ns in "${NET_NAMESPACES[@]}"; do
		ip netns del "$ns" 2>/dev/null || echo "$PROG: WARNING: could not remove namespace $ns" >&2
	done
	NET_NAMESPACES=()
}
