#!/bin/bash
# shellcheck disable=SC2016  # awk and jq programs are single-quoted on purpose
# The tbench command line: usage errors, bad loadfiles, output that mmtests
# and LKP parse, --json, --show-execute-time, the default loadfile, the
# latency of a stalled exchange and Ctrl-C.
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
	# -1 was the inner "not given": it started the default 12-minute run.
	expect_exit 2 "-t -1 refused" timeout 20 "$TBENCH" -t -1 -b nop 1
	check "says -t wants seconds more than 0" grep -q 'timelimit must be a number of seconds more than 0' "$TL_TMP/err"
	expect_exit 2 "-t 0 refused" "$TBENCH" -t 0 -b nop 1
	expect_exit 2 "unknown flag" "$TBENCH" --bogus 2
	check "names the bad flag" grep -q -- '--bogus' "$TL_TMP/err"
	check "nothing to suggest for --bogus" sh -c "! grep -q 'did you mean' '$TL_TMP/err'"
	expect_exit 2 "mistyped flag" "$TBENCH" --threds 2
	check "suggests --threads" grep -q -- '--threds: unknown option (did you mean --threads?)' "$TL_TMP/err"
	expect_exit 2 "mistyped dbench flag with a value" "$TBENCH" --timelimt=3 2
	check "suggests --timelimit" grep -q -- '(did you mean --timelimit?)' "$TL_TMP/err"
	expect_exit 2 "unknown backend" "$TBENCH" -b nosuch 2
	check "says no such backend" grep -q 'no such backend' "$TL_TMP/err"
	expect_exit 2 "mistyped backend" "$TBENCH" -b pipx 2
	check "suggests pipe" grep -q -- '-b pipx: no such backend (did you mean pipe?)' "$TL_TMP/err"
	expect_exit 2 "bad \$TBENCH_CLOCK" env TBENCH_CLOCK=hpet "$TBENCH" -b nop 1 --run-once -c "$TINY"
	check "names TBENCH_CLOCK and its values" grep -q 'TBENCH_CLOCK=hpet: expected auto, tsc or clock_gettime' "$TL_TMP/err"
	expect_exit 0 "TBENCH_CLOCK=clock_gettime" env TBENCH_CLOCK=clock_gettime "$TBENCH" -b nop 1 --run-once \
		-c "$TINY" --json "$TL_TMP/clock.json"
	check "the JSON says which clock and why" \
		jq -e '.settings.clock.source == "clock_gettime" and .settings.clock.why == "TBENCH_CLOCK=clock_gettime"' \
		"$TL_TMP/clock.json"
	expect_exit 2 "SERVER given to a backend with its own" "$TBENCH" -b pipe 2 somehost
	expect_exit 2 "too many arguments" "$TBENCH" -b pipe 2 a b
}

bad_loadfiles() {
	printf 'Close 1 NT_STATUS_OK\n# fine\nReadX 1 0 x 10 NT_STATUS_OK\n' >"$TL_TMP/bad.txt"
	expect_exit 2 "--strict: malformed loadfile" "$TBENCH" --strict -b nop 1 -t 1 -c "$TL_TMP/bad.txt"
	check "error names FILE:LINE and the field" grep -q "^tbench: $TL_TMP/bad.txt:3: ReadX: field 'size' is not a number" "$TL_TMP/err"
	check "no client started" [ ! -s "$TL_TMP/out" ]
	printf 'Close 1 NT_STATUS_OK\nFrobnicate 1 NT_STATUS_OK\nFrobnicate 2 NT_STATUS_OK\n' >"$TL_TMP/lenient.txt"
	expect_exit 0 "unknown operation: skipped, as dbench" "$TBENCH" -b nop 1 -t 1 --warmup 0 -q -c "$TL_TMP/lenient.txt"
	check "said once, with FILE:LINE" [ "$(grep -c "^tbench: $TL_TMP/lenient.txt:2: unknown operation Frobnicate, skipped$" "$TL_TMP/err")" -eq 1 ]
	printf 'Fro\001b 1 NT_STATUS_OK\n' >"$TL_TMP/ctl.txt"
	expect_exit 2 "--strict: control byte in the loadfile" "$TBENCH" --strict -b nop 1 -t 1 -c "$TL_TMP/ctl.txt"
	check "shown escaped" grep -qF "unknown operation 'Fro\\x01b'" "$TL_TMP/err"
	expect_exit 2 "missing loadfile" "$TBENCH" -b nop 1 -t 1 -c "$TL_TMP/none.txt"
	check "names the file and errno" grep -q "none.txt: cannot open loadfile: No such file or directory" "$TL_TMP/err"
	: >"$TL_TMP/empty.txt"
	expect_exit 2 "empty loadfile" "$TBENCH" -b nop 1 -t 1 -c "$TL_TMP/empty.txt"
	printf 'SMBopenX 1 2 3\n' >"$TL_TMP/smb.txt"
	expect_exit 2 "dbench 1 loadfile" "$TBENCH" -b nop 1 -t 1 -c "$TL_TMP/smb.txt"
}

