#!/bin/bash
# tbench-stats summarize/compare/cost/paired, scripts/tbench-compare and
# bench/report-lib.sh on small hand-made CSVs (tests/data/compare_*.csv,
# layers.csv, paired.csv) whose answers are worked out in their comments;
# tbench-stats row, select and proc-cpu on the sample runs of tests/data
# (their rows worked out in tests/data/rows.csv).
# ok and not_ok always succeed, so "test && ok || not_ok" is safe here.
# shellcheck disable=SC2015
set -euo pipefail
# shellcheck source=tests/testlib.sh
. "${top_srcdir:-.}/tests/testlib.sh"

STATS="${top_builddir:-.}/tbench-stats"
A="$SRCDIR/tests/data/compare_a.csv"
B="$SRCDIR/tests/data/compare_b.csv"

# field FILE KEY COLUMN: the COLUMN of the row whose first fields are KEY
field() {
	awk -F, -v key="$2" -v name="$3" '
		NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		index($0, key ",") == 1 { print $c[name]; exit }' "$1"
}
near() { # GOT WANT TOL
	awk -v g="$1" -v w="$2" -v t="$3" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(g != "" && d <= t) }'
}
check_near() { # WHAT GOT WANT TOL
	if near "$2" "$3" "$4"; then ok "$1 = $2"; else not_ok "$1 = '$2', want $3 +- $4"; fi
}

summarize() {
	expect_exit 0 "summarize A" "$STATS" summarize "$A"
	local s="$TL_TMP/out"
	cp "$s" "$TL_TMP/sum_a.csv"
	check "summary header" grep -q '^backend,clients,offload,n,n_failed,n_disturbed,mb_per_sec_mean,mb_per_sec_sd,mb_per_sec_ci95,ops_per_sec_mean' "$s"
	check_near "pipe 1 n" "$(field "$s" pipe,1,n/a n)" 3 0
	check_near "pipe 1 mean" "$(field "$s" pipe,1,n/a mb_per_sec_mean)" 100 1e-9
	check_near "pipe 1 sd" "$(field "$s" pipe,1,n/a mb_per_sec_sd)" 2 1e-9
	# 4.303 * 2 / sqrt(3)
	check_near "pipe 1 ci95" "$(field "$s" pipe,1,n/a mb_per_sec_ci95)" 4.9683 1e-3
	check_near "tcp 4 on n (failed run left out)" "$(field "$s" tcp,4,on n)" 3 0
	check_near "tcp 4 on n_failed" "$(field "$s" tcp,4,on n_failed)" 1 0
	check_near "tcp 4 on sd" "$(field "$s" tcp,4,on mb_per_sec_sd)" 10 1e-9
	check_near "tcp 4 off n" "$(field "$s" tcp,4,off n)" 1 0
	[ -z "$(field "$s" tcp,4,off mb_per_sec_ci95)" ] && ok "one run: no interval" || not_ok "one run: no interval"
	# order: backends as they first appear, then clients, then the setting
	[ "$(cut -d, -f1-3 "$s" | tail -n +2 | paste -sd' ')" = "pipe,1,n/a tcp,4,on tcp,4,off" ] &&
		ok "points in sweep order" || not_ok "points in sweep order: $(cut -d, -f1-3 "$s" | paste -sd' ')"
	expect_exit 2 "summarize: missing file" "$STATS" summarize "$TL_TMP/nope.csv"
	printf 'backend,clients,offload,mb_per_sec\npipe,1\n' >"$TL_TMP/bad.csv"
	expect_exit 2 "summarize: short row" "$STATS" summarize "$TL_TMP/bad.csv"
	grep -q 'bad.csv:2: 2 fields, the header has 4' "$TL_TMP/err" && ok "names file:line" || not_ok "names file:line"
}

