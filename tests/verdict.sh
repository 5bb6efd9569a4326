#!/bin/bash
# tbench-compare --verdict, git bisect run's answer: made-up sweep
# directories (runs.csv in the columns of tests/data/compare_a.csv) built so
# that the candidate is good (exit 0), bad (1) or within the noise (125),
# at one point and at several; bad usage exits 2 naming the flag; --paired
# pairs the runs of equal rep.
# ok and not_ok always succeed, so "test && ok || not_ok" is safe here.
# shellcheck disable=SC2015
set -euo pipefail
# shellcheck source=tests/testlib.sh
. "${top_srcdir:-.}/tests/testlib.sh"

COMPARE="$SRCDIR/scripts/tbench-compare"
TBENCH_STATS="${top_builddir:-.}/tbench-stats"
export TBENCH_STATS
HEADER="$(grep -v '^#' "$SRCDIR/tests/data/compare_a.csv" | head -n 1)"

# sweep NAME POINT=V1,V2,... ...: $TL_TMP/NAME/runs.csv, POINT being
# backend,clients,offload, one ok run per value, reps 1, 2, ...
sweep() {
	local dir="$TL_TMP/$1" point v rep values
	shift
	mkdir -p "$dir"
	echo "$HEADER" >"$dir/runs.csv"
	for point in "$@"; do
		IFS=, read -r -a values <<<"${point#*=}"
		rep=0
		for v in "${values[@]}"; do
			rep=$((rep + 1))
			echo "${point%%=*},$rep,ok,$v,1000,1" >>"$dir/runs.csv"
		done
	done
}

# verdict WANT WHAT RULE BASE CAND [OPTIONS...]: the exit status, and the
# lines of the answer in $TL_TMP/out
verdict() {
	local want="$1" what="$2" rule="$3" base="$4" cand="$5"
	shift 5
	expect_exit "$want" "$what" "$COMPARE" "$@" --verdict "$rule" "$TL_TMP/$base" "$TL_TMP/$cand"
}

# line_says PATTERN WHAT: a line of the last answer matches PATTERN
line_says() {
	grep -Eq -- "$1" "$TL_TMP/out" && ok "$2" || { not_ok "$2"; sed 's/^/    /' "$TL_TMP/out"; }
}

one_point() {
	# base 100 +- 0.5 (sd), 3 runs: the interval of a change is +-1.13% (df 4)
	sweep base pipe,1,n/a=100,100.5,99.5
	sweep same pipe,1,n/a=100,100.5,99.5
	sweep drop10 pipe,1,n/a=90,90.5,89.5
	# -3% with sd 2: the interval [-7.6%, +1.6%] straddles -3%
	sweep noisy pipe,1,n/a=97,99,95

	verdict 0 "no change: good" 'mb_per_sec<-3%' base same
	line_says '^backend=pipe clients=1: good: mb_per_sec change \+0%, 95% interval \[-1\.13%, \+1\.13%\] \(unpaired, runs 3/3\) lies wholly above -3%; mde 1\.5[0-9]%$' \
		"good: says the interval, the threshold and the mde"
	line_says '^verdict: good \(0 of 1 points bad, 1 good\)$' "good: the verdict line"
	verdict 1 "10% drop: bad" 'mb_per_sec<-3%' base drop10
	line_says '^backend=pipe clients=1: bad: mb_per_sec change -10%, 95% interval \[-11\.1%, -8\.87%\] .* lies wholly below -3%' \
		"bad: says the interval lies below the threshold"
	verdict 125 "3% drop in noise: cannot tell" 'mb_per_sec<-3%' base noisy
	line_says '^backend=pipe clients=1: unsure: .* straddles -3%' "unsure: says the interval straddles it"
	line_says '^verdict: cannot tell at this noise' "unsure: the verdict line"
	# The same drop against a looser threshold is good, a rise rule too.
	verdict 0 "10% drop, threshold -20%: good" 'mb_per_sec<-20%' base drop10
	verdict 0 "10% drop, no rise above 5%: good" 'mb_per_sec>5%' base drop10
	verdict 1 "in MB/sec, not %: a drop of more than 5" 'mb_per_sec<-5' base drop10
	# One run a side: no interval, cannot tell.
	sweep single pipe,1,n/a=90
	verdict 125 "one run: cannot tell" 'mb_per_sec<-3%' base single
	line_says 'no interval \(runs: A 3, B 1; need 2 each' "one run: says so"
}

