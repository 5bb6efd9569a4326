# tbench-sweep's plan (sourced, not run): which runs, in which order, their
# names and how long they take. Every function answers on stdout; a record
# is a line of '|'-separated fields. Errors in what the user asked for are
# usage errors (exit 2; usage_error comes from common.sh).
# shellcheck shell=bash

# What a run takes besides its warm-up and execute phase: starting tbench
# and its servers, setting offloads, writing the results; and per client,
# forking and connecting it and its server and the warm-up's wait for its
# first bytes (results/sweep-overhead.md measured both).
PLAN_RUN_OVERHEAD_MS=500
PLAN_CLIENT_OVERHEAD_MS=40

is_secs() { [[ "$1" =~ ^[0-9]{1,7}([.][0-9]+)?$ ]]; }

# "5" or "2.5" seconds in milliseconds (bash has integers only).
secs_to_ms() { # SECS (checked with is_secs)
	local whole="${1%%.*}" frac=000
	[[ "$1" != *.* ]] || frac="${1#*.}000"
	echo $((10#$whole * 1000 + 10#${frac:0:3}))
}

fmt_secs() { # SECONDS -> 1h02m, 3m05s or 42s
	local s="$1"
	if [ "$s" -ge 3600 ]; then printf '%dh%02dm\n' $((s / 3600)) $((s % 3600 / 60))
	elif [ "$s" -ge 60 ]; then printf '%dm%02ds\n' $((s / 60)) $((s % 60))
	else printf '%ds\n' "$s"; fi
}

# Client counts "1,2,4" or "A..B" doubling, mixable ("1..8,12"): one a line.
plan_clients() { # LIST
	local item a b items=() n=0
	IFS=, read -r -a items <<<"$1"
	for item in "${items[@]}"; do
		if [[ "$item" =~ ^([0-9]{1,6})\.\.([0-9]{1,6})$ ]]; then
			a=$((10#${BASH_REMATCH[1]}))
			b=$((10#${BASH_REMATCH[2]}))
			if [ "$a" -lt 1 ] || [ "$a" -gt "$b" ]; then usage_error "--clients: bad range '$item'"; fi
			for (( ; a <= b; a *= 2)); do
				echo "$a"
				n=$((n + 1))
			done
		elif [[ "$item" =~ ^[0-9]{1,6}$ ]] && [ $((10#$item)) -ge 1 ]; then
			echo $((10#$item))
			n=$((n + 1))
		else
			usage_error "--clients: '$item' is not a client count or A..B"
		fi
	done
	[ "$n" -gt 0 ] || usage_error "--clients: empty list"
}

plan_onoff() { # OPTION LIST -> on and off values, one a line
	local v vals=()
	IFS=, read -r -a vals <<<"$2"
	[ "${#vals[@]}" -gt 0 ] || usage_error "$1: empty list"
	for v in "${vals[@]}"; do
		[ "$v" = on ] || [ "$v" = off ] || usage_error "$1: '$v' is neither on nor off"
		echo "$v"
	done
}

# Offload settings "label|tso|gso|gro" ("" = left alone): --offload sets TSO
# and GSO together, --tso/--gso/--gro each one; a cross product, the
# separate one winning. Neither given: on and off.
plan_settings() { # OFFLOAD TSO GSO GRO
	local offload="$1" out o a b c label
	local offl=("") tso=("") gso=("") gro=("")
	[ -n "$offload$2$3$4" ] || offload=on,off
	if [ -n "$offload" ]; then out="$(plan_onoff --offload "$offload")"; mapfile -t offl <<<"$out"; fi
	if [ -n "$2" ]; then out="$(plan_onoff --tso "$2")"; mapfile -t tso <<<"$out"; fi
	if [ -n "$3" ]; then out="$(plan_onoff --gso "$3")"; mapfile -t gso <<<"$out"; fi
	if [ -n "$4" ]; then out="$(plan_onoff --gro "$4")"; mapfile -t gro <<<"$out"; fi
	for o in "${offl[@]}"; do
		for a in "${tso[@]}"; do
			for b in "${gso[@]}"; do
				for c in "${gro[@]}"; do
					label="$o"
					[ -z "$a" ] || label="${label:+$label:}tso=$a"
					[ -z "$b" ] || label="${label:+$label:}gso=$b"
					[ -z "$c" ] || label="${label:+$label:}gro=$c"
					echo "$label|${a:-$o}|${b:-$o}|$c"
				done
			done
		done
	done
}

# Points "backend|clients|label|tso|gso|gro|net|knobs": a backend whose bytes
# cross a network device (net 1) once per offload setting, the others once
# with offload n/a and no device touched; each once per combination of the
# other knobs that mean something to it (knob_combos in knobs.sh).
plan_points() { # BACKENDS CLIENTS SETTINGS (each one a line) NET-BACKENDS(a,b or "all")
	local b c s k backends clients settings combos
	mapfile -t backends <<<"$1"
	mapfile -t clients <<<"$2"
	mapfile -t settings <<<"$3"
	for b in "${backends[@]}"; do
		mapfile -t combos < <(knob_combos "$b")
		for c in "${clients[@]}"; do
			for k in "${combos[@]}"; do
				if [ "$4" = all ] || [[ ",$4," == *",$b,"* ]]; then
					for s in "${settings[@]}"; do echo "$b|$c|$s|1|$k"; done
				else
					echo "$b|$c|n/a||||0|$k"
				fi
			done
		done
	done
}

# Runs "rep|point": rep 1 of every point, then rep 2, ...: drift of the
# machine spreads over all points instead of landing on some. Within a rep,
# the points of one client count run back to back in an order shuffled
# anew each time (RANDOM seeded with SEED): the two levels of a layer (pipe
# and nop, offload off and on) run close together, so the differences of a
# rep pair up (tbench-stats decompose), and no level is always first.
plan_runs() { # POINTS REPS SEED
	local rep c p clients group
	RANDOM="$3"
	mapfile -t clients < <(cut -d'|' -f2 <<<"$1" | awk '!seen[$0]++')
	for ((rep = 1; rep <= $2; rep++)); do
		for c in "${clients[@]}"; do
			mapfile -t group < <(awk -F'|' -v c="$c" '$2 == c' <<<"$1")
			shuffle_array group
			for p in "${group[@]}"; do echo "$rep|$p"; done
		done
	done
}

# A seed for plan_runs: 0 .. 2^31 - 1.
plan_new_seed() {
	echo $(((RANDOM << 16 | RANDOM) ^ $$ ^ $(date +%s)))
}

is_seed() { [[ "$1" =~ ^[0-9]{1,10}$ ]] && [ "$1" -le 2147483647 ]; }

# The runs not done yet: DONE has "backend<TAB>clients<TAB>offload<TAB>
# <the KNOB-COLUMNS...><TAB>rep" lines (tbench-stats select --tsv of runs.csv).
plan_todo() { # RUNS DONE [KNOB-COLUMN...]
	local -A done_runs=()
	local line key
	while IFS= read -r line; do
		[ -z "$line" ] || done_runs["${line//$'\t'/|}"]=1
	done <<<"$2"
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		plan_point_key key "${line#*|}" "${@:3}"
		[ -n "${done_runs["$key|${line%%|*}"]:-}" ] || echo "$line"
	done <<<"$1"
}

# A point's key as runs.csv and summary.csv say it: "backend|clients|offload|
# value of each KNOB-COLUMN", from a plan_points record.
plan_point_key() { # VAR POINT [KNOB-COLUMN...]
	local -n plan_point_key_out="$1"
	local b c o k v
	IFS='|' read -r b c o _ <<<"$2"
	plan_point_key_out="$b|$c|$o"
	for k in "${@:3}"; do
		knob_get v "${2##*|}" "$k"
		plan_point_key_out+="|$v"
	done
}

# A run's file name: pipe_c4_na_r1, tcp_c16_tso-off_r2, tcp_c1_on_mtu-1500_r1.
run_id() { # BACKEND CLIENTS LABEL REP [KNOBS]
	local l="${3//\//}" k="${5:-}"
	l="${l//[^A-Za-z0-9=_-]/_}"
	l="${l//=/-}"
	k="${k//\//}"
	k="${k//[^A-Za-z0-9=_.-]/_}"
	k="${k//=/-}"
	printf '%s_c%s_%s%s_r%s\n' "$1" "$2" "${l:-na}" "${k:+_$k}" "$4"
}

describe_run() { # a run record, REPS -> "tcp clients=4 offload=on mtu=1500 rep 1/3"
	local rep b c label knobs
	IFS='|' read -r rep b c label _ <<<"$1"
	knobs="${1##*|}"
	echo "$b clients=$c offload=$label${knobs:+ $knobs} rep $rep/$2"
}

# NCLIENTS: the client counts of the runs summed (plan_clients_sum).
plan_estimate_s() { # NRUNS TIME WARMUP NCLIENTS -> whole seconds
	echo $((($1 * ($(secs_to_ms "$2") + $(secs_to_ms "$3") + PLAN_RUN_OVERHEAD_MS) + $4 * PLAN_CLIENT_OVERHEAD_MS) / 1000))
}

# The client counts of records summed: FIELD 3 of runs (rep|backend|clients|...),
# 2 of points (backend|clients|...).
plan_clients_sum() { # RECORDS FIELD
	awk -F'|' -v f="$2" 'NF { s += $f } END { print s + 0 }' <<<"$1"
}
