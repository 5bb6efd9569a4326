#!/bin/bash
# A results directory is data, never code (issue 31): sweeps made by hand
# whose directory names, meta.json fields (host, kernel, label, argv,
# clients, ...) and runs.csv cells carry backquotes, $(...), quotes, a
# newline with a gnuplot shell escape (!), gnuplot system() and
# <script>alert(1)</script>. tbench-plot of one sweep and of two together,
# tbench-report and tbench-compare must exit as their man pages say, run
# none of it (no marker file appears) and the page must show it escaped.
# ok and not_ok always succeed, so "test && ok || not_ok" is safe here.
# The payloads are literal text: single quotes on purpose.
# shellcheck disable=SC2015,SC2016
set -euo pipefail
# shellcheck source=tests/testlib.sh
. "${top_srcdir:-.}/tests/testlib.sh"

SRCDIR="$(cd "$SRCDIR" && pwd)"
STATS="$(cd "${top_builddir:-.}" && pwd)/tbench-stats"
export TBENCH_STATS="$STATS"
PLOT="$SRCDIR/scripts/tbench-plot"
REPORT="$SRCDIR/scripts/tbench-report"
COMPARE="$SRCDIR/scripts/tbench-compare"
DATA="$SRCDIR/tests/data"
command -v gnuplot >/dev/null || { echo "SKIP: gnuplot not installed (apt-get install gnuplot-nox)"; exit 77; }
command -v jq >/dev/null || { echo "SKIP: jq not installed (apt-get install jq)"; exit 77; }

# A payload's commands are "cd; touch pwned-WHERE": no '/', so that it fits
# a directory's name too; with HOME, TMPDIR and the working directory under
# TL_TMP, whatever ran it leaves its marker there, wherever it ran.
export HOME="$TL_TMP/home" TMPDIR="$TL_TMP/tmp"
mkdir -p "$HOME" "$TMPDIR" "$TL_TMP/cwd" "$TL_TMP/sweeps"
cd "$TL_TMP/cwd"

# Text that runs "touch pwned-WHERE-HOW" if a shell, gnuplot or a browser
# takes it for code. NAME: short enough for a directory's name, no '/'.
evil() { # WHERE [name]
	local w="$1"
	printf '%s' "$w \`cd;touch pwned-$w-bq\` \$(cd;touch pwned-$w-sub) '\"<script>alert(1)"
	[ "${2:-}" = name ] || printf '%s' "</script> \".system(\"cd;touch pwned-$w-gp\").\" '.system('cd;touch pwned-$w-gq').' ;cd;touch pwned-$w-semi;"
	printf '\n%s' "!cd;touch pwned-$w-bang"
}

# The markers left so far, deleted once said: each check is of its own command.
no_marker() { # WHAT
	local found
	found="$(find "$TL_TMP" -name 'pwned-*' -printf '%f ')"
	[ -z "$found" ] && ok "$1: ran nothing it read" || not_ok "$1 ran text of the results as code: $found"
	find "$TL_TMP" -name 'pwned-*' -delete
}

# meta.json of a sweep whose every text field is a payload (TAG in its markers).
make_meta() { # TAG
	local t="$1"
	jq -n --arg host "$(evil "$t-host")" --arg kernel "$(evil "$t-kernel")" --arg cpu "$(evil "$t-cpu")" \
		--arg lab "$(evil "$t-label")" --arg argv "$(evil "$t-argv")" --arg clients "$(evil "$t-clients")" \
		--arg command "$(evil "$t-command")" --arg version "$(evil "$t-version")" --arg model "$(evil "$t-model")" \
		--arg dev "$(evil "$t-dev")" --arg start "$(evil "$t-start")" --arg status "$(evil "$t-status")" \
		--arg load "$(evil "$t-load")" --arg psi "$(evil "$t-psi")" '{
		status: $status, pid: $argv, start: $start, end: $start, command: $command,
		argv: ["tbench-sweep", "--label", $lab, $argv],
		host: { name: $host, kernel: $kernel, cpu_model: $cpu, cores_online: 2, memory_kb: 4194304 },
		tbench: { version: $version },
		sweep: { mode: "dev", dev: $dev, client_model: $model, label: $lab, clients: [1, $clients],
			time_s: 3, warmup_s: 1, reps: 2 },
		context: { start: { loadavg: [$load, 1], psi_cpu: { some: { avg10: $psi, avg60: 1 } } } } }'
}

# runs.csv: pipe and nop at 1 and 2 clients, 2 reps, the knob cc at two
# payloads (so that it varies: a column of the table, a word of the
# plots' keys), the client model a payload; and a failed run whose error
# is one. CLIENTS replaces the client counts (a payload: no plot of it).
jq --arg m "$(evil model)" '.settings.model = $m' "$DATA/run-cost.json" >"$TL_TMP/ok.json"
jq --arg m "$(evil model)" --arg e "$(evil error)" '.settings.model = $m | .result.error = $e' \
	"$DATA/run-interrupted-warmup.json" >"$TL_TMP/failed.json"
make_runs() { # [CLIENTS]
	local b c rep cc
	"$STATS" row --header
	for b in pipe nop; do
		for c in 1 2; do
			for cc in 1 2; do
				for rep in 1 2; do
					"$STATS" row --set backend="$b" --set clients="${1:-$c}${1:+$c}" --set rep="$rep" \
						--set cc="$(evil "cc$cc")" "$TL_TMP/ok.json"
				done
			done
		done
	done
	"$STATS" row --set backend=pipe --set clients="${1:-1}${1:+1}" --set rep=3 --set cc="$(evil cc1)" "$TL_TMP/failed.json"
}