# Values out of range and outputs that cannot be written: exit 2 before anything starts.
bad_values() {
	expect_exit 2 "--warmup -1" "$TBENCH" -b nop 1 -t 1 --warmup -1
	expect_exit 2 "-t nan" "$TBENCH" -b nop 1 -t nan
	expect_exit 2 "--timeout -3" "$TBENCH" -b nop 1 -t 1 --timeout -3
	expect_exit 2 "-R -1" "$TBENCH" -b nop 1 -t 1 -R -1
	expect_exit 2 "--clients-per-process 0" "$TBENCH" -b nop 1 -t 1 --clients-per-process 0
	expect_exit 2 "--json into a missing directory" "$TBENCH" -b nop 1 -t 1 --json "$TL_TMP/no/such/dir/x.json"
	check "names the path and the errno text" grep -q "no/such/dir/x.json.*No such file or directory" "$TL_TMP/err"
	check "nothing ran" [ ! -s "$TL_TMP/out" ]
}

# --json on a full file system (a 64k tmpfs, filled, in a mount namespace
# of its own): one message naming the file and the errno text, no table
# and no Throughput line (a harness would take it for a result), exit 1,
# and no file left behind, whole or half.
json_full_disk() {
	if [ "$(id -u)" -ne 0 ] || ! unshare -m true 2>/dev/null; then
		echo "# skipped: --json on a full disk needs root and a mount namespace (unshare -m)"
		return 0
	fi
	mkdir "$TL_TMP/full"
	# The tmpfs goes with the namespace: what is left on it is listed from inside.
	expect_exit 1 "--json on a full disk" unshare -m bash -c \
		'mount -t tmpfs -o size=64k tbfull "$1" || exit 99
		head -c 1M /dev/zero >"$1/fill" 2>/dev/null
		rc=0; "${@:3}" || rc=$?; ls -A "$1" >"$2"; exit "$rc"' _ "$TL_TMP/full" "$TL_TMP/full.ls" \
		"$TBENCH" -b nop 1 -t 1 --warmup 0 -c "$TINY" --json "$TL_TMP/full/out.json"
	check "names the file and the errno text" grep -q "full/out.json: No space left on device" "$TL_TMP/err"
	check "one message, no 'no reason given'" [ "$(grep -c '^tbench: ' "$TL_TMP/err")" -eq 1 ]
	check "no Throughput line and no table" bash -c '! grep -Eq "^Throughput|^ Operation" "$1"' _ "$TL_TMP/out"
	check "nothing left on the disk but what filled it" [ "$(cat "$TL_TMP/full.ls")" = fill ]
}

# The table itself cannot be written (with -q nothing comes between the
# header and the table, and the reader went after the header): exit 1,
# and the JSON, written before the table, is written again to say so.
table_unwritable() {
	local rc
	{
		"$TBENCH" -b pipe 2 -t 1 --warmup 0 -q -c "$TINY" --json "$TL_TMP/pipe.json" 2>"$TL_TMP/pipe.err"
		echo $? >"$TL_TMP/pipe.rc"
	} | head -n 3 >/dev/null || true
	rc="$(cat "$TL_TMP/pipe.rc")"
	check "a reader gone before the table: exit 1 (got $rc)" [ "$rc" = 1 ]
	check "one message, naming standard output" [ "$(grep -c '^tbench: run failed: writing the results to standard output: Broken pipe$' "$TL_TMP/pipe.err")" -eq 1 ]
	check "the JSON says the run failed, and why" \
		jq -e '.result.status == "failed" and (.result.error | test("standard output"))' "$TL_TMP/pipe.json"
}

