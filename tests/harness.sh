#!/bin/bash
# shellcheck disable=SC2016  # the scripts of sh -c and bash -c are single-quoted on purpose
# contrib/mmtests and contrib/lkp (docs/harnesses.md) run by mmtests' and
# LKP's own code, as compat.sh runs their tbench parsers: each copied with
# our files into a scratch copy of its checkout, one tiny real sweep
# (backends pipe,nop, clients 1,2, 1 s, 2 reps) through its runner, then
# its extraction; every figure it reports must be the one tbench-stats
# gives for the same runs.csv. Then a sweep of 2 runs that varies the
# client model (--vary model=processes,threads): its points named apart.
#   MMTESTS_DIR=/path/to/mmtests LKP_DIR=/path/to/lkp-tests \
#       make check TESTS=tests/harness.sh
# mmtests: bin/run-single-test.sh runs our shellpack (refresh.sh expands
# it), bin/extract-mmtests.pl and bin/compare-mmtests.pl read its log
# (perl with YAML::PP, File::Slurp, File::Which; xz). LKP: lkp split-job
# and job2sh expand our job, bin/run-test runs our program, bin/run-stats
# our parse and its dump-stat (ruby with activesupport, git, tty-command).
# Without a directory or a dependency, that half prints "# skipped:" and
# why; with neither, the test is skipped (77). scripts/install-deps
# installs the dependencies. Nothing of theirs is kept here.
set -euo pipefail
# shellcheck source=tests/testlib.sh
. "${top_srcdir:-.}/tests/testlib.sh"

BUILD="$(cd "$(dirname "$TBENCH")" && pwd)"
STATS="$BUILD/tbench-stats"
SCRIPTS="$(cd "$SRCDIR/scripts" && pwd)"
CONTRIB="$(cd "$SRCDIR/contrib" && pwd)"
# The sweep's programs from this tree; disturbed runs count (testlib.sh),
# in the sweep, in the extractions and in the tbench-stats they are checked
# against alike.
export PATH="$BUILD:$SCRIPTS:$PATH"
MMTESTS_DIR="${MMTESTS_DIR:-}"
LKP_DIR="${LKP_DIR:-}"
TINY=('pipe,nop' '1,2' 1 0 2)  # backends, clients, seconds, warm-up, reps

# Why mmtests cannot run our shellpack here; nothing when it can.
mmtests_unusable() {
	if [ -z "$MMTESTS_DIR" ]; then
		echo "MMTESTS_DIR is not set (a checkout of mmtests)"
	elif [ ! -x "$MMTESTS_DIR/bin/run-single-test.sh" ] || [ ! -x "$MMTESTS_DIR/shellpack_src/src/refresh.sh" ] ||
		[ ! -f "$MMTESTS_DIR/bin/extract-mmtests.pl" ] || [ ! -f "$MMTESTS_DIR/bin/lib/MMTests/ExtractShellpack.pm" ]; then
		echo "$MMTESTS_DIR has no bin/run-single-test.sh, shellpack_src/src/refresh.sh or generic extraction (ExtractShellpack.pm)"
	elif ! command -v xz >/dev/null || ! perl -e 'use YAML::PP; use File::Slurp; use File::Which;' 2>/dev/null; then
		echo "no xz, or perl without YAML::PP, File::Slurp or File::Which (libyaml-pp-perl, libfile-slurp-perl, libfile-which-perl)"
	fi
}

# Why LKP cannot run our job here; nothing when it can.
lkp_unusable() {
	if [ -z "$LKP_DIR" ]; then
		echo "LKP_DIR is not set (a checkout of lkp-tests)"
	elif [ ! -x "$LKP_DIR/bin/run-test" ] || [ ! -x "$LKP_DIR/bin/run-stats" ] || [ ! -x "$LKP_DIR/sbin/dump-stat" ] ||
		[ ! -x "$LKP_DIR/sbin/job2sh" ] || [ ! -x "$LKP_DIR/bin/lkp" ]; then
		echo "$LKP_DIR has no bin/run-test, bin/run-stats, bin/lkp, sbin/dump-stat or sbin/job2sh"
	elif ! command -v ruby >/dev/null ||
		! ruby -e 'require "active_support"; require "git"; require "tty-command"' 2>/dev/null; then
		echo "no ruby, or ruby without activesupport, git or tty-command (ruby-activesupport, ruby-git, ruby-tty-command)"
	fi
}

# scratch_copy DIR INTO: their checkout without its history and work files,
# then ours on top.
scratch_copy() {
	mkdir -p "$2"
	tar -C "$1" --exclude=./.git --exclude=./work -cf - . | tar -C "$2" -xf -
}

