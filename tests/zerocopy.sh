#!/bin/bash
# shellcheck disable=SC2016  # jq programs are single-quoted on purpose
# tcp-zc: every request at or above the threshold goes out with MSG_ZEROCOPY
# and every one of those is completed, and counted, in --json and --cost; on
# loopback the kernel copies them all (SO_EE_CODE_ZEROCOPY_COPIED). The
# threshold from the environment, a bad one refused (exit 2); threads and
# processes; our tbench_srv as the SERVER.
set -euo pipefail
# shellcheck source=tests/testlib.sh
. "${top_srcdir:-.}/tests/testlib.sh"
command -v jq >/dev/null || { echo "SKIP: jq not installed"; exit 77; }
SRV="${top_builddir:-.}/tbench_srv"
LOAD="$TL_TMP/load.txt"

# 3 large requests and 2 small ones per pass (the set-up exchange is small too).
{
	echo 'WriteX 1 0 65536 65536 NT_STATUS_OK'
	echo 'Close 1 NT_STATUS_OK'
	echo 'WriteX 1 0 16384 16384 NT_STATUS_OK'
	echo 'WriteX 1 0 8192 8192 NT_STATUS_OK'
	echo 'ReadX 1 0 65536 65536 NT_STATUS_OK'
} >"$LOAD"

jq_ok() {
	check "$1" jq -e "$2" "$3"
}

# counts WHAT JSON CLIENTS ZC PLAIN: per client ZC zero-copy sends and PLAIN copies.
counts() {
	local what="$1" json="$2" n="$3" zc="$4" plain="$5"
	jq_ok "$what: $((n * zc)) zero-copy sends, $((n * plain)) copies" \
		".backend_counters.zerocopy_sends == $((n * zc)) and .backend_counters.copied_sends == $((n * plain))" "$json"
	jq_ok "$what: each completed, zero-copy or copied" \
		'.backend_counters | .zerocopy_completed + .zerocopy_copied == .zerocopy_sends' "$json"
}

for model in --processes --threads; do
	TBENCH_ZEROCOPY_THRESHOLD=10000 expect_exit 0 "tcp-zc $model, threshold 10000" \
		"$TBENCH" -b tcp-zc "$model" 3 --run-once -q -c "$LOAD" --json "$TL_TMP/zc.json"
	counts "threshold 10000 $model" "$TL_TMP/zc.json" 3 2 4
	# The receiver is on this host: the kernel copies before delivering.
	jq_ok "on loopback every zero-copy send was copied after all ($model)" \
		'.backend_counters.zerocopy_copied == .backend_counters.zerocopy_sends' "$TL_TMP/zc.json"
done

TBENCH_ZEROCOPY_THRESHOLD=1 expect_exit 0 "threshold 1: all but the 8-byte set-up" \
	"$TBENCH" -b tcp-zc 2 --run-once -q -c "$LOAD" --json "$TL_TMP/all.json"
counts "threshold 1" "$TL_TMP/all.json" 2 5 1
TBENCH_ZEROCOPY_THRESHOLD=70000 expect_exit 0 "threshold above every request" \
	"$TBENCH" -b tcp-zc 2 --run-once -q -c "$LOAD" --json "$TL_TMP/none.json"
counts "threshold 70000" "$TL_TMP/none.json" 2 0 6
expect_exit 0 "default threshold, --cost" "$TBENCH" -b tcp-zc 1 --run-once --cost -c "$LOAD" \
	--json "$TL_TMP/default.json"
check "--cost prints the counts" grep -q '^  backend  zerocopy_sends 0 zerocopy_completed 0' "$TL_TMP/out"
counts "default threshold: none" "$TL_TMP/default.json" 1 0 6
check "the default is noted" grep -q 'no request is sent zero-copy by default' "$TL_TMP/err"
expect_exit 0 "tcp has no counters" "$TBENCH" -b tcp 1 --run-once -q -c "$LOAD" --json "$TL_TMP/tcp.json"
jq_ok "tcp: backend_counters null" '.backend_counters == null' "$TL_TMP/tcp.json"

for bad in 0 abc 70001; do
	TBENCH_ZEROCOPY_THRESHOLD=$bad expect_exit 2 "TBENCH_ZEROCOPY_THRESHOLD=$bad refused" \
		"$TBENCH" -b tcp-zc 1 --run-once -q -c "$LOAD"
	check "the error names the variable" grep -q "TBENCH_ZEROCOPY_THRESHOLD $bad" "$TL_TMP/err"
done

# Against a tbench_srv of ours (any free port on loopback), as a SERVER.
"$SRV" --port 0 --listen 127.0.0.1 >"$TL_TMP/srv.out" 2>&1 &
srv=$!
trap 'kill "$srv" 2>/dev/null || true; rm -rf "$TL_TMP"' EXIT
if port="$(tl_server_port "$TL_TMP/srv.out")"; then
	TBENCH_ZEROCOPY_THRESHOLD=10000 expect_exit 0 "tcp-zc to tbench_srv at 127.0.0.1:$port" \
		"$TBENCH" -b tcp-zc --port "$port" 2 --run-once -q -c "$LOAD" --json "$TL_TMP/srv.json" 127.0.0.1
	counts "to tbench_srv" "$TL_TMP/srv.json" 2 2 4
else
	not_ok "tbench_srv did not listen: $(cat "$TL_TMP/srv.out")"
fi
kill "$srv"
wait "$srv" || true
tl_done
