# tbench-sweep's knobs (sourced, not run): every setting a sweep can vary
# with --vary NAME=V1,V2,..., in one table that says which backends it means
# something to, the values it takes, how a run applies it and how it is
# read back. A knob's name is also its column in runs.csv and summary.csv.
# The record of a run carries its knobs as "name=value" words; the caller
# reads tbench's backends (tb_read_backends, common.sh) and sets KNOB_NET
# (the backends whose bytes cross a device: "a,b" or "all") and
# KNOB_COLUMNS (see knob_columns).
# shellcheck shell=bash

# backends: net   the backends whose bytes cross a network device (--net-backends)
#           sock  the backends whose TCP sockets take tbench -T: sockopts in -b list
#           wire  the backends that cross --veth's pair or --dev's device: wire in -b list
#           all   every backend
# applied:  offloads      tbench --netns --offload/--tso/--gso/--gro; ethtool -K on a device
#           opt:OPTION    tbench OPTION VALUE (only when tbench makes the namespace: mtu)
#           sockopt:NAME  tbench -T NAME=VALUE, and tbench_srv -T with --veth
#           placement     tbench --cpus, --server-cpus; tbench_srv --cpus with --veth
#           model         tbench --threads, and tbench_srv's with --veth (threads)
#           -             not by tbench
# device:   what the sweep sets with --veth and --dev on the devices the run
#           crosses (net_set_KIND in netns.sh), restored on exit; - none
# read back: json:PATH  the run's --json says it (tbench --netns, getsockopt);
#           tbench      tbench fails the run itself unless it reads back as asked
#           device      the sweep reads the device back before the run
# name       backends values     applied                 device    read back
KNOB_TABLE='
offload      net      onoff      offloads                offloads  tbench
tso          net      onoff      offloads                offloads  tbench
gso          net      onoff      offloads                offloads  tbench
gro          net      onoff      offloads                offloads  tbench
mtu          net      mtu        opt:--mtu               mtu       json:netns.mtu
cc           sock     ccname     sockopt:TCP_CONGESTION  -         json:socket.cc
nodelay      sock     onoff      sockopt:TCP_NODELAY     -         json:socket.nodelay
sndbuf       sock     bytes      sockopt:SO_SNDBUF       -         json:socket.sndbuf
rcvbuf       sock     bytes      sockopt:SO_RCVBUF       -         json:socket.rcvbuf
family       sock     family     opt:--family            -         json:settings.family
placement    all      placement  placement               -         json:settings.cpus
model        all      model      model                   -         json:settings.model
rate         wire     rate       -                       rate      device
'
KNOB_OFFLOADS=" offload tso gso gro "   # one setting together: the offload label
KNOB_NAMES=()
declare -A KNOB_BACKENDS=() KNOB_TYPE=() KNOB_APPLY=() KNOB_DEVICE=() KNOB_READBACK=()
declare -A KNOB_VARY=()     # name -> the values asked for, "a,b"
KNOB_NET="" KNOB_COLUMNS=() KNOB_READ=""

knob_load_table() {
	local name b v a d r
	while read -r name b v a d r; do
		[ -n "$name" ] || continue
		KNOB_NAMES+=("$name")
		KNOB_BACKENDS[$name]="$b" KNOB_TYPE[$name]="$v" KNOB_APPLY[$name]="$a"
		KNOB_DEVICE[$name]="$d" KNOB_READBACK[$name]="$r"
	done <<<"$KNOB_TABLE"
}
knob_load_table

# ---- values ---------------------------------------------------------------------

# Empty when VALUE is one of TYPE, else what a value of TYPE is.
knob_bad_value() { # TYPE VALUE
	local v="$2"
	case "$1" in
	onoff) [[ "$v" =~ ^(on|off)$ ]] || echo "on or off" ;;
	mtu) [[ "$v" =~ ^[0-9]{2,5}$ ]] && [ "$((10#$v))" -ge 68 ] && [ "$((10#$v))" -le 65536 ] ||
		echo "an MTU: a whole number from 68 to 65536" ;;
	ccname) [[ "$v" =~ ^[A-Za-z0-9_-]{1,15}$ ]] ||
		echo "a congestion control name (see /proc/sys/net/ipv4/tcp_available_congestion_control)" ;;
	bytes) [[ "$v" =~ ^[1-9][0-9]{0,9}$ ]] && [ "$v" -le 1073741823 ] ||
		echo "a size in bytes, from 1 to 1073741823" ;;
	family) [[ "$v" =~ ^ipv[46]$ ]] || echo "ipv4 or ipv6" ;;
	placement) [[ "$v" =~ ^(same|split|free)$ ]] ||
		echo "same (clients and servers on one CPU), split (on two) or free (not pinned)" ;;
	model) [[ "$v" =~ ^(processes|threads)$ ]] || echo "processes or threads" ;;
	rate) [[ "$v" =~ ^[1-9][0-9]{0,5}(bit|kbit|mbit|gbit|tbit)$ ]] ||
		echo "a tc rate: a number and bit, kbit, mbit, gbit or tbit (e.g. 100mbit)" ;;
	esac
}

