#!/bin/bash
# tbench-ab calibrated on effects of known size (issue 33 item 4):
#  (a) A against A, --aa times: how often it says faster or slower (false
#      alarms) and how often its interval holds no change (coverage);
#  (b) B with a cost injected per operation (tbench --inject-ns) of 1%, 2.4%
#      and 5% of A's time per operation, measured first, --reps times each:
#      how often it says slower, how long it took, the mde it stated;
#  (c) the seed's question: a 2.4% cost at 16 tcp clients, --seed-reps times.
#
#   bench/ab-calibration.sh [--aa 20] [--reps 3] [--seed-reps 3] [--effects "1 2.4 5"]
#       [--workload "-b tcp 2 -t 1 --warmup 0.5"] [--seed-workload "-b tcp 16 -t 3 --warmup 1"]
#       [--max-blocks 4] [--seed-max-blocks 10] [--target 1] [--out DIR] [--work DIR]
#
# Defaults fit about 35 minutes on 2 vCPUs. Writes DIR/studies.csv (a line an
# A/B) and DIR/README.md (default results/DATE-ab-calibration); each A/B's
# own directory goes under --work (default a temporary one, removed). Medians
# come from tbench-stats paired, the verdicts from tbench-ab; this counts them.
set -euo pipefail
# shellcheck source=scripts/lib/quiet.sh
. "$(dirname "$(readlink -f "$0")")/../scripts/lib/quiet.sh"
tb_bench_lock bench/ab-calibration.sh "$@"   # never beside the test suite or another benchmark
PROG=ab-calibration.sh   # for common.sh's die
# shellcheck source=scripts/lib/common.sh
. "$(dirname "$(readlink -f "$0")")/../scripts/lib/common.sh"
# shellcheck source=bench/report-lib.sh
. "$(dirname "$(readlink -f "$0")")/report-lib.sh"

here="$(cd "$(dirname "$0")/.." && pwd)"
export TBENCH="${TBENCH:-$here/build/tbench}"
AB="$here/scripts/tbench-ab"
AA=20 REPS=3 SEED_REPS=3 EFFECTS="1 2.4 5" TARGET=1
WORKLOAD="-b tcp 2 -t 1 --warmup 0.5" SEED_WORKLOAD="-b tcp 16 -t 3 --warmup 1"
MAX_BLOCKS=4 SEED_MAX_BLOCKS=10
OUT="$here/results/$(date -u +%Y-%m-%d-%H%M)-ab-calibration" WORK=""

while [ $# -gt 0 ]; do
	case "$1" in
	--aa) AA="$2"; shift ;;
	--reps) REPS="$2"; shift ;;
	--seed-reps) SEED_REPS="$2"; shift ;;
	--effects) EFFECTS="$2"; shift ;;
	--workload) WORKLOAD="$2"; shift ;;
	--seed-workload) SEED_WORKLOAD="$2"; shift ;;
	--max-blocks) MAX_BLOCKS="$2"; shift ;;
	--seed-max-blocks) SEED_MAX_BLOCKS="$2"; shift ;;
	--target) TARGET="$2"; shift ;;
	--out) OUT="$2"; shift ;;
	--work) WORK="$2"; shift ;;
	*) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
	esac
	shift
done
[ -x "$TBENCH" ] || die "no $TBENCH: build first, or set TBENCH"
bench_stats_find "$(dirname "$TBENCH")"   # the tbench-stats beside the tbench in use
export TBENCH_STATS="$BENCH_STATS"
read -r -a workload <<<"$WORKLOAD"
read -r -a seed_workload <<<"$SEED_WORKLOAD"
mkdir -p "$OUT"
if [ -z "$WORK" ]; then
	WORK="$(mktemp -d)"
	trap 'rm -rf "$WORK"' EXIT
fi
STUDIES="$OUT/studies.csv"

# cpu_us A/B-DIR: the mean CPU time per operation of side A's runs there
# (cost_cpu_us: clients and servers, tbench-stats summarize). A spin adds
# to it: where the CPUs are the bottleneck (16 clients on 2 CPUs) a spin of
# P% of it costs P% of the throughput; P% of a client's wall time per
# operation would cost clients/CPUs times that.
cpu_us() {
	"$BENCH_STATS" summarize --keys variant --metrics cost_cpu_us "$1/runs.csv" |
		awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
			$1 == "a" { print $c["cost_cpu_us_mean"] }'
}

# record STUDY EFFECT REP DIR: the A/B in DIR as a line of studies.csv.
record() {
	python3 - "$@" >>"$STUDIES" <<'EOF'
import json, sys
study, effect, rep, d = sys.argv[1:]
m = json.load(open(d + "/meta.json"))
v = m.get("verdict") or {}
cells = [study, effect, rep, v.get("kind", "none"), v.get("change_pct"), v.get("lo_pct"), v.get("hi_pct"),
         v.get("mde_pct"), m.get("seconds"), m.get("blocks"), m.get("runs")]
print(",".join("" if c is None else str(c) for c in cells))
EOF
}

# one_ab STUDY EFFECT REP MAX-BLOCKS INJECT-NS WORKLOAD...: one tbench-ab, recorded.
one_ab() {
	local study="$1" effect="$2" rep="$3" blocks="$4" ns="$5" dir
	shift 5
	dir="$WORK/$study-$effect-$rep"
	local -a b_args=()
	[ "$ns" = 0 ] || b_args=(--b-args "--inject-ns $ns")
	"$AB" --out "$dir" --max-blocks "$blocks" --target "$TARGET" --seed "$rep" "${b_args[@]}" -- "$@" \
		>"$dir.log" 2>&1 || [ $? -eq 3 ]
	record "$study" "$effect" "$rep" "$dir"
	echo "$study $effect% rep $rep: $(head -1 "$dir/verdict.txt")" >&2
}