# --json into what is not a regular file is written there as it is: a
# fifo stays a fifo (a rename would have put a file in its place), and
# /dev/stdout carries the document after the text.
json_not_a_file() {
	local reader
	mkfifo "$TL_TMP/json.fifo"
	cat "$TL_TMP/json.fifo" >"$TL_TMP/fifo.json" &
	reader=$!
	expect_exit 0 "--json into a fifo" "$TBENCH" -b nop 1 -t 1 --warmup 0 -c "$TINY" --json "$TL_TMP/json.fifo"
	wait "$reader" || true
	check "the fifo is still a fifo" [ -p "$TL_TMP/json.fifo" ]
	check "the document came through it" jq -e '.schema_version == 1 and .result.status == "ok"' "$TL_TMP/fifo.json"
	"$TBENCH" -b nop 1 -t 1 --warmup 0 -c "$TINY" --json /dev/stdout >"$TL_TMP/stdout.txt" 2>/dev/null || true
	check "--json /dev/stdout: the text, then the document" \
		bash -c 'grep -q "^Throughput" "$1" && sed -n "/^{/,\$p" "$1" | jq -e ".schema_version == 1" >/dev/null' _ "$TL_TMP/stdout.txt"
}

# dbench's options are all accepted; those without meaning here say so.
dbench_options() {
	expect_exit 0 "dbench 4.0's options" "$TBENCH" -b nop 2 -t 1 --warmup 0 -q -c "$TINY" -D /tmp \
		-s -S -F -x --no-resolve --clients-per-process 2 --one-byte-write-fix --stat-check \
		--fake-io --skip-cleanup --per-client-results -T TCP_NODELAY -R 1000
	check "-F noted as meaningless here" grep -q -- "-F means nothing without a file system" "$TL_TMP/err"
	check "-s and -S mark the Throughput line" grep -Eq '^Throughput [0-9.e+]+ MB/sec \(sync open\) \(sync dirs\)  4 clients  2 procs  max_latency=' "$TL_TMP/out"
	check "per-client results" grep -q '^Client 3 did [0-9]* operations and [0-9]* bytes$' "$TL_TMP/out"
	expect_exit 0 "--version" "$TBENCH" --version
	check "--version names the suite and the revision" grep -Eq '^tbench \(tbench suite\) [0-9.]+, git [0-9a-z-]+' "$TL_TMP/out"
}

# only_dbench_lines FILE: every line of FILE (tbench's standard output) is
# one dbench 4.0's tbench prints; the others are shown.
only_dbench_lines() {
	! grep -Ev -e '^$' -e '^tbench \(tbench suite\) ' -e '^Running for ([0-9.]+ seconds|one pass) with load .* and minimum warmup [0-9.]+ secs$' \
		-e '^[0-9]+ of [0-9]+ processes prepared for launch +[0-9]+ sec$' -e '^releasing clients$' \
		-e '^ +[0-9]+ +[0-9]+ +[0-9]+\.[0-9]{2} MB/sec  (warmup|execute) +[0-9]+ sec  latency [0-9]+\.[0-9]{3} ms$' \
		-e '^ +[0-9]+  cleanup +[0-9]+ sec$' -e '^ Operation +Count +AvgLat +MaxLat +P99Lat$' -e '^ -+$' \
		-e '^ [A-Za-z_]+ +[0-9]+ +[0-9]+\.[0-9]{3} +[0-9]+\.[0-9]{3} +[0-9]+\.[0-9]{3}$' \
		-e '^Throughput [0-9.e+]+ MB/sec  [0-9]+ clients  [0-9]+ procs  max_latency=[0-9]+\.[0-9]{3} ms$' "$1" >&2
}

# execute_seconds_rise FILE: FILE has execute lines, their seconds
# (mmtests' $6) strictly rising: one line a second, none repeated.
execute_seconds_rise() {
	awk '/ execute / { if (n && $6 + 0 <= prev) bad = 1; prev = $6 + 0; n++ } END { exit (bad || !n) }' "$1"
}

