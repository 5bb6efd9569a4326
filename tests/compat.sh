#!/bin/bash
# shellcheck disable=SC2016  # awk programs are single-quoted on purpose
# mmtests' and LKP's invocations of tbench, run exactly as their shell lines
# run them, and our output read field by field as their parsers read it;
# then the shape of every line against Debian's dbench 4.0 tbench, where it
# is installed. Port 7003 must be ours alone: the test runs in a network
# namespace of its own (a user namespace too when not root).
#
# With checkouts of mmtests and LKP's lkp-tests, their real parsers read our
# output and dbench 4.0's on the same four cases (a normal run, 64 clients on
# client-tiny, the server killed mid-run, the server stopped for 3 s), and
# must give the same metrics, every value a number:
#   MMTESTS_DIR=/path/to/mmtests LKP_DIR=/path/to/lkp-tests \
#       make check TESTS=tests/compat.sh
# mmtests' needs perl with libyaml-pp-perl and libfile-slurp-perl, LKP's
# ruby and ruby-activesupport (scripts/install-deps). Without the
# directories, or a parser that cannot run, those checks print "# skipped:"
# lines and the rest of the test runs as before. Nothing of theirs is kept
# here: their scripts are run from their checkouts.
set -euo pipefail

if [ -z "${TB_COMPAT_NETNS:-}" ]; then
	for how in "unshare -n" "unshare -rn"; do
		if $how true 2>/dev/null; then
			TB_COMPAT_NETNS=1 exec $how "$0" "$@"
		fi
	done
	echo "SKIP: no private network namespace (unshare -n or -rn refused): port 7003 is not ours to take"
	exit 77
fi
ip link set lo up 2>/dev/null || { echo "SKIP: cannot bring up lo in the namespace"; exit 77; }

# shellcheck source=tests/testlib.sh
. "${top_srcdir:-.}/tests/testlib.sh"
SRV="${top_builddir:-.}/tbench_srv"
CLIENT_TXT=/usr/share/dbench/client.txt
SERVER_PID=

stop_server() {
	if [ -n "$SERVER_PID" ]; then
		kill -9 "$SERVER_PID" 2>/dev/null || true
		wait "$SERVER_PID" 2>/dev/null || true
		SERVER_PID=
	fi
}
trap 'stop_server; rm -rf "$TL_TMP"' EXIT

# Waits (30 s at most, for a loaded machine) until something listens on 7003.
wait_for_port() {
	tl_wait_port 7003 300
}

# mmtests' client-tiny.txt is lines 601-4173 of client.txt; ours where
# the system has no dbench.
make_tiny_loadfile() {
	local src="$CLIENT_TXT"
	[ -r "$src" ] || src="$SRCDIR/loadfiles/default.txt"
	sed -n '601,4173p' "$src" >"$TL_TMP/client-tiny.txt"
}

# What mmtests' tbench parser reads.
check_mmtests_fields() {
	local out="$1" n="$2"
	# A client on a loaded machine may not finish a pass: at least one line,
	# every line well formed, and no client that is not one of ours.
	check "mmtests: 'completed in' lines, fields 4 and 8 whole numbers" \
		awk -v n="$n" '/completed in/ { k++; if ($4 !~ /^[0-9]+$/ || $8 !~ /^[0-9]+$/ || $1 >= n) bad = 1 }
			END { exit (k == 0 || bad) }' "$out"
	check "mmtests: execute lines, field 3 MB/sec and field 6 seconds" \
		awk '/ execute / { k++; if ($3 + 0 <= 0 || $4 != "MB/sec" || $6 !~ /^[0-9]+$/) bad = 1 } END { exit (k == 0 || bad) }' "$out"
	check "mmtests: op table by name, field 3 the average latency" \
		awk '/^ Operation/ { t = 1; next } t && /^ -/ { next } t && NF == 0 { t = 0 }
			t { if ($2 !~ /^[0-9]+$/ || $3 !~ /^[0-9]+\.[0-9][0-9][0-9]$/) bad = 1; names[$1] = 1 }
			END { exit (bad || !("ReadX" in names) || !("NTCreateX" in names) || !("QUERY_PATH_INFORMATION" in names)) }' "$out"
}

