#!/bin/bash
# shellcheck disable=SC2016  # jq programs are single-quoted on purpose
# The noise of the execute phase: a run beside busy loops is disturbed and
# says why; a run whose server is stopped records the stall; a run on a
# quiet machine is not disturbed at all; tbench-stats leaves
# a disturbed run out of a summary and says so.
set -euo pipefail
# shellcheck source=tests/testlib.sh
. "${top_srcdir:-.}/tests/testlib.sh"
# shellcheck source=scripts/lib/quiet.sh
. "$SRCDIR/scripts/lib/quiet.sh"
unset TBENCH_KEEP_DISTURBED   # disturbed runs left out is what is tested here
command -v jq >/dev/null || { echo "SKIP: jq not installed"; exit 77; }
LOAD="$SRCDIR/loadfiles/default.txt"
TINY="$SRCDIR/loadfiles/tiny.txt"
STATS="${top_builddir:-.}/tbench-stats"
HOGS=()

stop_hogs() {
	local pid
	for pid in "${HOGS[@]}"; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	HOGS=()
}
trap 'stop_hogs; rm -rf "$TL_TMP"' EXIT

# not COMMAND...: succeeds when the command fails.
not() { ! "$@"; }

# jq_ok WHAT FILTER FILE
jq_ok() {
	check "$1" jq -e "$2" "$3"
}

# say_figures NAME FILE: the run's noise figures, for the log.
say_figures() {
	echo "# $1: $(jq -c '.noise | { steal_pct, other_cpu_pct, outside_runnable, loadavg_start,
		longest_stall_s, overrun_s, reasons }' "$2")"
}

# A busy loop on every online CPU, beside a pipe run: others take CPU time
# and are runnable the whole phase.
beside_hogs() {
	local i json="$TL_TMP/hog.json"
	for ((i = 0; i < $(nproc); i++)); do
		sh -c 'while :; do :; done' &
		HOGS+=("$!")
	done
	expect_exit 0 "a pipe run beside $(nproc) busy loops" "$TBENCH" -b pipe 1 -t 3 -c "$LOAD" \
		--cost --json "$json"
	stop_hogs
	say_figures "beside busy loops" "$json"
	jq_ok "noise: its figures and thresholds" \
		'.noise | (.steal_pct | type) == "number" and (.other_cpu_pct | type) == "number"
		 and (.outside_runnable | type) == "number" and (.cpu_migrations | type) == "number"
		 and (.cpu_freq.exposed | type) == "boolean" and .thresholds.stall_s == 2
		 and (.overrun_s | type) == "number"' "$json"
	jq_ok "disturbed by others' CPU or load" \
		'.noise.disturbed and (.noise.reasons | index("other_cpu"))' "$json"
	check "others' CPU over 10% of the capacity" jq -e '.noise.other_cpu_pct > 10' "$json"
	check "the note on stderr says why" grep -q '^tbench: note: run disturbed.*other tasks used' "$TL_TMP/err"
	check "the --cost block of noise after the cost block, with the verdict" \
		awk '/^Cost per operation/ { c = 1 } /^Noise of the execute phase/ && c { n = 1 } /^  disturbed: / && n { d = 1 } END { exit !d }' "$TL_TMP/out"
	check "runs.csv's disturbed column names the reasons" \
		grep -Eq 'other_cpu' < <("$STATS" row --columns disturbed "$json")
}

# Default output: stdout as before (no noise block), the note on stderr.
default_output() {
	local i
	for ((i = 0; i < $(nproc); i++)); do
		sh -c 'while :; do :; done' &
		HOGS+=("$!")
	done
	expect_exit 0 "a default run beside busy loops" "$TBENCH" -b pipe 1 -t 2 -c "$LOAD"
	stop_hogs
	check "stdout: no noise block without --cost" not grep -q 'Noise\|disturbed' "$TL_TMP/out"
	# after it only the warning of a run shorter than a pass, as before
	check "stdout: nothing new after the Throughput line" \
		awk '/^Throughput/ { t = 1; next } t && /./ && !/^Warning: in the execute phase/ { bad = 1 }
		     END { exit !(t && !bad) }' "$TL_TMP/out"
	check "stderr: the note" grep -q '^tbench: note: run disturbed' "$TL_TMP/err"
}

# The server stopped for 3 s in the middle of the phase: no client moves.
stalled_server() {
	local rc json="$TL_TMP/stall.json"
	rc="$(tl_stopped_server_run 3 "$TL_TMP/stall.out" 1 -t 6 --warmup 0 --timeout 30 -c "$TINY" --json "$json")"
	check "a stalled server: exit 0 (got $rc)" [ "$rc" -eq 0 ]
	say_figures "server stopped 3 s" "$json"
	# On failure the figure and the progress lines say whether the stop
	# came inside the execute phase (a loaded machine delays the stop).
	jq_ok "the stall recorded: 2.5 s or more of the 3 (got $(jq -r '.noise.longest_stall_s' "$json" 2>/dev/null))" \
		'.noise.longest_stall_s >= 2.5' "$json"
	jq -e '.noise.longest_stall_s >= 2.5' "$json" >/dev/null 2>&1 || sed 's/^/#   /' "$TL_TMP/stall.out"
	jq_ok "disturbed by the stall" '.noise.disturbed and (.noise.reasons | index("stall"))' "$json"
	check "the note says so" grep -q '^tbench: note: run disturbed.*no client progressed for' "$TL_TMP/stall.out.err"
}