compare_csv() {
	expect_exit 0 "compare --csv" "$STATS" compare --csv "$A" "$B"
	local c="$TL_TMP/out"
	cp "$c" "$TL_TMP/cmp.csv"
	check "csv header" grep -q '^backend,clients,offload,n_a,mean_a,ci95_a,n_b,mean_b,ci95_b,change_pct,t,df,p,significant,diff,diff_ci95,change_lo_pct,change_hi_pct,mde,mde_pct,method,pairs,level,half_width_pct$' "$c"
	check_near "pipe 1 change" "$(field "$c" pipe,1,n/a change_pct)" 10 1e-6
	check_near "pipe 1 t" "$(field "$c" pipe,1,n/a t)" 6.12372 1e-4
	check_near "pipe 1 half_width_pct" "$(field "$c" pipe,1,n/a half_width_pct)" \
		"$(awk -F, -v lo="$(field "$c" pipe,1,n/a change_lo_pct)" -v hi="$(field "$c" pipe,1,n/a change_hi_pct)" \
			'BEGIN { print (hi - lo) / 2 }')" 1e-4
	check_near "pipe 1 df" "$(field "$c" pipe,1,n/a df)" 4 1e-9
	check_near "pipe 1 p" "$(field "$c" pipe,1,n/a p)" 0.003602 1e-6
	[ "$(field "$c" pipe,1,n/a significant)" = yes ] && ok "pipe 1 significant" || not_ok "pipe 1 significant"
	check_near "tcp 4 on change" "$(field "$c" tcp,4,on change_pct)" 1 1e-6
	check_near "tcp 4 on p" "$(field "$c" tcp,4,on p)" 0.90843 1e-5
	[ "$(field "$c" tcp,4,on significant)" = no ] && ok "tcp 4 on not significant" || not_ok "tcp 4 on not significant"
	[ "$(field "$c" tcp,4,off significant)" = "only in A" ] && ok "only in A" || not_ok "only in A"
	[ "$(field "$c" nop,1,n/a significant)" = "only in B" ] && ok "only in B" || not_ok "only in B"
	check_near "geometric mean" "$(field "$c" geomean change_pct)" 5.404 1e-3
	# se sqrt(4/3 + 4/3), df 4: interval 2.7764 se, MDE (2.7764 + 0.9410) se
	check_near "pipe 1 diff" "$(field "$c" pipe,1,n/a diff)" 10 1e-9
	check_near "pipe 1 diff interval" "$(field "$c" pipe,1,n/a diff_ci95)" 4.5338 1e-3
	check_near "pipe 1 change from" "$(field "$c" pipe,1,n/a change_lo_pct)" 5.4662 1e-3
	check_near "pipe 1 mde" "$(field "$c" pipe,1,n/a mde)" 6.0705 1e-3
	check_near "pipe 1 mde in %" "$(field "$c" pipe,1,n/a mde_pct)" 6.0705 1e-3
	[ "$(field "$c" pipe,1,n/a method)" = unpaired ] && ok "two sweeps: unpaired" || not_ok "method: $(field "$c" pipe,1,n/a method)"

	# Same answer from a summary.csv on one side (n, mean, sd are enough).
	"$STATS" summarize "$B" >"$TL_TMP/sum_b.csv"
	"$STATS" compare --csv "$A" "$TL_TMP/sum_b.csv" >"$TL_TMP/cmp2.csv"
	check_near "from summary.csv: pipe 1 p" "$(field "$TL_TMP/cmp2.csv" pipe,1,n/a p)" 0.003602 1e-6
	check_near "from summary.csv: geomean" "$(field "$TL_TMP/cmp2.csv" geomean change_pct)" 5.404 1e-3
	# Other metric, other alpha
	"$STATS" compare --csv --metric ops_per_sec --alpha 0.01 "$A" "$B" >"$TL_TMP/cmp3.csv"
	check_near "ops_per_sec change" "$(field "$TL_TMP/cmp3.csv" pipe,1,n/a change_pct)" 400 1e-6
	expect_exit 2 "compare: unknown metric" "$STATS" compare --metric nosuch "$A" "$B"
	grep -q 'row --figures' "$TL_TMP/err" && ok "says where the figures are listed" || not_ok "$(cat "$TL_TMP/err")"
	expect_exit 2 "compare: one input" "$STATS" compare "$A"
}

compare_table() {
	local tc="$SRCDIR/scripts/tbench-compare"
	expect_exit 0 "tbench-compare A B" env TBENCH_STATS="$STATS" "$tc" "$A" "$B"
	local t="$TL_TMP/out"
	check "says which test" grep -q "Welch's two-sided t-test at 95%" "$t"
	grep -Eq '^pipe +1 +n/a +100\.0 ± 4\.968 \(3\) +110\.0 ± 4\.968 \(3\) +\+10\.00% +0\.0036 +yes +\[\+5\.47%, \+14\.53%\] +6\.07% +unpaired$' "$t" &&
		ok "pipe row" || { not_ok "pipe row"; cat "$t"; }
	grep -Eq '^tcp +4 +on +.*\+1\.00% +0\.9084 +no +\[-21\.67%, \+23\.67%\] +30\.35% +unpaired$' "$t" && ok "tcp row" || not_ok "tcp row"
	check "geomean line" grep -q '^geometric mean of B/A over 2 common points: +5.40%  (1 significant: 1 up, 0 down; 1 not)$' "$t"
	expect_exit 0 "tbench-compare --csv" env TBENCH_STATS="$STATS" "$tc" --csv "$A" "$B"
	cmp -s "$TL_TMP/out" "$TL_TMP/cmp.csv" && ok "--csv is tbench-stats compare --csv" || not_ok "--csv differs"
	expect_exit 2 "tbench-compare: one input" env TBENCH_STATS="$STATS" "$tc" "$A"
	expect_exit 2 "tbench-compare: a tbench-stats not of this suite" env TBENCH_STATS=/bin/true "$tc" "$A" "$B"
	grep -q "/bin/true is not the tbench-stats of this suite" "$TL_TMP/err" && ok "says so" || not_ok "says so"
	expect_exit 0 "tbench-compare --help" "$tc" --help

	# Any figure: by its column or by the JSON path it is read from.
	expect_exit 0 "tbench-compare --figure cost_syscalls" env TBENCH_STATS="$STATS" "$tc" --figure cost_syscalls "$A" "$B"
	check "says which figure" grep -q '^metric: cost_syscalls,' "$TL_TMP/out"
	grep -Eq '^pipe +1 +n/a +10\.000 ± 0\.4968 \(3\) +11\.000 ± 0\.4968 \(3\) +\+10\.00% +0\.0036 +yes +.*unpaired$' "$TL_TMP/out" &&
		ok "cost_syscalls: pipe row" || { not_ok "cost_syscalls: pipe row"; cat "$TL_TMP/out"; }
	expect_exit 0 "tbench-compare --figure=cost.per_operation.syscalls --csv" env TBENCH_STATS="$STATS" \
		"$tc" --figure=cost.per_operation.syscalls --csv "$A" "$B"
	check_near "by JSON path: pipe 1 p" "$(field "$TL_TMP/out" pipe,1,n/a p)" 0.003602 1e-6
	check_near "by JSON path: tcp 4 on p" "$(field "$TL_TMP/out" tcp,4,on p)" 0.90843 1e-5
	expect_exit 2 "tbench-compare --figure nosuch" env TBENCH_STATS="$STATS" "$tc" --figure nosuch "$A" "$B"
}

cost() {
	expect_exit 0 "cost" "$STATS" cost "$B"
	local c="$TL_TMP/out"
	check_near "pipe 1 cost" "$(field "$c" pipe,1,n/a cost_us)" 9 1e-9
	check_near "pipe 1 cost interval (no spread)" "$(field "$c" pipe,1,n/a cost_ci95_us)" 0 1e-9
	[ -z "$(field "$c" tcp,4,on cost_us)" ] && ok "no nop at 4 clients: no tcp cost" || not_ok "tcp 4 has no baseline"
}

