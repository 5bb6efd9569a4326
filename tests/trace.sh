#!/bin/bash
# shellcheck disable=SC2016  # jq programs are single-quoted on purpose
# --trace: the BPF block after the Throughput line, its time adding up to
# the phase's, the system calls a backend is known to make (counted with
# --trace-syscalls, sampled without), user time against the kernel's own
# accounting, the on-CPU time against /proc's task clock (--json's cost), more softirq work with
# TSO off than on, wake-ups across CPUs only where the client and server
# are pinned apart, run-queue wait beside a CPU hog, and an unprivileged
# user refused before the run. Root only; skipped where BPF is not there.
set -euo pipefail
# shellcheck source=tests/testlib.sh
. "${top_srcdir:-.}/tests/testlib.sh"
command -v jq >/dev/null || { echo "SKIP: jq not installed"; exit 77; }
command -v taskset >/dev/null || { echo "SKIP: taskset (util-linux) not installed"; exit 77; }
[ "$(id -u)" -eq 0 ] || { echo "SKIP: --trace loads BPF programs: root only"; exit 77; }

if ! "$TBENCH" --trace -b nop 1 -t 1 -q >/dev/null 2>"$TL_TMP/err"; then
	echo "SKIP: --trace refused here: $(head -1 "$TL_TMP/err")"
	exit 77
fi

# jq_ok WHAT FILTER FILE [SHOW]: SHOW, a filter of FILE, is printed when it fails.
jq_ok() {
	if jq -e "$2" "$3" >/dev/null; then ok "$1"; else not_ok "$1${4:+: $(jq -c "$4" "$3")}"; fi
}

expect_exit 0 "--trace -b pipe 2 -t 3" "$TBENCH" --trace -b pipe 2 -t 3 --json "$TL_TMP/pipe.json"
check "the block after the Throughput line" \
	awk '/^Throughput/ { t = 1 } /^Trace of the execute phase/ && t { c = 1 } END { exit !c }' "$TL_TMP/out"
check "it says it reconciles" grep -q 'reconciled .* within 5%' "$TL_TMP/out"
jq_ok "on-CPU + run queue + blocked within 5% of wall time x tasks" \
	'.trace.reconciled and (.trace.reconciled_ratio - 1 | fabs) <= 0.05' "$TL_TMP/pipe.json"
# The programs' own time: more than nothing (they timed a sample of their runs), less
# than the tasks' whole on-CPU time per operation.
jq_ok "the probes' own run time per operation, a part of the on-CPU time" \
	'.trace.probe_cpu_us > 0 and .trace.probe_cpu_us < ([.trace.per_operation.clients,
	  .trace.per_operation.servers | .on_cpu_us] | add)' "$TL_TMP/pipe.json" \
	'.trace.probe_cpu_us'
check "and the block says it" grep -q '^  probes   the BPF programs ran' "$TL_TMP/out"
jq_ok "clients and servers traced: two tasks each" \
	'.trace.per_operation | .clients.tasks == 2 and .servers.tasks == 2' "$TL_TMP/pipe.json"
# Without --trace-syscalls the split is sampled: no counts, the time of
# the calls a pipe makes, and a line that says so.
jq_ok "sampled: not followed, no counts, the samples counted" \
	'(.trace.syscalls_followed | not) and ([.trace.per_operation.clients.syscalls[].count] | all(. == null))
	 and .trace.per_operation.clients.samples > 1000' "$TL_TMP/pipe.json" '.trace.per_operation.clients.samples'
jq_ok "sampled: most of the clients' system call time in read and write" \
	'.trace.per_operation.clients | ([.syscalls[] | select(.name // "" | test("^(read|write)v?$")) | .us] | add) > 0.8 * .syscall_us' \
	"$TL_TMP/pipe.json" '.trace.per_operation.clients.syscalls'
check "and the block says it is sampled" grep -q 'system calls (us, sampled): ' "$TL_TMP/out"

# user_share WHAT FILE: the run's user time over its on-CPU time, as the
# trace has it and as the kernel's own accounting (/proc, --json's cost)
# has it, 5 points apart at most. The kernel's is sampled too, at each
# tick; a split from the system calls' tracepoints alone, which counted
# the way back to user space after a call as user time, read 3-6 times
# the kernel's.
user_share() {
	jq_ok "$1: user time share within 5 points of the kernel's accounting" \
		'def tr: [.trace.per_operation.clients, .trace.per_operation.servers] | (map(.user_us) | add) / (map(.user_us + .syscall_us) | add);
		 def pr: [.cost.per_operation.clients, .cost.per_operation.servers] | (map(.cpu_user_us) | add) / (map(.cpu_user_us + .cpu_system_us) | add);
		 (tr - pr | fabs) < 0.05' "$2" '{trace: ([.trace.per_operation.clients, .trace.per_operation.servers] | map({user_us, syscall_us})), proc: ([.cost.per_operation.clients, .cost.per_operation.servers] | map({cpu_user_us, cpu_system_us}))}'
}
user_share "sampled" "$TL_TMP/pipe.json"

