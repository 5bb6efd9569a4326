#!/bin/bash
# shellcheck disable=SC2016  # jq programs are single-quoted on purpose
# The fast tier's end-to-end pass over every program and every backend, a
# few seconds in all: each backend `tbench -b help` lists runs a short timed
# run (processes) and a pass (threads); tbench against a tbench_srv it did
# not start; a one-point sweep, its plots, its summary and a compare of it
# with itself. The slow tier's tests (sweep.sh, faults.sh, uring.sh, ...)
# go deep into each; this one shows that nothing is broken end to end.
set -euo pipefail
# shellcheck source=tests/testlib.sh
. "${top_srcdir:-.}/tests/testlib.sh"

command -v jq >/dev/null || { echo "SKIP: jq not installed (apt-get install jq)"; exit 77; }
TINY="$SRCDIR/loadfiles/tiny.txt"
BUILD="$(cd "$(dirname "$TBENCH")" && pwd)"
TBENCH="$BUILD/tbench"

# A backend this kernel or build cannot run exits 2 naming what is missing:
# said as a skip of that backend, not counted as passed.
every_backend() {
	local backends name rc
	backends="$("$TBENCH" -b help | awk '/^  [a-z]/ { print $1 }')"
	check "tbench -b help lists backends" test -n "$backends"
	for name in $backends; do
		rc=0
		"$TBENCH" -b "$name" 2 -t 1 --warmup 0 -c "$TINY" --json "$TL_TMP/$name.json" \
			>"$TL_TMP/out" 2>"$TL_TMP/err" || rc=$?
		if [ "$rc" -eq 2 ]; then
			echo "# skipped: $name cannot run here: $(head -n 1 "$TL_TMP/err")"
			continue
		fi
		if [ "$rc" -eq 0 ] && grep -Eq '^Throughput [0-9.e+]+ MB/sec  2 clients  2 procs' "$TL_TMP/out" &&
			jq -e '.result.status == "ok" and .result.mb_per_sec > 0' "$TL_TMP/$name.json" >/dev/null; then
			ok "$name: 2 clients for 1 s, a Throughput line and the JSON agree it ran"
		else
			not_ok "$name: exit $rc"
			sed -n '1,5s/^/    /p' "$TL_TMP/err"
		fi
		expect_exit 0 "$name: a pass of 3 clients as threads" "$TBENCH" -b "$name" 3 --threads --run-once \
			-q -c "$TINY"
	done
}

# tbench_srv on a port the kernel picks, tbench -b tcp to it: the server's
# own process counts the connections.
against_tbench_srv() {
	local srv port
	"$BUILD/tbench_srv" -l 127.0.0.1 --port 0 >"$TL_TMP/srv.out" 2>&1 &
	srv=$!
	if port="$(tl_server_port "$TL_TMP/srv.out")"; then
		expect_exit 0 "tbench -b tcp to tbench_srv on port $port" "$TBENCH" -b tcp 2 127.0.0.1 --port "$port" \
			--run-once -c "$TINY" --json "$TL_TMP/srv.json"
		check "the JSON names that server" jq -e '.settings.server == "127.0.0.1" and .result.status == "ok"' \
			"$TL_TMP/srv.json"
		check "tbench_srv still serves after the run" kill -0 "$srv"
	else
		not_ok "tbench_srv --port 0 did not say where it listens: $(head -n 3 "$TL_TMP/srv.out")"
	fi
	kill "$srv" 2>/dev/null || true
	wait "$srv" 2>/dev/null || true
}

# A one-point sweep of two backends, then everything that reads a sweep.
sweep_plot_compare() {
	local out="$TL_TMP/sweep" scripts="$SRCDIR/scripts"
	export TBENCH TBENCH_STATS="$BUILD/tbench-stats"
	expect_exit 0 "tbench-sweep: pipe and nop, 1 client, 1 s" "$scripts/tbench-sweep" --backends pipe,nop \
		--clients 1 --reps 1 -t 1 --warmup 0 --out "$out"
	check "runs.csv: two ok rows" test "$(grep -c ',ok,' "$out/runs.csv" 2>/dev/null)" -eq 2
	expect_exit 0 "tbench-stats summarize" "$TBENCH_STATS" summarize "$out/runs.csv"
	check "the summary has both backends" grep -q '^nop,' "$TL_TMP/out"
	if command -v gnuplot >/dev/null; then
		expect_exit 0 "tbench-plot" "$scripts/tbench-plot" "$out"
		check "throughput.png is a PNG" bash -c 'head -c 8 "$1" | od -An -c | grep -q "P   N   G"' _ \
			"$out/throughput.png"
	else
		echo "# skipped: tbench-plot: gnuplot not installed"
	fi
	expect_exit 0 "tbench-compare of the sweep with itself" "$scripts/tbench-compare" "$out" "$out"
}

every_backend
against_tbench_srv
sweep_plot_compare
tl_done