# --vary NAME=V1,V2,...: checks it and keeps it. OPTION names what the user
# typed (--vary, or the older --offload, --mtu, ...), for messages.
knob_vary() { # OPTION NAME=LIST
	local opt="$1" name="${2%%=*}" list v bad seen="," vals
	[[ "$2" == *=* ]] || usage_error "$opt '$2': give NAME=V1,V2,... (knobs: ${KNOB_NAMES[*]})"
	list="${2#*=}"
	[ -n "${KNOB_TYPE[$name]:-}" ] || usage_error "$opt: unknown knob '$name' (knobs: ${KNOB_NAMES[*]})"
	[ -z "${KNOB_VARY[$name]:-}" ] || usage_error "$opt: $name is given twice (give all its values at once)"
	if [ -z "$list" ] || [[ "$list" == *, ]]; then usage_error "$opt $2: an empty value"; fi
	IFS=, read -r -a vals <<<"$list"
	for v in "${vals[@]}"; do
		[ -n "$v" ] || usage_error "$opt $2: an empty value"
		bad="$(knob_bad_value "${KNOB_TYPE[$name]}" "$v")"
		[ -z "$bad" ] || usage_error "$opt $name=$list: '$v' is not $bad"
		[[ "$seen" != *",$v,"* ]] || usage_error "$opt $name=$list: '$v' given twice"
		seen+="$v,"
	done
	KNOB_VARY[$name]="$list"
}

# The knobs varied besides the offloads, in the table's order.
knob_varied() {
	local k
	for k in "${KNOB_NAMES[@]}"; do
		[[ "$KNOB_OFFLOADS" == *" $k "* ]] || [ -z "${KNOB_VARY[$k]:-}" ] || echo "$k"
	done
}

# Status 0 when a socket option knob is varied.
knob_varies_sockopts() {
	local k
	for k in $(knob_varied); do [[ "${KNOB_APPLY[$k]}" != sockopt:* ]] || return 0; done
	return 1
}

# What the mode cannot do; a usage error.
knob_check_mode() { # MODE
	if [ -n "${KNOB_VARY[rate]:-}" ] && [ "$1" = lo ]; then
		usage_error "--vary rate: a tbf qdisc needs a device the sweep may change: add --veth (or --dev IFACE)"
	fi
}

# ---- which backends ---------------------------------------------------------------

knob_applies() { # NAME BACKEND
	local set
	case "${KNOB_BACKENDS[$1]}" in
	all) return 0 ;;
	net) set="$KNOB_NET" ;;
	sock) set="$(backends_with sockopts)" ;;
	wire) set="$(backends_with wire)" ;;
	esac
	[ "$set" = all ] || [[ ",$set," == *",$2,"* ]]
}

# The combinations of the varied knobs for BACKEND, "name=value" words, one
# a line (an empty line when none is varied). A knob that means nothing to
# the backend is n/a: the backend runs once for it, as for the offloads.
knob_combos() { # BACKEND
	local combos=("") k v c next vals
	while IFS= read -r k; do
		[ -n "$k" ] || continue
		vals=(n/a)
		knob_applies "$k" "$1" && IFS=, read -r -a vals <<<"${KNOB_VARY[$k]}"
		next=()
		for c in "${combos[@]}"; do
			for v in "${vals[@]}"; do next+=("${c:+$c }$k=$v"); done
		done
		combos=("${next[@]}")
	done < <(knob_varied)
	printf '%s\n' "${combos[@]}"
}

# The value of NAME in a run's knob words: the one asked for, n/a, or "-"
# when the sweep does not vary it (the system's default).
knob_value() { # KNOBS NAME
	local v
	knob_get v "$1" "$2"
	echo "$v"
}

# knob_get VAR KNOBS NAME: knob_value into VAR, in this shell: a plan calls
# it for every knob of every run, and a $(...) is a fork each time.
knob_get() {
	# shellcheck disable=SC2034  # a nameref: the caller's variable is set
	local -n knob_get_out="$1"
	local w
	knob_get_out=-
	for w in $2; do
		if [ "${w%%=*}" = "$3" ]; then
			# shellcheck disable=SC2034
			knob_get_out="${w#*=}"
			return 0
		fi
	done
}

# Status 0 for a value asked for, 1 for "-" (not varied) and n/a.
knob_given() { [ "$1" != - ] && [ "$1" != n/a ]; }