# The layers of tests/data/layers.csv, worked out in its comments, along
# the model the backends built in declare (backends/*.c, .path).
# A cell of decompose's CSV (labels have commas: read by tbench-stats select).
dfield() { # CSV CLIENTS LAYER COLUMN
	"$STATS" select --where clients="$2" --where layer="$3" --columns "$4" --tsv "$1" | head -n 1
}

decompose() {
	local L="$SRCDIR/tests/data/layers.csv" d="$TL_TMP/out" old=nop,pipe,unix,tcp:off,tcp:on
	expect_exit 0 "decompose" "$STATS" decompose "$L"
	check "decompose header" grep -q '^figure,clients,layer,label,minuend,subtrahend,mean,ci95,df,n_minuend,n_subtrahend,bottom,top,method,pairs,kind$' "$d"
	# field matches the first fields: figure,clients,layer
	[ "$(dfield "$d" 1 tcp-unix kind)" = different-paths ] &&
		[ "$(dfield "$d" 1 unix-pipe kind)" = different-paths ] &&
		ok "tcp − unix and unix − pipe: different paths, not layers" || not_ok "paths: $(cat "$d")"
	[ "$(dfield "$d" 1 copy_wakeup kind)" = layer ] && [ "$(dfield "$d" 1 offload kind)" = layer ] &&
		ok "pipe − nop and the offloads: layers" || not_ok "layers: $(cat "$d")"
	! "$STATS" select --where kind=layer --columns minuend,subtrahend --tsv "$d" | grep -Eq $'^(tcp[^\t]*\tunix|unix\tpipe)$' &&
		ok "no layer of unix over pipe or tcp over unix" || not_ok "a path-crossing layer: $(cat "$d")"
	check_near "unix − pipe: the difference" "$(dfield "$d" 1 unix-pipe mean)" 3 1e-9
	check_near "unix − pipe: its interval (2.776 sqrt(2/3))" "$(dfield "$d" 1 unix-pipe ci95)" 2.2669 1e-3
	check_near "tcp over nop on the stack" "$(dfield "$d" 1 tcpip mean)" 10 1e-9
	check_near "offload df" "$(dfield "$d" 1 offload df)" 2.94118 1e-4
	check_near "offload top" "$(dfield "$d" 1 offload top)" 13 0
	[ "$(dfield "$d" 2 copy_wakeup ci95)" = "" ] && ok "one nop run: no interval" || not_ok "one nop run: no interval"
	expect_exit 0 "decompose --levels (the old stack)" "$STATS" decompose --levels "$old" "$L"
	[ "$(tail -n +2 "$d" | cut -d, -f2,3 | paste -sd' ')" = "1,harness 1,copy_wakeup 1,unix-pipe 1,tcp:off-unix 1,offload 2,harness 2,copy_wakeup 2,tcp:off-pipe" ] &&
		ok "levels in order, a missing level skipped" || not_ok "layers: $(cut -d, -f2,3 "$d" | paste -sd' ')"
	[ "$(tail -n +2 "$d" | awk -F, '{ print $NF }' | paste -sd' ')" = "layer layer different-paths different-paths layer layer layer different-paths" ] &&
		ok "each step says whether it is a layer" || not_ok "kinds: $(cat "$d")"
	expect_exit 0 "decompose --figure wall_us_per_op" "$STATS" decompose --figure wall_us_per_op --levels "$old" "$L"
	check_near "wall: unix − pipe doubled" "$(dfield "$d" 1 unix-pipe mean)" 6 1e-9
	expect_exit 0 "decompose --levels nop,tcp:on" "$STATS" decompose --levels nop,tcp:on "$L"
	check_near "nop to tcp on in one step" "$(dfield "$d" 1 tcp:on-nop mean)" 12 1e-9
	expect_exit 2 "decompose: no such figure" "$STATS" decompose --figure nosuch "$L"
	expect_exit 2 "decompose: bad keys" "$STATS" decompose --keys backend "$L"
	expect_exit 2 "decompose: no levels" "$STATS" decompose --levels , "$L"
	expect_exit 0 "decompose --table" "$STATS" decompose --table "$L"
	grep -Eq '^  copy \+ wake-up \(pipe − nop\) +4\.000 ± 2\.484 +unpaired +clear of 0$' "$d" && grep -q '^1 clients$' "$d" &&
		ok "--table: a block per client count, each layer with its interval, clear of 0" || not_ok "--table: $(cat "$d")"
	grep -A1 '^  unix − pipe: different paths, not a layer$' "$d" | grep -Eq '^      unix 8\.000, pipe 5\.000; difference +3\.000 ± 2\.267' &&
		ok "--table: different paths side by side, their difference" || not_ok "--table paths: $(cat "$d")"
	# different paths part by part, from traced runs (tests/data/paths-trace.csv)
	local P="$SRCDIR/tests/data/paths-trace.csv"
	expect_exit 0 "decompose --table of traced runs" "$STATS" decompose --table "$P"
	grep -A6 '^  tcp − unix: different paths, not a layer' "$d" | grep -Eq '^        clients softirq +6\.000 +0\.000$' &&
		grep -A6 '^  tcp − unix: different paths' "$d" | grep -Eq '^        clients wakeups +1\.000 +2\.000$' &&
		ok "--table: the parts of tcp and unix side by side" || not_ok "--table parts: $(cat "$d")"
	expect_exit 0 "decompose --parts" "$STATS" decompose --parts "$P"
	[ "$("$STATS" select --where layer=tcp-unix --where part=softirq --columns minuend_mean,subtrahend_mean --tsv "$d")" = $'6\t0' ] &&
		[ "$("$STATS" select --where layer=unix-pipe --columns part --tsv "$d" | paste -sd,)" = "user,read/write,wakeups" ] &&
		ok "--parts: a line a part of each different-paths pair, parts neither has left out" || not_ok "--parts: $(cat "$d")"
	expect_exit 2 "decompose --parts without --trace's columns" "$STATS" decompose --parts "$L"
	# the model tbench-plot reads: the stack, the layers beside it, the paths
	expect_exit 0 "decompose --model" "$STATS" decompose --model
	[ "$(awk -F'\t' '$1 == "stack" { print $3 }' "$d" | paste -sd,)" = nop,tcp:off,tcp:on ] &&
		[ "$(awk -F'\t' '$1 == "stack" { print $4 }' "$d" | paste -sd,)" = harness,tcpip,offload ] &&
		ok "--model: the stack, nested levels only" || not_ok "--model stack: $(cat "$d")"
	grep -q $'^sibling\tnop\tpipe\tcopy_wakeup\t' "$d" && grep -q $'^paths\tpipe\tunix\tunix-pipe\t' "$d" &&
		grep -q $'^paths\tunix\ttcp:on\ttcp-unix\t' "$d" && ! grep -q $'^sibling\tpipe\tunix\t' "$d" &&
		ok "--model: pipe a layer over nop, unix beside pipe, tcp beside unix" || not_ok "--model steps: $(cat "$d")"
	awk -F'\t' 'NR == 1 { bad = $0 != "kind\tlower\tupper\tname\tlabel" } NR > 1 && (NF != 5 || $3 == "" || $5 == "") { bad = 1 }
		$1 == "sibling" { sib++ } END { exit bad || !sib }' "$d" &&
		ok "--model: a header, five fields a line, siblings" || not_ok "--model lines: $(cat "$d")"
}

