#!/bin/bash
# shellcheck disable=SC2016  # awk programs are single-quoted on purpose
# Many clients at once, scaled down: 512 clients of the pipe backend (128
# in a sanitizer build), as processes and as threads, for a short warm-up
# and execute phase. The
# driver's lines must stay true however loaded the machine: seconds that
# strictly rise, rates that are finite and near the final Throughput,
# warm-up lines, a Throughput near the last line's rate, and a run that
# ends in time; a second left without a line
# must come with the warning that says the run did not keep its schedule.
# Then 2,000 clients as threads, and as two processes of threads, must be
# released within 60 s, and 100 tcp
# clients as threads must run where one process may not hold both ends.
set -euo pipefail
# shellcheck source=tests/testlib.sh
. "${top_srcdir:-.}/tests/testlib.sh"

CLIENTS=512
WALL_LIMIT=180   # seconds for the whole run, start-up and cleanup included
# Under ASan every client process starts and ends far slower: there the
# test is of the driver's paths with many clients, not of their scale.
if [ -n "${tb_sanitizers:-}" ]; then
	CLIENTS=128
	echo "# a sanitizer build: $CLIENTS clients"
fi

# Raise the soft limit on open files to the hard one: 512 clients and their
# servers hold pipes; a lower hard limit than they need skips the test.
raise_nofile() {
	local hard
	hard="$(ulimit -Hn)"
	if [ "$hard" != unlimited ] && [ "$hard" -lt $((CLIENTS * 4 + 64)) ]; then
		echo "SKIP: ulimit -Hn is $hard, under the $((CLIENTS * 4 + 64)) descriptors $CLIENTS clients need"
		exit 77
	fi
	ulimit -n "$hard"
}

# seconds_rise FILE PHASE: the PHASE lines' seconds strictly rise.
seconds_rise() {
	awk -v phase="$2" '$4 == "MB/sec" && $5 == phase {
		if (seen && $6 <= last) bad = 1
		last = $6; seen = 1
	} END { exit bad }' "$1"
}

# Every MB/sec figure is a finite number below 100 times the Throughput,
# and the Throughput is above 0.
rates_sane() {
	awk '/^Throughput / { tp = $2 }
	     $4 == "MB/sec" { if ($3 !~ /^[0-9]+\.[0-9]+$/) bad = 1; rate[n++] = $3 }
	     END {
		if (!(tp > 0) || n == 0) exit 1
		for (i = 0; i < n; i++) if (rate[i] + 0 >= 100 * tp) exit 1
		exit bad
	     }' "$1"
}

# The Throughput counts what the clients did by the end of the execute
# phase, not the operations they finish while the driver reads the run's
# last figures: it stays within 25% of the last execute line's rate.
final_near_last() {
	awk '$4 == "MB/sec" && $5 == "execute" { last = $3 }
	     /^Throughput / { tp = $2 }
	     END { if (!(last > 0)) exit 1; r = tp / last; print "Throughput / last line: " r; exit !(r > 0.75 && r < 1.25) }' "$1"
}

# A second without its line (the driver got the CPU late) is allowed only
# with the warning that says so.
gaps_said() {
	local out="$1" err="$2"
	if awk '$4 == "MB/sec" && $5 == "execute" { if ($6 != ++want) gap = 1 } END { exit !gap }' "$out"; then
		grep -q 'did not keep its 1 s schedule' "$err"
	fi
}

# Warm-up lines; on a machine that kept the driver off the CPU through the
# whole warm-up, the warning that it got it late for the warm-up's first.
warmup_lines() {
	grep -q ' MB/sec  warmup ' "$1" || grep -q 'after the warmup line of second 1 was due' "$2"
}

run_many() {
	local what="$1" start end
	shift
	start=$(date +%s)
	expect_exit 0 "$what: $CLIENTS clients" "$TBENCH" -b pipe -t 3 --warmup 2 "$@" "$CLIENTS"
	end=$(date +%s)
	cp "$TL_TMP/out" "$TL_TMP/$what.out"
	cp "$TL_TMP/err" "$TL_TMP/$what.err"
	check "$what: ended within $WALL_LIMIT s (took $((end - start)) s)" [ $((end - start)) -le "$WALL_LIMIT" ]
	check "$what: warm-up lines, or the warning that the driver missed them" \
		warmup_lines "$TL_TMP/$what.out" "$TL_TMP/$what.err"
	check "$what: execute lines" grep -q ' MB/sec  execute ' "$TL_TMP/$what.out"
	check "$what: warm-up seconds strictly rise" seconds_rise "$TL_TMP/$what.out" warmup
	check "$what: execute seconds strictly rise" seconds_rise "$TL_TMP/$what.out" execute
	check "$what: every rate finite and under 100x the Throughput" rates_sane "$TL_TMP/$what.out"
	check "$what: a second without a line is said on stderr" gaps_said "$TL_TMP/$what.out" "$TL_TMP/$what.err"
	check "$what: the Throughput near the last execute line's rate" final_near_last "$TL_TMP/$what.out"
	check "$what: stdout has only dbench's lines" \
		bash -c '! grep -q "warning" "$1"' _ "$TL_TMP/$what.out"
}