# inject_ns W-US PCT: the spin per exchange that costs PCT% of W-US per operation.
inject_ns() {
	awk -v w="$1" -v p="$2" 'BEGIN { printf "%d", w * p * 10 + 0.5 }'
}

tb_noise_begin bench/ab-calibration.sh || exit 1
echo "study,effect_pct,rep,kind,change_pct,lo_pct,hi_pct,mde_pct,seconds,blocks,runs" >"$STUDIES"
for rep in $(seq "$AA"); do
	one_ab aa 0 "$rep" "$MAX_BLOCKS" 0 "${workload[@]}"
done
w="$(cpu_us "$WORK/aa-0-1")"
for effect in $EFFECTS; do
	for rep in $(seq "$REPS"); do
		one_ab inject "$effect" "$rep" "$MAX_BLOCKS" "$(inject_ns "$w" "$effect")" "${workload[@]}"
	done
done
"$AB" --out "$WORK/seed-a" --now a --min-blocks 2 -- "${seed_workload[@]}" >"$WORK/seed-a.log" 2>&1
w16="$(cpu_us "$WORK/seed-a")"
for rep in $(seq "$SEED_REPS"); do
	one_ab seed 2.4 "$rep" "$SEED_MAX_BLOCKS" "$(inject_ns "$w16" 2.4)" "${seed_workload[@]}"
done
tb_noise_end "$OUT/noise.txt"

# count STUDY EFFECT [KIND...]: the A/Bs of that study and effect, those
# whose verdict is one of the KINDs when any are given.
count() {
	awk -F, -v s="$1" -v e="$2" -v kinds=" ${*:3} " 'NR > 1 && $1 == s && $2 == e {
		k = $4; gsub(/ /, "_", k); if (kinds == "  " || index(kinds, " " k " ")) n++ } END { print n + 0 }' "$STUDIES"
}
# covered STUDY EFFECT: the A/Bs whose interval of the change holds 0.
covered() {
	awk -F, -v s="$1" -v e="$2" 'NR > 1 && $1 == s && $2 == e && $6 != "" && $6 <= 0 && $7 >= 0 { n++ }
		END { print n + 0 }' "$STUDIES"
}
# median STUDY EFFECT COLUMN: tbench-stats paired's median of COLUMN.
median() {
	"$BENCH_STATS" paired --keys study,effect_pct --figure "$3" --where "study=$1" --where "effect_pct=$2" \
		--decimals 2 "$STUDIES" | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
			{ print $c["median"]; exit }'
}
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f%%", b ? 100 * a / b : 0 }'; }
row() { # STUDY EFFECT: a table row
	local n det
	n=$(count "$1" "$2")
	det=$(count "$1" "$2" slower)
	echo "| $1 | +$2% | $n | $det ($(pct "$det" "$n")) | $(count "$1" "$2" cannot_tell) |" \
		"$(median "$1" "$2" change_pct)% | $(median "$1" "$2" mde_pct)% | $(median "$1" "$2" seconds) s |"
}

{
	echo "# tbench-ab calibrated on known effects"
	echo
	echo "\`bench/ab-calibration.sh --aa $AA --reps $REPS --seed-reps $SEED_REPS --effects \"$EFFECTS\"" \
		"--workload \"$WORKLOAD\" --seed-workload \"$SEED_WORKLOAD\" --max-blocks $MAX_BLOCKS" \
		"--seed-max-blocks $SEED_MAX_BLOCKS --target $TARGET\`,"
	echo "$(date -u +%Y-%m-%d), Linux $(uname -r), $(nproc) CPUs, $(bench_ram_gib 1) GiB; \`$("$TBENCH" --version)\`."
	echo "Each line of studies.csv is one tbench-ab; medians from tbench-stats paired."
	echo
	tb_noise_md "$OUT/noise.txt"
	echo
	echo "## (a) A against A ($WORKLOAD)"
	echo
	n=$(count aa 0)
	fa=$(count aa 0 faster slower)
	cov=$(covered aa 0)
	echo "| A/Bs | faster or slower (false alarms) | interval holds 0 (coverage) | equivalent | cannot tell | median mde | median time |"
	echo "|---:|---:|---:|---:|---:|---:|---:|"
	echo "| $n | $fa ($(pct "$fa" "$n")) | $cov ($(pct "$cov" "$n")) | $(count aa 0 equivalent) |" \
		"$(count aa 0 cannot_tell) | $(median aa 0 mde_pct)% | $(median aa 0 seconds) s |"
	echo
	echo "A's CPU time per operation (cost_cpu_us): ${w} µs (mean of the first A/A's A runs); a cost of P% is --inject-ns W×P×10."
	echo
	echo "## (b) a known cost injected into B ($WORKLOAD), and (c) the seed's 2.4% ($SEED_WORKLOAD)"
	echo
	echo "The spin lands on exchanges only, so the change of MB/sec is a little below the cost asked."
	echo "(c)'s A CPU time per operation: ${w16} µs."
	echo
	echo "| study | cost | A/Bs | said slower | cannot tell | median change | median mde | median time |"
	echo "|:--|---:|---:|---:|---:|---:|---:|---:|"
	for effect in $EFFECTS; do row inject "$effect"; done
	row seed 2.4
} >"$OUT/README.md"
cat "$OUT/README.md"
