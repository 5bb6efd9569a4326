#!/bin/bash
# The drop-in promise, measured: the default `tbench N` (ours) against dbench
# 4.0's `tbench N`, each with its own tbench_srv on loopback, and crossed (each
# client against the other's server); paired by repetition and client count,
# in shuffled order, each run in a network namespace of its own (port 7003).
#
#   bench/dropin.sh [--reps 3] [--clients "1 2 8 32 64"] [-t SECS]
#                   [--variants "ours dbench ours-on-dbench-srv dbench-on-ours-srv"]
#                   [--out PREFIX]
#   bench/dropin.sh --report "A.csv B.csv ..." -t SECS --out PREFIX
#
# Writes PREFIX.csv (one row per run: MB/sec, wall time, the client's user and
# system CPU, its operations) and PREFIX.md (medians of the paired ratios per
# client count). Needs dbench 4.0 (Debian: apt-get install dbench), GNU time
# and unshare; run it on an otherwise idle machine. --report runs nothing: it
# joins earlier runs' CSVs (each one's reps numbered on after the last's;
# their .noise beside them) into one table. The figures come from
# tbench-stats paired and substitute: TBENCH_STATS, else BUILD's first.
# KEEP_OUTPUT=DIR keeps each run's standard output there, as
# REP-CLIENTS-VARIANT.out: the progress lines, for the phases' figures.
set -euo pipefail
# shellcheck source=scripts/lib/quiet.sh
. "$(dirname "$(readlink -f "$0")")/../scripts/lib/quiet.sh"
# shellcheck source=scripts/lib/ns-server.sh
. "$(dirname "$(readlink -f "$0")")/../scripts/lib/ns-server.sh"
ARGS=("$@")
PROG=dropin.sh   # for common.sh's die
# shellcheck source=scripts/lib/common.sh
. "$(dirname "$(readlink -f "$0")")/../scripts/lib/common.sh"
# shellcheck source=bench/report-lib.sh
. "$(dirname "$(readlink -f "$0")")/report-lib.sh"

here="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${BUILD:-$here}"
OURS="$BUILD/tbench"
OURS_SRV="$BUILD/tbench_srv"
DBENCH=/usr/bin/tbench
DBENCH_SRV=/usr/bin/tbench_srv
LOADFILE=/usr/share/dbench/client.txt
REPS=3
CLIENTS="1 2 8 32 64"
VARIANTS="ours dbench ours-on-dbench-srv dbench-on-ours-srv"
SECS=10
OUT="$here/results/bench-dropin"
REPORT=""

usage() {
	sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
}

while [ $# -gt 0 ]; do
	case "$1" in
	--reps) REPS="$2"; shift ;;
	--clients) CLIENTS="$2"; shift ;;
	--variants) VARIANTS="$2"; shift ;;
	-t) SECS="$2"; shift ;;
	--out) OUT="$2"; shift ;;
	--report) REPORT="$2"; shift ;;
	-h|--help) usage ;;
	*) echo "dropin.sh: unknown option $1" >&2; usage ;;
	esac
	shift
done
# never beside the test suite or another benchmark; --report runs nothing
[ -n "$REPORT" ] || tb_bench_lock bench/dropin.sh "${ARGS[@]}"