# near A B: two printings of one number, A rounded by its printer (mmtests:
# 4 decimals; tbench-stats: 6 significant digits).
near() {
	awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; m = (b < 0 ? -b : b); exit !(a != "" && b != "" && d <= 1e-4 + 1e-5 * m) }'
}

# same_figures WHAT GOT WANT: the files of "name value" lines have the same
# names, each value near the other's.
same_figures() {
	local what="$1" got="$2" want="$3" bad=0 name value other
	if ! diff <(cut -d ' ' -f 1 "$got") <(cut -d ' ' -f 1 "$want") >"$TL_TMP/diff"; then
		not_ok "$what: the names ('<' reported only, '>' tbench-stats' only)"
		sed -n 's/^[<>]/    &/p' "$TL_TMP/diff"
		return
	fi
	while read -r name value; do
		other="$(awk -v n="$name" '$1 == n { print $2 }' "$want")"
		near "$value" "$other" || { echo "    $name: reported $value, tbench-stats $other"; bad=1; }
	done <"$got"
	if [ "$bad" -eq 0 ] && [ -s "$got" ]; then
		ok "$what: $(wc -l <"$got") figures, each tbench-stats'"
	else
		not_ok "$what: figures not tbench-stats' (above), or none"
	fi
}

# What tbench-stats says of RUNS.csv: each point's means (backend,
# offload with n/a as na, clients, mb_per_sec, cost_cpu_us), and each
# layer of decompose (layer, clients, mean, ci95); blank-separated.
stats_means() { # RUNS
	"$STATS" summarize --metrics mb_per_sec,cost_cpu_us "$1" >"$TL_TMP/summary.csv"
	"$STATS" select --tsv --columns backend,offload,clients,n,mb_per_sec_mean,cost_cpu_us_mean "$TL_TMP/summary.csv" |
		awk -F '\t' '$4 > 0 { sub("/", "", $2); print $1, $2, $3, $5, $6 }'
}
stats_layers() { # RUNS
	"$STATS" decompose "$1" >"$TL_TMP/decompose.csv"
	"$STATS" select --tsv --columns layer,clients,mean,ci95 "$TL_TMP/decompose.csv"
}

# mm_run NAME BACKENDS CLIENTS REPS ARGS: the config's variables with the
# sweep's set, run-single-test.sh as run-mmtests.sh calls it for run NAME
# in the scratch copy MM; its log directory in MM_LOG. 1 if it failed.
mm_run() {
	local name="$1" rc=0
	(
		set -a
		# shellcheck source=contrib/mmtests/configs/config-network-tbenchsweep
		. "$MM/configs/config-network-tbenchsweep"
		set +a
		export RUN_MONITOR=no MONITORS_GZIP='' MONITORS_WITH_LATENCY='' SHELLPACK_LOG="$MM/work/log/$name/iter-0"
		export TBENCHSWEEP_BACKENDS="$2" TBENCHSWEEP_CLIENTS="$3" TBENCHSWEEP_OFFLOAD='' \
			TBENCHSWEEP_DURATION="${TINY[2]}" TBENCHSWEEP_WARMUP="${TINY[3]}" TBENCHSWEEP_REPS="$4" TBENCHSWEEP_ARGS="$5"
		cd "$MM" && ./bin/run-single-test.sh tbenchsweep
	) >"$TL_TMP/mm.$name.run" 2>&1 || rc=$?
	MM_LOG="$MM/work/log/$name/iter-0/tbenchsweep/logs"
	if [ "$rc" -ne 0 ] || [ ! -f "$MM_LOG/sweep/runs.csv" ]; then
		not_ok "mmtests: run-single-test.sh tbenchsweep ran the sweep $name (exit $rc)"
		tail -n 15 "$TL_TMP/mm.$name.run" | sed 's/^/    /'
		return 1
	fi
	ok "mmtests: run-single-test.sh tbenchsweep ran tbench-sweep into work/log/$name/iter-0/tbenchsweep/logs/sweep"
}