# No busy loop of ours: what they cause must not be claimed. Other work on
# a shared machine causes it too, so a machine already loaded is skipped.
quiet_machine() {
	local json="$TL_TMP/idle.json" before busy
	# The load average is no guide: kernels with delayed dequeue count
	# sleeping tasks in it. The machine's busy time over a second is.
	before="$(tb_machine_noise 1)"
	busy="$(sed -n 's/.*busy \([0-9.]*\)%.*/\1/p' <<<"$before")"
	expect_exit 0 "a pipe run, no busy loops" "$TBENCH" -b pipe 1 -t 3 -c "$LOAD" --json "$json"
	say_figures "no busy loops (the second before: $before)" "$json"
	jq_ok "judged, with its figures" '.noise.disturbed | type == "boolean"' "$json"
	# A busy machine disturbs the run too (its driver wakes late).
	if awk -v b="${busy:-100}" 'BEGIN { exit !(b >= 5) }'; then
		echo "# skipped the quiet-machine verdict: the machine was ${busy:-?}% busy the second before (other work runs here)"
		return 0
	fi
	jq_ok "not disturbed: no reason at all" '.noise.disturbed == false and .noise.reasons == []' "$json"
	check "no note on stderr" not grep -q 'run disturbed' "$TL_TMP/err"
}

# A made-up runs.csv: two ok runs, one of them judged disturbed (a stall),
# and a failed one.
summary_leaves_out() {
	local csv="$TL_TMP/runs.csv" stalled="$TL_TMP/stalled.json"
	jq '.noise.disturbed = true | .noise.reasons = ["stall"] | .result.mb_per_sec = 6.4' \
		"$SRCDIR/tests/data/run-cost.json" >"$stalled"
	{
		"$STATS" row --header
		"$STATS" row --set rep=1 --set exit_code=0 "$SRCDIR/tests/data/run-cost.json"
		"$STATS" row --set rep=2 --set exit_code=0 "$stalled"
		"$STATS" row --set backend=tcp --set clients=4 --set rep=3 --set exit_code=1
	} >"$csv"
	check "runs.csv: disturbed 'no', 'stall'" \
		[ "$("$STATS" select --columns disturbed --tsv "$csv" | paste -sd' ')" = "no stall " ]
	expect_exit 0 "summarize a runs.csv with a disturbed run" "$STATS" summarize --keys backend,clients \
		--metrics mb_per_sec "$csv"
	cp "$TL_TMP/out" "$TL_TMP/summary.csv"
	check "n 1, n_failed 1, n_disturbed 1, the mean of the undisturbed run alone" \
		[ "$("$STATS" select --columns n,n_failed,n_disturbed,mb_per_sec_mean --tsv "$TL_TMP/summary.csv")" \
		  = "$(printf '1\t1\t1\t483.527')" ]
	check "the note on stderr says how many" \
		grep -q 'note: .*1 disturbed run left out of 1 point' "$TL_TMP/err"
	TBENCH_KEEP_DISTURBED=1 expect_exit 0 "summarize, TBENCH_KEEP_DISTURBED=1" "$STATS" summarize \
		--keys backend,clients --metrics mb_per_sec "$csv"
	check "with it the disturbed run counts: n 2, n_disturbed 0, no note" \
		[ "$("$STATS" select --columns n,n_disturbed,mb_per_sec_mean --tsv "$TL_TMP/out")$(cat "$TL_TMP/err")" \
		  = "$(printf '2\t0\t244.964')" ]
	# two hosts' runs: the busy loops' run, judged calm on one and stalled on the other
	jq '.noise.disturbed = false | .noise.reasons = [] | .noise.longest_stall_s = 0.1' \
		"$TL_TMP/hog.json" >"$TL_TMP/host-a.json"
	jq '.noise.disturbed = true | .noise.reasons = ["stall"] | .noise.longest_stall_s = 3.5' \
		"$TL_TMP/hog.json" >"$TL_TMP/host-b.json"
	expect_exit 0 "merge the runs of two hosts, one disturbed" "$STATS" merge --names a,b \
		"$TL_TMP/host-a.json" "$TL_TMP/host-b.json"
	check "the merged run is disturbed, with that host's reasons and the worst stall" jq -e \
		'.noise.disturbed and .noise.reasons == ["stall"] and .noise.hosts_disturbed == 1
		 and .noise.longest_stall_s == 3.5 and .hosts[1].noise.disturbed' "$TL_TMP/out"
	expect_exit 0 "compare it with itself" "$STATS" compare --keys backend,clients "$csv" "$csv"
	check "compare says so too" grep -q '1 disturbed run left out' "$TL_TMP/err"
	expect_exit 0 "compare the summary with the runs" "$STATS" compare --keys backend,clients \
		"$TL_TMP/summary.csv" "$csv"
	check "a summary read back keeps n_disturbed" grep -q 'summary.csv: 1 disturbed run' "$TL_TMP/err"
}

beside_hogs
default_output
stalled_server
quiet_machine
summary_leaves_out
tl_done
