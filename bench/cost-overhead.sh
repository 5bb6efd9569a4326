#!/bin/bash
# What --cost costs: the same run with and without it, paired and
# interleaved (order shuffled each repetition), each in a private network
# namespace; the median of the paired ratios per backend and client count.
#
#   bench/cost-overhead.sh [--reps 7] [--backends "nop pipe tcp"] [--clients "1 2"] [-t SECS]
#                          [--with "--cost"] [--out PREFIX]
#
# Writes PREFIX.csv and PREFIX.md. Run it on an otherwise idle machine.
set -euo pipefail
# shellcheck source=scripts/lib/quiet.sh
. "$(dirname "$(readlink -f "$0")")/../scripts/lib/quiet.sh"
tb_bench_lock bench/cost-overhead.sh "$@"   # never beside the test suite or another benchmark

here="$(cd "$(dirname "$0")/.." && pwd)"
TBENCH="${TBENCH:-$here/build/tbench}"
REPS=7 BACKENDS="nop pipe tcp" CLIENTS="1 2" SECS=4 WITH="--cost"
OUT="$here/results/bench-cost-overhead"

while [ $# -gt 0 ]; do
	case "$1" in
	--reps) REPS="$2"; shift ;;
	--backends) BACKENDS="$2"; shift ;;
	--clients) CLIENTS="$2"; shift ;;
	-t) SECS="$2"; shift ;;
	--with) WITH="$2"; shift ;;
	--out) OUT="$2"; shift ;;
	*) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
	esac
	shift
done
[ -x "$TBENCH" ] || { echo "cost-overhead.sh: no $TBENCH: build first, or set TBENCH" >&2; exit 2; }
read -r -a backends <<<"$BACKENDS"
read -r -a clients <<<"$CLIENTS"
read -r -a with_args <<<"$WITH"

run() {   # run BACKEND N [--cost]: MB/sec
	"$TBENCH" --netns -b "$1" "$2" -t "$SECS" --warmup 1 -q "${@:3}" |
		awk '/^Throughput/ { print $2 }'
}

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

{
	echo "# What $WITH costs"
	echo
	echo "\`bench/cost-overhead.sh --reps $REPS --backends \"$BACKENDS\" --clients \"$CLIENTS\" -t $SECS --with \"$WITH\"\`,"
	echo "$(date -u +%Y-%m-%d), Linux $(uname -r), $(nproc) CPUs; \`$("$TBENCH" --version)\`."
	echo
	tb_noise_md "$OUT.noise"
	echo
	echo "| backend | clients | MB/s without (median) | with $WITH ÷ without (median of $REPS paired) | lowest–highest pair (an interval of the median, $(awk -v n="$REPS" 'BEGIN { printf "%.0f", 100 * (1 - 2 ^ (1 - n)) }')%) |"
	echo "|---|---:|---:|---:|---:|"
	awk -F, "$(cat "$here/bench/median.awk")"'
		NR > 1 { v[$1 "," $2 "," $3 "," $4] = $5; key[$2 "," $3] = 1; reps[$1] = 1 }
		END {
			for (k in key) {
				ratio = base = ""
				for (r in reps) {
					off = v[r "," k ",off"]; on = v[r "," k ",on"]
					if (off > 0 && on > 0) { ratio = ratio " " on / off; base = base " " off }
				}
				split(k, bn, ",")
				if (base != "") printf "| %s | %s | %.1f | %.4f | %s |\n", bn[1], bn[2], median(base), median(ratio), range(ratio)
			}
		}' "$OUT.csv" | sort
} >"$OUT.md"
cat "$OUT.md"