# mm_samples NAME RUNS LABEL: extract-mmtests.pl's samples of run NAME,
# its report (MB/sec) and -a cpu (CPU us/op), are the figures of RUNS.csv's
# runs, named as parse-results names them (LABEL: ",NAME,..." the columns
# the sweep varied, NAME=VALUE in the names).
mm_samples() {
	local name="$1" runs="$2" label="$3" report rc
	: >"$TL_TMP/mm.got"
	for report in "" cpu; do
		rc=0
		(cd "$MM" && perl bin/extract-mmtests.pl -d work/log -n "$name" -b tbenchsweep ${report:+-a "$report"}) \
			>"$TL_TMP/mm.samples" 2>"$TL_TMP/mm.err" || rc=$?
		echo "# extract-mmtests.pl -b tbenchsweep -n $name${report:+ -a $report} (exit $rc):"
		sed 's/^/#   /' "$TL_TMP/mm.samples"
		awk '{ print $1 "-" $3, $4 }' "$TL_TMP/mm.samples" >>"$TL_TMP/mm.got"
	done
	sort -o "$TL_TMP/mm.got" "$TL_TMP/mm.got"
	"$STATS" select --tsv --where status=ok --columns "backend,offload,clients,rep,mb_per_sec,cost_cpu_us$label" "$runs" |
		awk -F '\t' -v names="$label" '{ sub("/", "", $2); split(names, name, ","); x = ""; for (i = 7; i <= NF; i++) x = x "-" name[i - 5] "=" $i
			p = $1 "-" $2 x "-" $3 "-" $4; print "mbsec-" p, $5; print "cpuus-" p, $6 }' |
		sort >"$TL_TMP/mm.want"
	same_figures "mmtests ($name): extract-mmtests.pl's samples are the runs' MB/sec and CPU us/op" "$TL_TMP/mm.got" "$TL_TMP/mm.want"
}

# mmtests: our files into a scratch copy, the tiny sweep through
# run-single-test.sh, extract-mmtests.pl and compare-mmtests.pl on its log
# tree; then a sweep that varies the client model, its points named apart.
mmtests() {
	local log runs rc=0
	MM="$TL_TMP/mmtests"
	scratch_copy "$MMTESTS_DIR" "$MM"
	cp -R "$CONTRIB/mmtests/." "$MM/"
	check "mmtests: refresh.sh builds shellpack-bench-tbenchsweep" \
		"$MM/shellpack_src/src/refresh.sh" tbenchsweep
	mm_run tiny "${TINY[0]}" "${TINY[1]}" "${TINY[4]}" "" || return 0
	log="$MM_LOG"
	runs="$log/sweep/runs.csv"
	check "mmtests: the sweep's output kept, xz'd, and its command in commands.log" \
		sh -c 'test -s "$1/tbench-sweep.log.xz" && grep -q "tbench-sweep --out" "$1/commands.log"' sh "$log"
	mm_samples tiny "$runs" ""

	# mmtests' own statistics of them: its mean of CPU us/op (-a cpu) is
	# tbench-stats'; of MB/sec it reports its harmonic mean, a point each.
	rc=0
	(cd "$MM" && perl bin/compare-mmtests.pl -d work/log -n tiny -b tbenchsweep) >"$TL_TMP/mm.report" 2>"$TL_TMP/mm.err" || rc=$?
	echo "# compare-mmtests.pl -b tbenchsweep (exit $rc), its Hmean lines:"
	grep '^Hmean' "$TL_TMP/mm.report" | sed 's/^/#   /' || true
	stats_means "$runs" >"$TL_TMP/means"
	check "mmtests: compare-mmtests.pl's report has each point's MB/sec" \
		diff <(awk '$1 == "Hmean" { print $2 }' "$TL_TMP/mm.report" | sort) <(awk '{ print "mbsec-" $1 "-" $2 "-" $3 }' "$TL_TMP/means" | sort)
	rc=0
	(cd "$MM" && perl bin/compare-mmtests.pl -d work/log -n tiny -b tbenchsweep -a cpu) >"$TL_TMP/mm.report" 2>"$TL_TMP/mm.err" || rc=$?
	echo "# compare-mmtests.pl -b tbenchsweep -a cpu (exit $rc), its Amean lines:"
	grep '^Amean' "$TL_TMP/mm.report" | sed 's/^/#   /' || true
	awk '$1 == "Amean" { print $2, $3 }' "$TL_TMP/mm.report" | sort >"$TL_TMP/mm.got"
	awk '{ print "cpuus-" $1 "-" $2 "-" $3, $5 }' "$TL_TMP/means" | sort >"$TL_TMP/mm.want"
	same_figures "mmtests: compare-mmtests.pl -a cpu's Amean is tbench-stats summarize's mean" "$TL_TMP/mm.got" "$TL_TMP/mm.want"

	# The decomposition, a second extraction (-a decompose).
	rc=0
	(cd "$MM" && perl bin/compare-mmtests.pl -d work/log -n tiny -b tbenchsweep -a decompose) >"$TL_TMP/mm.layers" 2>"$TL_TMP/mm.err" || rc=$?
	echo "# compare-mmtests.pl -b tbenchsweep -a decompose (exit $rc):"
	sed 's/^/#   /' "$TL_TMP/mm.layers"
	awk '$1 == "Ops" { print $2, $3 }' "$TL_TMP/mm.layers" | sort >"$TL_TMP/mm.got"
	stats_layers "$runs" | awk '{ print $1 "-" $2, $3; print $1 "_ci95-" $2, $4 }' | sort >"$TL_TMP/mm.want"
	same_figures "mmtests: -a decompose reports tbench-stats decompose's layers" "$TL_TMP/mm.got" "$TL_TMP/mm.want"

	# A key the sweep varies joins the point's name (nop, 1 client, 1 rep).
	mm_run varied nop 1 1 "--vary model=processes,threads" || return 0
	mm_samples varied "$MM_LOG/sweep/runs.csv" ",model"
	check "mmtests (varied): both client models named (op-rep)" \
		sh -c 'grep -q "^mbsec-nop-na-model=processes-1-1 " "$1" && grep -q "^mbsec-nop-na-model=threads-1-1 " "$1"' sh "$TL_TMP/mm.got"
}