# The lines mmtests and LKP parse, field by field.
output_format() {
	expect_exit 0 "pipe, 3 clients, 2 s" "$TBENCH" -b pipe 3 -t 2 --warmup 2 -c "$TINY" --json "$TL_TMP/run.json"
	local out="$TL_TMP/out"
	check "version line" grep -q '^tbench (tbench suite) ' "$out"
	check "Running for line" grep -qF "Running for 2 seconds with load '$TINY' and minimum warmup 2 secs" "$out"
	check "prepared for launch" grep -Eq '^3 of 3 processes prepared for launch +[0-9]+ sec$' "$out"
	check "releasing clients" grep -q '^releasing clients$' "$out"
	check "warmup progress line" grep -Eq '^   [0-3] +[0-9]+ +[0-9]+\.[0-9]{2} MB/sec  warmup +[0-9]+ sec  latency [0-9]+\.[0-9]{3} ms$' "$out"
	check "no warmup line once executing" awk '/execute/ { e = 1 } /warmup/ && e { bad = 1 } END { exit bad }' "$out"
	check "execute progress line" grep -Eq '^   3 +[0-9]+ +[0-9]+\.[0-9]{2} MB/sec  execute +[0-9]+ sec  latency [0-9]+\.[0-9]{3} ms$' "$out"
	check "cleanup lines down to 0" grep -Eq '^   0  cleanup +[0-9]+ sec$' "$out"
	check "execute seconds strictly rising" execute_seconds_rise "$out"
	check "nothing on standard output that dbench does not print" only_dbench_lines "$out"
	# mmtests: $3 (MB/sec) and $6 (seconds) of the execute lines.
	check "mmtests fields \$3 and \$6" awk '/execute/ { if ($3 + 0 <= 0 || $6 != int($6)) bad = 1; n++ } END { exit (n == 0 || bad) }' "$out"
	check "table header" grep -q '^ Operation                Count    AvgLat    MaxLat    P99Lat$' "$out"
	check "mmtests table fields \$1 \$3, loadfile keywords" awk '$1 == "QUERY_PATH_INFORMATION" && $2 > 0 && $3 + 0 > 0 { f = 1 } END { exit !f }' "$out"
	check "Throughput line" grep -Eq '^Throughput [0-9.e+]+ MB/sec  3 clients  3 procs  max_latency=[0-9]+\.[0-9]{3} ms$' "$out"
	local mb
	mb="$(awk '/^Throughput/ { print $2 }' "$out")"
	check "JSON is valid and agrees with the Throughput line" \
		jq -e --argjson mb "$mb" '.result.status == "ok" and (.result.mb_per_sec - $mb | fabs) / $mb < 1e-4
			and .settings.clients == 3 and .settings.model == "processes" and .settings.procs == 3
			and (.clients | length) == 3 and (.operations | length) > 10' \
		"$TL_TMP/run.json"
	# Every backend's settings are in it, whichever ran: tcp-zc's threshold too.
	expect_exit 0 "nop with tcp-zc's threshold" "$TBENCH" -b nop 1 -t 1 --warmup 0 -q -c "$TINY" \
		--zerocopy-threshold 4096 --json "$TL_TMP/zc.json"
	check "JSON records tcp-zc's threshold" jq -e '.settings.zerocopy_threshold == 4096' "$TL_TMP/zc.json"
	expect_exit 0 "--threads" "$TBENCH" -b pipe 3 -t 1 --warmup 0 -q -c "$TINY"  --threads
	check "threads: 1 procs" grep -q '3 clients  1 procs' "$TL_TMP/out"
	# The built-in loadfile has tens of thousands of lines: 16 clients for
	# 1 s replay only its first part, and a warning says so.
	expect_exit 0 "less than a pass" "$TBENCH" -b pipe 16 -t 1 --warmup 0 -q -c "$SRCDIR/loadfiles/default.txt" \
		--json "$TL_TMP/prefix.json"
	check "warns on standard error that the figure is a prefix" \
		grep -q '^tbench: warning: after the warm-up a client replayed as few as [0-9]* of the [0-9]* operations' "$TL_TMP/err"
	check "and not on standard output" only_dbench_lines "$TL_TMP/out"
	check "the JSON says so, with each client's operations" \
		jq -e '.result.less_than_a_pass and ([.clients[].ops] | min) < .settings.loadfile_ops' "$TL_TMP/prefix.json"
	check "a whole pass: the JSON says so" jq -e '.result.less_than_a_pass == false' "$TL_TMP/run.json"
}