# mmtests: tbench_srv with stdin closed, then tbench against 127.0.0.1, the
# server killed with SIGKILL afterwards.
mmtests() {
	make_tiny_loadfile
	"$SRV" <&- >"$TL_TMP/srv.out" 2>&1 &
	SERVER_PID=$!
	check "mmtests: tbench_srv up with stdin closed" wait_for_port
	# mmtests keeps stdout and stderr in one log, as they come.
	local rc=0
	"$TBENCH" -t 8 --loadfile "$TL_TMP/client-tiny.txt" --show-execute-time 2 127.0.0.1 \
		>"$TL_TMP/mmtests.log" 2>&1 || rc=$?
	check "mmtests: tbench -t 8 --loadfile client-tiny.txt --show-execute-time 2 127.0.0.1 (exit $rc)" \
		[ "$rc" -eq 0 ]
	stop_server
	check_mmtests_fields "$TL_TMP/mmtests.log" 2
	mmtests_extract "$TL_TMP/mmtests.log"
}

# mmtests' own split and extract-mmtests.pl on the run above: each of its
# sub-headings has metrics, every value a number.
mmtests_extract() {
	local why s
	why="$(mmtests_unusable)"
	if [ -n "$why" ]; then
		echo "# skipped: mmtests' extract-mmtests.pl on its own invocation: $why"
		return
	fi
	mm_metrics "$1" 2 "$TL_TMP/mm.own"
	echo "# mmtests' invocation, extract-mmtests.pl: $(tr '\n' ' ' <"$TL_TMP/mm.own")"
	for s in loadfile tput op; do
		check "extract-mmtests.pl --sub-heading $s: metrics" grep -q "^$s: " "$TL_TMP/mm.own"
	done
	if [ -s "$TL_TMP/mm.own.bad" ]; then
		not_ok "extract-mmtests.pl: every value a number, no complaint"
		sed 's/^/    /' "$TL_TMP/mm.own.bad"
	else
		ok "extract-mmtests.pl: every value a number, no complaint"
	fi
}

# LKP: tbench_srv &, then tbench -c client.txt -t T N SERVER; a non-zero
# exit fails the job; the Throughput line split on '=' and blanks.
lkp() {
	local loadfile="$CLIENT_TXT" f
	[ -r "$loadfile" ] || loadfile="$SRCDIR/loadfiles/default.txt"
	"$SRV" >"$TL_TMP/srv.out" 2>&1 &
	SERVER_PID=$!
	wait_for_port || true
	expect_exit 0 "LKP: tbench -c client.txt -t 3 4 127.0.0.1" "$TBENCH" -c "$loadfile" -t 3 4 127.0.0.1
	stop_server
	local line
	line="$(grep '^Throughput' "$TL_TMP/out" || true)"
	read -r -a f <<<"${line//=/ }"
	check "LKP: Throughput field 1 is MB/sec" matches "${f[1]:-} ${f[2]:-}" '^[0-9.e+]+ MB/sec$'
	check "LKP: field 3 clients, field 5 procs" matches "${f[3]:-} ${f[5]:-}" '^4 4$'
	check "LKP: the token after '=' is max_latency in ms" matches "${f[8]:-} ${f[9]:-}" '^[0-9]+\.[0-9]{3} ms$'
}

# matches STRING REGEX
matches() {
	[[ "$1" =~ $2 ]]
}

# Each line with its numbers blanked: what a parser sees of its shape.
shapes() {
	sed -E -e 's/[0-9]+(\.[0-9]+)?/N/g' -e 's/ +/ /g' "$1" |
		grep -E '^ ?N (N N MB/sec (warmup|execute)|cleanup)|prepared for launch|^releasing|^Running for|^Throughput' |
		sed -E "s/with load '[^']*'/with load F/" | sort -u
}

# The same invocation with Debian's dbench 4.0 tbench and ours, each against
# our server: every kind of line dbench prints, we print, in the same shape.
against_dbench() {
	if [ ! -x /usr/bin/tbench ] || ! /usr/bin/tbench --help 2>&1 | grep -q 'dbench version 4'; then
		echo "# against dbench: skipped, dbench 4.0's tbench is not installed (apt-get install dbench)"
		return
	fi
	"$SRV" >"$TL_TMP/srv.out" 2>&1 &
	SERVER_PID=$!
	wait_for_port || true
	expect_exit 0 "dbench 4.0: tbench -t 6 3 127.0.0.1" /usr/bin/tbench -t 6 3 127.0.0.1
	shapes "$TL_TMP/out" >"$TL_TMP/dbench.shapes"
	# A warm-up of 1 s (both defaults at -t 6) shows a warm-up line or none,
	# as the first tick falls: ours takes 2 s to show one for sure.
	expect_exit 0 "ours: tbench -t 6 --warmup 2 3 127.0.0.1" "$TBENCH" -t 6 --warmup 2 3 127.0.0.1
	shapes "$TL_TMP/out" >"$TL_TMP/ours.shapes"
	stop_server
	if comm -23 "$TL_TMP/dbench.shapes" "$TL_TMP/ours.shapes" | grep -q .; then
		not_ok "every kind of line dbench prints, we print"
		comm -23 "$TL_TMP/dbench.shapes" "$TL_TMP/ours.shapes" | sed 's/^/    missing: /'
	else
		ok "every kind of line dbench prints, we print ($(wc -l <"$TL_TMP/dbench.shapes") kinds)"
	fi
}