# LKP: our job expanded by lkp split-job and job2sh (the tiny sweep set
# with -s), our run through bin/run-test, then bin/run-stats.
lkp() {
	local rc=0 job
	LKP="$TL_TMP/lkp"
	scratch_copy "$LKP_DIR" "$LKP"
	cp -R "$CONTRIB/lkp/." "$LKP/"
	# split-job reads the test box's description; a bare one will do.
	[ -f "$LKP/hosts/$(hostname)" ] || printf 'nr_cpu: %s\nmemory: 1G\n' "$(nproc)" >"$LKP/hosts/$(hostname)"
	mkdir -p "$TL_TMP/split"
	LKP_SRC="$LKP" "$LKP/bin/lkp" split-job -o "$TL_TMP/split" \
		-s "tbench-sweep: {backends: '${TINY[0]}', clients: '${TINY[1]}', offload: '', runtime: ${TINY[2]}, warmup: ${TINY[3]}, reps: ${TINY[4]}}" \
		"$LKP/programs/tbench-sweep/jobs/tbench-sweep.yaml" >"$TL_TMP/split.out" 2>&1 || rc=$?
	job="$(find "$TL_TMP/split" -name '*.yaml' | head -n 1)"
	if [ "$rc" -ne 0 ] || [ -z "$job" ]; then
		not_ok "LKP: lkp split-job expands jobs/tbench-sweep.yaml (exit $rc)"
		tail -n 5 "$TL_TMP/split.out" | sed 's/^/    /'
		return
	fi
	ok "LKP: lkp split-job expands jobs/tbench-sweep.yaml: $(basename "$job")"
	"$LKP/sbin/job2sh" "$job" >"$TL_TMP/job.sh" 2>"$TL_TMP/job2sh.err" || true
	local want_line="backends='${TINY[0]}' clients='${TINY[1]}' offload= runtime=${TINY[2]} warmup=${TINY[3]} reps=${TINY[4]} \$LKP_SRC/bin/run-test tbench-sweep"
	echo "# job2sh: $(grep 'run-test tbench-sweep' "$TL_TMP/job.sh" | sed 's/^[[:space:]]*//')"
	check "LKP: job2sh runs run-test tbench-sweep with the job's parameters" grep -qF "$want_line" "$TL_TMP/job.sh"
	lkp_run tiny "${TINY[0]}" "${TINY[1]}" "${TINY[4]}" "" "$job" || return 0
	lkp_stats tiny ""
	# A key the sweep varies joins the point's name (nop, 1 client, 1 rep).
	lkp_run varied nop 1 1 "--vary model=processes,threads" "$job" || return 0
	lkp_stats varied ",model"
	check "LKP (varied): both client models named" \
		sh -c 'grep -q "^nop.1.na.model=processes.mb_per_sec " "$1" && grep -q "^nop.1.na.model=threads.mb_per_sec " "$1"' sh "$TL_TMP/lkp.got"
}