# --reconnect N: a new connection every N operations, timed as Connect.
reconnect() {
	local backend
	for backend in tcp unix; do
		expect_exit 0 "$backend --reconnect 1" "$TBENCH" -b "$backend" 2 --reconnect 1 --run-once -q \
			-c "$TINY" --json "$TL_TMP/rc.json"
		check "$backend: one Connect per exchange" jq -e '
			([.operations[] | select(.name == "Connect") | .count] | add) ==
			([.operations[] | select(.name != "Connect" and .name != "Deltree") | .count] | add)' "$TL_TMP/rc.json"
	done
	# A server's process per connection comes and goes between the two
	# samples: its CPU time is counted from its parent's reaped children.
	# The whole tree's CPU time (bash's `times`, run and set-up) bounds the
	# run's: without the reaped, it was some 0.4 of it. The tiny loadfile
	# keeps the set-up small beside the run (client.txt's parse is a
	# quarter of the tree's CPU under ASan).
	( "$TBENCH" -b tcp 2 --reconnect 1 -t 3 --warmup 0 -q -c "$TINY" --json "$TL_TMP/rc1.json" >/dev/null 2>&1
	  times ) >"$TL_TMP/times"
	local tree_s
	tree_s=$(sed -n '2s/[ms]/ /gp' "$TL_TMP/times" | awk '{ print 60 * $1 + $2 + 60 * $3 + $4 }')
	check "--reconnect 1: the run's CPU time is most of the tree's ($tree_s s)" jq -e --argjson tree "$tree_s" '
		[.cost.per_operation | (.clients, .servers) | .cpu_user_us + .cpu_system_us] | add
		| . * $ops / 1e6 >= 0.7 * $tree' --argjson ops "$(jq .cost.operations "$TL_TMP/rc1.json")" \
		"$TL_TMP/rc1.json"
	expect_exit 0 "tcp --reconnect 3, threads" "$TBENCH" -b tcp 2 --reconnect 3 --threads -t 2 --warmup 0 -q -c "$TINY"
	check "Connect in the table" grep -Eq '^ Connect +[0-9]+ ' "$TL_TMP/out"
	expect_exit 2 "pipe --reconnect" "$TBENCH" -b pipe 1 --reconnect 2 -t 1
	check "says which backends can" grep -q 'use one that can: tcp .*unix' "$TL_TMP/err"
}

show_execute_time() {
	expect_exit 0 "--run-once --show-execute-time" "$TBENCH" -b pipe 4 --run-once --show-execute-time -c "$TINY"
	check "--run-once's header says one pass, not 0 seconds" grep -q "^Running for one pass with load '.*' and minimum warmup 0 secs" "$TL_TMP/out"
	local n
	n="$(grep -Ec '^   [0-3] completed in [0-9]+ ms at time [0-9]+ ms$' "$TL_TMP/out" || true)"
	check "one completion line per client" [ "$n" -eq 4 ]
	check "printed after the run, not while measuring" awk '/cleanup/ { c = 1 } /completed in/ && !c { bad = 1 } END { exit bad }' "$TL_TMP/out"
	expect_exit 0 "--processes" "$TBENCH" -b pipe 4 --processes -q --run-once -c "$TINY"
	check "procs counted" grep -q '4 clients  4 procs' "$TL_TMP/out"
}

# Ctrl-C: promptly exit 1; in the execute phase the figures so far,
# labelled partial, on standard error (no Throughput line: parsers would
# take it for a result); in the warm-up, no figure at all.
interrupt() {
	local rc=0 start
	start=$SECONDS
	"$TBENCH" -b pipe 2 -t 60 --warmup 0 --json "$TL_TMP/int.json" >"$TL_TMP/int.out" 2>"$TL_TMP/int.err" &
	local pid=$!
	tl_wait_for execute "$TL_TMP/int.out" || true
	kill -INT "$pid"
	wait "$pid" || rc=$?
	check "Ctrl-C exits 1" [ "$rc" -eq 1 ]
	check "Ctrl-C is prompt, not the 60 s limit" [ $((SECONDS - start)) -lt 55 ]
	check "no Throughput line on standard output after Ctrl-C" bash -c "! grep -q 'Throughput' '$TL_TMP/int.out'"
	check "no operation table on standard output after Ctrl-C, as dbench" bash -c "! grep -q '^ Operation' '$TL_TMP/int.out'"
	check "partial figures on standard error" grep -Eq '^tbench: partial figures, not a result \(interrupted after [0-9.]+ of 60 s\): [0-9.e+]+ MB/sec  2 clients  2 procs  max_latency=' "$TL_TMP/int.err"
	check "JSON written after Ctrl-C, the table so far in it" jq -e '.result.status == "interrupted" and .result.partial and .result.mb_per_sec > 0 and (.operations | length) > 0' "$TL_TMP/int.json"

	rc=0
	"$TBENCH" -b pipe 2 -t 60 --json "$TL_TMP/warm.json" >"$TL_TMP/warm.out" 2>"$TL_TMP/warm.err" &
	pid=$!
	# Well in the warm-up, not the set-up (slow under ASan on a loaded machine).
	tl_wait_for 'warmup  *2 sec' "$TL_TMP/warm.out" || true
	kill -INT "$pid"
	wait "$pid" || rc=$?
	check "Ctrl-C in the warm-up exits 1" [ "$rc" -eq 1 ]
	check "no Throughput figure from the warm-up" bash -c "! grep -q '^Throughput' '$TL_TMP/warm.out'"
	check "says nothing was measured" grep -q 'interrupted during the warm-up: nothing was measured' "$TL_TMP/warm.err"
	check "JSON: interrupted, no execute figures" jq -e '.result.status == "interrupted" and .result.mb_per_sec == null and .result.execute_s == null' "$TL_TMP/warm.json"
}