# The equivalence test (--equivalent) on tests/data/equivalence_*.csv,
# worked out in equivalence_b.csv's comments; layers.csv's at +-20%.
equivalence() {
	local EA="$SRCDIR/tests/data/equivalence_a.csv" EB="$SRCDIR/tests/data/equivalence_b.csv" o="$TL_TMP/out"
	expect_exit 0 "compare --csv --equivalent 2%" "$STATS" compare --csv --equivalent 2% "$EA" "$EB"
	check "equivalence columns appended after pairs" grep -q \
		',method,pairs,equivalence,margin_pct,equiv_lo_pct,equiv_hi_pct,margin_shown_pct,level,half_width_pct$' "$o"
	[ "$(field "$o" pipe,1,n/a equivalence)" = equivalent ] && [ "$(field "$o" unix,1,n/a equivalence)" = different ] &&
		[ "$(field "$o" tcp,1,on equivalence)" = "cannot tell" ] &&
		ok "equivalent, different, cannot tell" || not_ok "verdicts: $(cat "$o")"
	check_near "pipe: 90% interval's low end" "$(field "$o" pipe,1,n/a equiv_lo_pct)" 0.825935 1e-5
	check_near "tcp: the margin it could have shown" "$(field "$o" tcp,1,on margin_shown_pct)" 2.740646 1e-5
	check_near "unix: shown" "$(field "$o" unix,1,n/a margin_shown_pct)" 11.7406 1e-4
	[ "$(field "$o" pipe,1,n/a significant)" = yes ] && ok "pipe: significant all the same" || not_ok "pipe significant"
	grep -q '^geomean,.*,1 equivalent,,,,,,$' "$o" && ok "geomean line: the count" || not_ok "geomean: $(tail -1 "$o")"
	expect_exit 0 "compare --csv --paired --equivalent 2%" "$STATS" compare --csv --paired --equivalent 2% "$EA" "$EB"
	[ "$(field "$o" tcp,1,on equivalence)" = equivalent ] && [ "$(field "$o" unix,1,n/a equivalence)" = different ] &&
		ok "paired: the steady differences are equivalent, 10% different" || not_ok "paired: $(cat "$o")"
	expect_exit 0 "compare --csv --equivalent 3 (the figure's units)" "$STATS" compare --csv --equivalent 3 "$EA" "$EB"
	[ "$(field "$o" tcp,1,on equivalence)" = equivalent ] && grep -q ',margin,equiv_lo,equiv_hi,margin_shown,level,half_width_pct$' "$o" &&
		ok "absolute margin: +-3 MB/s shows tcp equivalent" || not_ok "absolute: $(cat "$o")"
	expect_exit 0 "compare --equivalent 2% (table)" "$STATS" compare --equivalent 2% "$EA" "$EB"
	grep -Eq '^tcp +1 +on .* unpaired +cannot tell +±2\.74%$' "$o" &&
		grep -q '^equivalent within ±2% at 95%: 1; different: 1; cannot tell at this noise: 1$' "$o" &&
		ok "table: verdict and shown margin per point, the counts" || not_ok "table: $(cat "$o")"
	expect_exit 2 "--equivalent 0 is refused" "$STATS" compare --equivalent 0 "$EA" "$EB"
	expect_exit 2 "--equivalent 2x is refused" "$STATS" compare --equivalent 2x "$EA" "$EB"
	expect_exit 2 "--equivalent with --verdict is refused" "$STATS" compare --verdict 'mb_per_sec<-3%' \
		--equivalent 2% "$EA" "$EB"

	local L="$SRCDIR/tests/data/layers.csv"
	expect_exit 0 "decompose --equivalent 20%" "$STATS" decompose --equivalent 20% "$L"
	[ "$(field "$o" cost_cpu_us,1,offload equivalence)" = "cannot tell" ] &&
		[ "$(field "$o" cost_cpu_us,1,copy_wakeup equivalence)" = different ] &&
		[ "$(field "$o" cost_cpu_us,1,harness equivalence)" = n/a ] &&
		ok "layers: offload cannot tell, copy_wakeup (pipe − nop) different, the first n/a" || not_ok "layers: $(cat "$o")"
	expect_exit 0 "decompose --table --equivalent 20%" "$STATS" decompose --table --equivalent 20% "$L"
	grep -Eq '^  TSO/GSO on − off \(tcp\) .* covers 0  cannot tell \(shown ±46%\)$' "$o" &&
		ok "--table: the layer's verdict and shown margin" || not_ok "--table: $(cat "$o")"
}

