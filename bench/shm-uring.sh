#!/usr/bin/env bash
# shm-uring.sh shm|uring: the side-by-side benchmarks of two backends.
#
#   shm    tbench -b shm against a bare futex ping-pong of the same sizes
#          (bench/bench_shm.c), threads; target 0.95.
#   uring  tbench -b uring against -b tcp, each with servers of its own,
#          processes, each run `tbench --netns` in a namespace of its own.
#
# Repetitions interleaved, the order of each pair reversed every other one.
# Writes OUT/bench-NAME.csv (every run) and OUT/bench-NAME.md (medians and
# ratios), then OUT/bench-NAME-notes.md if it exists (the reading). Run from
# the build directory (after `make tbench bench/bench_shm`); it takes the
# quiet-machine lock (scripts/lib/quiet.sh). Environment: LOADFILE (dbench's
# client.txt, else ours), CLIENTS (1,2,8,32), REPS (5), WARMUP (1), SECS (3),
# OUT (the source tree's results/), TABLE_ONLY (1: the tables again from the
# CSV, nothing measured), URING (tbench's --uring LIST for the uring runs),
# TBENCH_STATS (the tbench-stats that computes the tables; else the one
# here, in the source tree or on PATH).
set -euo pipefail
# shellcheck source=scripts/lib/quiet.sh
. "$(dirname "$(readlink -f "$0")")/../scripts/lib/quiet.sh"
tb_bench_lock bench/shm-uring.sh "$@"   # never beside the test suite or another benchmark

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
srcdir=$(dirname "$here")
name=${1:-}
loadfile=${LOADFILE:-/usr/share/dbench/client.txt}
[[ -r $loadfile ]] || loadfile=$srcdir/loadfiles/default.txt
clients=${CLIENTS:-1,2,8,32}
reps=${REPS:-5}
warmup=${WARMUP:-1}
secs=${SECS:-3}
out=${OUT:-$srcdir/results}
csv=$out/bench-$name.csv

PROG=shm-uring.sh   # for common.sh's die and usage_error
# shellcheck source=scripts/lib/common.sh
. "$(dirname "$(readlink -f "$0")")/../scripts/lib/common.sh"
# shellcheck source=bench/report-lib.sh
. "$here/report-lib.sh"

# CSV rows clients,rep,variant,value: bench_shm's ops/s or tbench's MB/s.
measure_shm() {
	[[ -x ./bench/bench_shm ]] || die "./bench/bench_shm missing: run 'make bench/bench_shm' here"
	./bench/bench_shm "$loadfile" "$clients" "$reps" "$warmup" "$secs" |
		awk -F, 'NR > 1 { print $2 "," $3 "," $4 "," $5 }'
}

measure_uring() {
	local rep n b mb pair counts uring_opt
	[[ -x ./tbench ]] || die "./tbench missing: run make here"
	grep -q '^ *uring ' <<<"$(./tbench -b help 2>&1)" || die "this tbench was built without liburing"
	IFS=, read -r -a counts <<<"$clients"
	for ((rep = 0; rep < reps; rep++)); do
		for n in "${counts[@]}"; do
			pair=(tcp uring)
			if ((rep % 2)); then pair=(uring tcp); fi
			for b in "${pair[@]}"; do
				uring_opt=()
				[[ $b != uring || -z ${URING:-} ]] || uring_opt=(--uring "$URING")
				mb=$(./tbench --netns -b "$b" "${uring_opt[@]}" -q -t "$secs" --warmup "$warmup" -c "$loadfile" "$n" |
					awk '/^Throughput/ { print $2 }') || true
				echo "$n,$rep,$b,${mb:--1}"
			done
		done
	done
}

# The table: per client count the medians of BASE and OTHER, and OTHER/BASE
# (of the medians), from tbench-stats paired; a run of -1 failed.
table() {
	local base=$1 other=$2 unit=$3 target=$4 c
	local -A med=() ratio=()
	local -a paired=(--keys clients --variant variant --figure value --positive value --base "$base")
	bench_paired med "${paired[@]}" --decimals 1 "$csv"
	bench_paired ratio "${paired[@]}" --decimals 3 ${target:+--target "$target"} "$csv"
	printf '| clients | %s %s (median) | %s %s (median) | %s/%s |%s\n' \
		"$base" "$unit" "$other" "$unit" "$other" "$base" "${target:+ target $target |}"
	printf '|---:|---:|---:|---:|%s\n' "${target:+:--|}"
	for c in ${med[points]}; do
		printf '| %s | %s | %s | %s |%s\n' "$c" "${med[$c,$base,median]}" "${med[$c,$other,median]}" \
			"${ratio[$c,$other,of_medians]}" "${target:+ ${ratio[$c,$other,of_medians_target]} |}"
	done
}

case $name in
shm) what="tbench -b shm against a bare futex ping-pong of the same sizes, threads" ;;
uring) what="tbench -b uring against -b tcp, processes, each with servers of its own, each run in a network namespace of its own (tbench --netns); --uring ${URING:-(none)}" ;;
*) echo "usage: shm-uring.sh shm|uring (see the comment at its top)" >&2; exit 2 ;;
esac
mkdir -p "$out"
bench_stats_find "$PWD"   # before any run: the tables need it
started=$(date -u '+%Y-%m-%d %H:%M UTC')
if [[ ${TABLE_ONLY:-0} == 1 ]]; then
	[[ -r $csv ]] || die "TABLE_ONLY: $csv is missing"
	started="(the CSV's runs ended $(date -u -r "$csv" '+%Y-%m-%d %H:%M UTC'))"
fi
noise=$out/bench-$name.noise   # the machine's load and steal around the runs
if [[ ${TABLE_ONLY:-0} != 1 ]]; then
	tb_noise_begin bench/shm-uring.sh || exit 1
	echo 'clients,rep,variant,value' >"$csv"
	"measure_$name" | tee -a "$csv"
	tb_noise_end "$noise"
fi
{
	printf '# %s\n\n' "$what"
	printf 'Started %s on %s (%s CPUs, %s, Linux %s); loadfile %s; %s reps of %s s after %s s of warm-up, interleaved.\n' \
		"$started" "$(uname -n)" "$(nproc)" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')" \
		"$(uname -r)" "$loadfile" "$reps" "$secs" "$warmup"
	# shellcheck disable=SC2016  # the backticks are Markdown
	printf 'Command, in the build directory, under the quiet-machine lock (scripts/lib/quiet.sh): `CLIENTS=%s REPS=%s WARMUP=%s SECS=%s ../bench/shm-uring.sh %s`.\n\n' \
		"$clients" "$reps" "$warmup" "$secs" "$name"
	tb_noise_md "$noise"
	printf '\n'
	if [[ $name == shm ]]; then table bare tbench ops/s 0.95; else table tcp uring MB/s ""; fi
} >"$out/bench-$name.md"
if [[ -r $out/bench-$name-notes.md ]]; then
	printf '\n' >>"$out/bench-$name.md"
	cat "$out/bench-$name-notes.md" >>"$out/bench-$name.md"
fi
cat "$out/bench-$name.md"