MMTESTS_DIR="${MMTESTS_DIR:-}"
LKP_DIR="${LKP_DIR:-}"
NUM='^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$'

# The lines of mmtests' tbench-bench that split a run's log into the
# benchlog-* files its parse-results reads: run from their checkout, not
# copied here.
mm_split_lines() {
	sed -n '/# Split out logs/,/xz \$LOGDIR_RESULTS\/benchlog-op/p' \
		"$MMTESTS_DIR/shellpack_src/src/tbench/tbench-bench"
}

# Why mmtests' parse path cannot run here; nothing when it can.
mmtests_unusable() {
	if [ -z "$MMTESTS_DIR" ]; then
		echo "MMTESTS_DIR is not set (a checkout of mmtests)"
	elif [ ! -f "$MMTESTS_DIR/bin/extract-mmtests.pl" ] || [ ! -f "$MMTESTS_DIR/shellpack_src/src/tbench/tbench-bench" ] ||
		[ ! -x "$MMTESTS_DIR/shellpack_src/src/tbench/parse-results" ]; then
		echo "$MMTESTS_DIR has no bin/extract-mmtests.pl, shellpack_src/src/tbench/tbench-bench or parse-results"
	elif ! mm_split_lines | grep -q 'benchlog-op'; then
		echo "tbench-bench has no '# Split out logs' block any more"
	elif ! command -v xz >/dev/null || ! perl -e 'use YAML::PP; use File::Slurp;' 2>/dev/null; then
		echo "no xz, or perl without YAML::PP or File::Slurp (libyaml-pp-perl, libfile-slurp-perl)"
	fi
}

# Why LKP's tbench parser cannot run here; nothing when it can.
lkp_unusable() {
	if [ -z "$LKP_DIR" ]; then
		echo "LKP_DIR is not set (a checkout of lkp-tests)"
	elif [ ! -f "$LKP_DIR/programs/tbench/parse" ]; then
		echo "$LKP_DIR has no programs/tbench/parse"
	elif ! command -v ruby >/dev/null; then
		echo "no ruby (ruby, ruby-activesupport)"
	elif ! echo "Throughput 1 MB/sec  1 clients  1 procs  max_latency=1 ms" |
		LKP_SRC="$LKP_DIR" ruby "$LKP_DIR/programs/tbench/parse" >/dev/null 2>&1; then
		echo "programs/tbench/parse fails on a dbench line (ruby-activesupport missing?)"
	fi
}

# mm_metrics LOG CLIENTS OUT: the log laid out as mmtests' result tree,
# split by tbench-bench's lines and read by extract-mmtests.pl, each
# sub-heading: OUT the metric names, OUT.bad every value that is not a
# number and every complaint of the parser.
mm_metrics() {
	local log="$1" n="$2" out="$3" root s rc
	root="$(mktemp -d "$TL_TMP/mm.XXXXXX")"
	# shellcheck disable=SC2034  # read by the eval'd lines of tbench-bench
	local LOGDIR_RESULTS="$root/run/iter-0/tbench/logs" NR_THREADS="$n"
	mkdir -p "$LOGDIR_RESULTS"
	cp "$log" "$LOGDIR_RESULTS/dbench-$n.log"
	: >"$out"
	: >"$out.bad"
	eval "$(mm_split_lines)" || echo "split: tbench-bench's lines failed" >>"$out.bad"
	# Its parse-results first: extract-mmtests.pl drops a row whose value is
	# not a number, and the figures would go on without it, unseen.
	"$MMTESTS_DIR/shellpack_src/src/tbench/parse-results" "$LOGDIR_RESULTS" |
		awk -F '\t' -v num="$NUM" '$5 !~ num { print "parse-results: " $0 }' >>"$out.bad" ||
		echo "parse-results failed" >>"$out.bad"
	for s in loadfile tput op; do
		rc=0
		perl "$MMTESTS_DIR/bin/extract-mmtests.pl" -d "$root" -n run -b tbench \
			--sub-heading "$s" >"$out.$s" 2>"$out.$s.err" || rc=$?
		[ "$rc" -eq 0 ] || echo "$s: extract-mmtests.pl exit $rc" >>"$out.bad"
		sed "s/^/$s: stderr: /" "$out.$s.err" >>"$out.bad"
		awk -v s="$s" '{ print s ": " $1 }' "$out.$s" >>"$out"
		awk -v s="$s" -v num="$NUM" '{ for (i = 2; i <= NF; i++) if ($i !~ num) { print s ": " $0; next } }' \
			"$out.$s" >>"$out.bad"
	done
	sort -u -o "$out" "$out"
}