# compare --paired --ratio on tests/test_blocks.c's worked-out sample:
# ln(B/A) = ln 1.02, ln 1.04, ln 1.03, the change 100 (exp(mean) - 1) =
# 2.99676% with ends 0.54233% and 5.51111%, half_width_pct 2.48439.
ratio() {
	local ra="$TL_TMP/ratio_a.csv" rb="$TL_TMP/ratio_b.csv" o="$TL_TMP/out"
	printf 'backend,clients,rep,status,mb_per_sec\n' | tee "$ra" >"$rb"
	printf 'pipe,1,%s,ok,100\n' 1 2 3 >>"$ra"
	printf 'pipe,1,1,ok,102\npipe,1,2,ok,104\npipe,1,3,ok,103\n' >>"$rb"
	expect_exit 0 "compare --paired --ratio --csv" "$STATS" compare --paired --ratio --csv --equivalent 10% "$ra" "$rb"
	check_near "ratio: change" "$(field "$o" pipe,1 change_pct)" 2.99676 1e-5
	check_near "ratio: low end" "$(field "$o" pipe,1 change_lo_pct)" 0.54233 1e-5
	check_near "ratio: half_width_pct" "$(field "$o" pipe,1 half_width_pct)" 2.48439 1e-5
	[ "$(field "$o" pipe,1 method)" = paired-ratio ] && [ "$(field "$o" pipe,1 equivalence)" = equivalent ] &&
		ok "ratio: method paired-ratio, equivalent within 10%" || not_ok "ratio: $(cat "$o")"
	expect_exit 0 "compare --paired --ratio (table)" "$STATS" compare --paired --ratio "$ra" "$rb"
	check "ratio table: the method" grep -Eq '^pipe +1 .* \[\+0\.54%, \+5\.51%\] .* paired-ratio \(3\)$' "$o"
	expect_exit 2 "--ratio without --paired" "$STATS" compare --ratio "$ra" "$rb"
	check "says to give --paired" grep -q 'give --paired too' "$TL_TMP/err"
	expect_exit 2 "--ratio --equivalent in units" "$STATS" compare --paired --ratio --equivalent 2 "$ra" "$rb"
	expect_exit 2 "--ratio --verdict in units" "$STATS" compare --paired --ratio --verdict 'mb_per_sec<-3' "$ra" "$rb"
	expect_exit 1 "--ratio --verdict in %: bad" "$STATS" compare --paired --ratio --verdict 'mb_per_sec>0.5%' "$ra" "$rb"
	sed -i 's/^pipe,1,2,ok,104$/pipe,1,2,ok,0/' "$rb"
	expect_exit 2 "--ratio: a run of 0" "$STATS" compare --paired --ratio --csv "$ra" "$rb"
	check "names the file and line" grep -q 'ratio_b.csv:3: mb_per_sec 0' "$TL_TMP/err"
}

