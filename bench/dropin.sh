#!/bin/bash
# shellcheck disable=SC2016  # awk programs are single-quoted on purpose
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
# their .noise beside them) into one table.
set -euo pipefail
# shellcheck source=scripts/lib/quiet.sh
. "$(dirname "$(readlink -f "$0")")/../scripts/lib/quiet.sh"
# shellcheck source=scripts/lib/ns-server.sh
. "$(dirname "$(readlink -f "$0")")/../scripts/lib/ns-server.sh"
ARGS=("$@")

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
	sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'
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

# --report: the CSVs given as one, each one's reps after the last's.
join_runs() { # CSV...
	local f last=0
	echo "rep,clients,variant,mb_per_sec,wall_s,user_s,sys_s,ops"
	for f in "$@"; do
		[ -r "$f" ] || { echo "dropin.sh: --report: cannot read $f" >&2; exit 2; }
		awk -F, -v OFS=, -v off="$last" 'NR > 1 { $1 += off; print }' "$f"
		last=$((last + $(awk -F, 'NR > 1 && $1 > m { m = $1 } END { print m + 0 }' "$f")))
	done
}

if [ -z "$REPORT" ]; then
	for f in "$OURS" "$OURS_SRV" "$DBENCH" "$DBENCH_SRV" "$LOADFILE" /usr/bin/time; do
		[ -e "$f" ] || { echo "dropin.sh: $f is missing (build first; apt-get install dbench)" >&2; exit 2; }
	done
	unshare -n true 2>/dev/null || { echo "dropin.sh: needs root for unshare -n" >&2; exit 2; }
fi

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
	awk -v times="$(tail -n 1 "$TMP/run.time")" '
		/^ -----/ { table = 1; next }
		/^Throughput/ { mb = $2; table = 0 }
		table && $2 ~ /^[0-9]+$/ { ops += $2 }
		END { split(times, t, " "); printf "%s,%s,%s,%s,%d\n", mb == "" ? "nan" : mb, t[1], t[2], t[3], ops }
	' "$TMP/run.out"
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
				echo "$rep,$n,$variant,$row" >>"$OUT.csv"
				done_runs=$((done_runs + 1))
				echo "[$done_runs/$total] $(date -u +%H:%M:%S) rep $rep clients $n $variant: $row" >&2
			done
		done
	done
	tb_noise_end "$OUT.noise"
fi

# Medians per client count: MB/sec, the paired ratios (same rep and client
# count), wall time, and the client's CPU per operation. CPU covers the whole
# run but the operation table only the execute phase; both tools warm up for
# a fifth of -t, so the operations are scaled by (t + t/5) / t for both alike.
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
	awk -F, -v secs="$SECS" -v ncpu="$(nproc)" "$(cat "$here/bench/median.awk")"'
		function ratios(a, b,    r, x, s) { s = ""
			for (r in reps) { x = mb[r "," n "," b]; if (x > 0 && mb[r "," n "," a] > 0) s = s " " mb[r "," n "," a] / x }
			return s }
		function span(s,    a, k, i, lo, hi) { k = split(s, a, " "); if (!k) return ""
			lo = hi = a[1]; for (i = 2; i <= k; i++) { if (a[i] < lo) lo = a[i]; if (a[i] > hi) hi = a[i] }
			return sprintf("%.2f–%.2f", lo, hi) }
		function cell(s, fmt) { return s == "" ? "-" : sprintf(fmt, median(s)) }
		function pair(s) { return s == "" ? "-" : sprintf("%.3f (%s, %d)", median(s), span(s), split(s, _t, " ")) }
		NR > 1 {
			k = $1 "," $2 "," $3; mb[k] = $4; reps[$1] = 1
			if (!($2 in seen)) { seen[$2] = 1; ns[++nn] = $2 }
			if ($4 + 0 <= 0) next
			all[$2 "," $3] = all[$2 "," $3] " " $4; wall[$2 "," $3] = wall[$2 "," $3] " " $5
			who = $3 ~ /^ours/ ? "ours" : "dbench"
			if ($8 > 0) { ops = $8 * (secs + int(secs / 5)) / secs
				user[$2 "," who] = user[$2 "," who] " " $6 * 1e6 / ops
				sys[$2 "," who] = sys[$2 "," who] " " $7 * 1e6 / ops
				if ($3 == "dbench") mach[$2] = mach[$2] " " ncpu * $5 * 1e6 / ops }
		}
		END {
			for (x = 1; x <= nn; x++) for (y = x + 1; y <= nn; y++) if (ns[y] + 0 < ns[x] + 0) { t = ns[x]; ns[x] = ns[y]; ns[y] = t }
			print "| clients | dbench MB/s | ours MB/s | ours ÷ dbench, own servers | both on dbench'"'"'s server | both on our server |"
			print "|---:|---:|---:|---:|---:|---:|"
			for (x = 1; x <= nn; x++) { n = ns[x]
				printf "| %s | %s | %s | %s | %s | %s |\n", n, cell(all[n ",dbench"], "%.1f"), cell(all[n ",ours"], "%.1f"),
					pair(ratios("ours", "dbench")), pair(ratios("ours-on-dbench-srv", "dbench")), pair(ratios("ours", "dbench-on-ours-srv")) }
			print ""
			print "Ratios: median (lowest–highest, pairs). \"Both on X'"'"'s server\": the two clients against the same server, so the ratio is the clients'"'"' alone."
			print ""
			print "| clients | dbench wall s | ours wall s | client user µs/op, dbench | ours | ours ÷ dbench | client system µs/op, dbench | ours | machine µs/op, dbench | ratio the user CPU explains | user + system |"
			print "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
			for (x = 1; x <= nn; x++) { n = ns[x]; ud = user[n ",dbench"]; uo = user[n ",ours"]
				sd = sys[n ",dbench"]; so = sys[n ",ours"]
				r = (ud != "" && uo != "") ? sprintf("%.2f", median(uo) / median(ud)) : "-"
				# The machine'"'"'s CPU time per operation (all CPUs x wall / ops)
				# over what it would be with ours'"'"' client CPU in place of dbench'"'"'s:
				# the MB/sec ratio that alone explains, were the CPUs the limit.
				m = mach[n] == "" ? 0 : median(mach[n])
				eu = (m > 0 && ud != "" && uo != "") ? sprintf("%.3f", m / (m - median(ud) + median(uo))) : "-"
				es = "-"
				if (eu != "-" && sd != "" && so != "") es = sprintf("%.3f", m / (m - median(ud) + median(uo) - median(sd) + median(so)))
				printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", n, cell(wall[n ",dbench"], "%.1f"), cell(wall[n ",ours"], "%.1f"),
					cell(ud, "%.2f"), cell(uo, "%.2f"), r, cell(sd, "%.2f"), cell(so, "%.2f"), (m > 0 ? sprintf("%.2f", m) : "-"), eu, es }
			print ""
			print "Client CPU per operation: GNU time'"'"'s user and system seconds of the client'"'"'s process tree over its operations (the execute phase'"'"'s, scaled by 1.2 for the warm-up); machine µs/op: '"$(nproc)"' CPUs × wall time over the same operations. The last two columns: the MB/sec ratio that the difference in client CPU alone would give if the CPUs were the limit, machine / (machine − dbench'"'"'s client CPU + ours)."
		}' "$OUT.csv"
} >"$OUT.md"
cat "$OUT.md"
