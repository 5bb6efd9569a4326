# tbench-sweep --precision (sourced, not run): repeat each point until the
# 95% confidence interval of a figure is narrow enough. The statistics are
# tbench-stats summarize's; this file only compares its half-width with the
# mean and chooses the points of the next rep.
# shellcheck shell=bash

# The figures a target can be set on: CPU and wall time per operation,
# throughput (columns of tbench-stats row --header).
PRECISION_FIGURES="cost_cpu_us wall_us_per_op mb_per_sec"
# shellcheck disable=SC2034  # read by tbench-sweep
PRECISION_DEFAULT_MAX_REPS=10

# --precision PCT[,FIGURE]: sets PREC_PCT and PREC_FIGURE, or a usage error.
precision_parse() { # VALUE
	local pct="${1%%,*}" fig=cost_cpu_us
	[[ "$1" != *,* ]] || fig="${1#*,}"
	if ! [[ "$pct" =~ ^[0-9]{1,3}([.][0-9]+)?$ ]] || ! awk -v p="$pct" 'BEGIN { exit !(p > 0 && p <= 100) }'; then
		usage_error "--precision: '$pct' is not a percentage above 0 and at most 100 (e.g. --precision 2)"
	fi
	[[ " $PRECISION_FIGURES " == *" $fig "* ]] ||
		usage_error "--precision: unknown figure '$fig' (one of: ${PRECISION_FIGURES// /, })"
	PREC_PCT="$pct" PREC_FIGURE="$fig"
}

# Each point of runs.csv so far: "key<TAB>reps<TAB>n<TAB>half-width %<TAB>met",
# reps the highest rep run, n the runs counted (ok and, unless
# TBENCH_KEEP_DISTURBED=1, not disturbed), the half-width of the 95%
# interval in % of the mean (empty with fewer than 2 runs or a mean of 0),
# met 1 when it is at most PCT.
precision_status() { # STATS RUNS.CSV PCT FIGURE [KNOB-COLUMN...]
	local keys
	keys="$(printf '%s,' backend clients offload "${@:5}")"
	# The notes on disturbed runs were said as each ended.
	awk -F'\t' -v fig="$4" -v pct="$3" -v nk="$(($# - 4 + 3))" '
	  FILENAME == ARGV[1] {   # the runs: the highest rep of each point
	    k = $1; for (i = 2; i <= nk; i++) k = k "|" $i
	    if (!(k in reps) || $(nk + 1) + 0 > reps[k]) reps[k] = $(nk + 1) + 0
	    next }
	  FNR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
	  { k = $1; for (i = 2; i <= nk; i++) k = k "|" $i
	    m = $col[fig "_mean"]; h = $col[fig "_ci95"]; p = ""
	    if ($col["n"] >= 2 && m != "" && h != "" && m + 0 != 0)
	      p = sprintf("%.3f", 100 * h / (m < 0 ? -m : m))
	    print k "\t" (k in reps ? reps[k] : 0) "\t" $col["n"] "\t" p "\t" (p != "" && p + 0 <= pct + 0 ? 1 : 0) }
	' <("$1" select --columns "${keys}rep" --tsv "$2") \
	  <("$1" summarize --keys "${keys%,}" --metrics "$4" "$2" 2> >(grep -v '^tbench-stats: note: .* disturbed run' >&2) |
		tr , '\t')
}

# The POINTS (plan_points records) not within the target by STATUS
# (precision_status): those without a met line, one a line.
precision_unmet() { # POINTS STATUS [KNOB-COLUMN...]
	local -A met=()
	local key rest p
	while IFS=$'\t' read -r key rest; do
		[ "${rest##*$'\t'}" != 1 ] || met["$key"]=1
	done <<<"$2"
	while IFS= read -r p; do
		[ -n "$p" ] || continue
		plan_point_key key "$p" "${@:3}"
		[ -n "${met["$key"]:-}" ] || echo "$p"
	done <<<"$1"
}

# Runs "REP|point" of one more rep of POINTS: a client count's points back to
# back, shuffled as plan_runs does; the seed depends on the rep, so that a
# resumed sweep plans the same rep again.
precision_rep_runs() { # POINTS REP SEED
	plan_runs "$1" 1 $((($3 + $2 * 7919) % 2147483648)) | sed "s/^1|/$2|/"
}

# The final lines: each point, its reps and the half-width it reached; WHY
# is what stopped the reps of the points not met ("--max-reps 10", ...).
precision_report() { # POINTS STATUS WHY [KNOB-COLUMN...]
	local -A line=()
	local key reps n p met nmet=0 total=0 pt b c o knobs
	while IFS=$'\t' read -r key reps n p met; do
		[ -z "$key" ] || line["$key"]="$reps	$n	$p	$met"
	done <<<"$2"
	echo "$PROG: precision: the 95% interval's half-width of $PREC_FIGURE within $PREC_PCT% of the mean:"
	while IFS= read -r pt; do
		[ -n "$pt" ] || continue
		plan_point_key key "$pt" "${@:4}"
		IFS=$'\t' read -r reps n p met <<<"${line["$key"]:-0	0		0}"
		IFS='|' read -r b c o _ <<<"$pt"
		total=$((total + 1))
		if [ "$met" = 1 ]; then
			nmet=$((nmet + 1))
			met="met"
		else
			met="not met (${3:-stopped})"
		fi
		knobs="${pt##*|}"
		if [ -n "$p" ]; then p="$p%"; else p="n/a (fewer than 2 runs counted)"; fi
		echo "  $b clients=$c offload=$o${knobs:+ $knobs}: $reps reps, $n counted, half-width $p: $met"
	done <<<"$1"
	echo "$PROG: precision: $nmet of $total points met the target"
}

# What --plan says of the rule: the reps, runs and time between the minimum
# and the maximum (and the budget).
precision_plan() { # NPOINTS MIN-REPS MAX-REPS NCLIENTS (of the points, summed)
	local lo=$(($1 * $2)) hi=$(($1 * $3))
	echo "precision: each point repeated until the 95% interval's half-width of $PREC_FIGURE is within $PREC_PCT% of its mean:" \
		"at least $2 reps (--reps), at most $3 (--max-reps)"
	echo "  $lo to $hi runs, $(fmt_secs "$(plan_estimate_s "$lo" "$TIME" "$WARMUP" $(($4 * $2)))") to" \
		"$(fmt_secs "$(plan_estimate_s "$hi" "$TIME" "$WARMUP" $(($4 * $3)))")${PREC_BUDGET:+; no rep beyond the minimum starts that would end after --budget $(fmt_secs "$PREC_BUDGET")}"
	echo "  below: the first $2 reps; each later rep only of the points not within the target yet"
}
