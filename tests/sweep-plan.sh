#!/bin/bash
# tbench-sweep's plan, without running anything (--plan needs no root):
# the runs and their order (shuffled within a rep and client count, by
# --seed), offload settings, the knobs of --vary (the
# dimensions, n/a, the commands), the time estimate, --threads, --resume
# against a runs.csv, usage errors, and which tbench it picks.
# ok and not_ok always succeed, so "test && ok || not_ok" is safe here.
# shellcheck disable=SC2015
set -euo pipefail
# shellcheck source=tests/testlib.sh
. "${top_srcdir:-.}/tests/testlib.sh"

SWEEP="$SRCDIR/scripts/tbench-sweep"
TBENCH="$(cd "$(dirname "$TBENCH")" && pwd)/$(basename "$TBENCH")"
STATS="$(dirname "$TBENCH")/tbench-stats"
export TBENCH TBENCH_STATS="$STATS"
cd "$TL_TMP"

# plan ARGS...: the dry run's output in $TL_TMP/out, its run lines in $TL_TMP/runs
plan() {
	expect_exit 0 "--dry-run $*" "$SWEEP" -n "$@"
	grep '^\[' "$TL_TMP/out" >"$TL_TMP/runs" || true
}

# has_run LINE: the last plan has the run LINE ("what: command", without
# its "[n/N] "), wherever the shuffled order put it
# (grep reads a process substitution: under pipefail, its early exit could
# fail a pipeline with SIGPIPE)
has_run() { grep -Fxq -- "$1" < <(sed 's/^\[[0-9]*\/[0-9]*\] //' "$TL_TMP/runs"); }

