#!/bin/bash
# shellcheck disable=SC2016  # awk and jq programs are single-quoted on purpose
# The tbench command line: usage errors, bad loadfiles, output that mmtests
# and LKP parse, --json, --show-execute-time and Ctrl-C.
set -euo pipefail
# shellcheck source=tests/testlib.sh
. "${top_srcdir:-.}/tests/testlib.sh"

command -v jq >/dev/null || { echo "SKIP: jq not installed (apt-get install jq)"; exit 77; }
TINY="$SRCDIR/loadfiles/tiny.txt"

usage_errors() {
	expect_exit 0 "--help" "$TBENCH" --help
	check "--help names NCLIENTS" grep -q 'NCLIENTS' "$TL_TMP/out"
	expect_exit 0 "-b help lists backends" "$TBENCH" -b help
	check "pipe listed" grep -q '^  pipe ' "$TL_TMP/out"
	expect_exit 2 "no NCLIENTS" "$TBENCH"
	check "says NCLIENTS is missing" grep -q 'missing NCLIENTS' "$TL_TMP/err"
	expect_exit 2 "NCLIENTS not a number" "$TBENCH" abc
	expect_exit 2 "NCLIENTS zero" "$TBENCH" 0
	expect_exit 2 "negative time limit" "$TBENCH" -t -5 2
	expect_exit 2 "unknown flag" "$TBENCH" --bogus 2
	check "names the bad flag" grep -q -- '--bogus' "$TL_TMP/err"
	expect_exit 2 "unknown backend" "$TBENCH" -b nosuch 2
	check "says no such backend" grep -q 'no such backend' "$TL_TMP/err"
	expect_exit 2 "SERVER given to a backend with its own" "$TBENCH" -b pipe 2 somehost
	expect_exit 2 "too many arguments" "$TBENCH" -b pipe 2 a b
}

bad_loadfiles() {
	printf 'Close 1 NT_STATUS_OK\n# fine\nReadX 1 0 x 10 NT_STATUS_OK\n' >"$TL_TMP/bad.txt"
	expect_exit 2 "malformed loadfile" "$TBENCH" -b nop 1 -t 1 -c "$TL_TMP/bad.txt"
	check "error names FILE:LINE and the field" grep -q "^tbench: $TL_TMP/bad.txt:3: ReadX: field 'size' is not a number" "$TL_TMP/err"
	check "no client started" [ ! -s "$TL_TMP/out" ]
	expect_exit 2 "missing loadfile" "$TBENCH" -b nop 1 -t 1 -c "$TL_TMP/none.txt"
	: >"$TL_TMP/empty.txt"
	expect_exit 2 "empty loadfile" "$TBENCH" -b nop 1 -t 1 -c "$TL_TMP/empty.txt"
}

# The lines mmtests and LKP parse, field by field.
output_format() {
	expect_exit 0 "pipe, 3 clients, 2 s" "$TBENCH" -b pipe 3 -t 2 --warmup 1 --json "$TL_TMP/run.json"
	local out="$TL_TMP/out"
	check "warmup progress line" grep -Eq '^   3 +[0-9]+ +[0-9]+\.[0-9]{2} MB/sec  warmup +[0-9]+ sec  latency [0-9]+\.[0-9]{3} ms$' "$out"
	check "execute progress line" grep -Eq '^   3 +[0-9]+ +[0-9]+\.[0-9]{2} MB/sec  execute +[0-9]+ sec  latency [0-9]+\.[0-9]{3} ms$' "$out"
	check "cleanup line" grep -Eq '^   3  cleanup +[0-9]+ sec$' "$out"
	# mmtests: $3 (MB/sec) and $6 (seconds) of the execute lines.
	check "mmtests fields \$3 and \$6" awk '/execute/ { if ($3 + 0 <= 0 || $6 != int($6)) bad = 1; n++ } END { exit (n == 0 || bad) }' "$out"
	check "table header" grep -q '^ Operation      Count    AvgLat    MaxLat    P99Lat$' "$out"
	check "mmtests table fields \$1 \$3" awk '$1 == "ReadX" && $2 > 0 && $3 + 0 > 0 { f = 1 } END { exit !f }' "$out"
	check "Throughput line" grep -Eq '^Throughput [0-9.e+]+ MB/sec  3 clients  1 procs  max_latency=[0-9]+\.[0-9]{3} ms$' "$out"
	local mb
	mb="$(awk '/^Throughput/ { print $2 }' "$out")"
	check "JSON is valid and agrees with the Throughput line" \
		jq -e --argjson mb "$mb" '.result.status == "ok" and (.result.mb_per_sec - $mb | fabs) / $mb < 1e-4
			and .settings.clients == 3 and (.clients | length) == 3 and (.operations | length) > 10' \
		"$TL_TMP/run.json"
}

show_execute_time() {
	expect_exit 0 "--run-once --show-execute-time" "$TBENCH" -b pipe 4 --run-once --show-execute-time -c "$TINY"
	local n
	n="$(grep -Ec '^   [0-3] completed in [0-9]+ ms at time [0-9]+ ms$' "$TL_TMP/out" || true)"
	check "one completion line per client" [ "$n" -eq 4 ]
	expect_exit 0 "--processes" "$TBENCH" -b pipe 4 --processes -q --run-once -c "$TINY"
	check "procs counted" grep -q '4 clients  4 procs' "$TL_TMP/out"
}

# Ctrl-C: the figures so far are printed and written, exit 1, promptly.
interrupt() {
	local rc=0 start
	start=$SECONDS
	"$TBENCH" -b pipe 2 -t 60 --warmup 0 --json "$TL_TMP/int.json" >"$TL_TMP/int.out" 2>"$TL_TMP/int.err" &
	local pid=$!
	sleep 2
	kill -INT "$pid"
	wait "$pid" || rc=$?
	check "Ctrl-C exits 1" [ "$rc" -eq 1 ]
	check "Ctrl-C is prompt" [ $((SECONDS - start)) -lt 10 ]
	check "results printed after Ctrl-C" grep -q '^Throughput' "$TL_TMP/int.out"
	check "says interrupted" grep -q 'interrupted' "$TL_TMP/int.err"
	check "JSON written after Ctrl-C" jq -e '.result.status == "interrupted" and .result.mb_per_sec > 0' "$TL_TMP/int.json"
}

usage_errors
bad_loadfiles
output_format
show_execute_time
interrupt
tl_done
