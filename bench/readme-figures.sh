#!/bin/bash
# The README's performance figures measured again, in one command: each
# claim of bench/readme-claims.txt by the benchmark that made it, one after
# another under the quiet lock, then a table of what the README says, what
# this sitting measured and whether it holds.
#
#   bench/readme-figures.sh [--quick] [--out DIR] [--only "dropin trace uring recipes"]
#
# Writes DIR (default results/DATE-readme-figures) with each benchmark's
# files and README.md, the table. --quick: runs of a second or two, to
# check the machinery; its figures say nothing. Needs what each benchmark
# needs (dbench 4.0 for dropin, root for trace). Exit 0 when every claim
# holds or is near, 1 when one drifted or a benchmark failed, 2 usage.
# The measure_ID functions are called by name, from the claims' ids.
# shellcheck disable=SC2317
set -euo pipefail
here="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)"
# shellcheck source=scripts/lib/quiet.sh
. "$here/scripts/lib/quiet.sh"
BUILD="${BUILD:-$here/build}"
export TBENCH="${TBENCH:-$BUILD/tbench}" TBENCH_SRV="${TBENCH_SRV:-$BUILD/tbench_srv}"
export TBENCH_STATS="${TBENCH_STATS:-$BUILD/tbench-stats}"
CLAIMS="$here/bench/readme-claims.txt"
QUICK=0 OUT="" ONLY="dropin trace uring recipes"

usage() { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) QUICK=1 ;;
	--out) OUT="${2:?--out needs a directory}"; shift ;;
	--only) ONLY="${2:?--only needs a list}"; shift ;;
	*) usage ;;
	esac
	shift
done
# --quick checks the machinery: a busy machine only makes its figures noisier.
[ "$QUICK" = 0 ] || export TBENCH_ALLOW_NOISY=1
OUT="${OUT:-$here/results/$(date -u +%Y-%m-%d-%H%M)-readme-figures$([ "$QUICK" = 0 ] || echo -quick)}"
[ -x "$TBENCH" ] || { echo "readme-figures.sh: no $TBENCH: build first, or set BUILD" >&2; exit 2; }
mkdir -p "$OUT"
tb_bench_lock bench/readme-figures.sh "$@"

# claim ID FIELD: a field of the claim's line (2 words, 3 low, 4 high, 5 slack).
claim() { awk -F'|' -v id="$1" -v f="$2" '$1 == id { print $f }' "$CLAIMS"; }

# said ID: whether README.md says the claim in its words (lines joined).
said() { tr '\n' ' ' <"$here/README.md" | tr -s ' ' | grep -qF -- "$(claim "$1" 2)"; }

# judge ID VALUE: holds, near or drifted against the claim's range.
judge() {
	awk -v v="$2" -v lo="$(claim "$1" 3)" -v hi="$(claim "$1" 4)" -v s="$(claim "$1" 5)" 'BEGIN {
		print (v >= lo && v <= hi) ? "holds" : (v >= lo - s && v <= hi + s) ? "near" : "drifted" }'
}

# md_rows FILE: the data rows of FILE's first markdown table (its header
# and rule left out).
md_rows() {
	awk '/^\|/ { seen = 1; if (++row > 2) print; next } seen { exit }' "$1"
}

ROWS=() FAILED=0
add_row() { ROWS+=("| $1 | $2 | $3 | $4 |"); [ "$4" != drifted ] && [ "$4" != failed ] || FAILED=1; }

measure_dropin() {
	local args=(--reps 6 --clients "1 4 16 64" -t 60) r n ratio
	[ "$QUICK" = 0 ] || args=(--reps 1 --clients "1 2" -t 2)
	if ! BUILD="$BUILD" "$here/bench/dropin.sh" "${args[@]}" --variants "ours dbench" --out "$OUT/dropin"; then
		add_row dropin "$(claim dropin 2)" "bench/dropin.sh failed (it says why above)" failed
		return
	fi
	while IFS='|' read -r _ n _ _ r _; do
		ratio=$(awk '{ print $1 }' <<<"$r")
		[[ $ratio =~ ^[0-9.]+$ ]] || continue
		add_row dropin "$(claim dropin 2)" "$(tr -d ' ' <<<"$n") clients: $ratio (${args[*]})" "$(judge dropin "$ratio")"
	done < <(md_rows "$OUT/dropin.md")
}

measure_trace() {
	local args=(--reps 5 -t 3) b n r
	[ "$QUICK" = 0 ] || args=(--reps 1 -t 1)
	if ! "$here/bench/cost-overhead.sh" "${args[@]}" --backends "pipe tcp" --clients "2 8" --with "--trace" \
		--out "$OUT/trace-overhead"; then
		add_row trace "$(claim trace 2)" "bench/cost-overhead.sh failed (it says why above)" failed
		return
	fi
	while IFS='|' read -r _ b n _ r _; do
		r=$(tr -d ' ' <<<"$r")
		[[ $r =~ ^[0-9.]+$ ]] || continue
		local cost
		cost=$(awk -v r="$r" 'BEGIN { printf "%.3f", 1 - r }')
		add_row trace "$(claim trace 2)" "$(tr -d ' ' <<<"$b") $(tr -d ' ' <<<"$n") clients: $cost" "$(judge trace "$cost")"
	done < <(md_rows "$OUT/trace-overhead.md")
}

