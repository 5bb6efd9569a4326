#!/usr/bin/env bash
# backends.sh: side-by-side benchmark of tbench's backends and of dbench 4.0's
# tbench. See bench/README-backends.md and --help.
#
# One interleaved run: for each rep, for each client count, every contender
# once, in a seeded shuffled order, all inside one private network namespace
# (so dbench's fixed port 7003 collides with nothing on the host):
#
#   dbench       dbench 4.0's tbench   -> dbench 4.0's tbench_srv
#   tcp-dbsrv    our tbench -b tcp     -> the same dbench 4.0 tbench_srv
#   tcp unix pipe socketpair splice nop
#                our tbench -b NAME with the server it brings itself
#
# Writes PREFIX.csv (one row per run) and PREFIX.md (machine, command, tables,
# then PREFIX.notes.md if it exists: the hand-written reading of the run).

# Backticks in printf formats below are Markdown, not command substitution.
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source=scripts/lib/quiet.sh
. "$(dirname "$(readlink -f "$0")")/../scripts/lib/quiet.sh"
tb_bench_lock bench/backends.sh "$@"   # never beside the test suite or another benchmark

prog=${0##*/}
PROG=$prog   # for common.sh's die and usage_error
# shellcheck source=scripts/lib/common.sh
. "$(dirname "$(readlink -f "$0")")/../scripts/lib/common.sh"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
srcdir=$(dirname "$here")
# shellcheck source=bench/report-lib.sh
. "$here/report-lib.sh"

clients=1,2,8,32,64
reps=3
secs=4
warmup=1
loadfile=/usr/share/dbench/client.txt
backends=tcp,unix,pipe,socketpair,splice,nop
tbench=./tbench
db_tbench=/usr/bin/tbench
db_srv=/usr/bin/tbench_srv
out=$srcdir/results/bench-backends
max_load=3
load_wait=120
seed=
with_dbench=1
processes=0
keep_logs=
report_only=0

usage() {
	cat <<EOF
Usage: $prog [OPTIONS]

Runs dbench 4.0's tbench, our tbench -b tcp against dbench 4.0's tbench_srv,
and every backend of our tbench, side by side in one interleaved run on the
same loadfile, inside a private network namespace, and writes raw runs
(PREFIX.csv) and a report with paired medians (PREFIX.md).

Run as root (ip netns) from the build directory, or give --tbench.

Options:
  -c, --clients LIST     client counts (default $clients)
  -r, --reps N           repetitions of the whole sweep (default $reps)
  -t, --secs S           measured (execute) seconds per run, integer (default $secs)
  -w, --warmup S         warm-up seconds before it, integer (default $warmup)
  -l, --loadfile FILE    NBENCH loadfile (default $loadfile)
  -b, --backends LIST    our backends (default $backends)
      --no-dbench        leave out the two runs against dbench's tbench_srv
      --tbench PATH      our tbench (default ./tbench)
      --dbench-tbench P  dbench 4.0's tbench (default $db_tbench)
      --dbench-srv PATH  dbench 4.0's tbench_srv (default $db_srv)
      --processes        pass --processes to our tbench (dbench always forks)
  -o, --out PREFIX       write PREFIX.csv and PREFIX.md
                         (default results/bench-backends in the source tree)
      --max-load X       before each rep wait for the 1-minute load average
                         to drop below X (default $max_load) ...
      --load-wait S      ... for at most S seconds (default $load_wait; 0: don't)
      --seed N           seed of the run order shuffle (default: random, recorded)
      --keep-logs DIR    keep every run's output in DIR
      --report-only      only rewrite PREFIX.md from an existing PREFIX.csv
  -h, --help             this text

Timing. dbench 4.0's tbench -t T warms up for T/5 seconds (integer division;
the warm-up ends at the first once-a-second tick past it), then prints an
execute line every second until its clock passes T; its Throughput is the
figure of its last execute line, i.e. the bytes of the first T-1 seconds of
execute. So dbench runs with -t SECS+1, and our tbench with -t SECS
--warmup WARMUP; WARMUP must equal (SECS+1)/5 for the two windows to match
(1 s with the default 4 s), or the script refuses (use --no-dbench).

Per-operation transport cost of a backend, in microseconds:
1e6/ops_per_sec(backend) - 1e6/ops_per_sec(nop), ops_per_sec being the
operations per second of the execute phase of all clients together (from
--json); the median over reps of the differences within one rep.

Every figure of the report is tbench-stats paired's (man tbench-stats), the
one beside --tbench first; TBENCH_STATS names another. --report-only too.
EOF
}

note() {
	printf '%s: %s\n' "$prog" "$*" >&2
}

while (($#)); do
	case $1 in
	-c | --clients) clients=${2:?}; shift ;;
	-r | --reps) reps=${2:?}; shift ;;
	-t | --secs) secs=${2:?}; shift ;;
	-w | --warmup) warmup=${2:?}; shift ;;
	-l | --loadfile) loadfile=${2:?}; shift ;;
	-b | --backends) backends=${2:?}; shift ;;
	--no-dbench) with_dbench=0 ;;
	--tbench) tbench=${2:?}; shift ;;
	--dbench-tbench) db_tbench=${2:?}; shift ;;
	--dbench-srv) db_srv=${2:?}; shift ;;
	--processes) processes=1 ;;
	-o | --out) out=${2:?}; shift ;;
	--max-load) max_load=${2:?}; shift ;;
	--load-wait) load_wait=${2:?}; shift ;;
	--seed) seed=${2:?}; shift ;;
	--keep-logs) keep_logs=${2:?}; shift ;;
	--report-only) report_only=1 ;;
	-h | --help) usage; exit 0 ;;
	*) usage_error "unknown argument '$1'" ;;
	esac
	shift
