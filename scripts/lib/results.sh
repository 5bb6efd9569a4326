# tbench-sweep's results directory (sourced, not run): whole-file writes,
# the runs already there for --resume, and meta.json with the machine's
# context around the sweep (load, pressure, steal, the sysctls that move
# tbench), the knobs and the precision rule.
# shellcheck shell=bash

# ---- results directory ---------------------------------------------------------------------

# Whole-file writes: everything goes through a temporary file and a rename.
TMPFILES=()
write_file() { # PATH, contents on stdin
	local tmp="$1.tmp.$$"
	TMPFILES+=("$tmp")
	cat >"$tmp"
	mv -f "$tmp" "$1"
}

# Checks OUT for --resume (or that it holds no sweep yet); prints the runs
# already there ("backend<TAB>clients<TAB>offload<TAB>knobs...<TAB>rep" lines,
# the knobs of KNOB_COLUMNS).
existing_runs() { # STATS
	local key
	key="$(printf '%s,' backend clients offload "${KNOB_COLUMNS[@]}")rep"
	if [ "$RESUME" -eq 0 ]; then
		[ ! -e "$OUT/runs.csv" ] || die "$OUT already holds a sweep: use --resume to continue it, or another --out"
		return
	fi
	[ -f "$OUT/runs.csv" ] || die "--resume: $OUT/runs.csv does not exist"
	[ "$(head -n 1 "$OUT/runs.csv")" = "$("$1" row --header)" ] ||
		die "--resume: $OUT/runs.csv has other columns than this version writes ($1 row --header)"
	[ -z "$(knob_unrecorded)" ] ||
		die "--resume: runs.csv cannot say which runs of knob $(knob_unrecorded | paste -sd,) are done (no column)"
	if [ "$RETRY_FAILED" -eq 1 ]; then
		"$1" select --where status=ok --columns "$key" --tsv "$OUT/runs.csv"
	else
		"$1" select --columns "$key" --tsv "$OUT/runs.csv"
	fi
}

# The command line as one could paste it: words quoted only where needed.
shell_words() {
	local w line=""
	for w in "$@"; do
		if [[ "$w" =~ ^[A-Za-z0-9_./,:=@%+-]+$ ]]; then line+=" $w"; else line+=" '${w//\'/\'\\\'\'}'"; fi
	done
	echo "${line# }"
}

git_revision() {
	if git -C "$SCRIPT_DIR/.." rev-parse --git-dir >/dev/null 2>&1; then
		git -C "$SCRIPT_DIR/.." describe --always --dirty --abbrev=12 2>/dev/null || echo unknown
	else
		echo unknown
	fi
}

# The client model of the runs recorded so far ("processes", "threads", or
# both joined by a comma); before any, the one asked for.
runs_model() { # STATS
	local m
	m="$("$1" select --columns model --tsv "$OUT/runs.csv" 2>/dev/null | sort -u | grep . | paste -sd, || true)"
	echo "${m:-${KNOB_VARY[model]:-$(model_name)}}"
}

# ---- the machine around the sweep -------------------------------------------------------------

# The sysctls that move tbench's figures, recorded as they were.
NET_SYSCTLS="net.core.default_qdisc net.ipv4.tcp_congestion_control net.core.rmem_max
net.core.wmem_max net.core.rmem_default net.core.wmem_default net.ipv4.tcp_rmem net.ipv4.tcp_wmem
net.ipv4.tcp_autocorking net.ipv4.tcp_slow_start_after_idle net.ipv4.tcp_notsent_lowat
net.core.busy_poll net.core.busy_read net.core.netdev_max_backlog"

# How loaded the machine is now: load averages, CPU pressure (null where
# the kernel has no PSI), and /proc/stat's steal and total CPU ticks, for
# the steal over the sweep.
context_sample() {
	local psi=null
	if [ -r /proc/pressure/cpu ]; then
		psi="$(awk '{ printf "%s\"%s\": {", (NR > 1 ? ", " : "{"), $1
			for (i = 2; i <= NF; i++) { split($i, kv, "="); printf "%s\"%s\": %s", (i > 2 ? ", " : ""), kv[1], kv[2] }
			printf "}" } END { print (NR ? "}" : "null") }' /proc/pressure/cpu 2>/dev/null || echo null)"
	fi
	jq -n --arg at "$(date -Iseconds)" --argjson psi "$psi" \
		--arg loadavg "$(cut -d' ' -f1-3 /proc/loadavg)" \
		--arg ticks "$(awk '/^cpu / { t = 0; for (i = 2; i <= 9; i++) t += $i; print $9, t }' /proc/stat)" '{
		  at: $at, loadavg: ($loadavg | split(" ") | map(tonumber)), psi_cpu: $psi,
		  steal_ticks: ($ticks | split(" ")[0] | tonumber), cpu_ticks: ($ticks | split(" ")[1] | tonumber)
		}'
}

# What does not change during a sweep: the kernel's command line, the CPU
# frequency governors (or "none"), the network sysctls (null: not readable).
context_fixed() {
	local name gov sysctls="{}"
	gov="$(cat /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor 2>/dev/null | sort -u | paste -sd, || true)"
	for name in $NET_SYSCTLS; do
		sysctls="$(jq -c --arg n "$name" --arg v "$(tr -s '\t' ' ' <"/proc/sys/${name//.//}" 2>/dev/null || echo)" \
			'. + { ($n): (if $v == "" then null else $v end) }' <<<"$sysctls")"
	done
	jq -n --arg cmdline "$(cat /proc/cmdline 2>/dev/null || true)" --arg gov "${gov:-none}" \
		--argjson sysctls "$sysctls" '{ cmdline: $cmdline, cpu_governor: $gov, net_sysctls: $sysctls }'
}

