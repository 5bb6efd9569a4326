#!/usr/bin/env bash
# reconnect.sh: `tbench -b tcp --reconnect 1` (a new connection for every
# exchange, timed as Connect) against a bare connect/exchange/close loop of
# the same requests (bench/bench_crr.c), both client processes against our
# tbench_srv (a process per connection) on 127.0.0.1:7003. Every run is in a
# network namespace of its own with a fresh server, so no run inherits
# another's TIME_WAIT sockets. Target: tbench at 0.95 of the bare loop or
# more, in connections per second.
#
# Repetitions interleaved, the order of each pair reversed every other one
# (the target is judged on the median of the pairs' ratios);
# the 1-minute load average is recorded before every run. Writes
# OUT/bench-reconnect.csv (every run) and OUT/bench-reconnect.md (medians,
# ratios, client CPU and switches per connection), then
# OUT/bench-reconnect-notes.md if it exists (the reading). Run as root from
# the build directory (after `make tbench tbench_srv bench/bench_crr`); it
# takes the quiet-machine lock (scripts/lib/quiet.sh). Environment: LOADFILE
# (dbench's client.txt, else ours), CLIENTS (1,2,8,32,64), REPS (5),
# WARMUP (1), SECS (3), OUT (the source tree's results/), TABLE_ONLY (1: the
# table again from the CSV, nothing measured), KEEP (a directory for each
# run's tbench JSON and server log, as CLIENTS-REP-VARIANT.*), TBENCH_STATS
# (the tbench-stats that computes the table; else the one here, in the
# source tree or on PATH).
set -euo pipefail
# shellcheck source=scripts/lib/quiet.sh
. "$(dirname "$(readlink -f "$0")")/../scripts/lib/quiet.sh"
tb_bench_lock bench/reconnect.sh "$@"   # never beside the test suite or another benchmark

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
srcdir=$(dirname "$here")
loadfile=${LOADFILE:-/usr/share/dbench/client.txt}
[[ -r $loadfile ]] || loadfile=$srcdir/loadfiles/default.txt
clients=${CLIENTS:-1,2,8,32,64}
reps=${REPS:-5}
warmup=${WARMUP:-1}
secs=${SECS:-3}
out=${OUT:-$srcdir/results}
csv=$out/bench-reconnect.csv
port=7003

PROG=reconnect.sh   # for common.sh's die and usage_error
# shellcheck source=scripts/lib/common.sh
. "$(dirname "$(readlink -f "$0")")/../scripts/lib/common.sh"
# shellcheck source=bench/report-lib.sh
. "$here/report-lib.sh"

