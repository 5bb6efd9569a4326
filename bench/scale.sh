#!/usr/bin/env bash
# scale.sh: how the harness's own cost grows with the number of clients,
# and where it stops. See --help.
set -euo pipefail
# shellcheck source=scripts/lib/quiet.sh
. "$(dirname "$(readlink -f "$0")")/../scripts/lib/quiet.sh"
tb_bench_lock bench/scale.sh "$@"   # never beside the test suite or another benchmark

prog=${0##*/}
command_line="bench/$prog $*"
PROG=$prog   # for common.sh's die and usage_error
# shellcheck source=scripts/lib/common.sh
. "$(dirname "$(readlink -f "$0")")/../scripts/lib/common.sh"
# shellcheck source=bench/report-lib.sh
. "$(dirname "$(readlink -f "$0")")/report-lib.sh"

clients=1,10,100,1000,2000,5000,10000
backends=nop,pipe
models=processes,threads
secs=5
warmup=1
loadfile=/usr/share/dbench/client.txt
tbench=./tbench
limit=600
out=
report_only=0

usage() {
	cat <<EOF
Usage: $prog [OPTIONS] -o PREFIX

Runs tbench once per backend, model and client count, largest last, and
writes every run (PREFIX.csv), a table (PREFIX.md, followed by
PREFIX.notes.md when it exists: the hand-written reading) and a plot
(PREFIX.png) of set-up time and harness CPU per operation against clients.

Options:
  -c, --clients LIST   client counts, ascending (default $clients)
  -b, --backends LIST  backends (default $backends): nop is the harness alone
  -m, --models LIST    processes, threads or both (default $models)
  -t, --secs S         execute seconds per run (default $secs)
  -w, --warmup S       warm-up seconds, exactly (default $warmup)
  -l, --loadfile FILE  NBENCH loadfile (default $loadfile, else ours)
      --limit S        a run still going after S seconds is stopped and
                       recorded as such (default $limit)
      --tbench PATH    our tbench (default ./tbench)
  -o, --out PREFIX     write PREFIX.csv, PREFIX.md and PREFIX.png
      --report-only    only rewrite PREFIX.md and PREFIX.png from PREFIX.csv
  -h, --help           this text

Figures per run: exit status; set-up seconds (the clients' start up to their
release, --json's result.setup_s) and the whole wall time; MB/s; CPU µs per
operation of the clients (user + system, the harness and the backend's
client side); memory per client: MemAvailable before the run less its lowest
value while the run went on, over the clients (kernel memory included: task
structures, page tables, pipe and socket buffers); the error, if any.
EOF
}

while (($#)); do
	case $1 in
	-c | --clients) clients=${2:?}; shift ;;
	-b | --backends) backends=${2:?}; shift ;;
	-m | --models) models=${2:?}; shift ;;
	-t | --secs) secs=${2:?}; shift ;;
	-w | --warmup) warmup=${2:?}; shift ;;
	-l | --loadfile) loadfile=${2:?}; shift ;;
	--limit) limit=${2:?}; shift ;;
	--tbench) tbench=${2:?}; shift ;;
	-o | --out) out=${2:?}; shift ;;
	--report-only) report_only=1 ;;
	-h | --help) usage; exit 0 ;;
	*) usage_error "unknown argument '$1'" ;;
	esac
	shift
done

[[ -n $out ]] || usage_error "-o PREFIX is required (e.g. -o ../results/bench-scale)"
for v in "$secs" "$warmup" "$limit"; do
	is_uint "$v" || usage_error "--secs, --warmup and --limit take whole seconds, not '$v'"
done
IFS=, read -r -a client_list <<<"$clients"
IFS=, read -r -a backend_list <<<"$backends"
IFS=, read -r -a model_list <<<"$models"
for n in "${client_list[@]}"; do
	if ! is_uint "$n" || ((n < 1)); then usage_error "--clients: whole numbers >= 1, not '$n'"; fi
done
for m in "${model_list[@]}"; do
	[[ $m == processes || $m == threads ]] || usage_error "--models: processes or threads, not '$m'"
done
[[ -r $loadfile ]] || loadfile=$(dirname "$(readlink -f "$0")")/../loadfiles/default.txt
csv=$out.csv
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mem_available_kb() { awk '/^MemAvailable:/ { print $2 }' /proc/meminfo; }

# Samples MemAvailable every 0.2 s into FILE until killed.
watch_memory() {
	while :; do mem_available_kb >>"$1"; sleep 0.2; done
}

