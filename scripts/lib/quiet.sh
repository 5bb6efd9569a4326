# shellcheck shell=bash
# The quiet-machine protocol (sourced, not run): the test suite and every
# benchmark under bench/ take one lock, so that a benchmark never runs
# beside the suite or beside another benchmark; and the load and steal of
# the machine, for a results file to record.

# tb_quiet_lock WHO: takes the lock ($TBENCH_QUIET_LOCK, by default
# /tmp/tbench-quiet.lock) on file descriptor 9 for the rest of the calling
# shell, waiting (and saying for whom) while another holder has it.
tb_quiet_lock() {
	local who="$1" lock="${TBENCH_QUIET_LOCK:-/tmp/tbench-quiet.lock}"
	if ! exec 9>>"$lock"; then
		echo "$who: cannot open the lock $lock (set TBENCH_QUIET_LOCK to a writable path)" >&2
		return 2
	fi
	if ! flock -n 9; then
		echo "$who: waiting for the lock $lock, held by: $(cat "$lock" 2>/dev/null || echo '?')" >&2
		flock 9
	fi
	# The holder, for whoever waits next; the lock is on the open file, not its contents.
	printf '%s (pid %s) since %s\n' "$who" "$$" "$(date -u '+%H:%M:%S UTC')" >"$lock" 2>/dev/null || true
}

# tb_bench_lock WHO ARGS...: a benchmark's tb_quiet_lock, taken unless its
# arguments only ask for its help.
tb_bench_lock() {
	local who="$1" a
	shift
	for a in "$@"; do
		case "$a" in -h | --help) return 0 ;; esac
	done
	tb_quiet_lock "$who"
}

# tb_cpu_jiffies: "busy steal total" summed over every CPU, from /proc/stat.
tb_cpu_jiffies() {
	awk '$1 == "cpu" { busy = $2 + $3 + $4 + $7 + $8; print busy, $9, busy + $5 + $6 + $9; exit }' /proc/stat
}

# tb_machine_noise SECONDS: one line on the machine's state over SECONDS:
# its load averages, and the CPU time that was busy and that the hypervisor
# stole, as a share of all its CPUs' time.
tb_machine_noise() {
	local secs="$1" b0 s0 t0 b1 s1 t1
	read -r b0 s0 t0 < <(tb_cpu_jiffies)
	sleep "$secs"
	read -r b1 s1 t1 < <(tb_cpu_jiffies)
	awk -v b="$((b1 - b0))" -v s="$((s1 - s0))" -v t="$((t1 - t0))" -v secs="$secs" \
		-v load="$(cut -d' ' -f1-3 /proc/loadavg)" 'BEGIN {
		if (t <= 0) t = 1
		printf "load %s; over %s s: busy %.1f%%, steal %.1f%% of %d CPUs\n", load, secs, 100 * b / t, 100 * s / t, '"$(nproc)"'
	}'
}