runs_and_order() {
	plan --backends pipe,tcp --clients 1..4 --reps 2 -t 2.5 --warmup 1
	# pipe: 3 client counts; tcp: 3 x on,off; twice
	[ "$(wc -l <"$TL_TMP/runs")" -eq 18 ] && ok "18 runs" || not_ok "18 runs, got $(wc -l <"$TL_TMP/runs")"
	grep -q '^18 of 18 runs to do, 2.5 s + 1 s warm-up each, client model processes, mode lo$' "$TL_TMP/out" &&
		ok "says what it will do" || not_ok "says what it will do: $(head -n 1 "$TL_TMP/out")"
	# 18 x (2.5 + 1 + 0.5 s of start-up and recording) + 0.04 s x 42 clients
	# (pipe 1+2+4 twice, tcp 1+2+4 at two offloads twice) = 73.68 s
	grep -q '^estimated time: 1m13s ' "$TL_TMP/out" && ok "estimated time 1m13s" ||
		not_ok "estimated time: $(grep estimated "$TL_TMP/out")"
	has_run "pipe clients=1 offload=n/a rep 1/2: $TBENCH --netns -b pipe -t 2.5 --warmup 1 -q 1" &&
		ok "a run and its command: in a namespace of its own" || not_ok "pipe run: $(cat "$TL_TMP/runs")"
	has_run "tcp clients=4 offload=off rep 1/2: $TBENCH --netns --offload off -b tcp -t 2.5 --warmup 1 -q 4" &&
		has_run "tcp clients=4 offload=on rep 2/2: $TBENCH --netns --offload on -b tcp -t 2.5 --warmup 1 -q 4" &&
		ok "tcp once per offload setting, set by tbench --netns" || not_ok "tcp runs: $(cat "$TL_TMP/runs")"
	[ "$(grep -n 'rep 2/2' "$TL_TMP/runs" | head -n 1 | cut -d: -f1)" = 10 ] &&
		! sed -n '10,$p' "$TL_TMP/runs" | grep -q 'rep 1/2' &&
		ok "interleaved: every point's rep 1 first" || not_ok "interleaved"
	# within a rep, a client count's points back to back: 1, 2, 4 in 3 blocks of 3, each rep
	[ "$(sed 's/.* clients=\([0-9]*\) .* rep \([0-9]*\)\/.*/\2:\1/' "$TL_TMP/runs" | uniq -c | awk '{ print $1 "x" $2 }' |
		paste -sd' ')" = "3x1:1 3x1:2 3x1:4 3x2:1 3x2:2 3x2:4" ] &&
		ok "a client count's points back to back within a rep" || not_ok "blocks: $(cat "$TL_TMP/runs")"
	grep -Eq '^order: each rep in turn; within it the points of a client count back to back, shuffled \(--seed [0-9]+\)$' \
		"$TL_TMP/out" && ok "says the order and its seed" || not_ok "order line: $(grep order "$TL_TMP/out")"
	grep -q "using $TBENCH (" "$TL_TMP/err" && grep -q "using $STATS (" "$TL_TMP/err" &&
		ok "says which tbench and tbench-stats" || not_ok "says which programs: $(cat "$TL_TMP/err")"
	grep -q -- '--threads' "$TL_TMP/runs" && not_ok "--threads only when asked" || ok "--threads only when asked"

	plan --backends pipe --clients 2,1 --reps 1 --threads -- -c my.txt
	grep -q 'client model threads' "$TL_TMP/out" && ok "--threads: client model threads" ||
		not_ok "--threads: client model"
	[ "$(cut -d: -f2- "$TL_TMP/runs")" = " $TBENCH --netns -b pipe -t 10 --warmup 2 -q --threads -c my.txt 2
 $TBENCH --netns -b pipe -t 10 --warmup 2 -q --threads -c my.txt 1" ] &&
		ok "--threads and TBENCH-ARGS passed to tbench" || not_ok "commands: $(cat "$TL_TMP/runs")"
}

# The same --seed, the same order; other seeds, other orders of the same
# runs; within a plan, each rep's order drawn anew.
seeded_order() {
	local args=(--backends "pipe,tcp,nop" --clients "1,2" --reps 3 -t 1) seed orders=() runs=() blocks=""
	for seed in 1 1 2 3 4; do
		plan "${args[@]}" --seed "$seed"
		grep -q "(--seed $seed)\$" "$TL_TMP/out" || not_ok "--seed $seed: not said"
		orders+=("$(cut -d: -f1 "$TL_TMP/runs" | cut -d' ' -f2- | paste -sd' ')")
		runs+=("$(cut -d: -f1 "$TL_TMP/runs" | cut -d' ' -f2- | sort | paste -sd' ')")
		# the order of the 1-client block of each rep, one a line
		blocks+="$(awk -F'rep ' '/clients=1 / { split($2, r, "/"); b[r[1]] = b[r[1]] $1 } END { for (i in b) print b[i] }' \
			"$TL_TMP/runs" | sed 's/\[[0-9]*\/[0-9]*\]//g')"$'\n'
	done
	[ "${orders[0]}" = "${orders[1]}" ] && ok "--seed 1 twice: the same order" || not_ok "--seed 1 twice"
	[ "$(printf '%s\n' "${orders[@]:1}" | sort -u | wc -l)" -eq 4 ] && ok "seeds 1 to 4: four orders" ||
		not_ok "seeds 1 to 4: $(printf '%s\n' "${orders[@]:1}")"
	[ "$(printf '%s\n' "${runs[@]}" | sort -u | wc -l)" -eq 1 ] && ok "every seed: the same runs" ||
		not_ok "seeds: other runs: $(printf '%s\n' "${runs[@]}")"
	[ "$(grep -c . <<<"$blocks")" -eq 15 ] && [ "$(grep . <<<"$blocks" | sort -u | wc -l)" -gt 1 ] &&
		ok "each rep's order drawn anew" || not_ok "reps in one order: $blocks"
	expect_exit 2 "--seed abc" "$SWEEP" -n "${args[@]}" --seed abc
	grep -q -- "--seed: 'abc'" "$TL_TMP/err" && ok "names --seed" || not_ok "--seed abc: $(cat "$TL_TMP/err")"
}

offloads() {
	plan --backends tcp,pipe --clients 1 --reps 1 --offload on --tso on,off --gso off
	[ "$(sed "s|: $TBENCH .*||" "$TL_TMP/runs" | cut -d' ' -f2- | sort)" = "pipe clients=1 offload=n/a rep 1/1
tcp clients=1 offload=on:tso=off:gso=off rep 1/1
tcp clients=1 offload=on:tso=on:gso=off rep 1/1" ] && ok "--offload x --tso x --gso: cross product, tcp only" ||
		not_ok "offload settings: $(cat "$TL_TMP/runs")"
	grep -q -- "offload=on:tso=on:gso=off rep 1/1: $TBENCH --netns --tso on --gso off -b tcp " "$TL_TMP/runs" &&
		grep -q -- "offload=on:tso=off:gso=off rep 1/1: $TBENCH --netns --offload off -b tcp " "$TL_TMP/runs" &&
		ok "--tso and --gso apart when they differ, else --offload" || not_ok "tso/gso args: $(cat "$TL_TMP/runs")"
	plan --backends tcp --clients 1 --reps 1 --offload off --gro on
	grep -q -- "$TBENCH --netns --offload off --gro on -b tcp " "$TL_TMP/runs" && ok "--gro passed on" ||
		not_ok "--gro: $(cat "$TL_TMP/runs")"
	plan --backends tcp --clients 1 --reps 1 --offload off --veth
	grep -q -- "$TBENCH -b tcp " "$TL_TMP/runs" && ok "--veth: no --netns (the sweep's namespaces, ethtool)" ||
		not_ok "--veth: $(cat "$TL_TMP/runs")"
	plan --backends tcp,pipe --clients 1 --reps 1 --all-offloads
	grep -q 'pipe clients=1 offload=off' "$TL_TMP/runs" && ok "--all-offloads: pipe too" || not_ok "--all-offloads"
	plan --backends tcp,pipe --clients 1 --reps 1 --net-backends pipe
	grep -q 'tcp clients=1 offload=n/a' "$TL_TMP/runs" && grep -q 'pipe clients=1 offload=on' "$TL_TMP/runs" &&
		ok "--net-backends" || not_ok "--net-backends: $(cat "$TL_TMP/runs")"
}

usage_errors() {
	expect_exit 0 "--help" "$SWEEP" --help
	local bad
	for bad in "--clients 1,x" "--clients 8..2" "--clients 0" "--offload maybe" "--tso" "--backends pipe,nosuch" \
		"-t 0" "-t abc" "--warmup -1" "--reps 0" "--mtu 12" "--retry-failed" "--resume" "--dev eth0" \
		"--server 10.0.0.1" "--dev bad/name --server x" "--nosuch"; do
		# shellcheck disable=SC2086
		expect_exit 2 "usage error: $bad" "$SWEEP" -n $bad
	done
	expect_exit 2 "--backends pipe,nosuch" "$SWEEP" -n --backends pipe,nosuch
	grep -q "'nosuch' is not a backend of $TBENCH" "$TL_TMP/err" && ok "names the backend and the tbench" ||
		not_ok "names the backend: $(cat "$TL_TMP/err")"
	# a real sweep (no -n): its --out is checked before any run
	expect_exit 2 "an --out that cannot be created" "$SWEEP" --backends pipe --clients 1 --reps 1 -t 1 \
		--out /proc/nonexistent/out
	grep -q -- "--out /proc/nonexistent/out: .*No such file or directory" "$TL_TMP/err" &&
		ok "names --out and why" || not_ok "names --out and why: $(tail -n 1 "$TL_TMP/err")"
}

# A runs.csv of 2 runs of 4 (one failed), rows made by tbench-stats row.
resume() {
	local out="$TL_TMP/sweep" common=(--backends pipe --clients "1,2" --reps 2 --out "$TL_TMP/sweep")
	mkdir -p "$out"
	{
		"$STATS" row --header
		"$STATS" row --set backend=pipe --set clients=1 --set offload=n/a --set rep=1 --set exit_code=0 \
			"$SRCDIR/tests/data/run-ok.json"
		"$STATS" row --set backend=pipe --set clients=2 --set offload=n/a --set rep=1 --set exit_code=1
	} >"$out/runs.csv"
	plan "${common[@]}" --resume
	grep -q '^2 of 4 runs to do' "$TL_TMP/out" && ok "--resume: 2 of 4 runs to do" ||
		not_ok "--resume: $(head -n 1 "$TL_TMP/out")"
	[ "$(cut -d: -f1 "$TL_TMP/runs")" = "[1/2] pipe clients=1 offload=n/a rep 2/2
[2/2] pipe clients=2 offload=n/a rep 2/2" ] && ok "--resume: the missing ones" || not_ok "--resume: $(cat "$TL_TMP/runs")"
	# meta.json keeps the sweep's options (argv): those of common but --out
	jq -n '{ argv: ["--backends", "pipe", "--clients", "1,2", "--reps", "2"], sweep: { order_seed: 5 } }' \
		>"$out/meta.json"
	plan "${common[@]}" --resume
	grep -q '(--seed 5)$' "$TL_TMP/out" && ok "--resume: the sweep's own seed" || not_ok "--resume seed: $(grep order "$TL_TMP/out")"
	rm "$out/meta.json"
	plan "${common[@]}" --resume --retry-failed
	grep -q '^3 of 4 runs to do' "$TL_TMP/out" && grep -q 'clients=2 offload=n/a rep 1/2' "$TL_TMP/runs" &&
		ok "--retry-failed: the failed one again" || not_ok "--retry-failed: $(cat "$TL_TMP/out")"
	expect_exit 1 "a second sweep into the same --out" "$SWEEP" -n "${common[@]}"
	grep -q 'already holds a sweep' "$TL_TMP/err" && ok "says why" || not_ok "says why: $(cat "$TL_TMP/err")"
	# a stored argv: the sweep's options again, in any spelling, are accepted; others refused
	jq -n '{ argv: ["--backends", "pipe", "--clients", "1,2", "--reps", "2", "-t", "2", "--vary", "nodelay=on,off"] }' \
		>"$out/meta.json"
	plan --resume --out "$out" --vary=nodelay=on,off --time 2 -n
	grep -q '^[0-9] of 4 runs to do, 2 s ' "$TL_TMP/out" && ok "--resume: the sweep's options retyped, as --vary=, --time" ||
		not_ok "--resume retyped: $(cat "$TL_TMP/out" "$TL_TMP/err" 2>/dev/null | head -n 3)"
	expect_exit 2 "--resume with another -t" "$SWEEP" -n --resume --out "$out" --time 3
	grep -q -- '--time 3 (the sweep.s: -t 2)' "$TL_TMP/err" && ok "names it and the sweep's" || not_ok "names: $(cat "$TL_TMP/err")"
	# an option's value may start with '-': it is still that option's
	jq -n '{ argv: ["--backends", "pipe", "--clients", "1,2", "--reps", "2", "-t", "2", "--label", "-rc1"] }' \
		>"$out/meta.json"
	plan --resume --out "$out" --label -rc1
	grep -q '^[0-9] of 4 runs to do' "$TL_TMP/out" && ok "--resume: --label -rc1 retyped, a value starting with '-'" ||
		not_ok "--resume --label -rc1: $(cat "$TL_TMP/out" "$TL_TMP/err" 2>/dev/null | head -n 3)"
	expect_exit 2 "--resume with another --label" "$SWEEP" -n --resume --out "$out" --label -rc2
	grep -q -- '--label -rc2 (the sweep.s: --label -rc1)' "$TL_TMP/err" && ok "names the option and its value" ||
		not_ok "names: $(cat "$TL_TMP/err")"
	rm "$out/meta.json"
	sed -i '1s/,error$/,oops/' "$out/runs.csv"
	expect_exit 1 "--resume of a runs.csv with other columns" "$SWEEP" -n "${common[@]}" --resume
}

# --precision: the plan states the rule, the runs and time from the
# minimum to the maximum and the budget, and lists the minimum's reps;
# usage errors name their flag; --resume keeps meta.json's rule.
precision() {
	local common=(--backends "pipe,nop" --clients 1 -t 1 --warmup 0) bad flag out="$TL_TMP/prec"
	plan "${common[@]}" --precision 5 --reps 2 --max-reps 4 --budget 90
	[ "$(wc -l <"$TL_TMP/runs")" -eq 4 ] && grep -q 'rep 2/4: ' "$TL_TMP/runs" && ! grep -q 'rep [34]/' "$TL_TMP/runs" &&
		ok "--precision: the plan lists the first --reps reps" || not_ok "--precision runs: $(cat "$TL_TMP/runs")"
	grep -Fq "precision: each point repeated until the 95% interval's half-width of cost_cpu_us is within 5% of its mean: at least 2 reps (--reps), at most 4 (--max-reps)" \
		"$TL_TMP/out" && ok "--precision: states the rule, cost_cpu_us by default" ||
		not_ok "--precision rule: $(grep precision "$TL_TMP/out")"
	# 4 runs x (1 s + 0.5 s of start-up and recording + 0.04 s for its client) = 6.16 s; 8 runs 12.32 s
	grep -Fq "  4 to 8 runs, 6s to 12s; no rep beyond the minimum starts that would end after --budget 1m30s" \
		"$TL_TMP/out" && ok "--precision: runs, time and budget" || not_ok "--precision bounds: $(cat "$TL_TMP/out")"
	plan "${common[@]}" --precision 2.5,mb_per_sec
	grep -q 'half-width of mb_per_sec is within 2.5% of its mean: at least 3 reps (--reps), at most 10 (--max-reps)' \
		"$TL_TMP/out" && ! grep -q 'budget' "$TL_TMP/out" &&
		ok "--precision PCT,mb_per_sec; default reps 3 to 10, no budget" ||
		not_ok "--precision mb_per_sec: $(grep precision "$TL_TMP/out")"
	plan "${common[@]}" --precision 1,wall_us_per_op --reps 12
	grep -q 'of wall_us_per_op is within 1% .* at least 12 reps (--reps), at most 12 (--max-reps)' "$TL_TMP/out" &&
		ok "--precision PCT,wall_us_per_op; --max-reps at least --reps" || not_ok "wall: $(grep precision "$TL_TMP/out")"
	plan "${common[@]}"
	grep -q 'precision' "$TL_TMP/out" && not_ok "no rule without --precision" || ok "no rule without --precision"

	for bad in "--precision abc|--precision" "--precision 0|--precision" "--precision 5,nosuch|--precision: unknown figure" \
		"--precision 5 --reps 4 --max-reps 3|--max-reps" "--precision 5 --max-reps x|--max-reps" \
		"--precision 5 --reps 1|--reps" "--precision 5 --budget 0|--budget" "--max-reps 5|--max-reps needs --precision" \
		"--budget 60|--budget needs --precision"; do
		flag="${bad#*|}"
		# shellcheck disable=SC2086
		expect_exit 2 "usage error: ${bad%|*}" "$SWEEP" -n "${common[@]}" ${bad%|*}
		grep -q -- "^tbench-sweep: $flag" "$TL_TMP/err" && ok "names $flag" || not_ok "names $flag: $(cat "$TL_TMP/err")"
	done

	mkdir -p "$out"
	"$STATS" row --header >"$out/runs.csv"
	jq -n '{ argv: ["--backends", "pipe,nop", "--clients", "1", "-t", "1", "--warmup", "0"],
		sweep: { order_seed: 5, precision: { pct: 4, figure: "mb_per_sec", min_reps: 2, max_reps: 7, budget_s: null } } }' \
		>"$out/meta.json"
	plan "${common[@]}" --out "$out" --resume
	grep -q 'half-width of mb_per_sec is within 4% of its mean: at least 2 reps (--reps), at most 7 (--max-reps)' "$TL_TMP/out" &&
		[ "$(wc -l <"$TL_TMP/runs")" -eq 4 ] && ok "--resume: the sweep's precision rule" ||
		not_ok "--resume rule: $(cat "$TL_TMP/out" "$TL_TMP/err")"
	plan "${common[@]}" --out "$out" --resume --max-reps 9
	grep -q 'at least 2 reps (--reps), at most 9 (--max-reps)' "$TL_TMP/out" && ok "--resume --max-reps: a new maximum" ||
		not_ok "--resume --max-reps: $(grep precision "$TL_TMP/out")"
	jq -n '{ argv: ["--backends", "pipe,nop", "--clients", "1", "-t", "1", "--warmup", "0"], sweep: { order_seed: 5 } }' \
		>"$out/meta.json"
	expect_exit 2 "--resume --max-reps of a sweep without --precision" "$SWEEP" -n "${common[@]}" --out "$out" --resume --max-reps 9
	grep -q -- "--max-reps needs --precision PCT (the sweep in $out was not one of --precision)" "$TL_TMP/err" &&
		ok "says why" || not_ok "says why: $(cat "$TL_TMP/err")"
}

# The run lines of the last plan as "what: tbench arguments after -q".
plan_args() { sed "s|: $TBENCH .* -q |: |" "$TL_TMP/runs" | cut -d' ' -f2-; }

knobs() {
	# --out: the default results directory is named by the minute, which may turn between the two plans
	plan --backends tcp,pipe --clients 1,2 --reps 1 -t 1 --warmup 0 --offload on \
		--vary placement=same,split,free --vary mtu=1500,65536 --out "$TL_TMP/plan-out" --seed 7
	# tcp: 2 clients x 2 mtu x 3 placements; pipe: 2 x 3 (mtu n/a)
	[ "$(wc -l <"$TL_TMP/runs")" -eq 18 ] && ok "placement x mtu: 18 runs" || not_ok "18 runs: $(cat "$TL_TMP/runs")"
	grep -q '^dimensions: backends tcp,pipe x clients 1,2 x offload on x mtu 1500,65536 x placement same,split,free$' \
		"$TL_TMP/out" && ok "says the dimensions" || not_ok "dimensions: $(grep dimensions "$TL_TMP/out")"
	grep -q '^  mtu: n/a for pipe (run once)$' "$TL_TMP/out" && ok "says mtu is n/a for pipe" ||
		not_ok "n/a line: $(cat "$TL_TMP/out")"
	# same and split: the first CPU the sweep may use, and the next one
	local cpu0 cpu1
	cpu0="$(sed -n 's/^Cpus_allowed_list:[[:space:]]*\([0-9]*\).*/\1/p' /proc/self/status)"
	cpu1="$(sed -n 's/^Cpus_allowed_list:[[:space:]]*[0-9]*[,-]\([0-9]*\).*/\1/p' /proc/self/status)"
	if ! grep -q "^Cpus_allowed_list:[[:space:]]*$cpu0," /proc/self/status; then cpu1=$((cpu0 + 1)); fi
	grep -Fxq "tcp clients=1 offload=on mtu=1500 placement=same rep 1/1: --mtu 1500 --cpus $cpu0 --server-cpus $cpu0 1" < <(plan_args) &&
		ok "tcp same: tbench --mtu, --cpus, --server-cpus on one CPU" || not_ok "tcp same: $(plan_args)"
	grep -Fxq "tcp clients=1 offload=on mtu=1500 placement=split rep 1/1: --mtu 1500 --cpus $cpu0 --server-cpus $cpu1 1" < <(plan_args) &&
		ok "tcp split: servers on the next CPU" || not_ok "tcp split: $(plan_args)"
	grep -Fxq "tcp clients=1 offload=on mtu=65536 placement=free rep 1/1: --mtu 65536 1" < <(plan_args) &&
		ok "tcp free: not pinned" || not_ok "tcp free: $(plan_args)"
	grep -Fxq "pipe clients=1 offload=n/a mtu=n/a placement=split rep 1/1: --cpus $cpu0 --server-cpus $cpu1 1" < <(plan_args) &&
		ok "pipe: placement applies, mtu n/a" || not_ok "pipe split: $(plan_args)"
	grep -q ' --netns --offload on -b tcp ' "$TL_TMP/runs" && ok "--offload still set by tbench --netns" ||
		not_ok "--offload: $(sed -n 1p "$TL_TMP/runs")"
	cp "$TL_TMP/out" "$TL_TMP/plan1"
	plan --backends tcp,pipe --clients 1,2 --reps 1 -t 1 --warmup 0 --offload on \
		--vary placement=same,split,free --mtu 1500,65536 --dry-run --out "$TL_TMP/plan-out" --seed 7
	diff -q "$TL_TMP/out" "$TL_TMP/plan1" >/dev/null && ok "--mtu LIST and -n/--dry-run: the same plan" ||
		not_ok "--mtu, --dry-run: $(diff "$TL_TMP/out" "$TL_TMP/plan1" | head -3)"

	plan --backends tcp,pipe,unix --clients 1 --reps 1 --offload off --vary nodelay=on,off --vary sndbuf=65536 \
		--vary cc=cubic
	[ "$(plan_args | sort)" = "pipe clients=1 offload=n/a cc=n/a nodelay=n/a sndbuf=n/a rep 1/1: 1
tcp clients=1 offload=off cc=cubic nodelay=off sndbuf=65536 rep 1/1: -T TCP_NODELAY=0,TCP_CONGESTION=cubic,SO_SNDBUF=65536 1
tcp clients=1 offload=off cc=cubic nodelay=on sndbuf=65536 rep 1/1: -T TCP_NODELAY=1,TCP_CONGESTION=cubic,SO_SNDBUF=65536 1
unix clients=1 offload=n/a cc=n/a nodelay=n/a sndbuf=n/a rep 1/1: 1" ] &&
		ok "socket knobs: one tbench -T for tcp; n/a and run once for pipe and unix" || not_ok "-T: $(plan_args)"
	plan --backends tcp --clients 1 --reps 1 --offload off --vary rcvbuf=131072 --vary family=ipv4,ipv6
	[ "$(plan_args | sort)" = "tcp clients=1 offload=off rcvbuf=131072 family=ipv4 rep 1/1: --family ipv4 -T TCP_NODELAY,SO_RCVBUF=131072 1
tcp clients=1 offload=off rcvbuf=131072 family=ipv6 rep 1/1: --family ipv6 -T TCP_NODELAY,SO_RCVBUF=131072 1" ] &&
		ok "family; TCP_NODELAY kept (dbench's default) when nodelay is not varied" || not_ok "family: $(plan_args)"
	plan --backends tcp,pipe --clients 1 --reps 1 --vary offload=on,off --vary gro=off
	grep -q -- '--netns --offload off --gro off -b tcp ' "$TL_TMP/runs" && grep -q 'pipe clients=1 offload=n/a rep' "$TL_TMP/runs" &&
		[ "$(wc -l <"$TL_TMP/runs")" -eq 3 ] && ok "--vary offload= and gro= as --offload and --gro" ||
		not_ok "--vary offload: $(cat "$TL_TMP/runs")"

	plan --veth --backends tcp,pipe --clients 1 --reps 1 --offload off --vary mtu=9000 --vary rate=100mbit,1gbit
	[ "$(sed "s|: $TBENCH |: |" "$TL_TMP/runs" | cut -d' ' -f2- | sort)" = "pipe clients=1 offload=n/a mtu=n/a rate=n/a rep 1/1: -b pipe -t 10 --warmup 2 -q 1
tcp clients=1 offload=off mtu=9000 rate=100mbit rep 1/1: -b tcp -t 10 --warmup 2 -q 1 (device: mtu 9000 rate 100mbit)
tcp clients=1 offload=off mtu=9000 rate=1gbit rep 1/1: -b tcp -t 10 --warmup 2 -q 1 (device: mtu 9000 rate 1gbit)" ] &&
		ok "--veth: mtu and rate set by the sweep on the pair, not by tbench" || not_ok "--veth: $(cat "$TL_TMP/runs")"

	plan --backends tcp,pipe --clients 1 --reps 1 --offload on --vary model=processes,threads
	[ "$(plan_args | sort)" = "pipe clients=1 offload=n/a model=processes rep 1/1: 1
pipe clients=1 offload=n/a model=threads rep 1/1: --threads 1
tcp clients=1 offload=on model=processes rep 1/1: 1
tcp clients=1 offload=on model=threads rep 1/1: --threads 1" ] &&
		ok "--vary model: --threads for the threads runs of every backend" || not_ok "--vary model: $(plan_args)"
	grep -q 'client model processes and threads (--vary model)' "$TL_TMP/out" && ok "the plan says both models" ||
		not_ok "model words: $(cat "$TL_TMP/out")"
	expect_exit 2 "--threads with --vary model" "$SWEEP" -n --backends pipe --clients 1 --threads --vary model=threads
	grep -q -- '--threads and --vary model' "$TL_TMP/err" && ok "says why" || not_ok "says why: $(cat "$TL_TMP/err")"
	expect_exit 2 "--vary model=fibres" "$SWEEP" -n --backends pipe --clients 1 --vary model=fibres
	grep -q "'fibres' is not processes or threads" "$TL_TMP/err" && ok "names the models" || not_ok "models: $(cat "$TL_TMP/err")"

	if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
		expect_exit 0 "--plan under taskset -c 1" taskset -c 1 "$SWEEP" --plan --backends pipe --clients 1 --reps 1 \
			--vary placement=same
		grep -q -- "-q --cpus 1 --server-cpus 1 1\$" "$TL_TMP/out" && ok "placement: the first CPU the sweep may use" ||
			not_ok "taskset -c 1: $(grep '^\[' "$TL_TMP/out")"
	else
		echo "# skipped placement under taskset: one CPU, or no taskset"
	fi
}

knob_errors() {
	local bad why
	while IFS='|' read -r bad why; do
		# shellcheck disable=SC2086
		expect_exit 2 "usage error: $bad" "$SWEEP" --plan --backends tcp,pipe $bad
		grep -qF -- "$why" "$TL_TMP/err" && ok "says: $why" || not_ok "says '$why': $(cat "$TL_TMP/err")"
	done <<'EOF'
--vary nosuch=1|unknown knob 'nosuch' (knobs: offload tso gso gro mtu cc nodelay sndbuf rcvbuf family copy_replies placement inject_ns sysctl:NAME model rate)
--vary mtu|--vary 'mtu': give NAME=V1,V2,...
--vary mtu=|--vary mtu=: an empty value
--vary mtu=1500,|--vary mtu=1500,: an empty value
--vary mtu=abc|'abc' is not an MTU: a whole number from 68 to 65536
--vary mtu=65537|'65537' is not an MTU
--mtu 12|--mtu mtu=12: '12' is not an MTU
--vary mtu=1500,1500|'1500' given twice
--vary mtu=1500 --mtu 9000|--mtu: mtu is given twice
--vary placement=same --vary placement=free|placement is given twice
--vary placement=near|'near' is not same (clients and servers on one CPU), split (on two) or free
--vary nodelay=yes|'yes' is not on or off
--vary cc=bad/name|'bad/name' is not a congestion control name
--vary sndbuf=0|'0' is not a size in bytes
--vary family=ipv5|'ipv5' is not ipv4 or ipv6
--vary rate=fast --veth|'fast' is not a tc rate
--vary rate=100mbit|--vary rate: a tbf qdisc needs a device the sweep may change: add --veth
--vary nodelay=off -- -T TCP_NODELAY|-T in TBENCH-ARGS and --vary of a socket option
EOF
}

# --resume with knobs: a run is done when its backend, clients, offload,
# every knob and rep match a row (2 of the 4 runs here).
resume_knobs() {
	if ! "$STATS" row --knobs >/dev/null 2>&1; then
		echo "# skipped --resume with knobs: this tbench-stats has no knob columns (row --knobs)"
		return
	fi
	local out="$TL_TMP/knobs" common
	common=(--backends pipe --clients 1 --reps 2 --vary "placement=same,free" --out "$TL_TMP/knobs")
	mkdir -p "$out"
	{
		"$STATS" row --header
		"$STATS" row --set backend=pipe --set clients=1 --set offload=n/a --set placement=same --set rep=1 \
			--set exit_code=0 "$SRCDIR/tests/data/run-ok.json"
		"$STATS" row --set backend=pipe --set clients=1 --set offload=n/a --set placement=free --set rep=2 \
			--set exit_code=0 "$SRCDIR/tests/data/run-ok.json"
	} >"$out/runs.csv"
	plan "${common[@]}" --resume
	[ "$(cut -d: -f1 "$TL_TMP/runs")" = "[1/2] pipe clients=1 offload=n/a placement=free rep 1/2
[2/2] pipe clients=1 offload=n/a placement=same rep 2/2" ] && ok "--resume: the runs missing, by knob" ||
		not_ok "--resume with knobs: $(cat "$TL_TMP/runs")"
}

# Which tbench: never dbench's, even first in PATH; the one beside the script.
which_tbench() {
	local fake="$TL_TMP/fakebin" prefix="$TL_TMP/prefix" real="$TL_TMP/realbin"
	mkdir -p "$fake" "$prefix/bin" "$prefix/share/tbench/python" "$real"
	printf '#!/bin/sh\necho "dbench version 4.00 - Copyright Andrew Tridgell 1999-2004"\nexit 1\n' >"$fake/tbench"
	chmod +x "$fake/tbench"
	expect_exit 2 "TBENCH=dbench's tbench is refused" env TBENCH="$fake/tbench" "$SWEEP" -n
	grep -q "is not the tbench of this suite: its --version says 'dbench version 4.00" "$TL_TMP/err" &&
		ok "says why" || not_ok "says why: $(cat "$TL_TMP/err")"

	# An install: bin/ holds the scripts and programs, share/tbench/python the package.
	cp "$SWEEP" "$prefix/bin/"
	cp -r "$SRCDIR/scripts/tbtools" "$prefix/share/tbench/python/"
	ln -s "$TBENCH" "$prefix/bin/tbench"
	ln -s "$STATS" "$prefix/bin/tbench-stats"
	expect_exit 0 "installed sweep, dbench's tbench first in PATH" \
		env -u TBENCH -u TBENCH_STATS PATH="$fake:$PATH" "$prefix/bin/tbench-sweep" -n --backends pipe --clients 1 --reps 1
	grep -q "using $prefix/bin/tbench (" "$TL_TMP/err" && grep -q "using $prefix/bin/tbench-stats (" "$TL_TMP/err" &&
		ok "uses the tbench beside it" || not_ok "uses the tbench beside it: $(cat "$TL_TMP/err")"

	# Nothing beside it: dbench's in PATH is passed over for ours further on.
	rm "$prefix/bin/tbench" "$prefix/bin/tbench-stats"
	ln -s "$TBENCH" "$real/tbench"
	ln -s "$STATS" "$real/tbench-stats"
	expect_exit 0 "installed sweep, ours after dbench's in PATH" \
		env -u TBENCH -u TBENCH_STATS PATH="$fake:$real:$PATH" "$prefix/bin/tbench-sweep" -n --backends pipe --clients 1 --reps 1
	grep -q "not using $fake/tbench: its --version says 'dbench version 4.00" "$TL_TMP/err" &&
		grep -q "using $real/tbench (" "$TL_TMP/err" && ok "skips dbench's, says so" ||
		not_ok "skips dbench's: $(cat "$TL_TMP/err")"
	rm "$prefix/share/tbench/python/tbtools/__init__.py"
	expect_exit 1 "no library: says so" env PATH="$real:$PATH" "$prefix/bin/tbench-sweep" -n
}

runs_and_order
seeded_order
offloads
knobs
knob_errors
usage_errors
resume
precision
resume_knobs
which_tbench
tl_done