# lkp_run NAME BACKENDS CLIENTS REPS OPTIONS JOB: bin/run-test as job.sh
# calls it: the parameters in the environment, stdout to the result root
# LKP_ROOT (JOB its job.yaml) through its fifo. bash -c: run-test makes its
# parent the first for the OOM killer, a shell of its own. 1 if it failed.
lkp_run() {
	local name="$1" rc=0 k
	LKP_ROOT="$TL_TMP/lkp-result/tbench-sweep/$name"
	mkdir -p "$LKP_ROOT" "$TL_TMP/lkp-tmp.$name"
	cp "$6" "$LKP_ROOT/job.yaml"
	env TMP="$TL_TMP/lkp-tmp.$name" TMP_RESULT_ROOT="$LKP_ROOT" RESULT_ROOT="$LKP_ROOT" LKP_SRC="$LKP" category=benchmark \
		backends="$2" clients="$3" offload= runtime="${TINY[2]}" warmup="${TINY[3]}" reps="$4" options="$5" \
		bash -c '"$1/bin/run-test" tbench-sweep; rc=$?; wait; exit $rc' sh "$LKP" >"$TL_TMP/lkp.$name.run" 2>&1 || rc=$?
	# run-test's tee ends with the fifo's writer; wait for it by its pid.
	while read -r k; do
		while kill -0 "$k" 2>/dev/null; do sleep 0.1; done
	done <"$TL_TMP/lkp-tmp.$name/.pid-pipes"
	if [ "$rc" -ne 0 ] || [ ! -f "$LKP_ROOT/tbench-sweep.results/runs.csv" ]; then
		not_ok "LKP: bin/run-test tbench-sweep ran the sweep $name (exit $rc)"
		tail -n 15 "$TL_TMP/lkp.$name.run" "$LKP_ROOT/tbench-sweep" 2>/dev/null | sed 's/^/    /'
		return 1
	fi
	ok "LKP: bin/run-test tbench-sweep ran the sweep $name into the result root's tbench-sweep.results"
}

# lkp_stats NAME LABEL: bin/run-stats on the result root LKP_ROOT; its
# tbench-sweep.json has summary.csv's means and decompose's layers (LABEL:
# ",NAME,..." the columns the sweep varied, NAME=VALUE in the names).
lkp_stats() {
	local name="$1" label="$2" rc=0 results="$LKP_ROOT/tbench-sweep.results"
	env RESULT_ROOT="$LKP_ROOT" LKP_SRC="$LKP" "$LKP/bin/run-stats" tbench-sweep >"$TL_TMP/stats.out" 2>&1 || rc=$?
	check "LKP ($name): bin/run-stats tbench-sweep (exit $rc) writes tbench-sweep.json" test -s "$LKP_ROOT/tbench-sweep.json"
	sed 's/^/# run-stats: /' "$TL_TMP/stats.out"
	echo "# tbench-sweep.json ($name):"
	ruby -rjson -e 'JSON.parse(File.read(ARGV[0])).each { |k, v| puts "#{k}: #{v.join(" ")}" }' \
		"$LKP_ROOT/tbench-sweep.json" 2>&1 | sed 's/^/#   /' | tee "$TL_TMP/lkp.json.txt"
	sed -n 's/^#   tbench-sweep\.\([^:]*\): /\1 /p' "$TL_TMP/lkp.json.txt" | sort >"$TL_TMP/lkp.got"
	{
		"$STATS" select --tsv --columns "backend,clients,offload,n,mb_per_sec_mean,cost_cpu_us_mean$label" "$results/summary.csv" |
			awk -F '\t' -v names="$label" '$4 > 0 { sub("/", "", $3); split(names, name, ","); p = $1 "." $2 "." $3
				for (i = 7; i <= NF; i++) p = p "." name[i - 5] "=" $i
				print p ".mb_per_sec", $5; print p ".cost_cpu_us", $6 }'
		stats_layers "$results/runs.csv" |
			awk -F '\t' '$3 != "" { print "decompose." $1 "." $2, $3 } $4 != "" { print "decompose." $1 "." $2 ".ci95", $4 }'
	} | sort >"$TL_TMP/lkp.want"
	same_figures "LKP ($name): tbench-sweep.json has summary.csv's means and decompose's layers" "$TL_TMP/lkp.got" "$TL_TMP/lkp.want"
}

mm_why="$(mmtests_unusable)"
lkp_why="$(lkp_unusable)"
if [ -n "$mm_why" ] && [ -n "$lkp_why" ]; then
	echo "SKIP: mmtests: $mm_why; LKP: $lkp_why"
	exit 77
fi
if [ -n "$mm_why" ]; then echo "# skipped: mmtests: $mm_why"; else mmtests; fi
if [ -n "$lkp_why" ]; then echo "# skipped: LKP: $lkp_why"; else lkp; fi
tl_done