# ---- applying them ----------------------------------------------------------------

# The CPUs of placement same and split: the first two this sweep may use.
knob_cpus() {
	local list first rest
	list="$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)"
	first="${list%%,*}"
	rest="${list#"$first"}"
	rest="${rest#,}"
	if [[ "$first" =~ ^([0-9]+)-([0-9]+)$ ]]; then
		echo "${BASH_REMATCH[1]} $((BASH_REMATCH[1] + 1))"
	elif [[ "$rest" =~ ^([0-9]+) ]]; then
		echo "$first ${BASH_REMATCH[1]}"
	else
		echo "${first:-0} $((${first:-0} + 1))"   # one CPU: split fails the runs, saying why
	fi
}
read -r KNOB_CPU0 KNOB_CPU1 <<<"$(knob_cpus)"

# "clients-cpus server-cpus" of a placement; "-" for none.
knob_placement_cpus() { # VALUE
	case "$1" in
	same) echo "$KNOB_CPU0 $KNOB_CPU0" ;;
	split) echo "$KNOB_CPU0 $KNOB_CPU1" ;;
	*) echo "- -" ;;
	esac
}

# tbench -T of a run: the default TCP_NODELAY unless nodelay is varied, and
# every socket option knob that applies. Empty when none does.
knob_sockopts() { # KNOBS
	local k v opts="" nodelay=TCP_NODELAY any=0
	for k in "${KNOB_NAMES[@]}"; do
		[[ "${KNOB_APPLY[$k]}" == sockopt:* ]] || continue
		knob_get v "$1" "$k"
		knob_given "$v" || continue
		any=1
		case "$v" in on) v=1 ;; off) v=0 ;; esac
		if [ "$k" = nodelay ]; then nodelay="TCP_NODELAY=$v"; else opts+=",${KNOB_APPLY[$k]#sockopt:}=$v"; fi
	done
	[ "$any" -eq 0 ] || echo "$nodelay$opts"
}

# tbench's arguments for a run's knobs, one a line. TBENCH_NS: 1 when
# tbench makes the run's namespace (--netns: it sets the device knobs
# itself), 0 when the sweep does. OWN_SERVER: 0 when tbench talks to a
# tbench_srv the sweep started (--veth), which gets the server side.
knob_tbench_args() { # KNOBS TBENCH_NS OWN_SERVER
	local k v opts cpus scpus
	for k in "${KNOB_NAMES[@]}"; do
		knob_get v "$1" "$k"
		knob_given "$v" || continue
		case "${KNOB_APPLY[$k]}" in
		opt:--mtu) [ "$2" -eq 0 ] || printf '%s\n' --mtu "$v" ;;
		opt:*) printf '%s\n' "${KNOB_APPLY[$k]#opt:}" "$v" ;;
		placement)
			read -r cpus scpus <<<"$(knob_placement_cpus "$v")"
			[ "$cpus" = - ] || printf '%s\n' --cpus "$cpus"
			[ "$scpus" = - ] || [ "$3" -eq 0 ] || printf '%s\n' --server-cpus "$scpus"
			;;
		model) [ "$v" != threads ] || echo --threads ;;
		esac
	done
	opts="$(knob_sockopts "$1")"
	[ -z "$opts" ] || printf '%s\n' -T "$opts"
}

# tbench_srv's arguments for a run's knobs (--veth): its side of them.
knob_server_args() { # KNOBS
	local opts cpus scpus
	[ "$(knob_value "$1" model)" != threads ] || echo --threads
	opts="$(knob_sockopts "$1")"
	[ -z "$opts" ] || printf '%s\n' -T "$opts"
	read -r cpus scpus <<<"$(knob_placement_cpus "$(knob_value "$1" placement)")"
	[ "$scpus" = - ] || printf '%s\n' --cpus "$scpus"
}

# The device knobs of a run (--veth, --dev) as "kind value" lines, for the
# sweep to set on the devices the run crosses before it starts.
knob_device_settings() { # KNOBS
	local k v
	for k in "${KNOB_NAMES[@]}"; do
		case "${KNOB_DEVICE[$k]}" in - | offloads) continue ;; esac
		knob_get v "$1" "$k"
		! knob_given "$v" || echo "${KNOB_DEVICE[$k]} $v"
	done
}

# ---- reading them back ---------------------------------------------------------------

# What the run's JSON should say at PATH for VALUE of knob NAME.
knob_expected() { # NAME VALUE
	case "${KNOB_TYPE[$1]}" in
	onoff) if [ "$2" = on ]; then echo true; else echo false; fi ;;
	bytes) echo $(($2 * 2)) ;;   # the kernel doubles SO_SNDBUF/SO_RCVBUF for its overhead
	*) echo "$2" ;;
	esac
}

