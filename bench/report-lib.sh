# shellcheck shell=bash
# Sourced by the benchmarks under bench/ for their reports: every figure a
# report prints (medians, paired ratios and costs, their intervals) comes
# from tbench-stats paired (man tbench-stats), never from arithmetic here,
# so that the reports and the sweeps compute the same things one way.
# Needs scripts/lib/common.sh (die) and PROG sourced and set first.

# bench_stats_find PREFER-DIR: sets BENCH_STATS to the tbench-stats to use:
# $TBENCH_STATS, else the one in PREFER-DIR (the directory of the tbench in
# use), else the tree's build/, else PATH's; each only when its --version
# says it is this suite's. Exits when there is none.
bench_stats_find() { # PREFER-DIR
	local tree c
	tree=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
	for c in "${TBENCH_STATS:-}" "$1/tbench-stats" "$tree/build/tbench-stats" "$(command -v tbench-stats || true)"; do
		if [ -z "$c" ] || [ ! -x "$c" ]; then continue; fi
		if "$c" --version 2>/dev/null | grep -q 'tbench suite'; then
			BENCH_STATS=$c
			return
		fi
		[ "$c" != "${TBENCH_STATS:-}" ] || die "TBENCH_STATS=$c: not this suite's tbench-stats (its --version)"
	done
	die "no tbench-stats of this suite in $1, $tree/build or PATH: build it, or set TBENCH_STATS=PATH"
}

# bench_run_error ERR-FILE RC LIMIT WIDTH: why a tbench run failed, as one
# CSV cell of at most WIDTH characters (commas made semicolons): the run's
# own error, else the first message that is neither a warning nor a note;
# "stopped after --limit LIMIT s" for timeout's 124; empty when RC is 0.
bench_run_error() { # ERR-FILE RC LIMIT WIDTH
	if (($2 == 0)); then
		return 0
	elif (($2 == 124)); then
		echo "stopped after --limit $3 s"
	else
		{ grep -m1 'run failed' "$1" || grep -v -m1 '^tbench: \(warning\|note\)' "$1"; } |
			tr ',' ';' | cut -c1-"$4" || true
	fi
}

# bench_ram_gib DECIMALS: the machine's memory (MemTotal) in GiB, rounded
# to DECIMALS decimals, for a report's description of the machine.
bench_ram_gib() { # DECIMALS
	local key kb="" scale=$((10 ** $1)) v
	while read -r key kb _; do
		[[ $key != MemTotal: ]] || break
	done </proc/meminfo
	v=$(((${kb:-0} * scale + 524288) / 1048576))   # 1 GiB: 1048576 kB
	if (($1)); then
		printf '%d.%0*d' $((v / scale)) "$1" $((v % scale))
	else
		printf '%d' "$v"
	fi
}

# bench_paired NAME ARGS...: the rows of `tbench-stats paired ARGS` into the
# associative array NAME: NAME[ID,COLUMN] is the cell of COLUMN in the row
# whose keys and variant, joined by commas, are ID (e.g. mb[8,tcp,median]).
# A cell it leaves empty (no run, no pair) is unset or empty: ${NAME[..]:-–}.
# NAME[points] lists the points (their keys joined by commas), in order.
bench_paired() { # NAME ARGS...
	local -n into=$1
	local bp_out bp_head bp_row bp_ids bp_i bp_id bp_point bp_nkeys
	shift
	bp_out=$("$BENCH_STATS" paired "$@") || return
	into['points']=
	{
		IFS=, read -r -a bp_head
		for ((bp_ids = 0; bp_ids < ${#bp_head[@]}; bp_ids++)); do
			[[ ${bp_head[bp_ids]} != n ]] || break
		done
		bp_nkeys=$bp_ids
		[[ " $* " != *" --variant "* ]] || bp_nkeys=$((bp_ids - 1))
		while IFS=, read -r -a bp_row; do
			bp_id=$(IFS=,; echo "${bp_row[*]:0:bp_ids}")
			bp_point=$(IFS=,; echo "${bp_row[*]:0:bp_nkeys}")
			[[ " ${into['points']} " == *" $bp_point "* ]] || into['points']+="${into['points']:+ }$bp_point"
			for ((bp_i = bp_ids; bp_i < ${#bp_head[@]}; bp_i++)); do
				into[${bp_id:+$bp_id,}${bp_head[bp_i]}]=${bp_row[bp_i]:-}
			done
		done
	} <<<"$bp_out"
}