make_sweep() { # DIR TAG [CLIENTS]
	mkdir -p "$1"
	make_runs "${3:-}" >"$1/runs.csv"
	# clients that are text: tbench-stats refuses to summarize them (below)
	[ -n "${3:-}" ] || "$STATS" summarize "$1/runs.csv" >"$1/summary.csv"
	make_meta "$2" >"$1/meta.json"
}

A="$TL_TMP/sweeps/A $(evil dirA name)"
B="$TL_TMP/sweeps/B $(evil dirB name)"
C="$TL_TMP/sweeps/C $(evil dirC name)"
make_sweep "$A" A
make_sweep "$B" B
make_sweep "$C" C "$(evil clients)"
no_marker "making the sweeps"

# The page: every payload escaped, so the page holds no element of theirs.
check_page() { # WHAT PAGE
	grep -q '&lt;script&gt;alert(1)' "$2" && ok "$1: the payloads are on the page as text" ||
		not_ok "$1: no '&lt;script&gt;alert(1)' on the page"
	! grep -q '<script' "$2" && ok "$1: and no <script> element" ||
		not_ok "$1: raw <script> on the page: $(grep -m 2 -o '.\{40\}<script.\{20\}' "$2")"
	[ "$(grep -o '<t[dh]' "$2" | wc -l)" -eq "$(grep -o '</t[dh]>' "$2" | wc -l)" ] &&
		[ "$(grep -o '<tr>' "$2" | wc -l)" -eq "$(grep -o '</tr>' "$2" | wc -l)" ] &&
		ok "$1: every cell and row opened is closed (no text made a tag)" || not_ok "$1: cells unbalanced"
}

expect_exit 0 "tbench-plot of a hostile sweep" "$PLOT" "$A"
[ -s "$A/throughput.png" ] && ok "it drew throughput.png" || not_ok "no throughput.png in $A"
no_marker "tbench-plot DIR"

expect_exit 0 "tbench-plot of two hostile sweeps together" "$PLOT" --out-dir "$TL_TMP/two" "$A" "$B"
[ -s "$TL_TMP/two/throughput.png" ] && ok "it drew throughput.png of both" || not_ok "no throughput.png in $TL_TMP/two"
no_marker "tbench-plot DIR1 DIR2"

page="$TL_TMP/page/index.html"
expect_exit 0 "tbench-report of a hostile sweep" "$REPORT" --out "$page" "$A"
no_marker "tbench-report DIR"
if [ -s "$page" ]; then
	check_page "tbench-report" "$page"
	grep -q '<figure id="chart-throughput">' "$page" && ok "with its charts" || not_ok "no throughput chart on the page"
	grep -q '<title>tbench sweep A dirA `cd;touch pwned-dirA-bq` $(cd;touch pwned-dirA-sub) [^<]*&lt;script&gt;alert(1)$' "$page" &&
		ok "the directory's name, escaped, in the title" || not_ok "title: $(grep -m1 -A1 '<title>' "$page")"
	grep -q '<tr><th>machine</th><td>A-host `cd;touch pwned-A-host-bq`[^<]*&lt;script&gt;alert(1)&lt;/script&gt;' "$page" &&
		ok "the host's name, escaped" || not_ok "machine: $(grep -m1 -A1 '<th>machine' "$page")"
	grep -q '<td>cc1 `cd;touch pwned-cc1-bq`[^<]*&lt;script&gt;alert(1)&lt;/script&gt;' "$page" &&
		ok "a knob's value, escaped, in the summary table" || not_ok "no escaped cc column in the table"
	grep -q '<td>error `cd;touch pwned-error-bq`[^<]*&lt;script&gt;alert(1)&lt;/script&gt;' "$page" &&
		ok "the failed run's error, escaped, among the runs left out" || not_ok "no escaped error in the runs left out"
fi

# Clients that are text are bad input: tbench-stats names file, line and
# column (exit 2), and no page is written. (The clients cell's escaping is
# checked in tests/py/test_report.py.)
page="$TL_TMP/page-c/index.html"
expect_exit 2 "tbench-report --no-plot of a sweep whose clients are text" "$REPORT" --no-plot --out "$page" "$C"
# (the directory's name holds a newline: the message spans two lines)
grep -q "runs.csv:2: column 2 (clients): " "$TL_TMP/err" && grep -q "is not a number of clients" "$TL_TMP/err" &&
	ok "it names the file, line and column" || not_ok "clients as text: $(head -n 2 "$TL_TMP/err")"
[ ! -e "$page" ] && ok "and writes no page" || not_ok "a page was written from clients that are text"
no_marker "tbench-report --no-plot DIR"
grep -q "column 2 (clients): 'clients \`cd;touch pwned-clients-bq\`" "$TL_TMP/err" &&
	ok "it shows the payload as text" || not_ok "error: $(head -c 300 "$TL_TMP/err")"

expect_exit 0 "tbench-compare of two hostile sweeps" "$COMPARE" "$A" "$B"
grep -q 'cc1 `cd;touch pwned-cc1-bq`' "$TL_TMP/out" && ok "it compared their points" || not_ok "compare: $(head -n 3 "$TL_TMP/out")"
no_marker "tbench-compare DIR1 DIR2"

tl_done
