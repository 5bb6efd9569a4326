#!/bin/bash
# shellcheck disable=SC2016  # the scripts of sh -c and bash -c are single-quoted on purpose
# contrib/mmtests and contrib/lkp (docs/harnesses.md) run by mmtests' and
# LKP's own code, as compat.sh runs their tbench parsers: each copied with
# our files into a scratch copy of its checkout, one tiny real sweep
# (backends pipe,nop, clients 1,2, 1 s, 2 reps) through its runner, then
# its extraction; every figure it reports must be the one tbench-stats
# gives for the same runs.csv.
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

# mmtests: the config's variables (tiny sweep), run-single-test.sh as
# run-mmtests.sh calls it, then extract-mmtests.pl and compare-mmtests.pl
# on the log tree.
mmtests() {
	local mm="$TL_TMP/mmtests" log runs rc=0
	scratch_copy "$MMTESTS_DIR" "$mm"
	cp -R "$CONTRIB/mmtests/." "$mm/"
	check "mmtests: refresh.sh builds shellpack-bench-tbenchsweep" \
		"$mm/shellpack_src/src/refresh.sh" tbenchsweep
	(
		set -a
		# shellcheck source=contrib/mmtests/configs/config-network-tbenchsweep
		. "$mm/configs/config-network-tbenchsweep"
		set +a
		export RUN_MONITOR=no MONITORS_GZIP='' MONITORS_WITH_LATENCY='' SHELLPACK_LOG="$mm/work/log/tiny/iter-0"
		export TBENCHSWEEP_BACKENDS="${TINY[0]}" TBENCHSWEEP_CLIENTS="${TINY[1]}" TBENCHSWEEP_OFFLOAD='' \
			TBENCHSWEEP_DURATION="${TINY[2]}" TBENCHSWEEP_WARMUP="${TINY[3]}" TBENCHSWEEP_REPS="${TINY[4]}"
		cd "$mm" && ./bin/run-single-test.sh tbenchsweep
	) >"$TL_TMP/mm.run" 2>&1 || rc=$?
	log="$mm/work/log/tiny/iter-0/tbenchsweep/logs"
	runs="$log/sweep/runs.csv"
	if [ "$rc" -ne 0 ] || [ ! -f "$runs" ]; then
		not_ok "mmtests: run-single-test.sh tbenchsweep ran the sweep (exit $rc)"
		tail -n 15 "$TL_TMP/mm.run" | sed 's/^/    /'
		return
	fi
	ok "mmtests: run-single-test.sh tbenchsweep ran tbench-sweep into $(basename "$(dirname "$log")")/logs/sweep"
	check "mmtests: the sweep's output kept, xz'd, and its command in commands.log" \
		sh -c 'test -s "$1/tbench-sweep.log.xz" && grep -q "tbench-sweep --out" "$1/commands.log"' sh "$log"

	# The samples: every run that counts, its figures as runs.csv has them.
	(cd "$mm" && perl bin/extract-mmtests.pl -d work/log -n tiny -b tbenchsweep) >"$TL_TMP/mm.samples" 2>"$TL_TMP/mm.err" || rc=$?
	echo "# extract-mmtests.pl -b tbenchsweep (exit $rc):"
	sed 's/^/#   /' "$TL_TMP/mm.samples"
	"$STATS" select --tsv --where status=ok --columns backend,offload,clients,rep,mb_per_sec,cost_cpu_us "$runs" |
		awk '{ sub("/", "", $2); p = $1 "-" $2 "-" $3 "-" $4; print "mbsec-" p, $5; print "cpuus-" p, $6 }' |
		sort >"$TL_TMP/mm.want"
	awk '{ split($1, p, "-"); print $1 "-" $3, $4 }' "$TL_TMP/mm.samples" | sort >"$TL_TMP/mm.got"
	same_figures "mmtests: extract-mmtests.pl's samples are the runs' MB/sec and CPU us/op" "$TL_TMP/mm.got" "$TL_TMP/mm.want"

	# mmtests' own statistics of them: its mean is tbench-stats'.
	rc=0
	(cd "$mm" && perl bin/compare-mmtests.pl -d work/log -n tiny -b tbenchsweep) >"$TL_TMP/mm.report" 2>"$TL_TMP/mm.err" || rc=$?
	echo "# compare-mmtests.pl -b tbenchsweep (exit $rc), its Amean lines:"
	grep '^Amean' "$TL_TMP/mm.report" | sed 's/^/#   /' || true
	awk '$1 == "Amean" { print $2, $3 }' "$TL_TMP/mm.report" | sort >"$TL_TMP/mm.got"
	stats_means "$runs" | awk '{ p = $1 "-" $2 "-" $3; print "mbsec-" p, $4; print "cpuus-" p, $5 }' | sort >"$TL_TMP/mm.want"
	same_figures "mmtests: compare-mmtests.pl's Amean is tbench-stats summarize's mean" "$TL_TMP/mm.got" "$TL_TMP/mm.want"

	# The decomposition, a second extraction (-a decompose).
	rc=0
	(cd "$mm" && perl bin/compare-mmtests.pl -d work/log -n tiny -b tbenchsweep -a decompose) >"$TL_TMP/mm.layers" 2>"$TL_TMP/mm.err" || rc=$?
	echo "# compare-mmtests.pl -b tbenchsweep -a decompose (exit $rc):"
	sed 's/^/#   /' "$TL_TMP/mm.layers"
	awk '$1 == "Ops" { print $2, $3 }' "$TL_TMP/mm.layers" | sort >"$TL_TMP/mm.got"
	stats_layers "$runs" | awk '{ print $1 "-" $2, $3; print $1 "_ci95-" $2, $4 }' | sort >"$TL_TMP/mm.want"
	same_figures "mmtests: -a decompose reports tbench-stats decompose's layers" "$TL_TMP/mm.got" "$TL_TMP/mm.want"
}