# Start-up at scale: STARTUP_CLIENTS pipe clients as threads, 2 s. They are
# released within STARTUP_LIMIT s (--json's result.setup_s), the run says
# the driver's priority, and as root it is SCHED_FIFO.
STARTUP_CLIENTS=2000
STARTUP_LIMIT=60
[ -z "${tb_sanitizers:-}" ] || STARTUP_CLIENTS=256
startup() {
	local json="$TL_TMP/startup.json" setup
	expect_exit 0 "start-up: $STARTUP_CLIENTS clients" "$TBENCH" -b pipe --threads -t 2 --warmup 1 \
		--json "$json" "$STARTUP_CLIENTS"
	setup=$(jq -r '.result.setup_s' "$json")
	check "start-up: released within $STARTUP_LIMIT s (took $setup s)" \
		awk -v s="$setup" -v max="$STARTUP_LIMIT" 'BEGIN { exit !(s > 0 && s < max) }'
	check "start-up: the driver's priority said" \
		jq -e '.settings.driver_priority | IN("fifo", "nice", "normal")' "$json"
	if [ "$(id -u)" -eq 0 ]; then
		check "start-up: as root the driver is SCHED_FIFO" jq -e '.settings.driver_priority == "fifo"' "$json"
	fi
}

# The same clients as two processes of threads (--clients-per-process):
# their servers are threads too, released within STARTUP_LIMIT s. Forked
# from processes of a thousand threads each, they took minutes.
grouped_startup() {
	local json="$TL_TMP/grouped.json" setup half=$((STARTUP_CLIENTS / 2))
	expect_exit 0 "start-up: 2 processes of $half clients" "$TBENCH" -b pipe -t 2 --warmup 1 \
		--clients-per-process "$half" --json "$json" 2
	setup=$(jq -r '.result.setup_s' "$json")
	check "start-up, 2 processes of $half: released within $STARTUP_LIMIT s (took $setup s)" \
		awk -v s="$setup" -v max="$STARTUP_LIMIT" 'BEGIN { exit !(s > 0 && s < max) }'
}

# --timeout's default grows with the clients a CPU: 60 s, or 20 ms for each
# client and each server a CPU. Given, it stands.
timeout_default() {
	local n=5000 json="$TL_TMP/timeout.json" want
	want=$(awk -v n="$n" -v c="$(nproc)" 'BEGIN { t = 20 * 2 * n / c / 1000; t = (t == int(t)) ? t : int(t) + 1; print (t > 60 ? t : 60) }')
	expect_exit 0 "$n nop threads, run once" "$TBENCH" -b nop --threads --run-once \
		--loadfile "$SRCDIR/loadfiles/tiny.txt" --json "$json" "$n"
	check "--timeout by default for $n clients on $(nproc) CPUs: $want s" \
		jq -e --argjson w "$want" '.settings.timeout_s == $w' "$json"
	if [ "$want" -gt 60 ]; then
		check "the note says so" grep -q "note: --timeout $want s by default" "$TL_TMP/err"
	fi
	expect_exit 0 "$n nop threads, --timeout 30" "$TBENCH" -b nop --threads --run-once \
		--loadfile "$SRCDIR/loadfiles/tiny.txt" --timeout 30 --json "$json" "$n"
	check "--timeout 30 given: 30 s" jq -e '.settings.timeout_s == 30' "$json"
}

# One process's files: 100 tcp clients as threads under a limit of 200
# open files, below both ends of every connection. tbench's own server
# runs apart, in a process of its own, and says so; the run ends well.
few_files() {
	expect_exit 0 "100 tcp threads under ulimit -n 200" \
		bash -c 'ulimit -n 200 && exec "$@"' _ "$TBENCH" -b tcp --threads -t 2 --warmup 1 100
	check "under ulimit -n 200: the note says the server runs apart" \
		grep -q "the server's threads run in a process of their own" "$TL_TMP/err"
}

CLIENTS=$((STARTUP_CLIENTS > CLIENTS ? STARTUP_CLIENTS : CLIENTS)) raise_nofile
run_many processes
run_many threads --threads
startup
grouped_startup
timeout_default
few_files
tl_done