# Ctrl-C while 2,000 clients are still being set up: the clients never
# started are not waited for (they were, for the 30 s a stuck client gets),
# so the run ends within seconds, exit 1, saying it was interrupted there.
interrupt_setup() {
	local rc=0 start took n=2000 bound=15
	start=$SECONDS
	"$TBENCH" -b pipe "$n" -t 60 -c "$TINY" >"$TL_TMP/setup.out" 2>"$TL_TMP/setup.err" &
	local pid=$!
	tl_wait_for "of $n processes prepared for launch" "$TL_TMP/setup.out" || true
	kill -INT "$pid"
	wait "$pid" || rc=$?
	took=$((SECONDS - start))
	if grep -q "^$n of $n processes prepared" "$TL_TMP/setup.out"; then
		not_ok "the set-up of $n clients was over before Ctrl-C: nothing tested"
		return 0
	fi
	check "Ctrl-C in the set-up of $n clients exits 1 (got $rc)" [ "$rc" -eq 1 ]
	check "Ctrl-C in the set-up ends within $bound s ($took s)" [ "$took" -lt "$bound" ]
	check "says it was interrupted in the set-up" \
		grep -q '^tbench: interrupted during the set-up of the clients: nothing was measured$' "$TL_TMP/setup.err"
	check "no client said to be stuck" bash -c '! grep -q "did not stop" "$1"' _ "$TL_TMP/setup.err"
}

# No -c: dbench's client.txt where the system has it (the path configure
# was given), else tbench's own loadfile; the header names it, and a note
# on standard error says when it is tbench's own. The other case is made
# by hiding client.txt's directory in a mount namespace.
default_loadfile() {
	local dbench_file run=("$TBENCH" -b nop 1 -t 1 --warmup 0)
	dbench_file="$(sed -n 's/^#define DBENCH_LOADFILE "\(.*\)"$/\1/p' "${top_builddir:-.}/config.h" 2>/dev/null || true)"
	if [ -n "$dbench_file" ] && [ -r "$dbench_file" ]; then
		expect_exit 0 "no -c, with $dbench_file here" "${run[@]}"
		check "the header names $dbench_file" grep -q "with load '$dbench_file' and" "$TL_TMP/out"
		check "and does not call it tbench's own" bash -c "! grep -q \"tbench's own loadfile\" '$TL_TMP/out' '$TL_TMP/err'"
		if [ "$(id -u)" -eq 0 ] && unshare -m true 2>/dev/null; then
			expect_exit 0 "no -c, with $dbench_file hidden" unshare -m bash -c \
				'mount -t tmpfs tbhide "$(dirname "$1")" && shift && exec "$@"' _ "$dbench_file" "${run[@]}"
		else
			echo "# skipped: hiding $dbench_file needs root and a mount namespace"
			return 0
		fi
	else
		echo "# dbench's client.txt (${dbench_file:-none configured}) is not here: only tbench's own is tried"
		expect_exit 0 "no -c, no client.txt here" "${run[@]}"
	fi
	check "the header names tbench's own loadfile" grep -q "with load '.*/default.txt' and" "$TL_TMP/out"
	check "and a note on standard error says its figures are not dbench's" \
		grep -q "^tbench: note: .*default.txt is tbench's own loadfile, whose figures are not dbench's" "$TL_TMP/err"
	check "standard output has dbench's lines only" only_dbench_lines "$TL_TMP/out"
}

