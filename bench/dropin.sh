#!/bin/bash
# shellcheck disable=SC2016  # awk programs are single-quoted on purpose
# The drop-in promise, measured: the default `tbench N` (ours) against dbench
# 4.0's `tbench N`, each with its own tbench_srv on loopback, and ours against
# dbench's tbench_srv; paired by repetition and client count, in shuffled
# order, each run in a network namespace of its own (port 7003, a quiet lo).
#
#   bench/dropin.sh [--reps 3] [--clients "1 2 8 32 64"] [-t SECS] [--out PREFIX]
#
# Writes PREFIX.csv (one row per run) and PREFIX.md (median of the paired
# ratios per client count). Needs dbench 4.0 (Debian: apt-get install dbench)
# and unshare; run it on an otherwise idle machine.
set -euo pipefail
# shellcheck source=scripts/lib/quiet.sh
. "$(dirname "$(readlink -f "$0")")/../scripts/lib/quiet.sh"
tb_bench_lock bench/dropin.sh "$@"   # never beside the test suite or another benchmark

here="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${BUILD:-$here}"
OURS="$BUILD/tbench"
OURS_SRV="$BUILD/tbench_srv"
DBENCH=/usr/bin/tbench
DBENCH_SRV=/usr/bin/tbench_srv
LOADFILE=/usr/share/dbench/client.txt
REPS=3
CLIENTS="1 2 8 32 64"
SECS=10
OUT="$here/results/bench-dropin"

usage() {
	sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
}

while [ $# -gt 0 ]; do
	case "$1" in
	--reps) REPS="$2"; shift ;;
	--clients) CLIENTS="$2"; shift ;;
	-t) SECS="$2"; shift ;;
	--out) OUT="$2"; shift ;;
	-h|--help) usage ;;
	*) echo "dropin.sh: unknown option $1" >&2; usage ;;
	esac
	shift
done

for f in "$OURS" "$OURS_SRV" "$DBENCH" "$DBENCH_SRV" "$LOADFILE"; do
	[ -e "$f" ] || { echo "dropin.sh: $f is missing (build first; apt-get install dbench)" >&2; exit 2; }
done
unshare -n true 2>/dev/null || { echo "dropin.sh: needs root for unshare -n" >&2; exit 2; }

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

# One run in a fresh namespace: start SERVER, run CLIENT N, print MB/sec.
one_run() {
	local server="$1" client="$2" n="$3"
	unshare -n bash -c '
		set -euo pipefail
		ip link set lo up
		"$1" </dev/null >/dev/null 2>&1 &
		srv=$!
		for _ in $(seq 300); do (exec 3<>/dev/tcp/127.0.0.1/7003) 2>/dev/null && break; sleep 0.1; done
		"$2" -t "$4" -c "$5" "$3" 127.0.0.1 >"$6" 2>&1 || true
		kill -9 "$srv" 2>/dev/null; wait "$srv" 2>/dev/null || true
	' _ "$server" "$client" "$n" "$SECS" "$LOADFILE" "$TMP/run.out"
	awk '/^Throughput/ { print $2; f = 1 } END { if (!f) print "nan" }' "$TMP/run.out"
}

read -r -a client_counts <<<"$CLIENTS"
tb_noise_begin bench/dropin.sh || exit 1
echo "rep,clients,variant,mb_per_sec" >"$OUT.csv"
total=$((REPS * ${#client_counts[@]} * 3)) done_runs=0
for rep in $(seq "$REPS"); do
	for n in $(shuf -e "${client_counts[@]}"); do
		for variant in $(shuf -e ours dbench ours-on-dbench-srv); do
			case "$variant" in
			ours) mb="$(one_run "$OURS_SRV" "$OURS" "$n")" ;;
			dbench) mb="$(one_run "$DBENCH_SRV" "$DBENCH" "$n")" ;;
			ours-on-dbench-srv) mb="$(one_run "$DBENCH_SRV" "$OURS" "$n")" ;;
			esac
			echo "$rep,$n,$variant,$mb" >>"$OUT.csv"
			done_runs=$((done_runs + 1))
			echo "[$done_runs/$total] rep $rep clients $n $variant: $mb MB/sec" >&2
		done
	done
done
tb_noise_end "$OUT.noise"

# The median of the paired ratios (same rep and client count) per N.
{
	echo "# Drop-in: ours against dbench 4.0's tbench"
	echo
	echo "\`bench/dropin.sh --reps $REPS --clients \"$CLIENTS\" -t $SECS\`, $(date -u +%Y-%m-%d), $(uname -r), $(nproc) CPUs,"
	echo "loadfile $LOADFILE; each run in its own network namespace; default options on both sides."
	echo
	tb_noise_md "$OUT.noise"
	echo
	echo "| clients | dbench MB/s (median) | ours MB/s (median) | ours ÷ dbench, own servers (median of $REPS paired) | ours on dbench's server ÷ dbench |"
	echo "|---:|---:|---:|---:|---:|"
	awk -F, "$(cat "$here/bench/median.awk")"'
		NR > 1 { v[$1 "," $2 "," $3] = $4; if (!($2 in seen)) { seen[$2] = 1; ns[++k] = $2 } ; reps[$1] = 1 }
		END {
			for (x = 1; x <= k; x++) for (y = x + 1; y <= k; y++) if (ns[y] + 0 < ns[x] + 0) { t = ns[x]; ns[x] = ns[y]; ns[y] = t }
			for (x = 1; x <= k; x++) {
				n = ns[x]; m = 0; ro = rs = dd = oo = ""
				for (r in reps) {
					d = v[r "," n ",dbench"]; o = v[r "," n ",ours"]; s = v[r "," n ",ours-on-dbench-srv"]
					if (d > 0 && o > 0 && s > 0) { m++; ro = ro " " o / d; rs = rs " " s / d; dd = dd " " d; oo = oo " " o }
				}
				if (m == 0) { printf "| %s | - | - | - | - |\n", n; continue }
				printf "| %s | %.1f | %.1f | %.3f | %.3f |\n", n, median(dd), median(oo), median(ro), median(rs)
			}
		}' "$OUT.csv"
} >"$OUT.md"
cat "$OUT.md"
