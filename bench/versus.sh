#!/usr/bin/env bash
# versus.sh: one backend against its nearest sibling, cell by cell, and the
# tables of bench-tcp-zc.md and bench-mptcp.md. See --help.
#
# A cell is a client count with a loadfile: either one loadfile at several
# client counts (--clients), or, with --sizes, a synthetic loadfile per
# request size written by this script (WriteX lines of that size) at one
# client count. Runs are interleaved: for each rep, the cells in a seeded
# shuffled order, and within a cell the variants shuffled too; each run is
# `tbench --netns`, in a network namespace of its own, or, for a variant with
# a server of its own (tbench_srv), that server and tbench in a fresh
# namespace together (scripts/lib/ns-server.sh).

# Backticks in printf formats below are Markdown, not command substitution.
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source=scripts/lib/quiet.sh
. "$(dirname "$(readlink -f "$0")")/../scripts/lib/quiet.sh"
# shellcheck source=scripts/lib/ns-server.sh
. "$(dirname "$(readlink -f "$0")")/../scripts/lib/ns-server.sh"
tb_bench_lock bench/versus.sh "$@"   # never beside the test suite or another benchmark

prog=${0##*/}
PROG=$prog   # for common.sh's die and usage_error
# shellcheck source=scripts/lib/common.sh
. "$(dirname "$(readlink -f "$0")")/../scripts/lib/common.sh"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
srcdir=$(dirname "$here")
# shellcheck source=bench/report-lib.sh
. "$here/report-lib.sh"

backends=
clients=1
sizes=
reps=5
secs=3
warmup=1
loadfile=/usr/share/dbench/client.txt
tbench=./tbench
out=
title=
seed=
report_only=0
perf=0
server_cmd=
variant_specs=()

usage() {
	cat <<EOF
Usage: $prog [OPTIONS] -o PREFIX

Runs BASE and the other entries of --backends side by side, interleaved,
each run in a network namespace of its own (tbench --netns), and writes the
raw runs (PREFIX.csv) and a report with paired medians (PREFIX.md, followed
by PREFIX.notes.md when it exists: the hand-written reading).

Options:
  -b, --backends LIST  backends or --variant names; the first is the base the
                       others are compared with (default: the variants in the
                       order given, else tcp,tcp-zc)
      --variant 'NAME=OPTIONS [srv:[COMMAND]]'
                       an entry NAME that runs tbench with OPTIONS (e.g.
                       'uring-files=-b uring --uring files'; not -c, -t,
                       --warmup, --json or N, which are the script's);
                       repeatable.
                       With srv: (or OPTIONS ending in SERVER 127.0.0.1),
                       against a server: COMMAND (default --server-cmd)
                       started with tbench in a fresh network namespace,
                       port 7003, and SERVER 127.0.0.1 given to tbench
      --server-cmd CMD
                       the server of variants that name none (e.g.
                       'tbench_srv --uring'); a bare program name is looked
                       for beside --tbench first, then on PATH
      --perf           every run with tbench --perf: system calls counted
                       (perf counters; they slow a run with many switches)
  -c, --clients LIST   client counts (default $clients)
  -s, --sizes LIST     request body sizes in bytes: a loadfile of WriteX lines
                       of each size instead of --loadfile (one client count)
  -l, --loadfile FILE  NBENCH loadfile without --sizes (default $loadfile)
  -r, --reps N         repetitions (default $reps)
  -t, --secs S         execute seconds per run (default $secs)
  -w, --warmup S       warm-up seconds per run (default $warmup)
      --tbench PATH    our tbench (default ./tbench)
      --title TEXT     the report's heading
      --seed N         seed of the run order (default: random, recorded)
  -o, --out PREFIX     write PREFIX.csv and PREFIX.md
      --report-only    only rewrite PREFIX.md from PREFIX.csv (give the same
                       --backends or --variant names and --title)
  -h, --help           this text

The environment reaches tbench: TBENCH_ZEROCOPY_THRESHOLD=1 makes tcp-zc
send every request but the set-up with MSG_ZEROCOPY.
Every figure of the report is tbench-stats paired's (man tbench-stats), the
one beside --tbench first; TBENCH_STATS names another. --report-only too.

Figures per run (from --json): MB/s and operations/s of the execute phase,
CPU µs per operation of clients and servers together, system calls and
context switches per operation (cost.per_operation: system calls only with
--perf; switches from /proc, or perf with --perf), the backend's own
counters; per cell, the median over reps of each, and the median of the
paired ratios (other ÷ base, within one rep). A variant's external server
is not tbench's task: its CPU, switches and system calls are in no figure
(the report says which variants that is).

Example: bench/versus.sh -o /tmp/vs --clients 1,2 --variant 'tcp=-b tcp' \\
  --variant 'uring-loop=-b uring --uring-server loop' \\
  --variant 'uring-on-srv=-b uring srv:tbench_srv --uring'
EOF
}


while (($#)); do
	case $1 in
	-b | --backends) backends=${2:?}; shift ;;
	--variant) variant_specs+=("${2:?}"); shift ;;
	--server-cmd) server_cmd=${2:?}; shift ;;
	--perf) perf=1 ;;
	-c | --clients) clients=${2:?}; shift ;;
	-s | --sizes) sizes=${2:?}; shift ;;
	-l | --loadfile) loadfile=${2:?}; shift ;;
	-r | --reps) reps=${2:?}; shift ;;
	-t | --secs) secs=${2:?}; shift ;;
	-w | --warmup) warmup=${2:?}; shift ;;
	--tbench) tbench=${2:?}; shift ;;
	--title) title=${2:?}; shift ;;
	--seed) seed=${2:?}; shift ;;
	-o | --out) out=${2:?}; shift ;;
	--report-only) report_only=1 ;;
	-h | --help) usage; exit 0 ;;
	*) usage_error "unknown argument '$1'" ;;
	esac
	shift