# io_uring's event-loop server against tcp, a user's defaults otherwise:
# MB/s at each client count against its claim, and CPU per operation at 32.
measure_uring() {
	local args=(-c "2,8,32,128" -r 3 -t 10 -w 2) n r cpu id
	[ "$QUICK" = 0 ] || args=(-c "2,8,32" -r 1 -t 1 -w 0)
	if ! "$here/bench/versus.sh" --tbench "$TBENCH" --variant 'tcp=-b tcp' \
		--variant 'uring-loop=-b uring --uring-server loop' "${args[@]}" -o "$OUT/uring"; then
		add_row uring "$(claim uring 2)" "bench/versus.sh failed (it says why above)" failed
		return
	fi
	while IFS='|' read -r _ n _ _ _ r _ _ cpu _; do
		n=$(tr -d ' ' <<<"$n") r=$(tr -d ' *' <<<"$r") cpu=$(tr -d ' ' <<<"$cpu")
		[[ $r =~ ^[0-9.]+$ ]] || continue
		case "$n" in 2) id=uring2 ;; 8) id=uring8 ;; 128) id=uring128 ;; *) id=uring ;; esac
		uring_row "$id" "$n clients: $r MB/s ratio (${args[*]})" "$r"
		[ "$n" != 32 ] || uring_row uringcpu "$n clients: $cpu CPU per operation ratio" "$cpu"
	done < <(md_rows "$OUT/uring.md")
}

# uring_row ID TEXT VALUE: a row for a claim the uring entry checks besides its own.
uring_row() {
	if said "$1"; then
		add_row "$1" "$(claim "$1" 2)" "$2" "$(judge "$1" "$3")"
	else
		add_row "$1" "$(claim "$1" 2)" "README.md no longer says it: change README.md and $CLAIMS together" failed
	fi
}

# The recipes' verdicts against those of the results directory the README
# links to ("results/...-recipes/"), claim and point by point.
measure_recipes() {
	local before quick=() key verdict old
	before=$(grep -o 'results/[^]()[ ]*-recipes/' "$here/README.md" | head -n 1)
	[ "$QUICK" = 0 ] || quick=(--quick)
	if ! "$here/scripts/tbench-recipe" "${quick[@]}" --out "$OUT/recipes" all; then
		add_row recipes "$(claim recipes 2)" "tbench-recipe all failed (it says why above)" failed
		return
	fi
	local -A was=()
	while IFS=$'\t' read -r key verdict; do was[$key]=$verdict; done < <(verdicts "$here/${before}verdict.csv")
	while IFS=$'\t' read -r key verdict; do
		old=${was[$key]:-none}
		add_row recipes "$key: $old in ${before%/}" "$verdict" "$([ "$old" = "$verdict" ] && echo holds || echo drifted)"
	done < <(verdicts "$OUT/recipes/verdict.csv")
}

# verdicts FILE: "recipe claim point<TAB>verdict" of each row of a verdict.csv.
verdicts() {
	"$TBENCH_STATS" select --columns recipe,claim,point,verdict --tsv "$1" | tail -n +2 |
		awk -F'\t' '{ print $1 " " $2 " " $3 "\t" $4 }'
}

for id in $ONLY; do
	if [ -z "$(claim "$id" 2)" ] || ! declare -F "measure_$id" >/dev/null; then
		echo "readme-figures.sh: --only: no benchmark for '$id' (dropin, trace, uring, recipes)" >&2
		exit 2
	fi
	if ! said "$id"; then
		add_row "$id" "$(claim "$id" 2)" "README.md no longer says it: change README.md and $CLAIMS together" failed
		continue
	fi
	"measure_$id"
done

{
	echo "# The README's figures, measured again"
	echo
	echo "\`bench/readme-figures.sh$([ "$QUICK" = 0 ] || echo " --quick") --only \"$ONLY\"\`, $(date -u '+%Y-%m-%d %H:%M UTC'),"
	echo "Linux $(uname -r), $(nproc) CPUs, \`$("$TBENCH" --version)\`. Each benchmark's files beside this"
	echo "one, with its noise record. holds: in the README's range; near: within the slack of"
	echo "bench/readme-claims.txt (the drift between sittings); drifted: the README must change."
	[ "$QUICK" = 0 ] || echo "**--quick**: runs of a second or two, to check the machinery; the figures say nothing."
	echo
	echo "| claim | the README says | measured now | verdict |"
	echo "|---|---|---|---|"
	printf '%s\n' "${ROWS[@]}"
} >"$OUT/README.md"
cat "$OUT/README.md"
exit "$FAILED"