done

if ! is_uint "$reps" || ((reps < 1)); then usage_error "--reps: a whole number >= 1, not '$reps'"; fi
if ! is_uint "$secs" || ((secs < 1)); then usage_error "--secs: a whole number of seconds >= 1, not '$secs'"; fi
is_uint "$warmup" || usage_error "--warmup: a whole number of seconds, not '$warmup'"
is_uint "$load_wait" || usage_error "--load-wait: a whole number of seconds, not '$load_wait'"
[[ $max_load =~ ^[0-9]+([.][0-9]+)?$ ]] || usage_error "--max-load: a number, not '$max_load'"
[[ -z $seed ]] || is_uint "$seed" || usage_error "--seed: a whole number, not '$seed'"
IFS=, read -r -a client_list <<<"$clients"
for n in "${client_list[@]}"; do
	if ! is_uint "$n" || ((n < 1)); then usage_error "--clients: whole numbers >= 1, not '$n'"; fi
done
IFS=, read -r -a backend_list <<<"$backends"
((${#backend_list[@]})) || usage_error "--backends: empty"

csv=$out.csv
md=$out.md
bench_stats_find "$(dirname "$tbench")"   # before any run: the report needs it

# ---------------------------------------------------------------------------
# The report: paired medians from the CSV, every figure from tbench-stats
# paired (so --report-only needs tbench-stats beside --tbench, else in the
# source tree or on PATH). med: medians; rdb, rtcp, rnop: ratios paired by
# rep with dbench, tcp and nop; us: per-operation costs against nop.
declare -A med=() load=() ops=() rdb=() rtcp=() rnop=() us=() failed=()
report_figures() {
	local -a ok=(--where status=ok --keys clients --pair-by rep)
	bench_paired med "${ok[@]}" --variant contender --decimals 1 "$csv"
	bench_paired load "${ok[@]}" --figure load1_before --decimals 2 "$csv"
	bench_paired ops "${ok[@]}" --variant contender --figure ops_per_sec --positive ops_per_sec \
		--decimals 0 "$csv"
	bench_paired rdb "${ok[@]}" --variant contender --base dbench --decimals 3 "$csv"
	bench_paired rtcp "${ok[@]}" --variant contender --base tcp --decimals 3 "$csv"
	bench_paired rnop "${ok[@]}" --variant contender --base nop --decimals 3 "$csv"
	bench_paired us "${ok[@]}" --variant contender --figure ops_per_sec --positive ops_per_sec \
		--base nop --cost --decimals 2 "$csv"
	# the failed runs: n counts the rows of each, their run number being a number
	bench_paired failed --where status=fail --keys clients --variant contender --figure run "$csv"
}

# has_runs CONTENDER: 0 when some client count has an ok run of it.
has_runs() {
	local c
	for c in ${med[points]}; do
		[[ -z ${med[$c,$1,n]:-} ]] || return 0
	done
	return 1
}

report_tables() {
	local c k line sep
	local -a ks=()
	report_figures
	# contenders in a fixed order: dbench, ours to its server, then --backends
	for k in dbench tcp-dbsrv "${backend_list[@]}"; do
		if has_runs "$k"; then ks+=("$k"); fi
	done
	if has_runs dbench || has_runs tcp-dbsrv; then
		printf '### Our tcp against dbench 4.0'"'"'s tbench (both to dbench 4.0'"'"'s tbench_srv)\n\n'
		printf '| clients | dbench tbench MB/s | our tcp MB/s | **ratio** (median of paired) | ratio range | pairs | our tcp, own server ÷ dbench |\n'
		printf '|---:|---:|---:|---:|---:|---:|---:|\n'
		for c in ${med[points]}; do
			printf '| %s | %s | %s | **%s** | %s | %s | %s |\n' "$c" "${med[$c,dbench,median]:-–}" \
				"${med[$c,tcp-dbsrv,median]:-–}" "${rdb[$c,tcp-dbsrv,paired]:-–}" \
				"${rdb[$c,tcp-dbsrv,paired_lowest]:+${rdb[$c,tcp-dbsrv,paired_lowest]}–${rdb[$c,tcp-dbsrv,paired_highest]}}" \
				"${rdb[$c,tcp-dbsrv,pairs]:-0}" "${rdb[$c,tcp,paired]:-–}"
		done
		printf '\n'
	fi
	printf '### Throughput, MB/s (median over reps)\n\n'
	line="| clients |" sep="|---:|"
	for k in "${ks[@]}"; do line+=" $k |" sep+="---:|"; done
	printf '%s load1 (median) |\n%s---:|\n' "$line" "$sep"
	for c in ${med[points]}; do
		line="| $c |"
		for k in "${ks[@]}"; do line+=" ${med[$c,$k,median]:-–} |"; done
		printf '%s %s |\n' "$line" "${load[$c,median]:-–}"
	done
	printf '\n### Each backend as a ratio to tcp and to nop (MB/s, median of paired ratios)\n\n'
	line="| clients |" sep="|---:|"
	for k in "${backend_list[@]}"; do
		[[ $k == tcp || $k == nop ]] || { line+=" $k/tcp | $k/nop |" sep+="---:|---:|"; }
	done
	printf '%s tcp/nop |\n%s---:|\n' "$line" "$sep"
	for c in ${med[points]}; do
		line="| $c |"
		for k in "${backend_list[@]}"; do
			[[ $k == tcp || $k == nop ]] || line+=" ${rtcp[$c,$k,paired]:-–} | ${rnop[$c,$k,paired]:-–} |"
		done
		printf '%s %s |\n' "$line" "${rnop[$c,tcp,paired]:-–}"
	done
	printf '\n### Per-operation transport cost, µs = 1e6/ops_rate(backend) − 1e6/ops_rate(nop) (median of paired differences)\n\n'
	printf 'ops_rate: operations per second of all clients together in the execute phase (`--json` .result.ops_per_sec).\n\n'
	line="| clients | nop ops/s |" sep="|---:|---:|"
	for k in "${backend_list[@]}"; do
		[[ $k == nop ]] || { line+=" $k |" sep+="---:|"; }
	done
	printf '%s\n%s\n' "$line" "$sep"
	for c in ${med[points]}; do
		line="| $c | ${ops[$c,nop,median]:-–} |"
		for k in "${backend_list[@]}"; do
			[[ $k == nop ]] || line+=" ${us[$c,$k,paired]:-–} |"
		done
		printf '%s\n' "$line"
	done
	printf '\n'
	if [[ -n ${failed[points]} ]]; then
		printf '### Failed runs (left out of every figure above)\n\n'
		for c in ${failed[points]}; do
			for k in dbench tcp-dbsrv "${backend_list[@]}"; do
				[[ -z ${failed[$c,$k,n]:-} ]] || printf -- '- %s %s: %s\n' "$c" "$k" "${failed[$c,$k,n]}"
			done
		done
		printf '\n'
	fi
}

write_report() {
	local cpu kernel
	cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
	kernel=$(uname -sr)
	{
		printf '# Backends side by side, and our tcp against dbench 4.0'"'"'s tbench\n\n'
		printf 'Generated by `bench/backends.sh` from `%s`.\n\n' "${csv##*/}"
		printf -- '- machine: %s, %s CPUs online, %s, %s\n' "$cpu" "$(nproc)" "$kernel" \
			"$(bench_ram_gib 1) GiB RAM"
		if [[ -f $csv.meta ]]; then
			sed 's/^/- /' "$csv.meta"
		fi
		tb_noise_md "$out.noise"
		printf '\n'
		report_tables
		# The analysis of the last run, written by hand, survives --report-only.
		if [[ -r $out.notes.md ]]; then
			cat "$out.notes.md"
		fi
	} >"$md.tmp"
	mv "$md.tmp" "$md"
	note "wrote $md"
}

if ((report_only)); then
	[[ -r $csv ]] || die "$csv: no such file"
	write_report
	exit 0
fi

# ---------------------------------------------------------------------------
# Checks before anything is started.
((EUID == 0)) || die "needs root for ip netns (run as root)"
command -v ip >/dev/null || die "ip (iproute2) not found"
command -v jq >/dev/null || die "jq not found (apt-get install jq)"
[[ -r $loadfile ]] || die "$loadfile: not readable (Debian: apt-get install dbench)"
[[ -x $tbench ]] || die "$tbench: not found; run from the build directory or give --tbench"
tbench=$(cd "$(dirname "$tbench")" && pwd)/$(basename "$tbench")
"$tbench" -b help >/dev/null 2>&1 || die "$tbench does not take -b: is it dbench's tbench?"
for b in "${backend_list[@]}"; do
	grep -q "^  $b " <<<"$("$tbench" -b help 2>&1)" || usage_error "our tbench has no backend '$b'"
done
db_time=$((secs + 1))
if ((with_dbench)); then
	[[ -x $db_tbench && -x $db_srv ]] ||
		die "dbench 4.0's tbench/tbench_srv not found (apt-get install dbench) or use --no-dbench"
	((db_time / 5 == warmup)) ||
		usage_error "dbench 4.0 -t $db_time warms up for $((db_time / 5)) s, not --warmup $warmup: pick --secs/--warmup so that (secs+1)/5 = warmup (e.g. -t 4 -w 1, -t 9 -w 2), or use --no-dbench"
fi
[[ -z $keep_logs ]] || mkdir -p "$keep_logs"
mkdir -p "$(dirname "$out")"

contenders=()
((with_dbench)) && contenders+=(dbench tcp-dbsrv)
contenders+=("${backend_list[@]}")

# ---------------------------------------------------------------------------
# Namespace, server, clean-up.
ns=tbbench-$$
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tbbench.XXXXXX")
srv_pid=
ns_made=0

cleanup() {
	local rc=$? p
	trap - EXIT INT TERM
	if [[ -n $srv_pid ]]; then
		kill "$srv_pid" 2>/dev/null || true
	fi
	if ((ns_made)); then
		# Whatever is left in our namespace was started by this script.
		for p in $(ip netns pids "$ns" 2>/dev/null); do
			kill "$p" 2>/dev/null || true
		done
		sleep 0.2
		for p in $(ip netns pids "$ns" 2>/dev/null); do
			kill -9 "$p" 2>/dev/null || true
		done
		ip netns del "$ns" 2>/dev/null || note "could not remove namespace $ns"
	fi
	rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

ip netns add "$ns" || die "ip netns add $ns failed"
ns_made=1
ip netns exec "$ns" ip link set lo up

start_db_srv() {
	(cd "$tmp" && exec ip netns exec "$ns" "$db_srv" >>"$tmp/srv.log" 2>&1) &
	srv_pid=$!
	local i
	for i in $(seq 50); do
		if ip netns exec "$ns" bash -c 'exec 3<>/dev/tcp/127.0.0.1/7003' 2>/dev/null; then
			return 0
		fi
		sleep 0.1
	done
	die "dbench's tbench_srv did not start listening on 127.0.0.1:7003 in $ns"
}

# ---------------------------------------------------------------------------
# One run. Sets: r_status r_mb r_ops r_exec r_warm
run_one() {
	local k=$1 n=$2 log=$tmp/run.out json=$tmp/run.json rc=0 lim
	local -a cmd
	lim=$((secs + warmup + 60 + n))
	rm -f "$json"
	case $k in
	dbench)
		cmd=("$db_tbench" -c "$loadfile" -t "$db_time" "$n" 127.0.0.1) ;;
	tcp-dbsrv)
		cmd=("$tbench" -b tcp -c "$loadfile" -t "$secs" --warmup "$warmup" --json "$json" "$n" 127.0.0.1) ;;
	*)
		cmd=("$tbench" -b "$k" -c "$loadfile" -t "$secs" --warmup "$warmup" --json "$json" "$n") ;;
	esac
	if [[ $k != dbench* ]] && ((processes)); then
		cmd=("${cmd[0]}" --processes "${cmd[@]:1}")
	fi
	if [[ $k == dbench || $k == tcp-dbsrv ]] && ! kill -0 "$srv_pid" 2>/dev/null; then
		note "dbench's tbench_srv had died: restarting it"
		start_db_srv
	fi
	(cd "$tmp" && exec timeout -k 5 "$lim" ip netns exec "$ns" "${cmd[@]}") >"$log" 2>&1 || rc=$?
	r_status=ok r_mb='' r_ops='' r_exec='' r_warm=''
	r_mb=$(awk '/^Throughput / { print $2; exit }' "$log")
	if [[ $k == dbench ]]; then
		r_exec=$secs
		r_warm=$((db_time / 5))
	elif [[ -s $json ]]; then
		r_ops=$(jq -r '.result.ops_per_sec' "$json")
		r_exec=$(jq -r '.result.execute_s' "$json")
		r_warm=$(jq -r '.settings.warmup_s' "$json")
		[[ $(jq -r '.result.status' "$json") == ok ]] || r_status=fail
		r_mb=$(jq -r '.result.mb_per_sec' "$json")
	fi
	if ((rc != 0)) || [[ -z $r_mb ]]; then
		r_status=fail
		note "FAILED (exit $rc): ${cmd[*]}"
		tail -n 5 "$log" | sed 's/^/    /' >&2
	fi
	if [[ -n $keep_logs ]]; then
		cp "$log" "$keep_logs/r${rep}-c${n}-${k}.out"
		[[ ! -s $json ]] || cp "$json" "$keep_logs/r${rep}-c${n}-${k}.json"
	fi
}

# decimal_below A B: 0 when A < B, both whole numbers with an optional
# fraction (a load average, --max-load); compared as whole numbers of the
# same count of decimals.
decimal_below() {
	local a=${1%%.*} b=${2%%.*} fa='' fb=''
	[[ $1 != *.* ]] || fa=${1#*.}
	[[ $2 != *.* ]] || fb=${2#*.}
	while ((${#fa} < ${#fb})); do fa+=0; done
	while ((${#fb} < ${#fa})); do fb+=0; done
	((10#$a$fa < 10#$b$fb))
}

wait_for_quiet() {
	local waited=0 l1
	while :; do
		read -r l1 _ </proc/loadavg
		if decimal_below "$l1" "$max_load"; then
			note "rep $rep: load1 $l1 < $max_load after ${waited}s"
			return 0
		fi
		if ((waited >= load_wait)); then
			note "rep $rep: load1 still $l1 after ${waited}s: going on (recorded per run)"
			return 0
		fi
		sleep 5
		waited=$((waited + 5))
	done
}

# ---------------------------------------------------------------------------
if ((with_dbench)); then
	start_db_srv
fi
[[ -n $seed ]] || seed=$((RANDOM * 32768 + RANDOM))
RANDOM=$seed

{
	printf 'date: %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	printf 'command: `%s`\n' "bench/backends.sh --clients $clients --reps $reps --secs $secs --warmup $warmup --loadfile $loadfile --backends $backends$( ((with_dbench)) || printf ' --no-dbench')$( ((processes)) && printf ' --processes') --seed $seed"
	printf 'our tbench: `%s`, %s\n' "$tbench" "$("$tbench" --version 2>&1 | head -n 1)"
	if ((with_dbench)); then
		printf "dbench: \`%s -c LOADFILE -t %d N 127.0.0.1\` against \`%s\` (%s), warm-up %d s, Throughput over the first %d s of execute; our tcp against it: \`tbench -b tcp -c LOADFILE -t %d --warmup %d N 127.0.0.1\`\n" \
			"$db_tbench" "$db_time" "$db_srv" "$(dpkg-query -W -f '${Package} ${Version}' dbench 2>/dev/null || echo 'version unknown')" \
			"$((db_time / 5))" "$secs" "$secs" "$warmup"
	fi
	printf 'our backends: `tbench -b NAME -c LOADFILE -t %d --warmup %d --json F N`%s, each with its own server\n' \
		"$secs" "$warmup" "$( ((processes)) && printf ' --processes')"
	printf 'all runs inside one private network namespace (ip netns, lo up); order within each (rep, clients) shuffled with seed %s\n' "$seed"
	printf 'load: before each rep waited up to %d s for load1 < %s; load1 before/after each run is in the CSV\n' "$load_wait" "$max_load"
} >"$csv.meta"

tb_noise_begin "$prog" || exit 1
echo "run,rep,clients,slot,contender,client,server,backend,status,mb_per_sec,ops_per_sec,execute_s,warmup_s,wall_s,load1_before,load5_before,load1_after,started_utc" >"$csv"

nruns=$((reps * ${#client_list[@]} * ${#contenders[@]}))
note "$nruns runs of ~$((secs + warmup)) s each (+ set-up), namespace $ns, seed $seed; raw runs -> $csv"
run=0
t_all=$(date +%s)
for ((rep = 1; rep <= reps; rep++)); do
	if ((load_wait > 0)); then
		wait_for_quiet
	fi
	for n in "${client_list[@]}"; do
		order=("${contenders[@]}")
		shuffle_array order
		slot=0
		for k in "${order[@]}"; do
			run=$((run + 1))
			slot=$((slot + 1))
			read -r l1 l5 _ </proc/loadavg
			started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
			t0=$(date +%s%N)
			run_one "$k" "$n"
			t1=$(date +%s%N)
			read -r l1a _ </proc/loadavg
			case $k in
			dbench) client=dbench-4.0 server=dbench-4.0 backend=tcp ;;
			tcp-dbsrv) client=ours server=dbench-4.0 backend=tcp ;;
			*) client=ours server=own backend=$k ;;
			esac
			wall=$(((t1 - t0 + 5000000) / 10000000))   # hundredths of a second
			printf -v wall '%d.%02d' $((wall / 100)) $((wall % 100))
			printf '%d,%d,%d,%d,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n' \
				"$run" "$rep" "$n" "$slot" "$k" "$client" "$server" "$backend" "$r_status" \
				"$r_mb" "$r_ops" "$r_exec" "$r_warm" "$wall" "$l1" "$l5" "$l1a" "$started" >>"$csv"
			printf '%s: [%d/%d] rep %d clients %-3d %-10s %10s MB/s %12s ops/s  load1 %s  %ss\n' \
				"$prog" "$run" "$nruns" "$rep" "$n" "$k" "${r_mb:-?}" "${r_ops:--}" "$l1" "$wall" >&2
		done
	done
done
note "all runs done in $(($(date +%s) - t_all)) s"
tb_noise_end "$out.noise"
write_report