rows_cli() {
	local data="$SRCDIR/tests/data" ok_set=(--set offload=on --set rep=2 --set dev=lo --set tso_read=on --set gso_read=on
		--set gro_read=on --set exit_code=0 --set started=2026-12-01T10:00:00+00:00 --set json=runs/tcp_c4_on_r2.json)
	expect_exit 0 "row --figures" "$STATS" row --figures
	grep -qx cost_cpu_us "$TL_TMP/out" && grep -qx wall_us_per_op "$TL_TMP/out" && grep -qx mb_per_sec "$TL_TMP/out" &&
		! grep -qx rep "$TL_TMP/out" && ok "figures: the numbers of a run, not its names" || not_ok "row --figures: $(cat "$TL_TMP/out")"
	expect_exit 0 "row --knobs" "$STATS" row --knobs
	[ "$(paste -sd, "$TL_TMP/out")" = offload,tso,gso,gro,mtu,cc,nodelay,sndbuf,rcvbuf,family,placement,rate,inject_ns,copy_replies,sysctl ] &&
		ok "knobs: the sweep's, in the order of runs.csv" || not_ok "row --knobs: $(cat "$TL_TMP/out")"
	expect_exit 0 "summarize rows.csv: every figure" "$STATS" summarize "$data/rows.csv"
	# keys: backend, clients, model, then the knobs; the --netns run varied mtu and placement
	local netns_run='tcp,4,processes,off,-,-,-,1500,-,-,-,-,-,split,-,-,-,net.ipv4.tcp_autocorking=0;net.ipv4.tcp_rmem=4096 131072 6291456'
	check "summary keys: dimensions, then the read-backs carried" grep -q \
		'^backend,clients,model,offload,tso,gso,gro,mtu,cc,nodelay,sndbuf,rcvbuf,family,placement,rate,inject_ns,copy_replies,sysctl,tso_read,gso_read,gro_read,sysctl_read,n,' "$TL_TMP/out"
	check_near "cost_cpu_us of the --netns run" "$(field "$TL_TMP/out" "$netns_run" cost_cpu_us_mean)" 21.421 1e-9
	check_near "its payload bytes per segment" "$(field "$TL_TMP/out" "$netns_run" cost_payload_bytes_per_segment_mean)" 2741.4 1e-9
	[ "$(field "$TL_TMP/out" "$netns_run" tso_read)" = off ] && ok "summary carries the read-back TSO" || not_ok "summary tso_read"
	# An older runs.csv (tso, gso, gro read back; no knob columns but offload): the read-backs are no keys.
	grep -v '^#' "$data/rows.csv" | cut -d, -f1-3,18-25,27- | sed '1s/tso_read,gso_read,gro_read/tso,gso,gro/' >"$TL_TMP/old.csv"
	expect_exit 0 "summarize an older runs.csv" "$STATS" summarize "$TL_TMP/old.csv"
	check "older runs.csv: keys backend,clients,model,offload; tso read back" grep -q \
		'^backend,clients,model,offload,tso_read,gso_read,gro_read,n,' "$TL_TMP/out"
	[ "$(field "$TL_TMP/out" tcp,4,processes,off tso_read)" = off ] && ok "older runs.csv: its tso as tso_read" ||
		not_ok "older runs.csv: tso_read $(cat "$TL_TMP/out")"
	expect_exit 0 "row --header" "$STATS" row --header
	[ "$(cat "$TL_TMP/out")" = "$(grep -v '^#' "$data/rows.csv" | head -n 1)" ] && ok "header: that of tests/data/rows.csv" ||
		not_ok "header: $(cat "$TL_TMP/out")"
	expect_exit 0 "row of run-ok.json" "$STATS" row "${ok_set[@]}" "$data/run-ok.json"
	[ "$(cat "$TL_TMP/out")" = "$(grep -v '^#' "$data/rows.csv" | sed -n 2p)" ] && ok "row: that of tests/data/rows.csv" ||
		not_ok "row: $(cat "$TL_TMP/out")"
	expect_exit 0 "row with the server's CPU measured" "$STATS" row "${ok_set[@]}" \
		--server-cpu-start 10,20 --server-cpu-end 10.5,21.5 "$data/run-ok.json"
	[ "$(cat "$TL_TMP/out")" = "$(grep -v '^#' "$data/rows.csv" | sed -n 4p)" ] && ok "row: server CPU from /proc" ||
		not_ok "row: $(cat "$TL_TMP/out")"
	expect_exit 0 "row --columns" "$STATS" row --columns status,mb_per_sec,error "$data/run-interrupted-warmup.json"
	[ "$(cat "$TL_TMP/out")" = $'interrupted\t\tinterrupted (SIGINT) before the execute phase' ] &&
		ok "interrupted in warm-up: no figure" || not_ok "row --columns: $(cat "$TL_TMP/out")"
	expect_exit 0 "row without JSON" "$STATS" row --set backend=tcp --set 'error=a "quoted", text'
	[ "$(cut -d, -f1 "$TL_TMP/out")" = tcp ] && grep -q ',failed,.*,"a ""quoted"", text"$' "$TL_TMP/out" &&
		ok "without JSON: failed, the error quoted" || not_ok "row without JSON: $(cat "$TL_TMP/out")"
	expect_exit 2 "row --set of a JSON column" "$STATS" row --set mb_per_sec=1
	expect_exit 2 "row of a missing JSON" "$STATS" row "$TL_TMP/nope.json"
	printf '{"result": {"status": "ok",\n "mb_per_sec": 1.}}' >"$TL_TMP/bad.json"
	expect_exit 2 "row of a broken JSON" "$STATS" row "$TL_TMP/bad.json"
	grep -q 'bad.json:2:16: bad number' "$TL_TMP/err" && ok "names file:line:column" || not_ok "$(cat "$TL_TMP/err")"
	expect_exit 2 "row: one server CPU reading" "$STATS" row --server-cpu-start 1,2 "$data/run-ok.json"

	expect_exit 0 "select --where --columns --tsv" "$STATS" select --where model=processes --where status=ok \
		--columns clients,server_user_s --tsv "$data/rows.csv"
	[ "$(cat "$TL_TMP/out")" = $'4\t0.75\n4\t0.500000\n4\t0.096783\n2\t0.529953' ] && ok "select: the rows asked for" ||
		not_ok "select: $(cat "$TL_TMP/out")"
	expect_exit 0 "select as CSV" "$STATS" select --where backend=pipe "$data/rows.csv"
	[ "$(wc -l <"$TL_TMP/out")" -eq 2 ] && grep -q '^backend,clients,' "$TL_TMP/out" &&
		ok "select: header and one row" || not_ok "select as CSV: $(cat "$TL_TMP/out")"
	expect_exit 2 "select: no such column" "$STATS" select --columns nosuch "$data/rows.csv"
	expect_exit 0 "proc-cpu of this shell" "$STATS" proc-cpu $$
	grep -Eq '^[0-9]+\.[0-9]{6},[0-9]+\.[0-9]{6}$' "$TL_TMP/out" && ok "proc-cpu: user,system" ||
		not_ok "proc-cpu: $(cat "$TL_TMP/out")"
	expect_exit 2 "proc-cpu of no process" "$STATS" proc-cpu 0x1
	expect_exit 0 "--version" "$STATS" --version
	grep -q '^tbench-stats (tbench suite) ' "$TL_TMP/out" && ok "--version names the suite" || not_ok "--version"
	# shellcheck disable=SC2016 # $1 and $2 are sh's
	expect_exit 1 "output to a full device" sh -c '"$1" summarize "$2" >/dev/full' sh "$STATS" "$A"
}