# lkp_metrics LOG OUT: LKP's programs/tbench/parse on the log: OUT the
# metric names, OUT.bad every value that is not a number.
lkp_metrics() {
	local log="$1" out="$2" rc=0
	LKP_SRC="$LKP_DIR" ruby "$LKP_DIR/programs/tbench/parse" <"$log" >"$out.raw" 2>"$out.err" || rc=$?
	: >"$out.bad"
	[ "$rc" -eq 0 ] || echo "parse: exit $rc" >>"$out.bad"
	sed 's/^/stderr: /' "$out.err" >>"$out.bad"
	sed -n 's/^\([^:]*\): .*/\1/p' "$out.raw" | sort -u >"$out"
	awk -F': ' -v num="$NUM" '$2 !~ num' "$out.raw" >>"$out.bad"
}

# parser_run IMPL LOG ACTION TBENCH-ARGS...: one run of dbench 4.0's tbench
# against its tbench_srv (IMPL dbench) or ours against ours, stdout and
# stderr in one LOG as mmtests keeps them; ACTION none, or, a second into
# the execute phase, kill (the server and its connections' processes,
# SIGKILL) or stop (SIGSTOP for 3 s). LOG.rc has the exit status.
parser_run() {
	local impl="$1" log="$2" action="$3" client srv pid rc=0 pids
	shift 3
	if [ "$impl" = dbench ]; then
		client=/usr/bin/tbench srv=/usr/bin/tbench_srv
	else
		client="$TBENCH" srv="$SRV"
	fi
	"$srv" <&- >"$TL_TMP/srv.out" 2>&1 &
	SERVER_PID=$!
	wait_for_port || true
	# A client that waits for ever on a dead server ends here all the same.
	timeout -s KILL 60 "$client" "$@" 127.0.0.1 >"$log" 2>&1 &
	pid=$!
	if [ "$action" != none ]; then
		tl_wait_for ' execute ' "$log" || true
		sleep 1
		# tbench_srv serves each connection in a process of its own.
		pids="$SERVER_PID $(pgrep -P "$SERVER_PID" | tr '\n' ' ' || true)"
		if [ "$action" = kill ]; then
			# shellcheck disable=SC2086  # one PID a word
			kill -9 $pids 2>/dev/null || true
		else
			# shellcheck disable=SC2086
			kill -STOP $pids 2>/dev/null || true
			sleep 3
			# shellcheck disable=SC2086
			kill -CONT $pids 2>/dev/null || true
		fi
	fi
	wait "$pid" || rc=$?
	stop_server
	echo "$rc" >"$log.rc"
}

# dbench 4.0 prints the short names of five operations; our table has
# mmtests' dbench's (man tbench, COMPATIBILITY).
long_op_names() {
	sed -e 's/^op: op-Qpathinfo-/op: op-QUERY_PATH_INFORMATION-/' \
		-e 's/^op: op-Qfileinfo-/op: op-QUERY_FILE_INFORMATION-/' \
		-e 's/^op: op-Qfsinfo-/op: op-QUERY_FS_INFORMATION-/' \
		-e 's/^op: op-Sfileinfo-/op: op-SET_FILE_INFORMATION-/' \
		-e 's/^op: op-Find-/op: op-FIND_FIRST-/' "$1" | sort -u
}

# compare_parser PARSER CASE: ours and dbench 4.0's metric sets the same,
# and none of our values other than a number.
compare_parser() {
	local p="$1" c="$2" d="$TL_TMP/$1.$2.dbench" o="$TL_TMP/$1.$2.ours"
	echo "# $p ($c) dbench 4.0 (exit $(cat "$TL_TMP/$c.dbench.log.rc")): $(tr '\n' ' ' <"$d")"
	echo "# $p ($c) ours (exit $(cat "$TL_TMP/$c.ours.log.rc")): $(tr '\n' ' ' <"$o")"
	[ -s "$d.bad" ] && sed "s/^/# $p ($c) dbench 4.0 itself: /" "$d.bad"
	if [ "$p" = mmtests ]; then long_op_names "$d" >"$d.names"; else cp "$d" "$d.names"; fi
	if diff "$d.names" "$o" >"$TL_TMP/diff"; then
		ok "$p ($c): the metrics of dbench 4.0, $(wc -l <"$o") of them"
	else
		not_ok "$p ($c): metrics not as dbench 4.0's ('<' dbench's only, '>' ours only)"
		sed -n 's/^[<>]/    &/p' "$TL_TMP/diff"
	fi
	if [ -s "$o.bad" ]; then
		not_ok "$p ($c): every value a number, no complaint from the parser"
		sed 's/^/    /' "$o.bad"
	else
		ok "$p ($c): every value a number, no complaint from the parser"
	fi
}