# In a new network namespace: a tbench_srv of its own, then one run of
# VARIANT with N clients; prints "conn_per_sec cpu_us_per_conn switches_per_conn".
# Global, for the trap: the server, and its output, away from the caller's pipe.
srv="" tmp="" tag=""
keep_files() {
	local f
	[[ -n ${KEEP:-} ]] || return 0
	for f in "$tmp"/*; do cp "$f" "$KEEP/$tag.${f##*/}"; done
}
in_netns() {
	local variant=$1 n=$2 i
	tag=$3
	tmp=$(mktemp -d)
	trap 'if [[ -n $srv ]]; then kill "$srv"; wait "$srv" || true; fi; keep_files; rm -rf "$tmp"' EXIT
	ip link set lo up
	./tbench_srv -q --listen 127.0.0.1 --port "$port" >"$tmp/srv.log" 2>&1 &
	srv=$!
	for ((i = 0; ; i++)); do
		ss -Hltn "sport = :$port" | grep -q . && break
		((i < 200)) || die "tbench_srv did not listen within 10 s: $(cat "$tmp/srv.log")"
		sleep 0.05
	done
	case $variant in
	bare)
		./bench/bench_crr "$loadfile" "$n" "$warmup" "$secs" 127.0.0.1 "$port" |
			awk -F, '{ print $4, $5, $6 }' ;;
	tbench)
		./tbench -b tcp --reconnect 1 -q -t "$secs" --warmup "$warmup" -c "$loadfile" \
			--json "$tmp/run.json" "$n" 127.0.0.1 >/dev/null
		jq -r '([.operations[] | select(.name == "Connect") | .count] | add) as $conns |
			.cost.per_operation.clients as $c | ((.cost.operations // 0) / $conns) as $k |
			def per(a; b): if a == null or b == null or $k == 0 then -1 else (a + b) * $k end;
			"\($conns / .result.execute_s) \(per($c.cpu_user_us; $c.cpu_system_us))" +
			" \(per($c.voluntary_switches; $c.involuntary_switches))"' "$tmp/run.json" ;;
	esac
}

# CSV rows clients,rep,variant,conn_per_sec,client_cpu_us_per_conn,client_switches_per_conn,load1
measure() {
	local rep n v pair counts load fig
	IFS=, read -r -a counts <<<"$clients"
	for ((rep = 0; rep < reps; rep++)); do
		for n in "${counts[@]}"; do
			pair=(bare tbench)
			if ((rep % 2)); then pair=(tbench bare); fi
			for v in "${pair[@]}"; do
				load=$(cut -d' ' -f1 /proc/loadavg)
				fig=$(unshare -n "$0" --in-netns "$v" "$n" "$n-$rep-$v") || fig="-1 -1 -1"
				echo "$n,$rep,$v,${fig// /,},$load"
			done
		done
	done
}

# Per client count, from tbench-stats paired: medians of each variant,
# the ratio of the medians and the median of the ratios of each rep's pair
# (run back to back, so under the same load), the target; client CPU and
# switches per connection (runs with cost figures: -1, or 0 in CSVs before
# that, is none); the load's range. A rate of -1: a failed run.
table() {
	local c
	local -A rate=() ratio=() cpu=() sw=() load=()
	local -a runs=(--keys clients --pair-by rep --variant variant)
	bench_paired rate "${runs[@]}" --figure conn_per_sec --positive conn_per_sec --decimals 0 "$csv"
	bench_paired ratio "${runs[@]}" --figure conn_per_sec --positive conn_per_sec --base bare \
		--target 0.95 --decimals 3 "$csv"
	bench_paired cpu "${runs[@]}" --figure client_cpu_us_per_conn \
		--positive conn_per_sec,client_cpu_us_per_conn --decimals 1 "$csv"
	bench_paired sw "${runs[@]}" --figure client_switches_per_conn \
		--positive conn_per_sec,client_cpu_us_per_conn --decimals 2 "$csv"
	bench_paired load --keys clients --figure load1 --positive conn_per_sec --decimals 2 "$csv"
	printf '| clients | bare conn/s | tbench conn/s | tbench/bare | tbench/bare, pairs | target 0.95 | client CPU µs/conn bare, tbench | client switches/conn bare, tbench | load avg (1 min) |\n'
	printf '|---:|---:|---:|---:|---:|:--|---:|---:|---:|\n'
	for c in ${rate[points]}; do
		printf '| %s | %s | %s | %s | %s | %s | %s, %s | %s, %s | %s-%s |\n' "$c" \
			"${rate[$c,bare,median]}" "${rate[$c,tbench,median]}" \
			"${ratio[$c,tbench,of_medians]}" "${ratio[$c,tbench,paired]}" "${ratio[$c,tbench,paired_target]}" \
			"${cpu[$c,bare,median]:-–}" "${cpu[$c,tbench,median]:-–}" \
			"${sw[$c,bare,median]:-–}" "${sw[$c,tbench,median]:-–}" "${load[$c,lowest]}" "${load[$c,highest]}"
	done
}

if [[ ${1:-} == --in-netns ]]; then
	in_netns "$2" "$3" "$4"
	exit
fi
bench_stats_find "$PWD"   # before any run: the table needs it
if [[ ${TABLE_ONLY:-0} != 1 ]]; then
	[[ $(id -u) -eq 0 ]] || die "needs root: every run is in a network namespace of its own (unshare -n)"
	[[ -x ./tbench && -x ./tbench_srv ]] || die "./tbench or ./tbench_srv missing: run make here"
	[[ -x ./bench/bench_crr ]] || die "./bench/bench_crr missing: run 'make bench/bench_crr' here"
	command -v jq >/dev/null || die "needs jq"
	[[ -z ${KEEP:-} ]] || mkdir -p "$KEEP"
fi
mkdir -p "$out"
started=$(date -u '+%Y-%m-%d %H:%M UTC')
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
if [[ ${TABLE_ONLY:-0} == 1 ]]; then
	[[ -r $csv ]] || die "TABLE_ONLY: $csv is missing"
	started="(the CSV's runs ended $(date -u -r "$csv" '+%Y-%m-%d %H:%M UTC'))"
	load_before="(see the CSV)"
else
	tb_noise_begin bench/reconnect.sh || exit 1
	echo 'clients,rep,variant,conn_per_sec,client_cpu_us_per_conn,client_switches_per_conn,load1' >"$csv"
	measure | tee -a "$csv"
	tb_noise_end "$out/bench-reconnect.noise"
fi
{
	printf '# tbench -b tcp --reconnect 1 against a bare connect/exchange/close loop\n\n'
	printf 'Started %s on %s (%s CPUs, %s, Linux %s); loadfile %s; %s reps of %s s after %s s of warm-up, interleaved; client processes; our tbench_srv (a process per connection) on 127.0.0.1:%s, a fresh one in a network namespace of its own for every run. Load average (1, 5, 15 min) at the start: %s; at the end: %s.\n' \
		"$started" "$(uname -n)" "$(nproc)" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')" \
		"$(uname -r)" "$loadfile" "$reps" "$secs" "$warmup" "$port" "$load_before" \
		"$(if [[ ${TABLE_ONLY:-0} == 1 ]]; then echo '(see the CSV)'; else cut -d' ' -f1-3 /proc/loadavg; fi)"
	# shellcheck disable=SC2016  # the backticks are Markdown
	printf '\nCommand, in the build directory, under the quiet-machine lock (scripts/lib/quiet.sh): `env CLIENTS=%s REPS=%s WARMUP=%s SECS=%s ../bench/reconnect.sh`. Medians of the reps; conn/s: connections (each with one exchange) per second of the measured window; client CPU and switches per connection: of the client processes only (tbench: its --json cost figures; bare: getrusage), the server being the same for both.\n\n' \
		"$clients" "$reps" "$warmup" "$secs"
	tb_noise_md "$out/bench-reconnect.noise"
	printf '\n'
	table
} >"$out/bench-reconnect.md"
if [[ -r $out/bench-reconnect-notes.md ]]; then
	printf '\n' >>"$out/bench-reconnect.md"
	cat "$out/bench-reconnect-notes.md" >>"$out/bench-reconnect.md"
fi
cat "$out/bench-reconnect.md"