several_points() {
	sweep base2 pipe,1,n/a=100,100.5,99.5 tcp,4,on=100,100.5,99.5
	sweep one_bad pipe,1,n/a=100,100.5,99.5 tcp,4,on=90,90.5,89.5
	sweep one_noisy pipe,1,n/a=100,100.5,99.5 tcp,4,on=97,99,95
	sweep bad_noisy pipe,1,n/a=90,90.5,89.5 tcp,4,on=97,99,95
	verdict 0 "two points, both good" 'mb_per_sec<-3%' base2 base2
	verdict 1 "one point bad: bad" 'mb_per_sec<-3%' base2 one_bad
	line_says '^backend=tcp clients=4 offload=on: bad: ' "names the bad point"
	line_says '^backend=pipe clients=1 offload=n/a: good: ' "and the good one"
	verdict 125 "one good, one unsure: cannot tell" 'mb_per_sec<-3%' base2 one_noisy
	verdict 1 "one bad, one unsure: bad" 'mb_per_sec<-3%' base2 bad_noisy
	[ "$(grep -c ': \(good\|bad\|unsure\): ' "$TL_TMP/out")" -eq 2 ] && ok "one line per point" ||
		not_ok "one line per point: $(cat "$TL_TMP/out")"
}

paired() {
	# The runs share an offset per rep (1000, 2000, 3000): a drop of 10 in
	# each, 1% of the mean, is certain paired and lost in the noise unpaired.
	sweep drift_a pipe,1,n/a=1000,2000,3000
	sweep drift_b pipe,1,n/a=990,1990,2990
	verdict 125 "drift, unpaired: cannot tell" 'mb_per_sec<-0.1%' drift_a drift_b
	verdict 1 "drift, --paired: bad" 'mb_per_sec<-0.1%' drift_a drift_b --paired
	line_says '\(paired, runs 3/3\)' "--paired: says the method"
	expect_exit 0 "--paired table" "$COMPARE" --paired "$TL_TMP/drift_a" "$TL_TMP/drift_b"
	line_says ' paired \(3\)$' "--paired table: the method column"
	# reps that do not match: unpaired, said so
	sweep drift_c pipe,1,n/a=990,1990
	expect_exit 0 "--paired, reps that do not match" "$COMPARE" --paired --csv "$TL_TMP/drift_a" "$TL_TMP/drift_c"
	line_says ',unpaired,0,run,[0-9.]*$' "reps that do not match: unpaired (at the run level)"
}

usage_errors() {
	sweep base pipe,1,n/a=100,100.5,99.5
	expect_exit 2 "--verdict without a value" "$COMPARE" --verdict
	grep -q -- '--verdict needs a value' "$TL_TMP/err" && ok "names --verdict" || not_ok "$(cat "$TL_TMP/err")"
	local bad
	for bad in 'mb_per_sec' 'mb_per_sec<' 'mb_per_sec<-3%%' '<-3%' 'mb_per_sec<abc'; do
		expect_exit 2 "--verdict '$bad'" "$COMPARE" --verdict "$bad" "$TL_TMP/base" "$TL_TMP/base"
		grep -q -- "--verdict '$bad'" "$TL_TMP/err" && ok "names the flag and the rule" || not_ok "$(cat "$TL_TMP/err")"
	done
	expect_exit 2 "--verdict with --csv" "$COMPARE" --csv --verdict 'mb_per_sec<-3%' "$TL_TMP/base" "$TL_TMP/base"
	grep -q -- '--verdict names its figure' "$TL_TMP/err" && ok "says why" || not_ok "$(cat "$TL_TMP/err")"
	expect_exit 2 "--verdict of a figure the sweep lacks" "$COMPARE" --verdict 'nosuch<-3%' "$TL_TMP/base" "$TL_TMP/base"
}

one_point
several_points
paired
usage_errors
tl_done