# The four cases, each with dbench 4.0 and ours, through both parsers.
real_parsers() {
	local mm_why lkp_why c impl n
	mm_why="$(mmtests_unusable)"
	lkp_why="$(lkp_unusable)"
	[ -z "$mm_why" ] || echo "# skipped: mmtests' parser on the four cases: $mm_why"
	[ -z "$lkp_why" ] || echo "# skipped: LKP's parser on the four cases: $lkp_why"
	[ -n "$mm_why" ] && [ -n "$lkp_why" ] && return
	if [ ! -x /usr/bin/tbench ] || [ ! -x /usr/bin/tbench_srv ]; then
		echo "# skipped: the real parsers on the four cases: no dbench 4.0 tbench and tbench_srv (apt-get install dbench)"
		return
	fi
	make_tiny_loadfile
	local loadfile="$CLIENT_TXT"
	[ -r "$loadfile" ] || loadfile="$SRCDIR/loadfiles/default.txt"
	for impl in dbench ours; do
		# -t 5: dbench's warm-up is 1 s, as in any real run (at -t 3, none,
		# and dbench 4.0's table has the loadfile's first Deltree and Mkdir).
		parser_run "$impl" "$TL_TMP/a.$impl.log" none -t 5 -c "$loadfile" 2
		# The case that warns of a loadfile replayed in part only.
		parser_run "$impl" "$TL_TMP/b.$impl.log" none -t 3 --loadfile "$TL_TMP/client-tiny.txt" 64
		parser_run "$impl" "$TL_TMP/c.$impl.log" kill -t 4 -c "$loadfile" 2
		parser_run "$impl" "$TL_TMP/d.$impl.log" stop -t 5 -c "$loadfile" 2
	done
	for c in a b c d; do
		n=2
		[ "$c" = b ] && n=64
		for impl in dbench ours; do
			[ -n "$mm_why" ] || mm_metrics "$TL_TMP/$c.$impl.log" "$n" "$TL_TMP/mmtests.$c.$impl"
			[ -n "$lkp_why" ] || lkp_metrics "$TL_TMP/$c.$impl.log" "$TL_TMP/lkp.$c.$impl"
		done
		[ -n "$mm_why" ] || compare_parser mmtests "$c"
		[ -n "$lkp_why" ] || compare_parser lkp "$c"
	done
	# Our server killed: exit 1 and no Throughput line (LKP fails the job).
	check "(c) ours exits 1 when its server is killed" [ "$(cat "$TL_TMP/c.ours.log.rc")" = 1 ]
	check "(c) ours prints no Throughput line then" sh -c '! grep -q "^Throughput" "$1"' sh "$TL_TMP/c.ours.log"
}

# mmtests' invocation (--show-execute-time) with the server killed mid-run:
# exit 1 and no execute-time line, so that mmtests' extract records no
# loadfile figure of a failed run (dbench's clients that lose their server
# exit before they print theirs).
failed_execute_time() {
	local log="$TL_TMP/e.ours.log" why
	make_tiny_loadfile
	parser_run ours "$log" kill -t 8 --loadfile "$TL_TMP/client-tiny.txt" --show-execute-time 2
	check "(e) --show-execute-time, server killed: exit 1" [ "$(cat "$log.rc")" = 1 ]
	check "(e) no execute-time line of a failed run" sh -c '! grep -q "completed in" "$1"' sh "$log"
	why="$(mmtests_unusable)"
	if [ -n "$why" ]; then
		echo "# skipped: mmtests' extract on a failed --show-execute-time run: $why"
		return
	fi
	mm_metrics "$log" 2 "$TL_TMP/mm.failed"
	echo "# mmtests (e) ours (exit $(cat "$log.rc")): $(tr '\n' ' ' <"$TL_TMP/mm.failed")"
	check "(e) mmtests records no loadfile figure of the failed run" \
		sh -c '! grep -q "^loadfile: " "$1"' sh "$TL_TMP/mm.failed"
}

mmtests
lkp
against_dbench
real_parsers
failed_execute_time
tl_done