# tcp without SERVER and nothing on the port: tbench starts its own server
# and says where on standard error; with --no-own-server it fails, as dbench.
own_server() {
	local port srv busy
	port="$(tl_free_port)" || { not_ok "no free port found"; return 0; }
	expect_exit 1 "--no-own-server, nothing on port $port" "$TBENCH" -b tcp 2 --port "$port" \
		--no-own-server --run-once -q -c "$TINY"
	check "names the address and says to start tbench_srv there" grep -qF \
		"tcp: --no-own-server: no tbench_srv listens on 127.0.0.1:$port (looked for 3 s): start one there (tbench_srv -l 127.0.0.1 --port $port)" \
		"$TL_TMP/err"
	check "no Throughput line" bash -c "! grep -q Throughput '$TL_TMP/out'"
	expect_exit 0 "nothing on port $port: tbench starts its own server" "$TBENCH" -b tcp 2 --port "$port" \
		--run-once -q -c "$TINY"
	check "one line on standard error says so, with the address" [ "$(grep -cF \
		"tbench: tcp: no tbench_srv listens on 127.0.0.1:$port (looked for 3 s): starting one of tbench's own on 127.0.0.1 port $port (--no-own-server makes this an error)" \
		"$TL_TMP/err")" -eq 1 ]
	check "standard output has dbench's lines only" only_dbench_lines "$TL_TMP/out"
	"${top_builddir:-.}/tbench_srv" -l 127.0.0.1 --port 0 >"$TL_TMP/own.out" 2>&1 &
	srv=$!
	busy="$(tl_server_port "$TL_TMP/own.out")" || true
	expect_exit 0 "--no-own-server, tbench_srv on port ${busy:-?}" "$TBENCH" -b tcp 2 --port "${busy:-0}" \
		--no-own-server --run-once -q -c "$TINY"
	check "uses it, and starts none" bash -c "grep -q 'using the server already listening on 127.0.0.1:$busy' '$TL_TMP/err' &&
		! grep -q 'starting one' '$TL_TMP/err'"
	kill "$srv" 2>/dev/null || true
	wait "$srv" 2>/dev/null || true
	# A tbench_srv that listens on --port's a moment after tbench looked
	# (started together) is the run's server: tbench took the port from
	# it before, and measured its own server instead.
	port="$(tl_free_port)" || { not_ok "no free port found"; return 0; }
	"$TBENCH" -b tcp 2 --port "$port" --run-once -q -c "$TINY" >"$TL_TMP/late.out" 2>"$TL_TMP/late.err" &
	local pid=$! rc=0
	sleep 0.5
	"${top_builddir:-.}/tbench_srv" -l 127.0.0.1 --port "$port" >"$TL_TMP/late.srv" 2>&1 &
	srv=$!
	wait "$pid" || rc=$?
	check "a tbench_srv listening 0.5 s after tbench: exit 0 (got $rc)" [ "$rc" -eq 0 ]
	check "it is the run's server, none of tbench's own" bash -c "grep -q 'using the server already listening on 127.0.0.1:$port' '$TL_TMP/late.err' &&
		! grep -q 'starting one' '$TL_TMP/late.err'"
	check "and it started" grep -q "listening on 127.0.0.1:$port" "$TL_TMP/late.srv"
	if ! grep -q "listening on 127.0.0.1:$port" "$TL_TMP/late.srv"; then   # what to look at if it ever fails
		sed 's/^/    tbench: /' "$TL_TMP/late.err"
		sed 's/^/    tbench_srv: /' "$TL_TMP/late.srv"
	fi
	kill "$srv" 2>/dev/null || true
	wait "$srv" 2>/dev/null || true
	expect_exit 2 "--no-own-server with a backend that brings its own" "$TBENCH" -b pipe 2 --no-own-server --run-once -c "$TINY"
	check "says pipe always brings its own" grep -q -- '--no-own-server: backend pipe always brings its own server' "$TL_TMP/err"
	expect_exit 2 "--no-own-server with --server-cpus" "$TBENCH" -b tcp 2 --no-own-server --server-cpus 0 --run-once -c "$TINY"
}

# The waits a loadfile asks for (timestamps, Sleep) are not exchanges: longer
# than --timeout, on either side, they fail nothing; tbench_srv keeps the
# quiet connection. --timeout 3, not 1: beside the full tier's other tests a
# pipe Mkdir was seen to take over 1 s.
loadfile_waits() {
	local srv port
	printf '%s\n' '0.0 Mkdir "\clients" NT_STATUS_OK' '3.4 Mkdir "\clients\a" NT_STATUS_OK' \
		'Sleep 3400 NT_STATUS_OK' 'Rmdir "\clients\a" NT_STATUS_OK' >"$TL_TMP/waits.txt"
	expect_exit 0 "a timestamp and a Sleep longer than --timeout" "$TBENCH" -b pipe 1 --run-once -q \
		--timeout 3 -c "$TL_TMP/waits.txt"
	"${top_builddir:-.}/tbench_srv" -l 127.0.0.1 --port 0 --timeout 3 >"$TL_TMP/wsrv.out" 2>&1 &
	srv=$!
	port="$(tl_server_port "$TL_TMP/wsrv.out")" || true
	expect_exit 0 "the same against tbench_srv --timeout 3" "$TBENCH" -b tcp 1 127.0.0.1 --port "${port:-0}" \
		--run-once -q --timeout 3 -c "$TL_TMP/waits.txt"
	kill "$srv" 2>/dev/null || true
	wait "$srv" 2>/dev/null || true
	check "tbench_srv dropped no connection" bash -c "! grep -q 'closed it' '$TL_TMP/wsrv.out'"
}

# The age of an exchange still in flight shows in the progress lines while
# it stalls (the server stopped), and in max_latency. tbench itself is
# stopped for the first 2.2 s of it: the seconds it missed are not printed
# when it wakes, one line a second as dbench.
inflight_latency() {
	local port srv pid rc=0 failed_before="$TL_FAILED"
	# A port the kernel picks: a fixed one can be a client's in TIME_WAIT.
	"${top_builddir:-.}/tbench_srv" -l 127.0.0.1 --port 0 >"$TL_TMP/srv.out" 2>&1 &
	srv=$!
	port="$(tl_server_port "$TL_TMP/srv.out")" || true
	"$TBENCH" -b tcp 1 127.0.0.1 --port "$port" -t 8 --warmup 0 --timeout 30 -c "$TINY" >"$TL_TMP/stall.out" 2>"$TL_TMP/stall.err" &
	pid=$!
	tl_wait_for " execute " "$TL_TMP/stall.out" || true
	# tbench_srv serves each connection in a process of its own: stop them all.
	kill -STOP "$srv" $(pgrep -P "$srv") 2>/dev/null || true
	kill -STOP "$pid" 2>/dev/null || true
	sleep 2.2   # two lines missed: before, they were caught up with the same second
	kill -CONT "$pid" 2>/dev/null || true
	sleep 2.3   # two more lines while the exchange still stalls
	kill -CONT "$srv" $(pgrep -P "$srv") 2>/dev/null || true
	wait "$pid" || rc=$?
	kill "$srv" 2>/dev/null || true
	wait "$srv" 2>/dev/null || true
	check "a stall within the run: exit 0 (got $rc)" [ "$rc" -eq 0 ]
	# Two ticks in the stall: the in-flight exchange at least 0.9 s old, and a second older at the next.
	check "the progress lines' latency grows while the exchange is stalled" awk '
		/ execute / { lat = $(NF - 1) + 0; if (prev >= 900 && lat >= prev + 800) grew = 1; prev = lat }
		END { exit !grew }' "$TL_TMP/stall.out"
	check "one line a second through the stall, no second repeated" execute_seconds_rise "$TL_TMP/stall.out"
	check "the line after the seconds missed carries the stall's latency" awk '
		/ execute / { if (n && $6 > prev + 1 && $(NF - 1) >= 2000) ok = 1; prev = $6; n++ } END { exit !ok }' "$TL_TMP/stall.out"
	check "stderr says the driver missed its schedule" \
		grep -q 'the run did not keep its 1 s schedule with 1 clients' "$TL_TMP/stall.err"
	check "stdout has no warning" bash -c '! grep -q warning "$1"' _ "$TL_TMP/stall.out"
	check "max_latency counts the stalled exchange" awk '
		/^Throughput/ { split($0, f, "max_latency="); if (f[2] + 0 >= 3000) ok = 1 } END { exit !ok }' "$TL_TMP/stall.out"
	[ "$TL_FAILED" -eq "$failed_before" ] || grep -E ' execute |^Throughput' "$TL_TMP/stall.out" | sed 's/^/    /'
}

usage_errors
bad_loadfiles
bad_values
json_full_disk
table_unwritable
json_not_a_file
dbench_options
output_format
reconnect
show_execute_time
default_loadfile
own_server
loadfile_waits
inflight_latency
interrupt
interrupt_setup
tl_done