# LKP: our job expanded by lkp split-job and job2sh (the tiny sweep set
# with -s), our run through bin/run-test, then bin/run-stats.
lkp() {
	local lkp="$TL_TMP/lkp" root="$TL_TMP/lkp-result/tbench-sweep/tiny" rc=0 k
	scratch_copy "$LKP_DIR" "$lkp"
	cp -R "$CONTRIB/lkp/." "$lkp/"
	# split-job reads the test box's description; a bare one will do.
	[ -f "$lkp/hosts/$(hostname)" ] || printf 'nr_cpu: %s\nmemory: 1G\n' "$(nproc)" >"$lkp/hosts/$(hostname)"
	mkdir -p "$TL_TMP/split" "$root" "$TL_TMP/lkp-tmp"
	LKP_SRC="$lkp" "$lkp/bin/lkp" split-job -o "$TL_TMP/split" \
		-s "tbench-sweep: {backends: '${TINY[0]}', clients: '${TINY[1]}', offload: '', runtime: ${TINY[2]}, warmup: ${TINY[3]}, reps: ${TINY[4]}}" \
		"$lkp/programs/tbench-sweep/jobs/tbench-sweep.yaml" >"$TL_TMP/split.out" 2>&1 || rc=$?
	local job
	job="$(find "$TL_TMP/split" -name '*.yaml' | head -n 1)"
	if [ "$rc" -ne 0 ] || [ -z "$job" ]; then
		not_ok "LKP: lkp split-job expands jobs/tbench-sweep.yaml (exit $rc)"
		tail -n 5 "$TL_TMP/split.out" | sed 's/^/    /'
		return
	fi
	ok "LKP: lkp split-job expands jobs/tbench-sweep.yaml: $(basename "$job")"
	"$lkp/sbin/job2sh" "$job" >"$TL_TMP/job.sh" 2>"$TL_TMP/job2sh.err" || true
	local want_line="backends='${TINY[0]}' clients='${TINY[1]}' offload= runtime=${TINY[2]} warmup=${TINY[3]} reps=${TINY[4]} \$LKP_SRC/bin/run-test tbench-sweep"
	echo "# job2sh: $(grep 'run-test tbench-sweep' "$TL_TMP/job.sh" | sed 's/^[[:space:]]*//')"
	check "LKP: job2sh runs run-test tbench-sweep with the job's parameters" grep -qF "$want_line" "$TL_TMP/job.sh"
	cp "$job" "$root/job.yaml"

	# bin/run-test as job.sh calls it: the parameters in the environment,
	# stdout to the result root through its fifo. bash -c: run-test makes
	# its parent the first for the OOM killer, a shell of its own.
	rc=0
	env TMP="$TL_TMP/lkp-tmp" TMP_RESULT_ROOT="$root" RESULT_ROOT="$root" LKP_SRC="$lkp" category=benchmark \
		backends="${TINY[0]}" clients="${TINY[1]}" offload= runtime="${TINY[2]}" warmup="${TINY[3]}" reps="${TINY[4]}" \
		bash -c '"$1/bin/run-test" tbench-sweep; rc=$?; wait; exit $rc' sh "$lkp" >"$TL_TMP/lkp.run" 2>&1 || rc=$?
	# run-test's tee ends with the fifo's writer; wait for it by its pid.
	while read -r k; do
		while kill -0 "$k" 2>/dev/null; do sleep 0.1; done
	done <"$TL_TMP/lkp-tmp/.pid-pipes"
	if [ "$rc" -ne 0 ] || [ ! -f "$root/tbench-sweep.results/runs.csv" ]; then
		not_ok "LKP: bin/run-test tbench-sweep ran the sweep (exit $rc)"
		tail -n 15 "$TL_TMP/lkp.run" "$root/tbench-sweep" 2>/dev/null | sed 's/^/    /'
		return
	fi
	ok "LKP: bin/run-test tbench-sweep ran the sweep into the result root's tbench-sweep.results"

	rc=0
	env RESULT_ROOT="$root" LKP_SRC="$lkp" "$lkp/bin/run-stats" tbench-sweep >"$TL_TMP/stats.out" 2>&1 || rc=$?
	check "LKP: bin/run-stats tbench-sweep (exit $rc) writes tbench-sweep.json" test -s "$root/tbench-sweep.json"
	grep -v 'job.yaml' "$TL_TMP/stats.out" | sed 's/^/# run-stats: /' || true
	echo "# tbench-sweep.json:"
	ruby -rjson -e 'JSON.parse(File.read(ARGV[0])).each { |k, v| puts "#{k}: #{v.join(" ")}" }' \
		"$root/tbench-sweep.json" 2>&1 | sed 's/^/#   /' | tee "$TL_TMP/lkp.json.txt"
	sed -n 's/^#   tbench-sweep\.\([^:]*\): /\1 /p' "$TL_TMP/lkp.json.txt" | sort >"$TL_TMP/lkp.got"
	{
		"$STATS" select --tsv --columns backend,clients,offload,n,mb_per_sec_mean,cost_cpu_us_mean \
			"$root/tbench-sweep.results/summary.csv" |
			awk -F '\t' '$4 > 0 { sub("/", "", $3); p = $1 "." $2 "." $3; print p ".mb_per_sec", $5; print p ".cost_cpu_us", $6 }'
		stats_layers "$root/tbench-sweep.results/runs.csv" |
			awk '{ print "decompose." $1 "." $2, $3; print "decompose." $1 "." $2 ".ci95", $4 }'
	} | sort >"$TL_TMP/lkp.want"
	same_figures "LKP: tbench-sweep.json has summary.csv's means and decompose's layers" "$TL_TMP/lkp.got" "$TL_TMP/lkp.want"
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