done

[[ -n $out ]] || usage_error "-o PREFIX is required (e.g. -o $srcdir/results/bench-tcp-zc)"
if ! is_uint "$reps" || ((reps < 1)); then usage_error "--reps: a whole number >= 1, not '$reps'"; fi
if ! is_uint "$secs" || ((secs < 1)); then usage_error "--secs: a whole number >= 1, not '$secs'"; fi
is_uint "$warmup" || usage_error "--warmup: a whole number, not '$warmup'"
[[ -z $seed ]] || is_uint "$seed" || usage_error "--seed: a whole number, not '$seed'"
declare -A opts_of=() srv_of=()
# parse_variant SPEC: NAME=OPTIONS [srv:[COMMAND]] into opts_of[NAME] and
# srv_of[NAME] (empty: no server of its own; "-": --server-cmd's).
parse_variant() {
	local spec=$1 name rest words
	name=${spec%%=*}
	if [[ $spec != *=* || ! $name =~ ^[A-Za-z0-9._+-]+$ ]]; then
		usage_error "--variant: NAME=OPTIONS, NAME of letters, digits and ._+- (e.g. 'uring-files=-b uring --uring files'), not '$spec'"
	fi
	[[ -z ${opts_of[$name]+set} ]] || usage_error "--variant: '$name' given twice"
	rest=${spec#*=}
	srv_of[$name]=
	if [[ $rest == srv:* || $rest == *" srv:"* ]]; then
		srv_of[$name]=${rest#*srv:}
		rest=${rest%%srv:*}
		[[ -n ${srv_of[$name]// /} ]] || srv_of[$name]=-
	fi
	read -r -a words <<<"$rest"
	# SERVER 127.0.0.1 at the end: the run's own server; the script puts it after N.
	if ((${#words[@]})) && [[ ${words[-1]} =~ ^(127\.0\.0\.1|localhost|::1)$ ]]; then
		unset 'words[-1]'
		[[ -n ${srv_of[$name]} ]] || srv_of[$name]=-
	fi
	((${#words[@]})) || usage_error "--variant $name: no tbench options (e.g. '$name=-b uring')"
	opts_of[$name]=${words[*]}
}
for spec in "${variant_specs[@]}"; do
	parse_variant "$spec"
done
if [[ -z $backends ]]; then
	backends=tcp,tcp-zc
	((${#variant_specs[@]} == 0)) || backends=$(IFS=,; echo "${variant_specs[*]%%=*}")
fi
IFS=, read -r -a backend_list <<<"$backends"
((${#backend_list[@]} >= 2)) || usage_error "--backends: a base and at least one other"
plain_backends=()   # entries that are no --variant: a backend of that name
for b in "${backend_list[@]}"; do
	[[ -z ${opts_of[$b]+set} ]] || continue
	plain_backends+=("$b")
	opts_of[$b]="-b $b" srv_of[$b]=
done
IFS=, read -r -a client_list <<<"$clients"
IFS=, read -r -a size_list <<<"$sizes"
for n in "${client_list[@]}" "${size_list[@]}"; do
	if ! is_uint "$n" || ((n < 1)); then usage_error "--clients and --sizes: whole numbers >= 1, not '$n'"; fi
done
((${#size_list[@]} == 0 || ${#client_list[@]} == 1)) || usage_error "--sizes takes one client count"
# sources "syscalls=BY switches=BY servers=measured|none" (a run's sources
# column): how its system calls and switches were counted, in words.
sources() {
	local kv
	local -A by=()
	for kv in $1; do by[${kv%%=*}]=${kv#*=}; done
	if [[ ${by[syscalls]:-n/a} == n/a ]]; then
		printf 'system calls not counted (versus.sh --perf counts them)'
	else
		printf 'system calls counted by %s (raw_syscalls:sys_enter)' "${by[syscalls]}"
	fi
	if [[ ${by[switches]:-n/a} == n/a ]]; then printf '; context switches not counted'
	else printf '; context switches counted by %s' "${by[switches]}"; fi
	if [[ ${by[servers]:-} == measured ]]; then printf '; servers included\n'
	else printf '; no server task of tbench: an external server is in neither figure, nor in CPU µs/op\n'; fi
}

# cell_columns CLIENTS,SIZE: a table row's first two cells.
cell_columns() {
	local clients=${1%,*} size=${1#*,}
	((size > 0)) || size="loadfile mix"
	printf '| %s | %s |' "$clients" "$size"
}

# The tables, every figure from tbench-stats paired: per cell (clients,
# size) and entry the medians over reps of the ok runs, the medians of the
# ratios paired by rep with the base; the text columns (counters, sources)
# as the last ok run of each left them.
report_tables() {
	local c b clients size body line sep csv=$out.csv col
	local -a ok=(--where status=ok --keys "clients,size" --pair-by rep) others=("${backend_list[@]:1}")
	local -A mb=() ratio=() cpu=() cpuratio=() load=() sys=() cs=() failed=() counters=() src=()
	local base=${backend_list[0]}
	bench_paired mb "${ok[@]}" --variant backend --decimals 1 "$csv"
	bench_paired ratio "${ok[@]}" --variant backend --base "$base" --decimals 3 "$csv"
	bench_paired cpu "${ok[@]}" --variant backend --figure cpu_us_per_op --decimals 2 "$csv"
	bench_paired cpuratio "${ok[@]}" --variant backend --figure cpu_us_per_op --base "$base" --decimals 3 "$csv"
	bench_paired load "${ok[@]}" --figure load1 --decimals 2 "$csv"
	# CSVs of versus.sh before --perf have no syscalls, switches or sources columns
	col=$(head -n 1 "$csv")
	if [[ ,$col, == *,syscalls_per_op,* ]]; then
		bench_paired sys "${ok[@]}" --variant backend --figure syscalls_per_op --decimals 2 "$csv"
		bench_paired cs "${ok[@]}" --variant backend --figure switches_per_op --decimals 2 "$csv"
		while IFS=$'\t' read -r b line; do
			[[ -z $line ]] || src[$b]=$line
		done < <("$BENCH_STATS" select --where status=ok --columns backend,sources --tsv "$csv")
	fi
	bench_paired failed --where status=fail --keys clients,size --variant backend --figure rep "$csv"
	while IFS=$'\t' read -r clients size b line; do
		counters[$clients,$size,$b]=$line
	done < <("$BENCH_STATS" select --where status=ok --columns clients,size,backend,counters --tsv "$csv")

	line="| clients | request body |" sep="|---:|---:|"
	for b in "${backend_list[@]}"; do line+=" $b MB/s |" sep+="---:|"; done
	for b in "${others[@]}"; do line+=" **$b/$base** |" sep+="---:|"; done
	for b in "${backend_list[@]}"; do line+=" $b CPU µs/op |" sep+="---:|"; done
	for b in "${others[@]}"; do line+=" CPU $b/$base |" sep+="---:|"; done
	printf '%s load1 |\n%s---:|\n' "$line" "$sep"
	for c in ${mb[points]}; do
		line=$(cell_columns "$c")
		for b in "${backend_list[@]}"; do line+=" ${mb[$c,$b,median]:-–} |"; done
		for b in "${others[@]}"; do line+=" **${ratio[$c,$b,paired]:-–}** |"; done
		for b in "${backend_list[@]}"; do line+=" ${cpu[$c,$b,median]:-–} |"; done
		for b in "${others[@]}"; do line+=" ${cpuratio[$c,$b,paired]:-–} |"; done
		printf '%s %s |\n' "$line" "${load[$c,median]:-–}"
	done
	printf '\nSystem calls and context switches per operation, medians over reps (how each was counted: below):\n\n'
	line="| clients | request body |" sep="|---:|---:|"
	for b in "${backend_list[@]}"; do line+=" $b syscalls/op |" sep+="---:|"; done
	for b in "${backend_list[@]}"; do line+=" $b switches/op |" sep+="---:|"; done
	printf '%s\n%s\n' "$line" "$sep"
	for c in ${mb[points]}; do
		line=$(cell_columns "$c")
		for b in "${backend_list[@]}"; do line+=" ${sys[$c,$b,median]:-–} |"; done
		for b in "${backend_list[@]}"; do line+=" ${cs[$c,$b,median]:-–} |"; done
		printf '%s\n' "$line"
	done
	printf '\n'
	for b in "${backend_list[@]}"; do
		[[ -z ${src[$b]:-} ]] || printf -- '- %s: %s' "$b" "$(sources "${src[$b]}")"$'\n'
	done
	printf '\nCounters of the last run of each cell (the backend'"'"'s own, whole run):\n\n'
	for c in ${mb[points]}; do
		IFS=, read -r clients size <<<"$c"
		body="loadfile mix"
		((size == 0)) || body="$size bytes"
		for b in "${backend_list[@]}"; do
			[[ -z ${counters[$c,$b]:-} ]] || printf -- '- %s clients, %s, %s: %s\n' "$clients" "$body" "$b" "${counters[$c,$b]}"
		done
	done
	printf '\n'
	for c in ${failed[points]}; do
		for b in "${backend_list[@]}"; do
			[[ -z ${failed[$c,$b,n]:-} ]] || printf -- '- failed runs, left out above: %s %s (%s)\n' "${c/,/ }" "$b" "${failed[$c,$b,n]}"
		done
	done
}

write_report() {
	{
		printf '# %s\n\n' "${title:-${backend_list[*]:1} against ${backend_list[0]}}"
		printf 'Generated by `bench/versus.sh` from `%s`.\n\n' "${out##*/}.csv"
		sed 's/^/- /' "$out.csv.meta"
		tb_noise_md "$out.noise"
		printf '\nMedians over reps; **bold**: the median of the paired ratios (within one rep).\n\n'
		report_tables
		if [[ -r $out.notes.md ]]; then
			cat "$out.notes.md"
		fi
	} >"$out.md"
	printf '%s: wrote %s\n' "$prog" "$out.md" >&2
}
# resolve_server NAME: srv_of[NAME] as it will run, its program found (a
# bare name beside our tbench first: PATH's tbench_srv may be dbench's).
resolve_server() {
	local name=$1 words prog
	[[ -n ${srv_of[$name]} ]] || return 0
	if [[ ${srv_of[$name]} == - ]]; then
		[[ -n $server_cmd ]] || usage_error "--variant $name: runs against a server but names none: give --server-cmd 'tbench_srv --uring', or end its options with srv:COMMAND"
		srv_of[$name]=$server_cmd
	fi
	read -r -a words <<<"${srv_of[$name]}"
	prog=${words[0]}
	if [[ $prog != */* && -x $(dirname "$tbench")/$prog ]]; then
		prog=$(dirname "$tbench")/$prog
	elif ! prog=$(command -v "$prog"); then
		usage_error "--variant $name: server '${words[0]}' not found beside $tbench nor on PATH"
	fi
	words[0]=$prog
	srv_of[$name]=${words[*]}
}

bench_stats_find "$(dirname "$tbench")"   # before any run: the report needs it
if ((report_only)); then
	[[ -r $out.csv && -r $out.csv.meta ]] || die "$out.csv or $out.csv.meta: no such file"
	write_report
	exit 0
fi
command -v jq >/dev/null || die "jq not found (apt-get install jq)"
[[ -x $tbench ]] || die "$tbench: not found; run from the build directory or give --tbench"
tbench=$(cd "$(dirname "$tbench")" && pwd)/$(basename "$tbench")
for b in "${plain_backends[@]}"; do
	grep -q "^  $b " <<<"$("$tbench" -b help 2>&1)" ||
		usage_error "--backends: $tbench has no backend '$b', and no --variant is named so"
done
for b in "${backend_list[@]}"; do
	resolve_server "$b"
done
((${#size_list[@]})) || [[ -r $loadfile ]] || die "$loadfile: not readable"
[[ -n $seed ]] || seed=$((RANDOM * 32768 + RANDOM))
RANDOM=$seed

tmp=$(mktemp -d "${TMPDIR:-/tmp}/versus.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Cells: "clients size loadfile" (size 0: the loadfile's own mix).
cells=()
if ((${#size_list[@]})); then
	for s in "${size_list[@]}"; do
		for ((i = 0; i < 100; i++)); do
			echo "WriteX 1 0 $s $s NT_STATUS_OK"
		done >"$tmp/writex-$s.txt"
		cells+=("${client_list[0]} $s $tmp/writex-$s.txt")
	done
else
	for n in "${client_list[@]}"; do
		cells+=("$n 0 $loadfile")
	done
fi

# run_variant NAME CLIENTS LOADFILE JSON: one run of the variant, its
# output in $tmp/run.out; tbench's exit status.
run_variant() {
	local opts srv rc=0 limit=$((secs + warmup + 120))
	local common=(-q -c "$3" -t "$secs" --warmup "$warmup" --json "$4")
	read -r -a opts <<<"${opts_of[$1]}"
	((perf == 0)) || common+=(--perf)
	if [[ -z ${srv_of[$1]} ]]; then
		timeout -k 5 "$limit" "$tbench" --netns "${opts[@]}" "${common[@]}" "$2" \
			>"$tmp/run.out" 2>&1 || rc=$?
	else
		read -r -a srv <<<"${srv_of[$1]}"
		tb_ns_with_server "$tmp/srv.log" "$limit" "${srv[@]}" -- \
			"$tbench" "${opts[@]}" "${common[@]}" "$2" 127.0.0.1 >"$tmp/run.out" 2>&1 || rc=$?
		[[ ! -s $tmp/srv.log ]] || sed 's/^/    server: /' "$tmp/srv.log" >>"$tmp/run.out"
	fi
	return "$rc"
}

# run_one NAME CLIENTS LOADFILE LOAD1: one CSV row's figures from status on,
# or "fail" and empty fields.
run_one() {
	local json=$tmp/run.json rc=0
	rm -f "$json" "$tmp/srv.log"
	run_variant "$1" "$2" "$3" "$json" || rc=$?
	if ((rc != 0)) || [[ ! -s $json ]] || [[ $(jq -r .result.status "$json") != ok ]]; then
		printf '%s: FAILED (exit %d): %s (%s) %s clients %s\n' "$prog" "$rc" "$1" "${opts_of[$1]}" "$2" "$3" >&2
		tail -n 3 "$tmp/run.out" | sed 's/^/    /' >&2
		echo "fail,,,,,$4,,,"
		return
	fi
	jq -r --arg load "$4" '.cost.per_operation as $po | [ "ok", .result.mb_per_sec, .result.ops_per_sec,
		($po | if . == null then "" else (.clients.cpu_user_us + .clients.cpu_system_us
			+ .servers.cpu_user_us + .servers.cpu_system_us) end),
		(.backend_counters // {} | to_entries | map("\(.key)=\(.value)") | join(" ")), $load,
		($po.syscalls // ""), ($po.context_switches // ""),
		"syscalls=\(.cost.counted_by.syscalls // "n/a") switches=\(.cost.counted_by.context_switches // "n/a")"
			+ " servers=\(if ($po.servers.tasks // 0) > 0 then "measured" else "none" end)" ] | @csv' \
		"$json" | tr -d '"'
}

{
	printf 'machine: %s, %s CPUs online, %s, %s\n' \
		"$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)" "$(nproc)" "$(uname -sr)" \
		"$(bench_ram_gib 1) GiB RAM"
	printf 'date: %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	printf 'command: `%sbench/versus.sh --backends %s%s%s%s --clients %s%s --reps %s --secs %s --warmup %s --seed %s`\n' \
		"${TBENCH_ZEROCOPY_THRESHOLD:+TBENCH_ZEROCOPY_THRESHOLD=$TBENCH_ZEROCOPY_THRESHOLD }" "$backends" \
		"$(for v in "${variant_specs[@]}"; do printf " --variant '%s'" "$v"; done)" \
		"${server_cmd:+ --server-cmd '$server_cmd'}" "$( ((perf)) && echo ' --perf')" \
		"$clients" "$( ((${#size_list[@]})) && printf ' --sizes %s' "$sizes" || printf ' --loadfile %s' "$loadfile")" \
		"$reps" "$secs" "$warmup" "$seed"
	printf 'our tbench: `%s`, %s\n' "$tbench" "$("$tbench" --version 2>&1 | head -n 1)"
	printf 'each run: `tbench OPTIONS -q -c LOADFILE -t %s --warmup %s%s --json F N`, runs interleaved, order shuffled with seed %s; OPTIONS per entry:\n' \
		"$secs" "$warmup" "$( ((perf)) && echo ' --perf')" "$seed"
	for b in "${backend_list[@]}"; do
		if [[ -z ${srv_of[$b]} ]]; then
			printf 'entry %s: `--netns %s N` (a network namespace of its own)\n' "$b" "${opts_of[$b]}"
		else
			printf 'entry %s: `%s N 127.0.0.1` against `%s` (port 7003), both in a fresh network namespace\n' \
				"$b" "${opts_of[$b]}" "${srv_of[$b]}"
		fi
	done
	if ((${#size_list[@]})); then
		printf 'loadfile per size S: 100 lines `WriteX 1 0 S S NT_STATUS_OK` (a request of S+59 bytes, a 55-byte reply)\n'
	fi
} >"$out.csv.meta"
tb_noise_begin "$prog" || exit 1
echo "rep,clients,size,backend,status,mb_per_sec,ops_per_sec,cpu_us_per_op,counters,load1,syscalls_per_op,switches_per_op,sources" >"$out.csv"

nruns=$((reps * ${#cells[@]} * ${#backend_list[@]}))
run=0
for ((rep = 1; rep <= reps; rep++)); do
	order=("${cells[@]}")
	shuffle_array order
	for cell in "${order[@]}"; do
		read -r n size lf <<<"$cell"
		bs=("${backend_list[@]}")
		shuffle_array bs
		for b in "${bs[@]}"; do
			run=$((run + 1))
			read -r l1 _ </proc/loadavg
			row=$(run_one "$b" "$n" "$lf" "$l1")
			echo "$rep,$n,$size,$b,$row" >>"$out.csv"
			printf '%s: [%d/%d] rep %d clients %d size %d %-8s %s\n' \
				"$prog" "$run" "$nruns" "$rep" "$n" "$size" "$b" "$row" >&2
		done
	done
done
tb_noise_end "$out.noise"

write_report