# The medians and pairs of tests/data/paired.csv, worked out in its comments.
paired() {
	local P="$SRCDIR/tests/data/paired.csv" o="$TL_TMP/out"
	expect_exit 0 "paired" "$STATS" paired --variant contender --base tcp --where status=ok \
		--decimals 3 --target 1.6 "$P"
	check "paired header" grep -qx 'clients,contender,n,median,lowest,highest,confidence_pct,pairs,paired,paired_lowest,paired_highest,paired_confidence_pct,of_medians,paired_target,of_medians_target' "$o"
	check "paired: the base, no pairs" grep -qx '1,tcp,3,150.000,100.000,200.000,75,,,,,,,,' "$o"
	check "paired: pipe / tcp" grep -qx '1,pipe,3,300.000,150.000,300.000,75,3,1.500,1.500,2.000,75,2.000,missed,met' "$o"
	check "paired: a failed base run pairs with nothing" grep -qx '2,pipe,2,450.000,400.000,500.000,50,1,2.000,2.000,2.000,0,2.250,met,met' "$o"
	expect_exit 0 "paired --cost" "$STATS" paired --variant contender --base tcp --cost --where status=ok "$P"
	check_near "pipe's cost per operation" "$(field "$o" 1,pipe paired)" -3333.33 1e-2
	expect_exit 0 "paired, no variant" "$STATS" paired --where status=ok --decimals 1 "$P"
	check "paired: every run of a point" grep -qx '1,6,175.0,100.0,300.0,97' "$o"
	expect_exit 0 "paired --precise" "$STATS" paired --variant contender --base tcp --where status=ok --precise "$P"
	check_near "pipe / tcp of the medians, --precise" "$(field "$o" 1,pipe of_medians)" 2 0
	# 10 µs an operation, parts of 3 and 2 of it become 1 and 1: 10 / 7
	expect_exit 0 "substitute" "$STATS" substitute --total 10 --from 3,2 --to 1,1 --decimals 4
	[ "$(cat "$o")" = 1.4286 ] && ok "substitute: 10 / (10 - 5 + 2)" || not_ok "substitute: $(cat "$o")"
	expect_exit 2 "substitute: parts unmatched" "$STATS" substitute --total 10 --from 3,2 --to 1
	# The options through popt: --name=VALUE as --name VALUE; an unknown one named.
	expect_exit 0 "substitute --name=VALUE" "$STATS" substitute --total=10 --from=3,2 --to=1,1 --decimals=4
	[ "$(cat "$o")" = 1.4286 ] && ok "--name=VALUE: the same" || not_ok "--name=VALUE: $(cat "$o")"
	expect_exit 2 "paired: unknown option" "$STATS" paired --varaint contender "$P"
	check "names the flag" grep -q 'paired: unknown option --varaint' "$TL_TMP/err"
	expect_exit 2 "substitute: a stray operand" "$STATS" substitute --total 10 --from 3 --to 1 4
	check "names it" grep -q "substitute: too many operands at '4'" "$TL_TMP/err"
	expect_exit 2 "paired: --base without --variant" "$STATS" paired --base tcp "$P"
	expect_exit 2 "paired: no such figure" "$STATS" paired --figure mbps "$P"
	grep -q "no column 'mbps'" "$TL_TMP/err" && ok "names the column" || not_ok "$(cat "$TL_TMP/err")"
}

# bench/report-lib.sh, through which the benchmarks read tbench-stats paired,
# on the same CSV.
report_lib() {
	local -A m=() p=()
	# shellcheck source=bench/report-lib.sh
	. "$SRCDIR/bench/report-lib.sh"
	BENCH_STATS="$STATS"
	bench_paired m --variant contender --base tcp --where status=ok --decimals 3 "$SRCDIR/tests/data/paired.csv"
	[ "${m[points]}" = "1 2" ] && ok "bench_paired: the points in order" || not_ok "points '${m[points]}'"
	[ "${m[1,pipe,paired]}:${m[2,pipe,pairs]}:${m[2,tcp,n]}:${m[1,tcp,paired]:-}" = "1.500:1:1:" ] &&
		ok "bench_paired: a cell by point, variant and column" ||
		not_ok "bench_paired: ${m[1,pipe,paired]}:${m[2,pipe,pairs]}:${m[2,tcp,n]}:${m[1,tcp,paired]:-}"
	bench_paired p --where status=ok --decimals 1 "$SRCDIR/tests/data/paired.csv"
	[ "${p[points]}:${p[1,median]}" = "1 2:175.0" ] && ok "bench_paired: no variant" ||
		not_ok "bench_paired without a variant: ${p[points]}:${p[1,median]}"
	[[ $(bench_ram_gib 1) =~ ^[0-9]+\.[0-9]$ ]] && ok "bench_ram_gib 1: $(bench_ram_gib 1)" ||
		not_ok "bench_ram_gib 1: '$(bench_ram_gib 1)'"
}

# Inputs no sweep writes are refused, naming file, line and column, exit 2:
# a runs.csv cut in its header, a figure nan or inf, clients 0 or below.
bad_runs() {
	local f="$TL_TMP/cut.csv"
	printf 'backend,clients,off' >"$f"
	expect_exit 2 "summarize: runs.csv cut in its header" "$STATS" summarize "$f"
	check "names file, line and column" grep -q "cut.csv:1: the header ends at column 3 ('off') without a line end" "$TL_TMP/err"
	local bad want
	for bad in "mb_per_sec=nan:4:column 6 (mb_per_sec): 'nan' is not a finite number" \
		"mb_per_sec=inf:3:column 6 (mb_per_sec): 'inf' is not a finite number" \
		"mb_per_sec=-inf:4:column 6 (mb_per_sec): '-inf' is not a finite number" \
		"clients=0:3:column 2 (clients): '0' is not a number of clients" \
		"clients=-4:4:column 2 (clients): '-4' is not a number of clients" \
		"clients=1.5:3:column 2 (clients): '1.5' is not a number of clients"; do
		local col="${bad%%=*}" rest="${bad#*=}"
		local value="${rest%%:*}" line
		rest="${rest#*:}"
		line="${rest%%:*}"
		want="${rest#*:}"
		f="$TL_TMP/bad-$col.csv"
		# the value in row LINE (the header is line 2, after the comment)
		awk -F, -v OFS=, -v col="$col" -v v="$value" -v line="$line" '
			NR == 2 { for (i = 1; i <= NF; i++) if ($i == col) c = i }
			NR == line { $c = v } { print }' "$A" >"$f"
		expect_exit 2 "summarize: $col $value" "$STATS" summarize "$f"
		check "names $(basename "$f"):$line and the column" grep -qF "$(basename "$f"):$line: $want" "$TL_TMP/err"
		expect_exit 2 "compare: $col $value in B" "$STATS" compare "$A" "$f"
	done
	f="$TL_TMP/failed-no-clients.csv"
	printf 'backend,clients,status,mb_per_sec\ntcp,4,ok,100\ntcp,,failed,\n' >"$f"
	expect_exit 0 "summarize: a failed run without clients is no error" "$STATS" summarize "$f"
}

