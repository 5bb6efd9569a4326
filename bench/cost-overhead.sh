#!/bin/bash
# What --cost costs: the same run with and without it, paired and
# interleaved (order shuffled each repetition), each in a private network
# namespace; the median of the paired ratios per backend and client count.
#
#   bench/cost-overhead.sh [--reps 7] [--backends "nop pipe tcp"] [--clients "1 2"] [-t SECS]
#                          [--with "--cost"] [--out PREFIX] [--report-only]
#
# Writes PREFIX.csv and PREFIX.md (--report-only: only PREFIX.md, from
# PREFIX.csv). Run it on an otherwise idle machine. The figures come from
# tbench-stats paired: TBENCH_STATS, else the one beside TBENCH.
set -euo pipefail
# shellcheck source=scripts/lib/quiet.sh
. "$(dirname "$(readlink -f "$0")")/../scripts/lib/quiet.sh"
tb_bench_lock bench/cost-overhead.sh "$@"   # never beside the test suite or another benchmark
PROG=cost-overhead.sh   # for common.sh's die
# shellcheck source=scripts/lib/common.sh
. "$(dirname "$(readlink -f "$0")")/../scripts/lib/common.sh"
# shellcheck source=bench/report-lib.sh
. "$(dirname "$(readlink -f "$0")")/report-lib.sh"

here="$(cd "$(dirname "$0")/.." && pwd)"
TBENCH="${TBENCH:-$here/build/tbench}"
REPS=7 BACKENDS="nop pipe tcp" CLIENTS="1 2" SECS=4 WITH="--cost"
OUT="$here/results/bench-cost-overhead"
REPORT_ONLY=0

while [ $# -gt 0 ]; do
	case "$1" in
	--reps) REPS="$2"; shift ;;
	--backends) BACKENDS="$2"; shift ;;
	--clients) CLIENTS="$2"; shift ;;
	-t) SECS="$2"; shift ;;
	--with) WITH="$2"; shift ;;
	--out) OUT="$2"; shift ;;
	--report-only) REPORT_ONLY=1 ;;
	*) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
	esac
	shift
done
[ -x "$TBENCH" ] || { echo "cost-overhead.sh: no $TBENCH: build first, or set TBENCH" >&2; exit 2; }
read -r -a backends <<<"$BACKENDS"
read -r -a clients <<<"$CLIENTS"
read -r -a with_args <<<"$WITH"
bench_stats_find "$(dirname "$TBENCH")"   # before any run: the report needs it

run() {   # run BACKEND N [--cost]: MB/sec
	"$TBENCH" --netns -b "$1" "$2" -t "$SECS" --warmup 1 -q "${@:3}" |
		awk '/^Throughput/ { print $2 }'
}

# The table, from tbench-stats paired: per backend and client count the
# median without, and the median of the paired ratios with ÷ without and
# their range, an interval of that median of the confidence its pairs give
# (the header says the least of any row's).
report_table() {
	local p pairs='' conf='' b n
	local -A off=() ratio=()
	local -a runs=(--keys "backend,clients" --variant cost --figure mb_per_sec --positive mb_per_sec)
	bench_paired off "${runs[@]}" --decimals 1 "$OUT.csv"
	bench_paired ratio "${runs[@]}" --base off --decimals 4 "$OUT.csv"
	for p in ${ratio[points]}; do
		n=${ratio[$p,on,pairs]:-0}
		if ((n > 0)) && [[ -z $pairs ]] || ((n > 0 && n < pairs)); then
			pairs=$n conf=${ratio[$p,on,paired_confidence_pct]}
		fi
	done
	echo "| backend | clients | MB/s without (median) | with $WITH ÷ without (median of ${pairs:-0} paired) | lowest–highest pair (an interval of the median, ${conf:-0}%) |"
	echo "|---|---:|---:|---:|---:|"
	for p in ${ratio[points]}; do
		((${ratio[$p,on,pairs]:-0} > 0)) || continue
		IFS=, read -r b n <<<"$p"
		printf '| %s | %s | %s | %s | %s–%s |\n' "$b" "$n" "${off[$p,off,median]}" "${ratio[$p,on,paired]}" \
			"${ratio[$p,on,paired_lowest]}" "${ratio[$p,on,paired_highest]}"
	done | sort
}

if ((REPORT_ONLY == 0)); then
	tb_noise_begin bench/cost-overhead.sh || exit 1
	echo "rep,backend,clients,cost,mb_per_sec" >"$OUT.csv"
	for rep in $(seq "$REPS"); do
		for b in "${backends[@]}"; do
			for n in "${clients[@]}"; do
				for with in $(shuf -e off on); do
					if [ "$with" = on ]; then mb="$(run "$b" "$n" "${with_args[@]}")"; else mb="$(run "$b" "$n")"; fi
					echo "$rep,$b,$n,$with,$mb" >>"$OUT.csv"
					echo "rep $rep $b $n $WITH $with: $mb MB/sec" >&2
				done
			done
		done
	done
	tb_noise_end "$OUT.noise"
fi
[ -r "$OUT.csv" ] || die "$OUT.csv: no such file"

{
	echo "# What $WITH costs"
	echo
	if ((REPORT_ONLY)); then
		echo "\`bench/cost-overhead.sh --with \"$WITH\" --report-only\`: the table again from ${OUT##*/}.csv,"
	else
		echo "\`bench/cost-overhead.sh --reps $REPS --backends \"$BACKENDS\" --clients \"$CLIENTS\" -t $SECS --with \"$WITH\"\`,"
	fi
	echo "$(date -u +%Y-%m-%d), Linux $(uname -r), $(nproc) CPUs; \`$("$TBENCH" --version)\`."
	echo
	tb_noise_md "$OUT.noise"
	echo
	report_table
} >"$OUT.md"
cat "$OUT.md"