# The context of meta.json: fixed, the start sample, and (once the sweep
# ended) the end sample and the steal over the sweep, % of all CPU time.
context_json() { # STATUS
	local end=null
	[ "$1" = running ] || end="$(context_sample)"
	jq -n --argjson fixed "$CONTEXT_FIXED" --argjson start "$CONTEXT_START" --argjson fin "$end" '
	  $fixed + { start: $start, end: $fin,
	    steal_pct: (if $fin == null or $fin.cpu_ticks <= $start.cpu_ticks then null
	                else 100 * ($fin.steal_ticks - $start.steal_ticks) / ($fin.cpu_ticks - $start.cpu_ticks) end) }'
}

write_meta() { # STATUS
	local end=null
	[ "$1" = running ] || end="\"$(date -Iseconds)\""
	jq -n \
		--arg status "$1" --arg start "$FIRST_START" --argjson end_t "$end" \
		--arg session_start "$START_ISO" \
		--arg command "$COMMAND_LINE" --argjson argv "$(resume_argv_json "${ORIG_ARGS[@]}")" --arg cwd "$PWD" \
		--arg kernel "$(uname -r)" --arg kernel_version "$(uname -v)" --arg machine "$(uname -m)" \
		--arg host "$(hostname)" \
		--arg cpu "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)" \
		--argjson cores "$(nproc)" \
		--argjson cores_all "$(getconf _NPROCESSORS_CONF)" \
		--argjson mem_kb "$(sed -n 's/^MemTotal: *\([0-9]*\) kB$/\1/p' /proc/meminfo)" \
		--arg git "$GIT_REV" --arg tbench_version "$TBENCH_VERSION" --arg tbench "$TBENCH_BIN" \
		--arg tbench_stats "$STATS" --arg model "$(runs_model "$STATS")" \
		--arg mode "$MODE" --argjson mtu "$MTU" --arg dev "$DEV" --arg server "$SERVER" \
		--arg backends "$(paste -sd, <<<"$BACKEND_LIST")" \
		--arg clients "$(paste -sd, <<<"$CLIENT_LIST")" \
		--arg settings "$(cut -d'|' -f1 <<<"$SETTINGS" | paste -sd,)" \
		--arg net_backends "$NET_BACKENDS" --argjson all_offloads "$ALL_OFFLOADS" \
		--arg time "$TIME" --arg warmup "$WARMUP" --argjson reps "$REPS" \
		--argjson seed "$ORDER_SEED" --arg order "$ORDER_TEXT" \
		--arg lbl "$LABEL" \
		--argjson knobs "$(knobs_json)" --arg cpu0 "$KNOB_CPU0" --arg cpu1 "$KNOB_CPU1" \
		--argjson devices "$DEVICES_JSON" \
		--argjson prev "$PREV_SESSIONS" --argjson remote_hosts "$REMOTE_META" \
		--argjson context "$(context_json "$1")" \
		--argjson precision "$(precision_json)" \
		--argjson extra_args "$(json_strings "${EXTRA_ARGS[@]}")" '{
		  status: $status, start: $start, end: $end_t,
		  command: $command, argv: $argv, cwd: $cwd,
		  host: { name: $host, kernel: $kernel, kernel_version: $kernel_version, machine: $machine,
		          cpu_model: $cpu, cores_online: $cores, cores_configured: $cores_all,
		          memory_kb: $mem_kb },
		  tbench: { path: $tbench, version: $tbench_version, git_revision: $git,
		            tbench_stats: $tbench_stats, extra_args: $extra_args },
		  sweep: { mode: $mode, client_model: $model, backends: ($backends | split(",")),
		           clients: ($clients | split(",") | map(tonumber)),
		           offload_settings: ($settings | split(",")),
		           offload_backends: (if $all_offloads == 1 then "all" else ($net_backends | split(",")) end),
		           knobs: $knobs, placement_cpus: { same: [$cpu0, $cpu0], split: [$cpu0, $cpu1] },
		           time_s: ($time | tonumber), warmup_s: ($warmup | tonumber), reps: $reps, label: $lbl,
		           precision: $precision,
		           order: $order, order_seed: $seed,
		           veth_mtu: (if $mode == "veth" then $mtu else null end),
		           dev: (if $dev == "" then null else $dev end),
		           server: (if $server == "" then null else $server end) },
		  devices: $devices, context: $context,
		  remote_hosts: $remote_hosts,
		  sessions: ($prev + [{ command: $command, start: $session_start, end: $end_t, status: $status }])
		}' | write_file "$OUT/meta.json"
}

# The --precision rule, as JSON (null without it).
precision_json() {
	if [ -z "$PREC_PCT" ]; then echo null; return; fi
	jq -n -c --arg pct "$PREC_PCT" --arg fig "$PREC_FIGURE" --argjson min "$REPS" --argjson max "$PREC_MAX_REPS" \
		--arg budget "$PREC_BUDGET" '{ pct: ($pct | tonumber), figure: $fig, min_reps: $min, max_reps: $max,
		  budget_s: (if $budget == "" then null else ($budget | tonumber) end) }'
}

# The knobs varied and their values, as JSON: { "mtu": ["1500", "9000"], ... }.
knobs_json() {
	local k
	for k in $(knob_varied); do jq -n --arg k "$k" --arg v "${KNOB_VARY[$k]}" '{ ($k): ($v | split(",")) }'; done |
		jq -s -c 'add // {}'
}

write_summary() {
	# Each disturbed run is said as it ends, not again at every summary.
	"$STATS" summarize "$OUT/runs.csv" 2> >(grep -v '^tbench-stats: note: .* disturbed run' >&2) |
		write_file "$OUT/summary.csv"
}