# One run: a CSV row backend,model,clients,rc,setup_s,wall_s,mb_s,cpu_us_op,kib_client,error
measure() {
	local b=$1 m=$2 n=$3 model=() before lowest start wall rc=0 watcher
	[[ $m == threads ]] && model=(--threads)
	before=$(mem_available_kb)
	: >"$tmp/mem"
	rm -f "$tmp/run.json"   # a run that writes none must not read the last one's
	watch_memory "$tmp/mem" &
	watcher=$!
	start=$(date +%s.%N)
	timeout --signal=INT --kill-after=60 "$limit" "$tbench" -b "$b" "${model[@]}" -t "$secs" \
		--warmup "$warmup" -c "$loadfile" --json "$tmp/run.json" "$n" \
		>"$tmp/out" 2>"$tmp/err" || rc=$?
	wall=$(echo "$(date +%s.%N) - $start" | bc)
	kill "$watcher" 2>/dev/null || true
	wait "$watcher" 2>/dev/null || true
	lowest=$(sort -n "$tmp/mem" | head -1)
	local kib=$(((before - ${lowest:-$before}) / n))
	local err
	err=$(bench_run_error "$tmp/err" "$rc" "$limit" 200)
	jq -r --arg b "$b" --arg m "$m" --arg n "$n" --arg rc "$rc" --arg wall "$wall" \
		--arg kib "$kib" --arg err "$err" '
		def num: if . == null then "" else tostring end;
		[$b, $m, $n, $rc, (.result.setup_s | num), $wall, (.result.mb_per_sec | num),
		 ((.cost.per_operation.clients // null) as $c
		  | if $c == null or $c.cpu_user_us == null then "" else ($c.cpu_user_us + $c.cpu_system_us | tostring) end),
		 $kib, $err] | join(",")' "$tmp/run.json" 2>/dev/null ||
		echo "$b,$m,$n,$rc,,$wall,,,$kib,${err:-no --json written}"
}

report() {
	{
		printf '# Scaling: tbench from %s to %s clients\n\n' "${client_list[0]}" "${client_list[-1]}"
		# shellcheck disable=SC2016  # the backticks are Markdown
		printf 'On %s (%s CPUs, %s GiB, Linux %s), %s; in the build directory, under the quiet-machine lock: `%s`. One run a cell, %s s after %s s of warm-up; loadfile %s.\n\n' \
			"$(uname -n)" "$(nproc)" "$(bench_ram_gib 0)" \
			"$(uname -r)" "$(date -u -r "$csv" '+%Y-%m-%d %H:%M UTC')" "$command_line" "$secs" "$warmup" "$loadfile"
		tb_noise_md "$out.noise" 2>/dev/null || true
		printf '\n| backend | model | clients | exit | set-up s | wall s | MB/s | client CPU µs/op | memory KiB/client | error |\n'
		printf '|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n'
		awk -F, 'function f(v, fmt) { return v == "" ? "–" : sprintf(fmt, v) }
			NR > 1 { printf "| %s | %s | %s | %s | %s | %.1f | %s | %s | %s | %s |\n", $1, $2, $3, $4,
				f($5, "%.2f"), $6, f($7, "%.1f"), f($8, "%.3f"), $9, $10 }' "$csv"
		[[ ! -r $out.notes.md ]] || { printf '\n'; cat "$out.notes.md"; }
	} >"$out.md"
	plot
}

# Set-up seconds and client CPU per operation against clients, log-log, a
# line per backend and model; failed runs are left out.
plot() {
	local series=() b m
	for b in "${backend_list[@]}"; do
		for m in "${model_list[@]}"; do
			awk -F, -v b="$b" -v m="$m" 'NR > 1 && $1 == b && $2 == m && $4 == 0 { print $3, $5, $8 }' \
				"$csv" >"$tmp/$b-$m.dat"
			[[ -s $tmp/$b-$m.dat ]] && series+=("$b-$m")
		done
	done
	((${#series[@]})) || return 0
	local setup='' cpu='' s
	for s in "${series[@]}"; do
		setup+="${setup:+, }'$tmp/$s.dat' using 1:2 with linespoints title '$s'"
		cpu+="${cpu:+, }'$tmp/$s.dat' using 1:3 with linespoints title '$s'"
	done
	gnuplot <<EOF
set terminal pngcairo size 1100,450 font ",10"
set output '$out.png'
set multiplot layout 1,2 title 'tbench at many clients ($(nproc) CPUs, $(uname -r))'
set logscale x; set logscale y; set grid; set key top left
set xlabel 'clients'
set ylabel 'set-up: start to release (s)'
plot $setup
set ylabel 'client CPU per operation (µs)'
plot $cpu
unset multiplot
EOF
}

if ((report_only)); then
	[[ -r $csv ]] || die "--report-only: $csv is missing"
	report
	exit 0
fi
command -v jq >/dev/null || die "jq is needed (apt-get install jq)"
[[ -x $tbench ]] || die "$tbench missing: run make in the build directory, or give --tbench"
tb_noise_begin bench/scale.sh || exit 1
echo 'backend,model,clients,rc,setup_s,wall_s,mb_s,client_cpu_us_op,kib_per_client,error' >"$csv"
for n in "${client_list[@]}"; do
	for b in "${backend_list[@]}"; do
		for m in "${model_list[@]}"; do
			measure "$b" "$m" "$n" | tee -a "$csv"
		done
	done
done
tb_noise_end "$out.noise"
report
echo "$prog: wrote $csv, $out.md and $out.png"