# A pipe exchange: the request written and read, the reply written and read.
expect_exit 0 "--trace-syscalls -b pipe 2 -t 3" "$TBENCH" --trace-syscalls -b pipe 2 -t 3 -q --json "$TL_TMP/pipes.json"
jq_ok "--trace-syscalls: followed" '.trace.syscalls_followed and .trace.reconciled' "$TL_TMP/pipes.json"
for side in clients servers; do
	jq_ok "pipe: about one write and one or two reads per operation ($side)" \
		"[.trace.per_operation.$side.syscalls[] | select(.name == \"write\" or .name == \"writev\") | .count] | add | . > 0.9 and . < 1.1" \
		"$TL_TMP/pipes.json"
	jq_ok "pipe: reads ($side)" \
		"[.trace.per_operation.$side.syscalls[] | select(.name == \"read\" or .name == \"readv\") | .count] | add | . > 0.9 and . < 2.1" \
		"$TL_TMP/pipes.json"
done
user_share "--trace-syscalls" "$TL_TMP/pipes.json"
jq_ok "a client wakes about once an operation" \
	'.trace.per_operation.clients.wakeups > 0.5 and .trace.per_operation.clients.wakeups < 1.5' "$TL_TMP/pipe.json"
jq_ok "the wake-up latency histogram counts" \
	'[.trace.per_operation.clients.wakeup_latency.buckets[][2]] | add > 0' "$TL_TMP/pipe.json"
# The task clock summed from /proc over the same tasks (cost's, in --json).
# On a disturbed machine /proc's first sample can come seconds late: the
# two then cover different spans, and comparing them says nothing.
if jq -e '.noise.disturbed' "$TL_TMP/pipe.json" >/dev/null; then
	echo "# run disturbed ($(jq -c .noise.reasons "$TL_TMP/pipe.json")): task clock comparison left out"
else
	jq_ok "traced on-CPU time within 5% of the run's /proc task clock" \
		'(.trace.per_operation.clients.on_cpu_us + .trace.per_operation.servers.on_cpu_us)
		 / .cost.per_operation.task_clock_us - 1 | fabs < 0.05' "$TL_TMP/pipe.json"
fi

expect_exit 0 "--trace -b nop 1 -t 2" "$TBENCH" --trace -b nop 1 -t 2 -q --json "$TL_TMP/nop.json"
jq_ok "nop: no time in send, receive, read or write calls" \
	'[.trace.per_operation.clients.syscalls[] | select(.name // "" | test("^(send|recv|read|write)")) | .us] | add // 0 | . < 0.01' \
	"$TL_TMP/nop.json" '.trace.per_operation.clients.syscalls'
jq_ok "nop: user space nearly all its on-CPU time" \
	'.trace.per_operation.clients | .user_us > 0.9 * .on_cpu_us' "$TL_TMP/nop.json" '.trace.per_operation.clients'
jq_ok "nop: no server, and reconciled" \
	'.trace.per_operation.servers.tasks == 0 and .trace.reconciled' "$TL_TMP/nop.json"

expect_exit 0 "--trace -b tcp 4 --threads -t 2" "$TBENCH" --trace -b tcp 4 --threads -t 2 -q \
	--json "$TL_TMP/tcp.json"
jq_ok "tcp, threads: reconciled, recvfrom sampled, NET_RX softirq seen" \
	'.trace.reconciled and ([.trace.per_operation.clients.syscalls[] | select(.name == "recvfrom" and .us > 0)] | length == 1)
	 and .trace.per_operation.softirq_us.net_rx > 0' "$TL_TMP/tcp.json"

# at_least WHAT A B MIN: passes when B is at least MIN times A (and above 0):
# the checks below compare runs, not absolute figures of this machine.
at_least() {
	if awk -v a="$2" -v b="$3" -v m="$4" 'BEGIN { exit !(b > 0 && b >= m * a) }'; then
		ok "$1 ($3 against $2, at least ${4}x)"
	else
		not_ok "$1: $3 against $2, want at least ${4}x"
	fi
}

