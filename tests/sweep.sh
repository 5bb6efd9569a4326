#!/bin/bash
# A real, short tbench-sweep: its rows (cost figures included), the offloads
# each run's tbench --netns read back, the plots, a host left as it was, a
# resume after Ctrl-C, (as root) a veth sweep with tbench_srv, and the knobs
# of --vary (placement, mtu, nodelay, cc; rate on the veth pair). The plan
# alone is tests/sweep-plan.sh; a sweep as an unprivileged user is
# tests/sweep-user.sh. Skipped (77) where tbench --netns does not work.
# ok and not_ok always succeed, so "test && ok || not_ok" is safe here.
# shellcheck disable=SC2015
set -euo pipefail
# shellcheck source=tests/testlib.sh
. "${top_srcdir:-.}/tests/testlib.sh"

skip() { echo "SKIP: $*"; exit 77; }
for p in jq gnuplot; do
	command -v "$p" >/dev/null || skip "$p not installed (apt-get install jq gnuplot-nox)"
done
if ! "$TBENCH" --netns -b nop 1 --run-once -q -c "$SRCDIR/loadfiles/tiny.txt" >/dev/null 2>"$TL_TMP/probe.err"; then
	skip "tbench --netns does not work here: $(head -n 1 "$TL_TMP/probe.err")"
fi

SWEEP="$SRCDIR/scripts/tbench-sweep"
PLOT="$SRCDIR/scripts/tbench-plot"
TBENCH="$(cd "$(dirname "$TBENCH")" && pwd)/$(basename "$TBENCH")"
STATS="$(dirname "$TBENCH")/tbench-stats"
export TBENCH TBENCH_STATS="$STATS"

# A backend that crosses lo (tcp) when there is one; else pipe and nop with
# --all-offloads, so that on/off still happens on the namespace's lo.
# The lists are read whole before they are searched: under pipefail, a
# "| grep -q" that stops reading early can make its writer die of SIGPIPE and
# the test see no match.
if backends="$("$TBENCH" -b help)" && grep -q '^  tcp ' <<<"$backends"; then
	BACKENDS=pipe,tcp
	FORCE=()
	NET=tcp
else
	BACKENDS=pipe,nop
	FORCE=(--all-offloads)
	NET=pipe
fi

lo_offloads() { ethtool -k lo 2>/dev/null || echo "(no ethtool: not compared)"; }
lo_before="$(lo_offloads)"
qdiscs_before="$(tc qdisc show 2>/dev/null || true)"
# The read-back offloads: tso_read, ... where runs.csv also has the knobs
# asked for (tso, ...); else tso, ... themselves.
R=""
header="$("$STATS" row --header)" || header=""
[[ ",$header," != *,tso_read,* ]] || R=_read
KNOB_COLS=""
! "$STATS" row --knobs >/dev/null 2>&1 || KNOB_COLS=1

# Sweeps run as background jobs with job control on: a non-interactive shell
# starts background commands with SIGINT ignored (and a script cannot trap a
# signal ignored on entry), so without "set -m" there would be no Ctrl-C to
# test. The PIDs name the sweeps' namespaces (tbsweep-PID[-srv|-cli]).
SWEEP_PIDS=()
sweep_bg() { # STDOUT STDERR ARGS...
	local o="$1" e="$2"
	shift 2
	set -m
	# env: a harness that started this test with SIGINT ignored (nohup, cmd &)
	# would pass that on, and a signal ignored on entry cannot be trapped.
	env --default-signal=INT "$SWEEP" "$@" >"$o" 2>"$e" &
	BG_PID=$!
	set +m
	SWEEP_PIDS+=("$BG_PID")
}
# run_sweep WANT-EXIT WHAT ARGS...: like expect_exit, output in $TL_TMP/out, err
run_sweep() {
	local want="$1" what="$2" got=0
	shift 2
	sweep_bg "$TL_TMP/out" "$TL_TMP/err" "$@"
	wait "$BG_PID" || got=$?
	if [ "$got" -eq "$want" ]; then
		ok "$what (exit $got)"
	else
		not_ok "$what: exit $got, want $want"
		sed -n '1,5s/^/    /p' "$TL_TMP/err"
	fi
}

# cols FILE COLUMNS [--where NAME=VALUE]...: those columns of the rows, tab-separated
cols() {
	local file="$1" columns="$2"
	shift 2
	"$STATS" select --columns "$columns" "$@" --tsv "$file"
}

