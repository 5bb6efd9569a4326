# tbench-sweep's network side (sourced, not run): for --veth and --dev,
# private namespaces, the veth pair and its tbench_srv, offloads set and read
# back with ethtool, and the clean-up that leaves the host as it was. The
# default (loopback) mode needs none of it: each run is tbench --netns.
#
# What it has made, for net_cleanup to undo (the only state kept here):
#   NET_NAMESPACES  namespaces created
#   NET_SRV_PID     the tbench_srv of --veth
#   NET_DEV_SAVED   "feature=value" of --dev's settings before the sweep
# The mode comes from the caller: net_setup MODE MTU DEV SRV-LOG TBENCH_SRV [SRV-ARGS...].
# shellcheck shell=bash

NET_NS="tbsweep-$$"
NET_NS_SRV="$NET_NS-srv"
NET_NS_CLI="$NET_NS-cli"
NET_VETH_SRV=veth-srv
NET_VETH_CLI=veth-cli
NET_ADDR_SRV=10.199.0.1
NET_ADDR_CLI=10.199.0.2
NET_SRV_PORT=7003
# Not a name ip netns allows: a new namespace for one command, as each
# run of tbench --netns has (a user namespace too when not root).
NET_NS_NEW=/new
NET_NAMESPACES=()
NET_SRV_PID=""
NET_DEV_SAVED=()

in_ns() { # NS CMD... ("" = the host's namespace)
	local ns="$1"
	shift
	case "$ns" in
	"") "$@" ;;
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
	local mtu="$1" log="$2" srv="$3" _
	shift 3
	net_new_ns "$NET_NS_SRV"
	net_new_ns "$NET_NS_CLI"
	# Created inside the namespaces: the host never sees these devices.
	ip link add "$NET_VETH_SRV" netns "$NET_NS_SRV" mtu "$mtu" type veth \
		peer name "$NET_VETH_CLI" netns "$NET_NS_CLI" mtu "$mtu" ||
		die "cannot create the veth pair"
	ip -n "$NET_NS_SRV" addr add "$NET_ADDR_SRV/30" dev "$NET_VETH_SRV"
	ip -n "$NET_NS_CLI" addr add "$NET_ADDR_CLI/30" dev "$NET_VETH_CLI"
	ip -n "$NET_NS_SRV" link set "$NET_VETH_SRV" up
	ip -n "$NET_NS_CLI" link set "$NET_VETH_CLI" up
	ip netns exec "$NET_NS_SRV" "$srv" --listen "$NET_ADDR_SRV" --port "$NET_SRV_PORT" -q "$@" \
		>"$log" 2>&1 &
	NET_SRV_PID=$!
	for _ in $(seq 50); do
		if ip netns exec "$NET_NS_SRV" ss -Hltn "sport = :$NET_SRV_PORT" 2>/dev/null | grep -q .; then return; fi
		kill -0 "$NET_SRV_PID" 2>/dev/null || die "tbench_srv did not start: $(cat "$log")"
		sleep 0.1
	done
	die "tbench_srv is not listening on $NET_ADDR_SRV:$NET_SRV_PORT after 5 s"
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
	case "$1:$3" in
	veth:tcp) echo "$NET_NS_CLI|$NET_ADDR_SRV|$NET_NS_CLI:$NET_VETH_CLI $NET_NS_SRV:$NET_VETH_SRV" ;;
	dev:tcp) echo "|$5|:$4" ;;
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