# Offloads, in a namespace of the run's own: at a 1500-byte MTU a 64 KiB
# write is some 45 segments. With TSO off each goes up the receive path in
# the loopback's NET_RX softirq; with it on, lo takes the whole write as one.
# The softirq time compared is the one run in the run's own tasks: the
# every-CPU total also holds other programs' traffic (tests run in parallel).
for tso in on off; do
	expect_exit 0 "tcp --netns --mtu 1500 --tso $tso, 64 KiB writes" "$TBENCH" --trace -b tcp 1 -t 2 -q \
		--netns --mtu 1500 --tso "$tso" -c "$SRCDIR/tests/data/large-writes.txt" --json "$TL_TMP/tso-$tso.json"
done
jq_ok "TSO off read back" '.netns.tso == false' "$TL_TMP/tso-off.json" .netns
jq_ok "TSO on read back" '.netns.tso == true' "$TL_TMP/tso-on.json" .netns
net_softirq='.trace.per_operation | .clients.softirq_us + .servers.softirq_us'
at_least "TSO off: more softirq per operation in the run's tasks than on" \
	"$(jq "$net_softirq" "$TL_TMP/tso-on.json")" "$(jq "$net_softirq" "$TL_TMP/tso-off.json")" 1.3

# Placement, with a pipe's client and server pinned: on one CPU no wake-up
# crosses; on two, nearly every one does (the waker's CPU against the one
# the wakee is put on).
mapfile -t CPUS < <(tl_allowed_cpus)
cpu0="${CPUS[0]}"
expect_exit 0 "pipe, client and server on CPU $cpu0" "$TBENCH" --trace -b pipe 1 -t 2 -q \
	--cpus "$cpu0" --server-cpus "$cpu0" --json "$TL_TMP/same.json"
jq_ok "one CPU: the client woken, no wake-up across CPUs" \
	'.trace.per_operation.clients | .wakeups > 0.5 and .wakeups_cross_cpu < 0.05 * .wakeups' "$TL_TMP/same.json" \
	'.trace.per_operation.clients | { wakeups, wakeups_cross_cpu }'
if [ "${#CPUS[@]}" -ge 2 ]; then
	expect_exit 0 "pipe, client on CPU $cpu0, server on ${CPUS[1]}" "$TBENCH" --trace -b pipe 1 -t 2 -q \
		--cpus "$cpu0" --server-cpus "${CPUS[1]}" --json "$TL_TMP/split.json"
	for side in clients servers; do
		jq_ok "two CPUs: nearly every wake-up across CPUs ($side)" \
			".trace.per_operation.$side | .wakeups > 0.5 and .wakeups_cross_cpu > 0.9 * .wakeups" "$TL_TMP/split.json" \
			".trace.per_operation.$side | { wakeups, wakeups_cross_cpu }"
	done
else
	echo "# one CPU allowed: the check across CPUs left out"
fi

# Busy loops on the run's CPU: the run's tasks wait for them in the run
# queue, an idle run's (same.json, the same pinning) hardly at all. Three,
# pinned there: on a machine already busy (make check -j) the idle run
# waits too, and the other tasks then move to the CPUs the loops leave.
HOGS=()
# shellcheck disable=SC2317  # called by the EXIT trap
stop_hog() {
	[ "${#HOGS[@]}" -eq 0 ] || kill "${HOGS[@]}" 2>/dev/null || true
	[ "${#HOGS[@]}" -eq 0 ] || wait "${HOGS[@]}" 2>/dev/null || true
	HOGS=()
}
trap 'stop_hog; rm -rf "$TL_TMP"' EXIT
for _ in 1 2 3; do
	taskset -c "$cpu0" bash -c 'while :; do :; done' &
	HOGS+=("$!")
done
expect_exit 0 "pipe on CPU $cpu0 beside three busy loops there" "$TBENCH" --trace -b pipe 1 -t 2 -q \
	--cpus "$cpu0" --server-cpus "$cpu0" --json "$TL_TMP/hog.json"
stop_hog
run_queue='.trace.per_operation | .clients.run_queue_us + .servers.run_queue_us'
at_least "beside CPU hogs: more run-queue wait per operation than idle" \
	"$(jq "$run_queue" "$TL_TMP/same.json")" "$(jq "$run_queue" "$TL_TMP/hog.json")" 1.5

if command -v setpriv >/dev/null; then
	expect_exit 2 "--trace as nobody" setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$TBENCH" --trace -b nop 1 -t 1
	check "says why" grep -q -- "--trace loads BPF programs, which needs root" "$TL_TMP/err"
	check "before the run" [ ! -s "$TL_TMP/out" ]
else
	echo "# setpriv not installed: the unprivileged check left out"
fi
tl_done