sweep_run() {
	local out="$TL_TMP/sweep"
	run_sweep 0 "sweep $BACKENDS, clients 1,2, offload on,off, 2 reps, 2 s" \
		--backends "$BACKENDS" --clients 1,2 --offload on,off --reps 2 -t 2 --warmup 0 \
		"${FORCE[@]}" --label test --out "$out" -- --timeout 30
	sed 's/^/    /' "$TL_TMP/err" | grep -v '^    $' | head -5 || true
	local runs="$out/runs.csv"
	local n_expect
	if [ "$NET" = tcp ]; then n_expect=12; else n_expect=16; fi  # pipe 2x2 + tcp 2x2x2, or 2x2x2x2
	[ -f "$runs" ] && ok "runs.csv written" || { not_ok "runs.csv written"; return; }
	[ "$(tail -n +2 "$runs" | wc -l)" -eq "$n_expect" ] && ok "$n_expect rows" ||
		not_ok "$n_expect rows (got $(tail -n +2 "$runs" | wc -l))"
	[ "$(head -n 1 "$runs")" = "$("$STATS" row --header)" ] && ok "header: tbench-stats row --header" ||
		not_ok "header: $(head -n 1 "$runs")"
	# A run the backend failed is recorded as failed (exit status, error) and
	# the sweep goes on: that is the sweep working. pipe must not fail.
	cols "$runs" status,exit_code,mb_per_sec,ops_per_sec,cpu_us_per_mb,execute_s,error,model |
		awk -F'\t' '!($1 == "ok" && $2 == 0 && $3 > 0 && $4 > 0 && $5 > 0 && $6 > 1 && $8 ~ /^(processes|threads)$/) &&
			!($1 == "failed" && $2 != 0 && $7 != "") { bad++ }
			END { exit bad > 0 }' && ok "every run ok with MB/sec, ops/sec, CPU per MB, model, or failed with its reason" ||
		{ not_ok "every run ok or failed with its reason"; cat "$runs"; }
	! grep -qvx ok < <(cols "$runs" status --where backend=pipe) && ok "pipe runs ok" || not_ok "pipe runs ok"
	cols "$runs" backend,clients,offload,rep,error --where status=failed |
		sed 's/^/# note: failed run (the backend, not the sweep): /'
	# interleaved: all of rep 1 before any of rep 2
	cols "$runs" rep | awk '{ if ($1 < last) bad = 1; last = $1 } END { exit bad }' &&
		ok "reps interleaved (rep 1 of every point first)" || not_ok "reps interleaved"
	# within a rep, a client count's runs back to back (in a shuffled order, seeded and kept)
	[ "$(cols "$runs" rep,clients | uniq | wc -l)" -eq 4 ] && ok "a client count's runs back to back within a rep" ||
		not_ok "blocks: $(cols "$runs" rep,clients | uniq -c | paste -sd' ')"
	check "meta.json: the order and its seed" jq -e '(.sweep.order_seed | type) == "number" and (.sweep.order | length) > 0' \
		"$out/meta.json"
	# the layer between the two backends (the second at offload on): one run a rep each, so they pair up
	expect_exit 0 "decompose of runs.csv" "$STATS" decompose --figure cost_cpu_us --levels "$BACKENDS:on" "$runs"
	# by name: a label may hold commas (quoted), and decompose's columns may grow
	[ "$("$STATS" select --columns method,pairs --tsv "$TL_TMP/out" | grep -c $'^paired\t2$')" -eq 2 ] &&
		ok "decompose: paired, 2 pairs at each client count" ||
		not_ok "decompose method: $(cat "$TL_TMP/out")"
	# read-back offloads: on rows say on, off rows say off, inside the namespace
	local on off
	on="$(cols "$runs" "dev,tso$R,gso$R" --where backend="$NET" --where offload=on | sort -u)"
	off="$(cols "$runs" "dev,tso$R,gso$R" --where backend="$NET" --where offload=off | sort -u)"
	[ "$on" = $'lo\ton\ton' ] && ok "offload=on read back as tso on, gso on (lo)" || not_ok "offload=on read back: '$on'"
	[ "$off" = $'lo\toff\toff' ] && ok "offload=off read back as tso off, gso off (lo)" || not_ok "offload=off read back: '$off'"
	[ "$(cols "$runs" netns --where status=ok | sort -u)" = "$NETNS_WANT" ] &&
		ok "every run in a network namespace of its own ($NETNS_WANT)" || not_ok "netns: $(cols "$runs" netns | sort -u)"
	# What an operation cost: CPU always; TCP segments where bytes cross lo.
	cols "$runs" cost_cpu_us,cost_operations,wall_us_per_op --where status=ok |
		awk -F'\t' '!($1 > 0 && $2 > 0 && $3 > 0) { bad = 1 } END { exit bad }' &&
		ok "cost: CPU per operation, operations, wall time per operation" ||
		{ not_ok "cost figures"; cols "$runs" cost_cpu_us,cost_operations,wall_us_per_op; }
	cols "$runs" cost_segments_out,cost_payload_bytes_per_segment --where backend="$NET" --where status=ok |
		awk -F'\t' '!($1 > 0 && $2 > 0) { bad = 1 } END { exit bad }' &&
		ok "$NET: segments per operation and bytes per segment" || not_ok "$NET: segment figures"
	if [ "$NET" = tcp ]; then
		[ "$(cols "$runs" "offload,dev,tso$R" --where backend=pipe | sort -u)" = $'n/a\t\tn/a' ] &&
			ok "pipe runs once per point, offload n/a, no device" || not_ok "pipe offload n/a"
	fi
	# raw JSON of every run
	local missing=0 j
	while IFS= read -r j; do
		jq -e '.result.status == "ok"' "$out/$j" >/dev/null 2>&1 || missing=$((missing + 1))
	done < <(cols "$runs" json)
	[ "$missing" -eq 0 ] && ok "raw --json of every run kept" || not_ok "$missing raw JSON files missing or bad"
	# summary
	local pts
	if [ "$NET" = tcp ]; then pts=6; else pts=8; fi
	[ "$(tail -n +2 "$out/summary.csv" | wc -l)" -eq "$pts" ] && ok "summary.csv: $pts points" || not_ok "summary.csv: $pts points"
	cols "$out/summary.csv" cost_cpu_us_mean,cost_cpu_us_sd,cost_cpu_us_ci95,wall_us_per_op_mean |
		awk -F'\t' '!($1 > 0 && $2 >= 0 && $3 >= 0 && $4 > 0) { bad = 1 } END { exit bad }' &&
		ok "summary: cost figures with sd and interval" || not_ok "summary: cost figures"
	cols "$out/summary.csv" n,n_failed,n_disturbed | awk '$1 + $2 + $3 != 2 { bad = 1 } END { exit bad }' &&
		ok "summary: n + n_failed = 2 everywhere" || not_ok "summary: n + n_failed = 2 everywhere"
	! grep -qv '^processes$\|^threads$' < <(cols "$out/summary.csv" model) &&
		ok "summary: the client model of every point" || not_ok "summary: model column"
	check "meta.json" jq -e '.status == "complete" and (.host.kernel | length > 0) and (.host.cpu_model | length > 0)
		and .host.cores_online > 0 and .host.memory_kb > 0 and (.tbench.version | test("tbench suite"))
		and (.sweep.client_model | test("^(processes|threads)$"))
		and (.tbench.git_revision | length > 0) and (.command | test("--label test"))
		and (.start | length > 0) and (.end | length > 0)
		and (.devices[0].device == "lo")' "$out/meta.json"
	check "meta.json: the tbench arguments after --, options included" \
		jq -e '.tbench.extra_args == ["--timeout", "30"]' "$out/meta.json"
	ls "$out"/*.tmp.* >/dev/null 2>&1 && not_ok "temporary files left behind" || ok "no temporary files left"

	# plots
	expect_exit 0 "tbench-plot" "$PLOT" "$out"
	local png
	local charts=(throughput cpu decomposition)
	[ "$NET" != tcp ] || charts+=(segments)
	for png in "${charts[@]}"; do
		if [ "$(head -c 8 "$out/$png.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] &&
			[ "$(stat -c %s "$out/$png.png")" -gt 15000 ]; then
			ok "$png.png: PNG, $(stat -c %s "$out/$png.png") bytes"
		else
			not_ok "$png.png: a PNG over 15 kB"
		fi
		grep -q '<svg' "$out/$png.svg" && ok "$png.svg" || not_ok "$png.svg"
	done
	if [ "$NET" = pipe ]; then
		[ -s "$out/cost.png" ] && ok "cost.png (nop in the sweep)" || not_ok "cost.png"
	fi
}

# Signals as they come: Ctrl-C at a terminal reaches the whole process group
# (the sweep, its worker shell, tbench); SIGTERM the sweep alone; kill -9
# leaves the worker without its supervisor, and it stops on its own.
signals() {
	local how want out pid rc seen _
	for how in group-INT TERM KILL; do
		out="$TL_TMP/sig-$how"
		sweep_bg "$out.out" "$out.err" --backends pipe --clients 1 --reps 3 -t 3 --warmup 0 --out "$out"
		pid=$BG_PID
		# a run's tbench (meta.json is written when the set-up, its probe
		# included, is done): two minutes at most, a loaded machine is slow
		seen=""
		for _ in $(seq 1200); do
			if [ -f "$out/meta.json" ] && pgrep -g "$pid" -x tbench >/dev/null; then seen=1; break; fi
			sleep 0.1
		done
		if [ -z "$seen" ]; then
			not_ok "$how: no tbench seen: $(grep -v '^\[' "$out.err" | tail -n 3 | paste -sd'|')"
			kill -TERM -- "-$pid" 2>/dev/null || true
			wait "$pid" 2>/dev/null || true
			continue
		fi
		case "$how" in
		group-INT) want=130; kill -INT -- "-$pid" ;;
		TERM) want=143; kill -TERM "$pid" ;;
		KILL) want=137; kill -KILL "$pid" ;;
		esac
		rc=0
		wait "$pid" 2>/dev/null || rc=$?    # not bash's "Killed" line
		# After kill -9 the worker notices only when its run, the recording,
		# the clean-up and meta.json are done: a minute at most under load.
		for _ in $(seq 600); do pgrep -g "$pid" >/dev/null || break; sleep 0.1; done
		[ "$rc" -eq "$want" ] && ok "$how: exit $rc" ||
			not_ok "$how: exit $rc, want $want: $(grep -v '^\[' "$out.err" | tail -n 3 | paste -sd'|')"
		pgrep -g "$pid" >/dev/null && not_ok "$how: still running: $(pgrep -a -g "$pid" | paste -sd'|')" ||
			ok "$how: nothing of the sweep left running"
		check "$how: meta.json says interrupted" jq -e '.status == "interrupted"' "$out/meta.json"
		ls "$out"/runs/*.part >/dev/null 2>&1 && not_ok "$how: .part files left" || ok "$how: no .part files left"
	done
}

host_untouched() {
	[ "$(lo_offloads)" = "$lo_before" ] && ok "host lo offloads unchanged" ||
		not_ok "host lo offloads changed: $(diff <(echo "$lo_before") <(lo_offloads) | head -4)"
	local p n left=""
	for p in "${SWEEP_PIDS[@]}"; do
		for n in "tbsweep-$p" "tbsweep-$p-srv" "tbsweep-$p-cli"; do
			[ ! -e "/run/netns/$n" ] || left="$left $n"
		done
	done
	[ -z "$left" ] && ok "no namespace left behind (${#SWEEP_PIDS[@]} sweeps)" || not_ok "namespaces left:$left"
}

resume() {
	local out="$TL_TMP/resume" rc=0 pid
	# 2 backends x 2 client counts x 2 reps = 8 short runs; interrupted after 3
	sweep_bg "$TL_TMP/r1.out" "$TL_TMP/r1.err" --backends pipe,nop --clients 1,2 --reps 2 -t 1 --warmup 0 \
		--out "$out"
	pid=$BG_PID
	local _
	# two minutes at most for 3 rows: a loaded machine is slow
	for _ in $(seq 1200); do
		[ -f "$out/runs.csv" ] && [ "$(tail -n +2 "$out/runs.csv" | wc -l)" -ge 3 ] && break
		sleep 0.1
	done
	# Like a user at a terminal: Ctrl-C, and again if nothing happened.
	for _ in 1 2 3; do
		kill -INT "$pid" 2>/dev/null || break
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break 2; sleep 0.1; done
	done
	wait "$pid" || rc=$?
	[ "$rc" -eq 130 ] && ok "Ctrl-C: exit 130" ||
		not_ok "Ctrl-C: exit $rc, want 130: $(grep -v '^\[' "$TL_TMP/r1.err" | tail -n 3 | paste -sd'|')"
	grep -q 'interrupted' "$TL_TMP/r1.err" && ok "says interrupted" || not_ok "says interrupted"
	host_untouched
	local done_rows
	done_rows="$(tail -n +2 "$out/runs.csv" | wc -l)"
	[ "$done_rows" -ge 3 ] && [ "$done_rows" -lt 8 ] && ok "finished runs kept: $done_rows of 8" ||
		not_ok "finished runs kept: $done_rows of 8"
	check "meta.json says interrupted" jq -e '.status == "interrupted"' "$out/meta.json"
	! grep -qvx ok < <(cols "$out/runs.csv" status) &&
		ok "no half-finished run recorded" || not_ok "no half-finished run recorded"
	ls "$out"/runs/*.part >/dev/null 2>&1 && not_ok ".part files left" || ok "no .part files left"
	cp "$out/runs.csv" "$TL_TMP/before.csv"
	local seed
	seed="$(jq '.sweep.order_seed' "$out/meta.json")"

	check "meta.json keeps the sweep's options" jq -e '.argv == ["--backends", "pipe,nop", "--clients", "1,2",
		"--reps", "2", "-t", "1", "--warmup", "0"]' "$out/meta.json"
	expect_exit 2 "--resume with another --clients" "$SWEEP" --resume --out "$out" --clients 1 -t 1
	grep -q -- '--clients 1 (the sweep.s: --clients 1,2)' "$TL_TMP/err" && ! grep -q -- '-t 1 (' "$TL_TMP/err" &&
		ok "says which option differs, and the sweep's" || not_ok "says which: $(cat "$TL_TMP/err")"
	# as the interrupted sweep said: only --resume and --out
	run_sweep 0 "--resume --out DIR alone" --resume --out "$out"
	grep -q "$((8 - done_rows)) of 8 runs to do" "$TL_TMP/out" && ok "--resume runs only the $((8 - done_rows)) missing" ||
		not_ok "--resume runs only the missing: $(grep 'runs to do' "$TL_TMP/out")"
	[ "$(tail -n +2 "$out/runs.csv" | wc -l)" -eq 8 ] && ok "8 rows after resume" || not_ok "8 rows after resume"
	# -t 1 throughout: the default -t 10 would run ten times as long
	awk '$1 < 0.5 || $1 > 3 { bad = 1 } END { exit bad }' < <(cols "$out/runs.csv" execute_s) &&
		ok "every run of -t 1, as the sweep's" || not_ok "run lengths: $(cols "$out/runs.csv" execute_s | paste -sd' ')"
	[ "$(head -n "$((done_rows + 1))" "$out/runs.csv")" = "$(cat "$TL_TMP/before.csv")" ] &&
		ok "finished rows intact" || not_ok "finished rows intact"
	[ "$(cols "$out/runs.csv" backend,clients,offload,rep | sort | uniq -d | wc -l)" -eq 0 ] &&
		ok "no run twice" || not_ok "no run twice"
	check "meta.json: complete, two sessions" jq -e '.status == "complete" and (.sessions | length) == 2
		and .sessions[0].status == "interrupted"' "$out/meta.json"
	jq -e --argjson want "$seed" '.sweep.order_seed == $want' "$out/meta.json" >/dev/null &&
		ok "--resume: the sweep's own order (seed $seed)" || not_ok "--resume: seed $(jq .sweep.order_seed "$out/meta.json")"
	expect_exit 1 "a second sweep into the same --out is refused" \
		"$SWEEP" --backends pipe --clients 1 --reps 1 -t 1 --out "$out"
	run_sweep 0 "--resume when nothing is missing" --backends pipe,nop --clients 1,2 --reps 2 \
		-t 1 --warmup 0 --out "$out" --resume
	grep -q 'nothing left to do' "$TL_TMP/out" && ok "nothing left to do" || not_ok "nothing left to do"
}

# tcp across a veth pair to the tbench_srv the sweep starts in the other
# namespace; the server's CPU is read from /proc around each run.
veth() {
	local out="$TL_TMP/veth" p
	if [ "$NET" != tcp ]; then
		echo "# skipped the veth sweep: this tbench has no tcp backend"
		return
	fi
	if [ "$(id -u)" -ne 0 ]; then
		echo "# skipped the veth sweep: it needs root (ip netns, ethtool -K)"
		return
	fi
	for p in ip ethtool; do
		if ! command -v "$p" >/dev/null; then
			echo "# skipped the veth sweep: $p not installed (apt-get install iproute2 ethtool)"
			return
		fi
	done
	run_sweep 0 "--veth: tcp to tbench_srv across a veth pair" --veth --backends tcp --clients 1,2 --reps 1 \
		-t 1 --warmup 0 --offload off --out "$out"
	grep -q 'using .*/tbench_srv (' "$TL_TMP/err" && ok "says which tbench_srv" || not_ok "says which tbench_srv"
	[ "$(cols "$out/runs.csv" "status,dev,tso$R,gso$R" | sort -u)" = $'ok\tveth\toff\toff' ] &&
		ok "2 runs ok, offloads off on the veth pair" || { not_ok "veth runs"; cat "$out/runs.csv"; }
	cols "$out/runs.csv" server_user_s,server_system_s,cpu_us_per_mb |
		awk -F'\t' '!($1 >= 0 && $1 != "" && $2 >= 0 && $2 != "" && $3 > 0) { bad = 1 } END { exit bad }' &&
		ok "server CPU measured, CPU per MB" || { not_ok "server CPU"; cat "$out/runs.csv"; }
	check "meta.json: veth, three devices" jq -e '.sweep.mode == "veth" and (.devices | length) == 3' "$out/meta.json"
}

# The knobs for real: placement x mtu x nodelay over tcp and pipe in the
# loopback mode, a congestion control the kernel refuses, and (as root)
# mtu, rate and placement on the veth pair; each checked in runs.csv, in
# the JSON's read-backs, and for what it leaves behind.
knobs_run() {
	local out="$TL_TMP/knobs" runs cpu0 p
	local help
	help="$("$TBENCH" --help 2>&1)" || true
	for p in --cpus --mtu --family; do
		if ! grep -q -- "$p" <<<"$help"; then
			echo "# skipped the knob sweeps: this tbench has no $p"
			return
		fi
	done
	if [ "$NET" != tcp ]; then
		echo "# skipped the knob sweeps: this tbench has no tcp backend"
		return
	fi
	cpu0="$(sed -n 's/^Cpus_allowed_list:[[:space:]]*\([0-9]*\).*/\1/p' /proc/self/status)"
	run_sweep 0 "--vary placement=same,free --vary mtu=1500,65536 --vary nodelay=off over tcp and pipe" \
		--backends tcp,pipe --clients 1 --reps 1 -t 1 --warmup 0 --offload on \
		--vary placement=same,free --vary mtu=1500,65536 --vary nodelay=off --out "$out"
	runs="$out/runs.csv"
	[ "$(tail -n +2 "$runs" | wc -l)" -eq 6 ] && ok "6 runs: tcp 2 x 2, pipe 2 (mtu, nodelay n/a)" ||
		{ not_ok "6 runs"; cat "$runs"; return; }
	[ "$(cols "$runs" status | sort -u)" = ok ] && ok "every run ok" || { not_ok "every run ok"; cols "$runs" backend,status,error; }
	if [ -n "$KNOB_COLS" ]; then
		[ "$(cols "$runs" backend,mtu,placement,nodelay,cc | sort | paste -sd' ')" = \
			"$(printf 'pipe\tn/a\tfree\tn/a\t- pipe\tn/a\tsame\tn/a\t- tcp\t1500\tfree\toff\t- tcp\t1500\tsame\toff\t- tcp\t65536\tfree\toff\t- tcp\t65536\tsame\toff\t-')" ] &&
			ok "columns mtu, placement, nodelay as asked; n/a for pipe; cc - (not varied)" ||
			not_ok "knob columns: $(cols "$runs" backend,mtu,placement,nodelay,cc)"
		[ "$(cols "$out/summary.csv" backend,mtu,placement | wc -l)" -eq 6 ] && ok "summary: a point per knob combination" ||
			not_ok "summary points: $(cols "$out/summary.csv" backend,mtu,placement)"
	else
		echo "# skipped the knob columns: this tbench-stats has none (row --knobs)"
	fi
	# Read back by tbench, kept in each run's JSON.
	local f bad=0
	for f in "$out"/runs/tcp_*.json; do
		local mtu place
		mtu="$(basename "$f" | sed 's/.*_mtu-\([0-9]*\)_.*/\1/')"
		place="$(basename "$f" | sed 's/.*_placement-\([a-z]*\)_.*/\1/')"
		jq -e --argjson mtu "$mtu" '.netns.mtu == $mtu and .socket.nodelay == false' "$f" >/dev/null || bad=1
		if [ "$place" = same ]; then
			jq -e --arg c "$cpu0" '.settings.cpus == $c and .settings.server_cpus == $c' "$f" >/dev/null || bad=1
		else
			jq -e '.settings.cpus == null and .settings.server_cpus == null' "$f" >/dev/null || bad=1
		fi
	done
	[ "$bad" -eq 0 ] && ok "tcp JSON: netns.mtu, socket.nodelay, settings.cpus read back as asked" ||
		not_ok "tcp read-backs: $(jq -c '[.netns.mtu, .socket, .settings.cpus, .settings.server_cpus]' "$out"/runs/tcp_*.json)"
	jq -e --arg c "$cpu0" '.settings.cpus == $c and .settings.server_cpus == $c' "$out"/runs/pipe_*same*.json >/dev/null &&
		ok "pipe same: clients and servers on CPU $cpu0" || not_ok "pipe placement: $(jq -c .settings "$out"/runs/pipe_*same*.json)"

	# A value the kernel refuses fails its runs with the reason; the sweep goes on.
	local cc
	cc="$(awk '{ print $1 }' /proc/sys/net/ipv4/tcp_available_congestion_control)"
	# Every run done, one failed: exit 3 (man tbench-sweep, EXIT STATUS).
	run_sweep 3 "--vary cc=$cc,nosuch: the sweep goes on" --backends tcp --clients 1 --reps 1 -t 1 --warmup 0 \
		--offload on --vary "cc=$cc,nosuch" --out "$TL_TMP/cc"
	[ "$(cols "$TL_TMP/cc/runs.csv" status --where "cc=$cc")" = ok ] && ok "cc=$cc ok" ||
		not_ok "cc=$cc: $(cat "$TL_TMP/cc/runs.csv")"
	jq -e --arg cc "$cc" '.socket.cc == $cc' "$TL_TMP/cc"/runs/*cc-"$cc"*.json >/dev/null && ok "cc=$cc read back" ||
		not_ok "cc read back: $(jq -c .socket "$TL_TMP/cc"/runs/*.json)"
	grep -q 'nosuch.*available' <(cols "$TL_TMP/cc/runs.csv" status,error | grep '^failed') &&
		ok "cc=nosuch: failed, saying what is available" || not_ok "cc=nosuch: $(cols "$TL_TMP/cc/runs.csv" status,error)"

	# The client model as a knob: each run as asked, read back from its JSON,
	# a point of each in the summary; resumed, nothing left to run.
	run_sweep 0 "--vary model=processes,threads" --backends pipe,tcp --clients 2 --reps 1 -t 1 --warmup 0 \
		--offload on --vary model=processes,threads --out "$TL_TMP/model"
	[ "$(cols "$TL_TMP/model/runs.csv" backend,model,status | sort | paste -sd' ')" = \
		"$(printf 'pipe\tprocesses\tok pipe\tthreads\tok tcp\tprocesses\tok tcp\tthreads\tok')" ] &&
		ok "a run per backend and model, each ok" || not_ok "model runs: $(cols "$TL_TMP/model/runs.csv" backend,model,status,error)"
	jq -e '.settings.model == "threads"' "$TL_TMP/model"/runs/pipe_*model-threads*.json >/dev/null &&
		jq -e '.settings.model == "processes"' "$TL_TMP/model"/runs/tcp_*model-processes*.json >/dev/null &&
		ok "the model read back from the runs' JSON" || not_ok "model read-back: $(jq -c .settings.model "$TL_TMP/model"/runs/*.json)"
	[ "$(cols "$TL_TMP/model/summary.csv" backend,model | wc -l)" -eq 4 ] && ok "summary: a point per model" ||
		not_ok "model points: $(cols "$TL_TMP/model/summary.csv" backend,model)"
	check "meta.json: both models" jq -e '.sweep.client_model == "processes,threads"' "$TL_TMP/model/meta.json"
	expect_exit 0 "--resume --plan of the model sweep" "$SWEEP" --resume --out "$TL_TMP/model" --plan
	grep -q '^0 of 4 runs to do' "$TL_TMP/out" && ok "resumed: every model's run done" ||
		not_ok "model resume: $(cat "$TL_TMP/out" "$TL_TMP/err" | head -n 5)"
}

# --veth: mtu and rate on the pair (one MTU above veth's maximum, which the
# kernel refuses), placement with tbench_srv --cpus, IPv6 across the pair.
knobs_veth() {
	local out="$TL_TMP/kveth" p help
	help="$("$TBENCH" --help 2>&1)" || true
	if [ "$NET" != tcp ] || [ "$(id -u)" -ne 0 ] || ! grep -q -- --cpus <<<"$help"; then
		echo "# skipped the veth knob sweep: it needs root, tcp and tbench --cpus"
		return
	fi
	for p in ip ethtool tc; do
		command -v "$p" >/dev/null || { echo "# skipped the veth knob sweep: no $p"; return; }
	done
	# mtu=65536 fails its run (veth's maximum is 65535): exit 3, every run done, one failed.
	run_sweep 3 "--veth --vary mtu=9000,65536 --vary rate=100mbit --vary placement=split --vary family=ipv6" \
		--veth --backends tcp --clients 1 --reps 1 -t 1 --warmup 0 --offload off --vary mtu=9000,65536 \
		--vary rate=100mbit --vary placement=split --vary family=ipv6 --out "$out"
	local ok9000 failed
	ok9000="$(cols "$out/runs.csv" status,mb_per_sec --where mtu=9000)"
	# 100 mbit/s is 12.5 MB/s each way (a tbf on both ends), plus the 128 KB burst tbf may let
	# through at once; MB/sec counts reads and writes, so the payload stays under 2 x 12.7 MB/s
	# (a ceiling, not a timing; unshaped, the pair carries far more; a stalled run may be 0).
	awk -F'\t' '$1 == "ok" && $2 < 25.4 { good = 1 } END { exit !good }' <<<"$ok9000" &&
		ok "mtu=9000 rate=100mbit: ok, under 25.4 MB/s both ways ($(cut -f2 <<<"$ok9000"))" || not_ok "rate: $ok9000"
	grep -q 'mtu of .*veth-cli: 9000' "$out"/runs/*mtu-9000*.log && grep -q 'rate of .*veth-srv: tbf 12500000 bytes/s' \
		"$out"/runs/*mtu-9000*.log && ok "MTU and tbf read back on the pair" || not_ok "read-backs: $(cat "$out"/runs/*mtu-9000*.log | head)"
	failed="$(cols "$out/runs.csv" status,error --where mtu=65536)"
	[[ "$failed" == failed*"mtu=65536"*"reads back MTU 1500"* ]] && ok "mtu=65536 refused by veth: failed, saying so" ||
		not_ok "mtu=65536: $failed"
	grep -q -- '--cpus 1' "$out/runs/tbench_srv.log" && ok "tbench_srv started with --cpus (split)" ||
		not_ok "tbench_srv: $(cat "$out/runs/tbench_srv.log")"
	jq -e '.settings.family == "ipv6" and .socket.family == "ipv6" and (.settings.server | test(":"))' \
		"$out"/runs/*mtu-9000*.json >/dev/null && ok "family=ipv6: to the pair's IPv6 end, read back" ||
		not_ok "ipv6: $(jq -c '[.settings.family, .settings.server, .socket]' "$out"/runs/*mtu-9000*.json)"
}

# --dev: the real-device mode, on a veth end that stands in for a real
# device. All of it runs in a network and mount namespace of its own (with
# its own /run/netns), so that the host and its devices are not touched:
# there, dv0's peer is in namespace devsrv with a tbench_srv, and the sweep
# sets dv0's offloads, MTU and a tbf, restoring all of them when it ends.
knobs_dev() {
	local p
	if [ "$NET" != tcp ] || [ "$(id -u)" -ne 0 ]; then
		echo "# skipped the --dev knob sweep: it needs root and tcp"
		return
	fi
	for p in ip ethtool tc unshare; do
		command -v "$p" >/dev/null || { echo "# skipped the --dev knob sweep: no $p"; return; }
	done
	local srv
	srv="$(dirname "$TBENCH")/tbench_srv"
	# shellcheck disable=SC2016  # expanded by the inner shell
	unshare --net --mount --propagation private env SWEEP="$SWEEP" SRV="$srv" T="$TL_TMP" bash -c '
		set -e
		mkdir -p /run/netns && mount -t tmpfs none /run/netns
		ip link set lo up
		ip netns add devsrv
		ip link add dv0 type veth peer name dv1 netns devsrv
		ip addr add 10.201.0.2/30 dev dv0 && ip link set dv0 up
		ip -n devsrv addr add 10.201.0.1/30 dev dv1 && ip -n devsrv link set dv1 up
		ip netns exec devsrv "$SRV" --listen 10.201.0.1 -q & srv=$!
		# a minute at most (a loaded machine is slow), at once if it died
		listening=""
		for _ in $(seq 600); do
			if [ -n "$(ip netns exec devsrv ss -Hltn "sport = :7003")" ]; then listening=1; break; fi
			kill -0 "$srv" 2>/dev/null || break
			sleep 0.1
		done
		if [ -z "$listening" ]; then
			echo "tbench_srv in namespace devsrv is not listening on 10.201.0.1:7003" >"$T/dev.setup"
			kill "$srv" 2>/dev/null || true; wait "$srv" || true
			ip netns del devsrv
			exit 1
		fi
		{ ip -o link show dev dv0 | sed "s/.* mtu \([0-9]*\) .*/\1/"; tc qdisc show dev dv0; ethtool -k dv0; } >"$T/dev.before"
		rc=0
		"$SWEEP" --dev dv0 --server 10.201.0.1 --backends tcp,pipe --clients 1 --reps 1 -t 1 --warmup 0 \
			--offload off --vary mtu=9000 --vary rate=1gbit --out "$T/dev" >"$T/dev.out" 2>"$T/dev.err" || rc=$?
		echo "$rc" >"$T/dev.rc"
		{ ip -o link show dev dv0 | sed "s/.* mtu \([0-9]*\) .*/\1/"; tc qdisc show dev dv0; ethtool -k dv0; } >"$T/dev.after"
		# Ctrl-C in the middle of a run with the knobs set (job control and
		# the default SIGINT, whatever this test inherited: see sweep_bg).
		set -m
		env --default-signal=INT "$SWEEP" --dev dv0 --server 10.201.0.1 --backends tcp --clients 1 --reps 1 -t 60 --warmup 0 \
			--offload off --vary mtu=9000 --vary rate=1gbit --out "$T/devint" >"$T/devint.out" 2>&1 & pid=$!
		set +m
		for _ in $(seq 1200); do grep -qs "rate of host:dv0" "$T"/devint/runs/*.log.part && break; sleep 0.1; done
		sleep 0.5
		ip -o link show dev dv0 | sed "s/.* mtu \([0-9]*\) .*/\1/" >"$T/devint.during"
		kill -INT "$pid"
		rc=0; wait "$pid" || rc=$?
		echo "$rc" >"$T/devint.rc"
		{ ip -o link show dev dv0 | sed "s/.* mtu \([0-9]*\) .*/\1/"; tc qdisc show dev dv0; ethtool -k dv0; } >"$T/devint.after"
		kill "$srv"; wait "$srv" || true
		ip netns del devsrv
	' || { not_ok "--dev: the namespace set-up failed$(sed 's/^/: /' "$TL_TMP/dev.setup" 2>/dev/null)"; return; }
	[ "$(cat "$TL_TMP/dev.rc")" = 0 ] && ok "--dev dv0 --vary mtu=9000 --vary rate=1gbit (exit 0)" ||
		{ not_ok "--dev sweep: exit $(cat "$TL_TMP/dev.rc")"; sed -n '1,5s/^/    /p' "$TL_TMP/dev.err"; }
	# Sorted: within a client count the sweep runs the backends in a shuffled order.
	[ "$(cols "$TL_TMP/dev/runs.csv" backend,status,mtu,rate,dev | sort | paste -sd' ')" = \
		"$(printf 'pipe\tok\tn/a\tn/a\t tcp\tok\t9000\t1gbit\tdv0')" ] && ok "--dev: tcp on dv0 with its knobs, pipe n/a" ||
		not_ok "--dev rows: $(cols "$TL_TMP/dev/runs.csv" backend,status,mtu,rate,dev,error)"
	grep -q 'mtu of host:dv0: 9000' "$TL_TMP"/dev/runs/tcp_*.log && grep -q 'rate of host:dv0: tbf 125000000 bytes/s' \
		"$TL_TMP"/dev/runs/tcp_*.log && ok "--dev: MTU and tbf read back on dv0" || not_ok "--dev read-backs"
	diff -q "$TL_TMP/dev.before" "$TL_TMP/dev.after" >/dev/null && ok "--dev: dv0's MTU, qdisc and offloads restored" ||
		not_ok "--dev restore: $(diff "$TL_TMP/dev.before" "$TL_TMP/dev.after" | head -6)"
	[ "$(cat "$TL_TMP/devint.during")" = 9000 ] && [ "$(cat "$TL_TMP/devint.rc")" = 130 ] &&
		ok "--dev: Ctrl-C during a run with MTU 9000 set: exit 130" ||
		not_ok "--dev Ctrl-C: MTU $(cat "$TL_TMP/devint.during"), exit $(cat "$TL_TMP/devint.rc")"
	diff -q "$TL_TMP/dev.before" "$TL_TMP/devint.after" >/dev/null && ok "--dev: restored after Ctrl-C too" ||
		not_ok "--dev restore after Ctrl-C: $(diff "$TL_TMP/dev.before" "$TL_TMP/devint.after" | head -6)"
}

# Nothing the sweeps started still runs, no qdisc of theirs is left.
nothing_left() {
	[ "$(tc qdisc show 2>/dev/null)" = "$qdiscs_before" ] && ok "host qdiscs unchanged" ||
		not_ok "host qdiscs changed: $(tc qdisc show)"
	local left
	left="$(tl_left_running tbench tbench_srv)"
	[ -z "$left" ] && ok "no tbench or tbench_srv of this test's sweeps left running" || not_ok "left running: $left"
}

if [ "$(id -u)" -eq 0 ]; then NETNS_WANT=private; else NETNS_WANT=private+userns; fi
sweep_run
host_untouched
resume
host_untouched
signals
host_untouched
veth
host_untouched
knobs_run
knobs_veth
knobs_dev
host_untouched
nothing_left
tl_done
