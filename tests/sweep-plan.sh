#!/bin/bash
# tbench-sweep's plan, without running anything (--dry-run needs no root):
# the runs and their order, offload settings, the time estimate, --threads,
# --resume against a runs.csv, usage errors, and which tbench it picks.
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

runs_and_order() {
	plan --backends pipe,tcp --clients 1..4 --reps 2 -t 2.5 --warmup 1
	# pipe: 3 client counts; tcp: 3 x on,off; twice
	[ "$(wc -l <"$TL_TMP/runs")" -eq 18 ] && ok "18 runs" || not_ok "18 runs, got $(wc -l <"$TL_TMP/runs")"
	grep -q '^18 of 18 runs to do, 2.5 s + 1 s warm-up each, client model processes, mode lo$' "$TL_TMP/out" &&
		ok "says what it will do" || not_ok "says what it will do: $(head -n 1 "$TL_TMP/out")"
	# 18 x (2.5 + 1 + 1.5 s of start-up and recording) = 90 s
	grep -q '^estimated time: 1m30s ' "$TL_TMP/out" && ok "estimated time 1m30s" ||
		not_ok "estimated time: $(grep estimated "$TL_TMP/out")"
	[ "$(sed -n 1p "$TL_TMP/runs")" = "[1/18] pipe clients=1 offload=n/a rep 1/2: $TBENCH --netns -b pipe -t 2.5 --warmup 1 -q 1" ] &&
		ok "first run and its command: in a namespace of its own" || not_ok "first run: $(sed -n 1p "$TL_TMP/runs")"
	[ "$(sed -n 9p "$TL_TMP/runs" | cut -d: -f2-)" = " $TBENCH --netns --offload off -b tcp -t 2.5 --warmup 1 -q 4" ] &&
		ok "tcp: tbench --netns sets the offloads" || not_ok "run 9: $(sed -n 9p "$TL_TMP/runs")"
	[ "$(sed -n 9p "$TL_TMP/runs" | cut -d: -f1)" = "[9/18] tcp clients=4 offload=off rep 1/2" ] &&
		ok "tcp once per offload setting" || not_ok "run 9: $(sed -n 9p "$TL_TMP/runs")"
	[ "$(grep -n 'rep 2/2' "$TL_TMP/runs" | head -n 1 | cut -d: -f1)" = 10 ] &&
		! sed -n '10,$p' "$TL_TMP/runs" | grep -q 'rep 1/2' &&
		ok "interleaved: every point's rep 1 first" || not_ok "interleaved"
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

offloads() {
	plan --backends tcp,pipe --clients 1 --reps 1 --offload on --tso on,off --gso off
	[ "$(sed "s|: $TBENCH .*||" "$TL_TMP/runs" | cut -d' ' -f2-)" = "tcp clients=1 offload=on:tso=on:gso=off rep 1/1
tcp clients=1 offload=on:tso=off:gso=off rep 1/1
pipe clients=1 offload=n/a rep 1/1" ] && ok "--offload x --tso x --gso: cross product, tcp only" ||
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
	plan "${common[@]}" --resume --retry-failed
	grep -q '^3 of 4 runs to do' "$TL_TMP/out" && grep -q 'clients=2 offload=n/a rep 1/2' "$TL_TMP/runs" &&
		ok "--retry-failed: the failed one again" || not_ok "--retry-failed: $(cat "$TL_TMP/out")"
	expect_exit 1 "a second sweep into the same --out" "$SWEEP" -n "${common[@]}"
	grep -q 'already holds a sweep' "$TL_TMP/err" && ok "says why" || not_ok "says why: $(cat "$TL_TMP/err")"
	sed -i '1s/,error$/,oops/' "$out/runs.csv"
	expect_exit 1 "--resume of a runs.csv with other columns" "$SWEEP" -n "${common[@]}" --resume
}

# Which tbench: never dbench's, even first in PATH; the one beside the script.
which_tbench() {
	local fake="$TL_TMP/fakebin" prefix="$TL_TMP/prefix" real="$TL_TMP/realbin"
	mkdir -p "$fake" "$prefix/bin" "$prefix/share/tbench/lib" "$real"
	printf '#!/bin/sh\necho "dbench version 4.00 - Copyright Andrew Tridgell 1999-2004"\nexit 1\n' >"$fake/tbench"
	chmod +x "$fake/tbench"
	expect_exit 2 "TBENCH=dbench's tbench is refused" env TBENCH="$fake/tbench" "$SWEEP" -n
	grep -q "is not the tbench of this suite: its --version says 'dbench version 4.00" "$TL_TMP/err" &&
		ok "says why" || not_ok "says why: $(cat "$TL_TMP/err")"

	# An install: bin/ holds the scripts and programs, share/tbench/lib the library.
	cp "$SWEEP" "$prefix/bin/"
	cp "$SRCDIR"/scripts/lib/*.sh "$prefix/share/tbench/lib/"
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
	rm "$prefix/share/tbench/lib/common.sh"
	expect_exit 1 "no library: says so" env PATH="$real:$PATH" "$prefix/bin/tbench-sweep" -n
}

runs_and_order
offloads
usage_errors
resume
which_tbench
tl_done
