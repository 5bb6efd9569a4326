#!/usr/bin/env bash
# scale-split.sh: where CPU per operation goes as clients outnumber CPUs.
# See --help.
set -euo pipefail
# shellcheck source=scripts/lib/quiet.sh
. "$(dirname "$(readlink -f "$0")")/../scripts/lib/quiet.sh"
tb_bench_lock bench/scale-split.sh "$@"   # never beside the test suite or another benchmark

prog=${0##*/}
command_line="bench/$prog $*"
PROG=$prog   # for common.sh's die and usage_error
# shellcheck source=scripts/lib/common.sh
. "$(dirname "$(readlink -f "$0")")/../scripts/lib/common.sh"
# shellcheck source=bench/report-lib.sh
. "$(dirname "$(readlink -f "$0")")/report-lib.sh"

clients=2,8,64,512
backends=pipe,tcp
secs=10
warmup=2
loadfile=/usr/share/dbench/client.txt
tbench=./tbench
limit=300
extra=()
out=
report_only=0

usage() {
	cat <<EOF
Usage: $prog [OPTIONS] -o PREFIX [-- TBENCH-OPTIONS]

Runs \`tbench -b B N --trace\` once per backend and client count (the
user's defaults otherwise: client processes, own servers) and splits each
run's CPU per operation into the clients' work (user, system calls), the
servers', the harness's (the driver's thread: its polls, ticks, watchdog,
reaping), the softirqs and what is left of the CPUs' capacity; beside it
the scheduler's figures per operation: switches, involuntary ones,
migrations, and the time clients and servers waited runnable.

Options:
  -c, --clients LIST   client counts (default $clients)
  -b, --backends LIST  backends (default $backends)
  -t, --secs S         execute seconds per run (default $secs)
  -w, --warmup S       warm-up seconds (default $warmup)
  -l, --loadfile FILE  NBENCH loadfile (default $loadfile, else ours)
      --limit S        a run still going after S seconds is stopped (default $limit)
      --tbench PATH    our tbench (default ./tbench)
  -o, --out PREFIX     write PREFIX.csv and PREFIX.md (then PREFIX.notes.md
                       when it exists: the reading)
      --report-only    only rewrite PREFIX.md from PREFIX.csv
  -h, --help           this text

Every figure is the run's own (--json: cost.per_operation, trace.per_operation,
result); one run a cell. The capacity per operation is the CPUs' time over the
operations: online CPUs x execute seconds / operations.
EOF
}

while (($#)); do
	case $1 in
	-c | --clients) clients=${2:?}; shift ;;
	-b | --backends) backends=${2:?}; shift ;;
	-t | --secs) secs=${2:?}; shift ;;
	-w | --warmup) warmup=${2:?}; shift ;;
	-l | --loadfile) loadfile=${2:?}; shift ;;
	--limit) limit=${2:?}; shift ;;
	--tbench) tbench=${2:?}; shift ;;
	-o | --out) out=${2:?}; shift ;;
	--report-only) report_only=1 ;;
	-h | --help) usage; exit 0 ;;
	--) shift; extra=("$@"); break ;;
	*) usage_error "unknown argument '$1'" ;;
	esac
	shift
done
[[ -n $out ]] || usage_error "-o PREFIX is required (e.g. -o ../results/bench-scale-split)"
for v in "$secs" "$warmup" "$limit"; do
	is_uint "$v" || usage_error "--secs, --warmup and --limit take whole seconds, not '$v'"
done
IFS=, read -r -a client_list <<<"$clients"
IFS=, read -r -a backend_list <<<"$backends"
for n in "${client_list[@]}"; do
	if ! is_uint "$n" || ((n < 1)); then usage_error "--clients: whole numbers >= 1, not '$n'"; fi
done
[[ -r $loadfile ]] || loadfile=$(dirname "$(readlink -f "$0")")/../loadfiles/default.txt
csv=$out.csv
header=backend,clients,rc,mb_s,capacity_us,clients_user_us,clients_sys_us,servers_user_us,servers_sys_us,harness_us,softirq_us,switches,involuntary,migrations,clients_runq_us,servers_runq_us,disturbed,error

# One run: a CSV row of $header.
measure() {
	local b=$1 n=$2 rc=0 err tmp
	tmp=$(mktemp -d)
	timeout --signal=INT --kill-after=60 "$limit" "$tbench" -b "$b" -t "$secs" --warmup "$warmup" \
		-c "$loadfile" --trace --json "$tmp/run.json" "${extra[@]}" "$n" >/dev/null 2>"$tmp/err" || rc=$?
	err=$(bench_run_error "$tmp/err" "$rc" "$limit" 160)
	jq -r --arg b "$b" --arg n "$n" --arg rc "$rc" --arg err "$err" --argjson cpus "$(nproc)" '
		def num: if . == null then "" else (. * 1000 | round / 1000 | tostring) end;
		.cost.per_operation as $c | (.trace.per_operation // {}) as $t |
		[$b, $n, $rc, (.result.mb_per_sec | num),
		 (if .result.ops > 0 then $cpus * .result.execute_s * 1e6 / .result.ops else null end | num),
		 ($c.clients.cpu_user_us | num), ($c.clients.cpu_system_us | num),
		 ($c.servers.cpu_user_us | num), ($c.servers.cpu_system_us | num),
		 (if $c.harness then $c.harness.cpu_user_us + $c.harness.cpu_system_us else null end | num),
		 (if $t.softirq_us then ($t.softirq_us | add) else null end | num),
		 ($c.context_switches | num),
		 ($c.clients.involuntary_switches + $c.servers.involuntary_switches | num),
		 ($c.cpu_migrations | num),
		 ($t.clients.run_queue_us | num), ($t.servers.run_queue_us | num),
		 (.noise.disturbed | tostring), $err] | join(",")' "$tmp/run.json" 2>/dev/null ||
		echo "$b,$n,$rc,,,,,,,,,,,,,,,${err:-no --json written}"
	rm -rf "$tmp"
}

report() {
	{
		printf '# CPU per operation as clients outnumber CPUs: where it goes\n\n'
		# shellcheck disable=SC2016  # the backticks are Markdown
		printf 'On %s (%s CPUs, Linux %s), %s; in the build directory, under the quiet-machine lock: `%s`. One run a cell, %s s after %s s of warm-up; loadfile %s.\n\n' \
			"$(uname -n)" "$(nproc)" "$(uname -r)" "$(date -u -r "$csv" '+%Y-%m-%d %H:%M UTC')" \
			"$command_line" "$secs" "$warmup" "$loadfile"
		tb_noise_md "$out.noise" 2>/dev/null || true
		printf '\nµs per operation. Capacity: the CPUs'"'"' time over the operations. CPU: user + system of the clients, servers and the harness (the driver'"'"'s thread), from /proc; softirq: every CPU'"'"'s, from --trace (run in a task, it is also in that task'"'"'s system time); left: capacity less the three groups'"'"' CPU (idle, other tasks, softirq outside the run'"'"'s tasks). Switches and migrations per operation; run queue: the time a client or server waited runnable, per operation (not CPU).\n\n'
		printf '| backend | clients | MB/s | capacity | clients user | clients sys | servers user | servers sys | harness | softirq | left | switches | invol. | migrations | run queue, clients | servers | disturbed | error |\n'
		printf '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n'
		awk -F, 'function f(v, fmt) { return v == "" ? "–" : sprintf(fmt, v) }
			NR > 1 { left = ($5 == "" || $6 == "") ? "" : $5 - $6 - $7 - $8 - $9 - $10
				printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
				$1, $2, f($4, "%.1f"), f($5, "%.2f"), f($6, "%.2f"), f($7, "%.2f"), f($8, "%.2f"),
				f($9, "%.2f"), f($10, "%.3f"), f($11, "%.2f"), f(left, "%.2f"), f($12, "%.2f"),
				f($13, "%.3f"), f($14, "%.4f"), f($15, "%.1f"), f($16, "%.1f"), $17, $18 }' "$csv"
		[[ ! -r $out.notes.md ]] || { printf '\n'; cat "$out.notes.md"; }
	} >"$out.md.tmp" && mv -f "$out.md.tmp" "$out.md"
}

if ((report_only)); then
	[[ -r $csv ]] || die "--report-only: $csv is missing"
	report
	exit 0
fi
command -v jq >/dev/null || die "jq is needed (apt-get install jq)"
[[ -x $tbench ]] || die "$tbench missing: run make in the build directory, or give --tbench"
tb_noise_begin bench/scale-split.sh || exit 1
echo "$header" >"$csv"
for n in "${client_list[@]}"; do
	for b in "${backend_list[@]}"; do
		measure "$b" "$n" | tee -a "$csv"
	done
done
tb_noise_end "$out.noise"
report
echo "$prog: wrote $csv and $out.md"
