# shellcheck shell=bash
# Sourced by the benchmarks under bench/ for their reports: every figure a
# report prints (medians, paired ratios and costs, their intervals) comes
# from tbench-stats paired (man tbench-stats), never from arithmetic here,
# so that the reports and the sweeps compute the same things one way.
# Needs scripts/lib/common.sh (die) and PROG sourced and set first.

# bench_stats_find PREFER-DIR: sets BENCH_STATS to the tbench-stats to use:
# $TBENCH_STATS, else the one in PREFER-DIR (the directory of the tbench in
# use), else the build's beside the source tree, else PATH's. Exits when
# there is none.
bench_stats_find() { # PREFER-DIR
	local top c
	if [[ -n ${TBENCH_STATS:-} ]]; then
		[[ -x $TBENCH_STATS ]] || die "TBENCH_STATS=$TBENCH_STATS: not an executable; set it to tbench-stats"
		BENCH_STATS=$TBENCH_STATS
		return 0
	fi
	top=$(dirname "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")")
	for c in "$1/tbench-stats" "$top/build/tbench-stats" "$(command -v tbench-stats || true)"; do
		if [[ -n $c && -x $c ]]; then
			BENCH_STATS=$c
			return 0
		fi
	done
	die "no tbench-stats beside $1, in build/ or on PATH: build first, or set TBENCH_STATS=PATH"
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
