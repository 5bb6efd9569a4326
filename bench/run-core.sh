#!/usr/bin/env bash
# run-core.sh: the core's side-by-side benchmarks.
#
#   nop  against a bare loop doing the same memcpy()s over the same op array,
#   pipe against a bare pipe ping-pong of the same sizes, at 1, 2 and 16
#   clients, interleaved in one run; parse time of the loadfiles; resident
#   memory of tbench at 1, 64 and 512 clients.
#
# Run from the build directory (`make bench` does), or set BUILDDIR.
# Writes OUT/NAME.md (tables) and OUT/NAME.csv (raw numbers); OUT defaults
# to the source tree's results/, NAME to bench-core. If OUT/NAME-notes.md
# exists it is appended to the tables (the analysis of the last run).
#
# Settings (environment): NAME (bench-core), LOADFILE (the default loadfile:
# what the throughput runs replay), REPS (7), SECS (1.5) measured seconds per run,
# WARMUP (0.5), CLIENTS (1,2,16), RSS_CLIENTS (1,64,512), RSS_SECS (3),
# PARSE_RUNS (9), PROCESSES (1: also measure --processes memory),
# DBENCH_LOADFILE (/usr/share/dbench/client.txt), PARTS (parse,throughput,rss:
# what to measure; empty: measure nothing, only rewrite the tables), APPEND (1:
# add to the existing CSV instead of starting a
# new one, e.g. to redo one part). The tables are always written from the
# whole CSV, after the measurements.
set -euo pipefail
# shellcheck source=scripts/lib/quiet.sh
. "$(dirname "$(readlink -f "$0")")/../scripts/lib/quiet.sh"
tb_bench_lock bench/run-core.sh "$@"   # never beside the test suite or another benchmark

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
srcdir=$(dirname "$here")
builddir=$(cd "${BUILDDIR:-.}" && pwd)
out=${OUT:-$srcdir/results}
bench=$builddir/bench/bench_core
tbench=$builddir/tbench
default_lf=$srcdir/loadfiles/default.txt
loadfile=${LOADFILE:-$default_lf}
name=${NAME:-bench-core}
dbench_lf=${DBENCH_LOADFILE:-/usr/share/dbench/client.txt}

reps=${REPS:-7}
secs=${SECS:-1.5}
warmup=${WARMUP:-0.5}
clients=${CLIENTS:-1,2,16}
rss_clients=${RSS_CLIENTS:-1,64,512}
rss_secs=${RSS_SECS:-3}
parse_runs=${PARSE_RUNS:-9}
processes=${PROCESSES:-1}
parts=${PARTS-parse,throughput,rss}
append=${APPEND:-0}

PROG=run-core.sh   # for common.sh's die and usage_error
# shellcheck source=scripts/lib/common.sh
. "$(dirname "$(readlink -f "$0")")/../scripts/lib/common.sh"

[[ -x $bench ]] || die "$bench is missing: run 'make bench' (or 'make bench/bench_core') in the build directory"
[[ -x $tbench ]] || die "$tbench is missing: run 'make' in the build directory first"
[[ -r $default_lf ]] || die "$default_lf is missing"
[[ -r $loadfile ]] || die "LOADFILE $loadfile cannot be read"
mkdir -p "$out"

args=(--loadfile "$loadfile" --reps "$reps" --secs "$secs" --warmup "$warmup"
	--clients "$clients" --parse-runs "$parse_runs" --parse "$default_lf"
	--tbench "$tbench" --rss-clients "$rss_clients" --rss-secs "$rss_secs")
if [[ -r $dbench_lf ]]; then
	args+=(--parse "$dbench_lf")
else
	printf 'run-core.sh: %s not found (apt-get install dbench): its parse time is skipped\n' \
		"$dbench_lf" >&2
fi
if [[ $processes == 1 ]]; then
	args+=(--rss-processes)
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

csv=$out/$name.csv
started=$(date -u '+%Y-%m-%d %H:%M UTC')
# The CSV is written as the run goes: a run that dies still leaves its numbers.
if [[ $append != 1 && -n $parts ]]; then
	printf 'kind,benchmark,clients,rep,variant,value,value2,value3,value4\n' >"$csv"
fi
IFS=, read -r -a todo <<<"$parts"
if ((${#todo[@]})); then
	tb_noise_begin bench/run-core.sh || exit 1
	for part in "${todo[@]}"; do
		"$bench" "${args[@]}" --only "$part" --csv-append "$csv"
	done
	tb_noise_end "$out/$name.noise"
fi

# The tables, from the CSV: each part that has rows.
: >"$tmp/tables.md"
for part in parse throughput rss; do
	if grep -q "^$part," "$csv"; then
		"$bench" "${args[@]}" --only "$part" --from-csv "$csv" --md "$tmp/part.md"
		cat "$tmp/part.md" >>"$tmp/tables.md"
	fi
done

cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo unknown)
tsc_flags=$(awk '/^flags/ { for (i = 3; i <= NF; i++) if ($i ~ /tsc/) printf "%s ", $i; exit }' /proc/cpuinfo)
commit=$(git -C "$srcdir" rev-parse --short HEAD 2>/dev/null || echo unknown)
if ! git -C "$srcdir" diff --quiet HEAD -- src backends 2>/dev/null; then
	commit="$commit + uncommitted changes in src/ or backends/"
fi
load=$(cut -d' ' -f1-3 /proc/loadavg)

{
	printf '# tbench core benchmarks\n\n'
	printf -- '- Machine: %s, %s CPUs, kernel %s, clocksource %s, TSC flags: %s\n' \
		"$cpu" "$(nproc)" "$(uname -r)" "$clocksource" "${tsc_flags% }"
	printf -- '- Date: %s; tree: %s; load average at the end: %s (a shared machine)\n' \
		"$started" "$commit" "$load"
	bt='`'
	printf -- '- Build: %s../configure CFLAGS="-O2 -g" && make && make bench%s (out of tree)\n' "$bt" "$bt"
	printf -- '- Command: %s%sNAME=%s LOADFILE=%s PARTS=%s CLIENTS=%s REPS=%s SECS=%s bench/run-core.sh%s = %sbench/bench_core' \
		"$bt" "${TBENCH_CLOCK:+TBENCH_CLOCK=$TBENCH_CLOCK }" "$name" "$loadfile" "$parts" "$clients" \
		"$reps" "$secs" "$bt" "$bt"
	printf ' %q' "${args[@]}"
	printf '%s\n' "$bt"
	printf -- '- Raw numbers: %s.csv (kind, benchmark, clients, rep, variant, then: ops/s, MB/s, ' "$name"
	printf 'measured s, ops per CPU-s for throughput; ms for parse; max RSS, VmHWM, tree Rss, tree Pss '
	printf 'in KiB for rss; TSC Hz, ppm off CLOCK_MONOTONIC, s since calibration for clock)\n'
	tb_noise_md "$out/$name.noise"
	printf '\n'
	cat "$tmp/tables.md"
	if [[ -r $out/$name-notes.md ]]; then
		cat "$out/$name-notes.md"
	fi
} >"$out/$name.md"
printf 'run-core.sh: wrote %s and %s\n' "$out/$name.md" "$csv"