# No point of A is in B: exit 2 (man tbench-compare, EXIT STATUS), naming
# what differs; through tbench-compare too, with one B or several.
# Two sweeps whose meta.json fingerprints differ in the kernel's build: the
# comparison first names that field, on stdout, or on stderr with --csv.
sittings() {
	local tc="$SRCDIR/scripts/tbench-compare" a="$TL_TMP/sit-a" b="$TL_TMP/sit-b"
	mkdir -p "$a" "$b"
	cp "$A" "$a/runs.csv"
	cp "$B" "$b/runs.csv"
	printf '{"sitting": {"kernel_release": "6.18", "kernel_build": "#1 old", "boot_id": "x"}}\n' >"$a/meta.json"
	printf '{"sitting": {"kernel_release": "6.18", "kernel_build": "#2 new", "boot_id": "x"}}\n' >"$b/meta.json"
	expect_exit 0 "tbench-compare of two sittings" env TBENCH_STATS="$STATS" "$tc" "$a" "$b"
	check "names the field they differ in" grep -q 'kernel build (uname -v): #1 old -> #2 new' "$TL_TMP/out"
	check "and no other" grep -q 'differ in 1 field(s)' "$TL_TMP/out"
	expect_exit 0 "tbench-compare --csv of two sittings" env TBENCH_STATS="$STATS" "$tc" --csv "$a" "$b"
	check "--csv: the sittings on stderr" grep -q 'differ in 1 field(s)' "$TL_TMP/err"
	check "--csv: stdout is the CSV alone" sh -c "head -n 1 '$TL_TMP/out' | grep -q '^backend,'"
}

no_common_point() {
	local other="$TL_TMP/other.csv" tc="$SRCDIR/scripts/tbench-compare"
	printf 'backend,clients,offload,rep,status,mb_per_sec\nshm,8,n/a,1,ok,100\nshm,8,n/a,2,ok,101\n' >"$other"
	expect_exit 2 "compare: no common point" "$STATS" compare "$A" "$other"
	check "says which dimensions differ" grep -q 'no point of .* is in .*other.csv: they differ in backend' "$TL_TMP/err"
	expect_exit 2 "compare --csv: no common point" "$STATS" compare --csv "$A" "$other"
	expect_exit 2 "tbench-compare: no common point" env TBENCH_STATS="$STATS" "$tc" "$A" "$other"
	expect_exit 2 "tbench-compare --csv, several Bs, one with no common point" \
		env TBENCH_STATS="$STATS" "$tc" --csv "$A" "$B" "$other"
}

# Intervals at the level of the variance, on tests/data/blocks*.csv
# (worked out in their comments).
blocks() {
	local BA="$SRCDIR/tests/data/blocks.csv" BB="$SRCDIR/tests/data/blocks_b.csv" o="$TL_TMP/out"
	expect_exit 0 "summarize: sittings" "$STATS" summarize "$BA"
	check "level columns appended" grep -q ',mb_per_sec_ci95,n_blocks,mb_per_sec_ci95_level,mb_per_sec_ci95_runs$' "$o"
	[ "$(field "$o" pipe,1 mb_per_sec_ci95_level)" = sitting ] && [ "$(field "$o" unix,1 mb_per_sec_ci95_level)" = run ] &&
		ok "pipe's sittings differ, unix's do not" || not_ok "levels: $(cat "$o")"
	check_near "pipe: the sittings' interval" "$(field "$o" pipe,1 mb_per_sec_ci95)" 8.2591 1e-4
	check_near "pipe: the runs' interval" "$(field "$o" pipe,1 mb_per_sec_ci95_runs)" 0.7781 1e-4
	check_near "pipe: blocks" "$(field "$o" pipe,1 n_blocks)" 2 0
	check_near "unix: the runs' interval, as before" "$(field "$o" unix,1 mb_per_sec_ci95)" 0.19539 1e-5
	expect_exit 0 "compare --paired: sittings" "$STATS" compare --csv --paired --keys backend,clients "$BA" "$BB"
	[ "$(field "$o" pipe,1 level)" = run ] && ok "paired: the drift cancels" || not_ok "paired level: $(cat "$o")"
	check_near "paired interval" "$(field "$o" pipe,1 diff_ci95)" 0.093864 1e-6
	expect_exit 0 "compare unpaired: sittings" "$STATS" compare --csv --keys backend,clients "$BA" "$BB"
	[ "$(field "$o" pipe,1 level)" = sitting ] && ok "unpaired: at the sittings" || not_ok "unpaired level: $(cat "$o")"
	check_near "unpaired interval" "$(field "$o" pipe,1 diff_ci95)" 3.9552 1e-4
	expect_exit 0 "compare table: sittings" "$STATS" compare --keys backend,clients "$BA" "$BB"
	grep -q '^pipe .* 13.583 ± 8.259 (6/2 sittings) .* unpaired sitting$' "$o" && grep -q '^unix .* 12.967 ± 0.1954 (6) ' "$o" &&
		ok "table: runs over sittings, and the method's level" || not_ok "table: $(cat "$o")"
	expect_exit 2 "--block-reps 1" "$STATS" summarize --block-reps 1 "$BA"
	check "--block-reps: says what it wants" grep -q 'block-reps 1: want a whole number' "$TL_TMP/err"
}

summarize
blocks
bad_runs
sittings
no_common_point
compare_csv
compare_table
cost
decompose
equivalence
ratio
paired
report_lib
rows_cli
tl_done