# A JSON value as text: null, absent (an older tbench does not say), or the value.
knob_json_at() { # JSON PATH
	jq -r --arg p "$2" '($p | split(".")) as $q
		| if (try (getpath($q[:-1]) | has($q[-1])) catch false) then (getpath($q) | tostring) else "absent" end' "$1"
}

# The read-backs of a run's knobs against its --json: one line per knob
# that did not read back as asked (the run then failed: its reason), on
# stdout; one per knob this tbench does not report, on stderr.
knob_check_json() { # JSON KNOBS TBENCH_NS OWN_SERVER
	local k v path want cpus scpus
	for k in "${KNOB_NAMES[@]}"; do
		knob_get v "$2" "$k"
		knob_given "$v" || continue
		[[ "${KNOB_READBACK[$k]}" == json:* ]] || continue
		[ "${KNOB_DEVICE[$k]}" = - ] || [ "$3" -eq 1 ] || continue   # the sweep read the device back
		path="${KNOB_READBACK[$k]#json:}"
		if [ "$k" = placement ]; then
			read -r cpus scpus <<<"$(knob_placement_cpus "$v")"
			[ "$4" -eq 1 ] || scpus=-
			knob_check_one "$1" "$k=$v" settings.cpus "${cpus/#-/null}"
			knob_check_one "$1" "$k=$v" settings.server_cpus "${scpus/#-/null}"
			continue
		fi
		want="$(knob_expected "$k" "$v")"
		knob_check_one "$1" "$k=$v" "$path" "$want"
	done
}

knob_check_one() { # JSON WHAT PATH WANT
	local got
	got="$(knob_json_at "$1" "$3")"
	if [ "$got" = absent ]; then
		echo "$2: not read back (this tbench's --json has no $3)" >&2
	elif [ "$got" != "$4" ]; then
		echo "$2 read back as $3 = $got, not $4"
	fi
}

# ---- recording them --------------------------------------------------------------------

# The knob columns that this tbench-stats writes, besides the offloads
# (whose label is the offload column): tbench-stats row --knobs, else those
# of its header that are knobs. KNOB_READ: the suffix of the read-back
# offload columns (tso_read, ...), or empty when tso, gso, gro are the
# read-backs themselves (a tbench-stats older than the knob columns).
knob_columns() { # STATS
	local list header k
	header="$("$1" row --header | tr , '\n')"
	list="$("$1" row --knobs 2>/dev/null)" || list="$header"
	KNOB_COLUMNS=()
	for k in "${KNOB_NAMES[@]}"; do
		# model is a column of every run (the sweep's one model, not "-"):
		# a knob column only where it is varied
		if [ "$k" = model ]; then
			[ -z "${KNOB_VARY[model]:-}" ] || ! grep -qx model <<<"$header" || KNOB_COLUMNS+=(model)
			continue
		fi
		[[ "$KNOB_OFFLOADS" == *" $k "* ]] || ! grep -qx -- "$k" <<<"$list" || KNOB_COLUMNS+=("$k")
	done
	KNOB_READ=""
	! grep -qx tso_read <<<"$header" || KNOB_READ=_read
}

# The knobs varied that runs.csv has no column for, one a line.
knob_unrecorded() {
	local k
	while IFS= read -r k; do
		[ -z "$k" ] || [[ " ${KNOB_COLUMNS[*]} " == *" $k "* ]] || echo "$k"
	done < <(knob_varied)
}

# tbench-stats row --set arguments of a run's knobs, one a line: the
# offload label's parts (tso=off of "on:tso=off"; n/a for a backend whose
# bytes cross no device), when runs.csv has columns for what was asked
# apart from what was read back, and every other knob.
knob_set_args() { # KNOBS OFFLOAD-LABEL NET(0|1)
	local k v
	if [ -n "$KNOB_READ" ]; then
		for k in tso gso gro; do
			v=-
			[[ ":$2:" != *":$k="* ]] || { v="${2#*"$k"=}"; v="${v%%:*}"; }
			[ "$3" -eq 1 ] || v=n/a
			printf '%s\n' --set "$k=$v"
		done
	fi
	for k in "${KNOB_COLUMNS[@]}"; do
		[ "$k" != model ] || continue   # the caller sets it: knob_model
		knob_get v "$1" "$k"
		printf '%s\n' --set "$k=$v"
	done
}

# The client model of a run: the one asked for with --vary model, else the
# sweep's (MODEL: processes, or threads with --threads).
knob_model() { # KNOBS MODEL
	local v
	knob_get v "$1" model
	if knob_given "$v"; then echo "$v"; else echo "$2"; fi
}
