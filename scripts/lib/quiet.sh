# shellcheck shell=bash
# The quiet-machine protocol (sourced, not run): the test suite and every
# benchmark under bench/ take one lock, so that a benchmark never runs
# beside the suite or beside another benchmark; and the load and steal of
# the machine, for a results file to record.

# tb_quiet_lock WHO: takes the lock ($TBENCH_QUIET_LOCK, by default
# /tmp/tbench-quiet.lock) on file descriptor 9 for the rest of the calling
# shell, waiting (and saying for whom) while another holder has it. A
# process below the holder (a benchmark that runs itself again in a
# namespace) has it already: TBENCH_QUIET_LOCK_HELD names the lock there.
tb_quiet_lock() {
	local who="$1" lock="${TBENCH_QUIET_LOCK:-/tmp/tbench-quiet.lock}"
	[ "${TBENCH_QUIET_LOCK_HELD:-}" != "$lock" ] || return 0
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
	export TBENCH_QUIET_LOCK_HELD="$lock"
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

# ---- the record a results file carries -----------------------------------------

# tb_noise_begin WHO: before a benchmark's first run. Looks at the machine
# for TBENCH_QUIET_SECS (2) seconds and refuses (status 1, saying why) when
# more than TBENCH_QUIET_MAX_BUSY (20) percent of its CPUs were busy or
# TBENCH_QUIET_MAX_STEAL (5) percent stolen, unless TBENCH_ALLOW_NOISY=1,
# which goes on and marks the record disturbed. Then starts counting the
# steal of the whole benchmark.
tb_noise_begin() {
	local who="$1" why
	TB_NOISE_BEFORE="$(tb_machine_noise "${TBENCH_QUIET_SECS:-2}")"
	TB_NOISE_WHY="$(tb_noise_excess "$TB_NOISE_BEFORE" busy "${TBENCH_QUIET_MAX_BUSY:-20}")"
	if [ -n "$TB_NOISE_WHY" ]; then
		why="the machine is not quiet: $TB_NOISE_WHY before the start"
		if [ "${TBENCH_ALLOW_NOISY:-0}" != 1 ]; then
			echo "$who: $why; wait for it, or set TBENCH_ALLOW_NOISY=1 to measure anyway (the results file will say disturbed)" >&2
			return 1
		fi
		echo "$who: WARNING: $why; measuring anyway (TBENCH_ALLOW_NOISY=1)" >&2
		TB_NOISE_WHY="$why"
	fi
	read -r _ TB_NOISE_S0 TB_NOISE_T0 < <(tb_cpu_jiffies)
	TB_NOISE_START="$(date -u '+%Y-%m-%d %H:%M UTC')"
}

# "busy 35.0% over 20%" when the KIND percentage of a tb_machine_noise
# LINE is above MAX; nothing when it is not.
tb_noise_excess() { # LINE KIND MAX
	awk -v kind="$2" -v max="$3" '{
		for (i = 1; i < NF; i++) if ($i == kind) { v = $(i + 1); sub(/%.*/, "", v)
			if (v + 0 > max + 0) printf "%s %s%% over %s%%", kind, v, max } }' <<<"$1"
}

# tb_noise_end FILE: after the last run: the record, a few "key: value"
# lines kept beside the CSV (a report rewritten later still says it). The
# steal over the whole benchmark above TBENCH_QUIET_MAX_STEAL (5) percent
# marks it disturbed; so does a refusal overridden.
tb_noise_end() { # FILE
	local s1 t1 steal
	read -r _ s1 t1 < <(tb_cpu_jiffies)
	steal="$(awk -v s="$((s1 - TB_NOISE_S0))" -v t="$((t1 - TB_NOISE_T0))" 'BEGIN { printf "%.1f", (t > 0 ? 100 * s / t : 0) }')"
	if awk -v s="$steal" -v m="${TBENCH_QUIET_MAX_STEAL:-5}" 'BEGIN { exit !(s > m) }'; then
		TB_NOISE_WHY="${TB_NOISE_WHY:+$TB_NOISE_WHY; }steal ${steal}% of the CPUs' time over the benchmark (over ${TBENCH_QUIET_MAX_STEAL:-5}%)"
	fi
	{
		echo "started: $TB_NOISE_START"
		echo "before: $TB_NOISE_BEFORE"
		echo "during: steal ${steal}% of the CPUs' time; load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
		echo "verdict: ${TB_NOISE_WHY:+DISTURBED: }${TB_NOISE_WHY:-quiet}"
	} >"$1"
}

# tb_noise_md FILE: the record as Markdown lines for a results file.
tb_noise_md() { # FILE
	if [ ! -r "$1" ]; then
		echo "- Machine: not recorded (measured before the quiet-machine protocol)"
		return 0
	fi
	echo "- Machine before the first run: $(sed -n 's/^before: //p' "$1")"
	echo "- During the benchmark: $(sed -n 's/^during: //p' "$1")"
	case "$(sed -n 's/^verdict: //p' "$1")" in
	quiet) echo "- Verdict: quiet (the lock held: no test or other benchmark ran beside it)" ;;
	*) echo "- **Verdict: $(sed -n 's/^verdict: //p' "$1")**: these figures are unsure; measure again on a quiet machine" ;;
	esac
}
