#!/bin/bash
# shellcheck disable=SC2016  # awk programs are single-quoted on purpose
# mmtests' and LKP's invocations of tbench, run exactly as their shell lines
# run them, and our output read field by field as their parsers read it;
# then the shape of every line against Debian's dbench 4.0 tbench, where it
# is installed. Port 7003 must be ours alone: the test runs in a network
# namespace of its own (a user namespace too when not root).
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
	expect_exit 0 "mmtests: tbench -t 8 --loadfile client-tiny.txt --show-execute-time 2 127.0.0.1" \
		"$TBENCH" -t 8 --loadfile "$TL_TMP/client-tiny.txt" --show-execute-time 2 127.0.0.1
	cp "$TL_TMP/out" "$TL_TMP/mmtests.out"
	stop_server
	check_mmtests_fields "$TL_TMP/mmtests.out" 2
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

mmtests
lkp
against_dbench
tl_done