# --report: the CSVs given as one, each one's reps after the last's; the
# rows of an older CSV (rep,clients,variant,mb_per_sec) padded to the header.
join_runs() { # CSV...
	local f line rep rest commas last=0 most
	echo "rep,clients,variant,mb_per_sec,wall_s,user_s,sys_s,ops"
	for f in "$@"; do
		[ -r "$f" ] || { echo "dropin.sh: --report: cannot read $f" >&2; exit 2; }
		most=0
		while IFS= read -r line; do
			rep=${line%%,*} rest=${line#*,} commas=${line//[!,]/}
			while [ "${#commas}" -lt 7 ]; do rest+=, commas+=,; done
			echo "$((rep + last)),$rest"
			[ "$rep" -le "$most" ] || most=$rep
		done < <(tail -n +2 "$f")
		last=$((last + most))
	done
}

if [ -z "$REPORT" ]; then
	for f in "$OURS" "$OURS_SRV" "$DBENCH" "$DBENCH_SRV" "$LOADFILE" /usr/bin/time; do
		[ -e "$f" ] || { echo "dropin.sh: $f is missing (build first; apt-get install dbench)" >&2; exit 2; }
	done
	unshare -n true 2>/dev/null || { echo "dropin.sh: needs root for unshare -n" >&2; exit 2; }
fi

bench_stats_find "$BUILD"   # before any run: the report needs it

# Each variant: which server, which client.
declare -A SERVER_OF=([ours]="$OURS_SRV" [dbench]="$DBENCH_SRV"
	[ours-on-dbench-srv]="$DBENCH_SRV" [dbench-on-ours-srv]="$OURS_SRV")
declare -A CLIENT_OF=([ours]="$OURS" [dbench]="$DBENCH"
	[ours-on-dbench-srv]="$OURS" [dbench-on-ours-srv]="$DBENCH")

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

# One run in a fresh namespace: start SERVER, run CLIENT N under GNU time
# (its whole process tree), print "MB/sec,wall_s,user_s,sys_s,ops". A
# client still running at 3 -t + 300 s is interrupted (its run counts as nan).
one_run() {
	local server="$1" client="$2" n="$3"
	rm -f "$TMP/run.time"
	tb_ns_with_server /dev/null "$((3 * SECS + 300))" "$server" -- \
		/usr/bin/time -f "%e %U %S" -o "$TMP/run.time" \
		"$client" -t "$SECS" -c "$LOADFILE" "$n" 127.0.0.1 >"$TMP/run.out" 2>&1 || true
	# The operation table: the Count column between its rule and Throughput.
	local line count mb='' ops=0 table=0 times=()
	while IFS= read -r line; do
		case $line in
		' -----'*) table=1; continue ;;
		Throughput*) read -r _ mb _ <<<"$line"; table=0 ;;
		esac
		if [ "$table" = 1 ]; then
			read -r _ count _ <<<"$line"
			[[ ! $count =~ ^[0-9]+$ ]] || ops=$((ops + 10#$count))
		fi
	done <"$TMP/run.out"
	read -r -a times < <(tail -n 1 "$TMP/run.time") || true
	printf '%s,%s,%s,%s,%d\n' "${mb:-nan}" "${times[0]:-}" "${times[1]:-}" "${times[2]:-}" "$ops"
}

read -r -a client_counts <<<"$CLIENTS"
read -r -a variants <<<"$VARIANTS"
for variant in "${variants[@]}"; do
	[ -n "${CLIENT_OF[$variant]+set}" ] ||
		{ echo "dropin.sh: unknown variant '$variant' (${!CLIENT_OF[*]})" >&2; exit 2; }
done
if [ -n "$REPORT" ]; then
	read -r -a sources <<<"$REPORT"
	join_runs "${sources[@]}" >"$TMP/joined.csv"
	mv "$TMP/joined.csv" "$OUT.csv"
else
	tb_noise_begin bench/dropin.sh || exit 1
	echo "rep,clients,variant,mb_per_sec,wall_s,user_s,sys_s,ops" >"$OUT.csv"
	total=$((REPS * ${#client_counts[@]} * ${#variants[@]})) done_runs=0
	for rep in $(seq "$REPS"); do
		for n in $(shuf -e "${client_counts[@]}"); do
			for variant in $(shuf -e "${variants[@]}"); do
				row="$(one_run "${SERVER_OF[$variant]}" "${CLIENT_OF[$variant]}" "$n")"
				[ -z "${KEEP_OUTPUT:-}" ] || cp "$TMP/run.out" "$KEEP_OUTPUT/$rep-$n-$variant.out"
				echo "$rep,$n,$variant,$row" >>"$OUT.csv"
				done_runs=$((done_runs + 1))
				echo "[$done_runs/$total] $(date -u +%H:%M:%S) rep $rep clients $n $variant: $row" >&2
			done
		done
	done
	tb_noise_end "$OUT.noise"
fi

# ratio_cell RATIOS RANGES CLIENTS VARIANT: "median (lowest–highest, pairs)"
# of a variant's paired ratios, or -.
ratio_cell() {
	local -n r3=$1 r2=$2
	local k=$3,$4
	if [ "${r3[$k,pairs]:-0}" -gt 0 ]; then
		printf '%s (%s–%s, %s)' "${r3[$k,paired]}" "${r2[$k,paired_lowest]}" "${r2[$k,paired_highest]}" "${r3[$k,pairs]}"
	else
		printf -- -
	fi
}

# The two tables of the report, from $OUT.csv.
dropin_tables() {
	local n csv="$OUT.csv" eu es
	# shellcheck disable=SC2034  # rd3, rd2, ro3, ro2: read through ratio_cell's namerefs
	local -A runs=() mb=() rd3=() rd2=() ro3=() ro2=() wall=() user=() user_p=() sys=() sys_p=() mach=() mach_p=()
	local -a ok=(--keys clients --variant variant --positive mb_per_sec)
	local -a per_op=(--per ops --per-scale "$((SECS + SECS / 5))/$SECS")
	# a client's CPU: ours-on-dbench-srv is our client, dbench-on-ours-srv dbench's
	local -a who=(--as ours-on-dbench-srv=ours --as dbench-on-ours-srv=dbench --base dbench)
	bench_paired runs --keys clients --figure rep "$csv"   # every client count, even all failed
	bench_paired mb "${ok[@]}" --decimals 1 "$csv"
	bench_paired rd3 "${ok[@]}" --base dbench --decimals 3 "$csv"
	bench_paired rd2 "${ok[@]}" --base dbench --decimals 2 "$csv"
	bench_paired ro3 "${ok[@]}" --base dbench-on-ours-srv --decimals 3 "$csv"
	bench_paired ro2 "${ok[@]}" --base dbench-on-ours-srv --decimals 2 "$csv"
	bench_paired wall "${ok[@]}" --figure wall_s --decimals 1 "$csv"
	ok=(--keys clients --variant variant --positive "mb_per_sec,ops")
	bench_paired user "${ok[@]}" --figure user_s "${per_op[@]}" "${who[@]}" --decimals 2 "$csv"
	bench_paired user_p "${ok[@]}" --figure user_s "${per_op[@]}" "${who[@]}" --precise "$csv"
	bench_paired sys "${ok[@]}" --figure sys_s "${per_op[@]}" "${who[@]}" --decimals 2 "$csv"
	bench_paired sys_p "${ok[@]}" --figure sys_s "${per_op[@]}" "${who[@]}" --precise "$csv"
	# the machine: every CPU's time over the operations, dbench's runs alone
	per_op=(--per ops --per-scale "$((SECS + SECS / 5))/$((SECS * $(nproc)))")
	bench_paired mach "${ok[@]}" --figure wall_s "${per_op[@]}" --decimals 2 "$csv"
	bench_paired mach_p "${ok[@]}" --figure wall_s "${per_op[@]}" --precise "$csv"

	echo "| clients | dbench MB/s | ours MB/s | ours ÷ dbench, own servers | both on dbench's server | both on our server |"
	echo "|---:|---:|---:|---:|---:|---:|"
	for n in ${runs[points]}; do
		echo "| $n | ${mb[$n,dbench,median]:--} | ${mb[$n,ours,median]:--} | $(ratio_cell rd3 rd2 "$n" ours) |" \
			"$(ratio_cell rd3 rd2 "$n" ours-on-dbench-srv) | $(ratio_cell ro3 ro2 "$n" ours) |"
	done
	echo
	echo "Ratios: median (lowest–highest, pairs). \"Both on X's server\": the two clients against the same server, so the ratio is the clients' alone."
	echo
	echo "| clients | dbench wall s | ours wall s | client user µs/op, dbench | ours | ours ÷ dbench | client system µs/op, dbench | ours | machine µs/op, dbench | ratio the user CPU explains | user + system |"
	echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	for n in ${runs[points]}; do
		# the MB/sec ratio that ours' client CPU in place of dbench's alone
		# explains, were the CPUs the limit: tbench-stats substitute
		eu=- es=-
		if [ -n "${mach_p[$n,dbench,median]:-}" ] && [ -n "${user_p[$n,ours,median]:-}" ] &&
			[ -n "${user_p[$n,dbench,median]:-}" ]; then
			eu=$("$BENCH_STATS" substitute --total "${mach_p[$n,dbench,median]}" --decimals 3 \
				--from "${user_p[$n,dbench,median]}" --to "${user_p[$n,ours,median]}")
			if [ -n "${sys_p[$n,ours,median]:-}" ] && [ -n "${sys_p[$n,dbench,median]:-}" ]; then
				es=$("$BENCH_STATS" substitute --total "${mach_p[$n,dbench,median]}" --decimals 3 \
					--from "${user_p[$n,dbench,median]},${sys_p[$n,dbench,median]}" \
					--to "${user_p[$n,ours,median]},${sys_p[$n,ours,median]}")
			fi
		fi
		echo "| $n | ${wall[$n,dbench,median]:--} | ${wall[$n,ours,median]:--} | ${user[$n,dbench,median]:--} |" \
			"${user[$n,ours,median]:--} | ${user[$n,ours,of_medians]:--} | ${sys[$n,dbench,median]:--} |" \
			"${sys[$n,ours,median]:--} | ${mach[$n,dbench,median]:--} | ${eu:--} | ${es:--} |"
	done
	echo
	echo "Client CPU per operation: GNU time's user and system seconds of the client's process tree over its operations (the execute phase's, scaled by 1.2 for the warm-up); machine µs/op: $(nproc) CPUs × wall time over the same operations. The last two columns: the MB/sec ratio that the difference in client CPU alone would give if the CPUs were the limit, machine / (machine − dbench's client CPU + ours)."
}

# Medians per client count: MB/sec, the paired ratios (same rep and client
# count), wall time, and the client's CPU per operation, all from
# tbench-stats paired. CPU covers the whole run but the operation table
# only the execute phase; both tools warm up for a fifth of -t, so the
# operations are scaled by (t + t/5) / t for both alike.
{
	echo "# Drop-in: ours against dbench 4.0's tbench"
	echo
	if [ -n "$REPORT" ]; then
		echo "\`bench/dropin.sh --report \"$REPORT\" -t $SECS\`: the runs of those CSVs as one table,"
		echo "their reps numbered on in that order; $(nproc) CPUs here, loadfile $LOADFILE. Each part's machine:"
		echo
		for f in "${sources[@]}"; do
			echo "${f##*/}:"
			echo
			tb_noise_md "${f%.csv}.noise"
			echo
		done
	else
		echo "\`bench/dropin.sh --reps $REPS --clients \"$CLIENTS\" -t $SECS --variants \"$VARIANTS\"\`,"
		echo "$(date -u +%Y-%m-%d), $(uname -r), $(nproc) CPUs, loadfile $LOADFILE; each run in its own"
		echo "network namespace; default options on both sides; commit $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)."
		echo
		tb_noise_md "$OUT.noise"
		echo
	fi
	dropin_tables
} >"$OUT.md"
cat "$OUT.md"
