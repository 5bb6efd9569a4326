# tbench-sweep's one run (sourced, not run): its knobs applied, tbench (and
# a server) started, its JSON turned into a row of runs.csv, or the reason
# it failed recorded in that row.
# shellcheck shell=bash

# ---- one run -----------------------------------------------------------------------------------

CHILD=""            # the tbench running now, for clean-up
CUR_PARTS=()        # its files being written, removed if the sweep stops

# The last line of a failed run's output that says why.
log_error() { # LOG
	grep -v '^+ \|^offloads of\|^exit status' "$1" | grep -i 'error\|tbench\|fail' | tail -n 1 || true
}

# Sets a run's device knobs (--veth, --dev) on the devices DEVS it crosses
# and, with --veth, gives it the tbench_srv its server side asks for. Writes
# to WHY-FILE why the run cannot go ahead (nothing when it can), to stderr
# what was read back. In the sweep's own shell: it keeps what it changed.
prepare_run() { # KNOBS DEVS SERVER WHY-FILE BACKEND
	local kind value srv_args=()
	: >"$4"
	[ "$MODE" = lo ] || while read -r kind value; do
		[ -n "$kind" ] || continue
		if [ -n "$2" ]; then "net_set_$kind" "$2" "$value"; else echo "$kind=$value: this run crosses no device"; fi
	done < <(knob_device_settings "$1") >>"$4"
	{ [ "$MODE" = veth ] || [ "$MODE" = remote ]; } && [ -n "$3" ] && [ ! -s "$4" ] || return 0
	[ "$THREADS" -eq 0 ] || srv_args=(--threads)
	mapfile -t -O "${#srv_args[@]}" srv_args < <(knob_server_args "$1")
	! backend_has "$5" multipath || srv_args+=(--mptcp)
	if [ "$MODE" = remote ]; then
		remote_server_start "${srv_args[@]}" || echo "$REMOTE_ERROR" >>"$4"
	else
		net_start_server "${srv_args[@]}" || echo "$NET_SRV_ERROR" >>"$4"
	fi
}

join_lines() { awk 'NF { printf "%s%s", sep, $0; sep = "; " }'; }

# The row of a run (tbench-stats row): from its JSON, as a failed run with
# the reason WHY when it ran but the sweep failed it (a knob read back
# otherwise than asked). The JSON kept is tbench's own.
run_row() { # WHY SET-ARGS... [-- JSON]
	local why="$1" json="" args=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=("$1"); shift; done
	[ $# -lt 2 ] || json="$2"
	if [ -n "$json" ] && [ -n "$why" ]; then
		jq --arg why "$why" '.result.status = "failed" | .result.error = $why' "$json" >"$TB_TMP/failed.json"
		json="$TB_TMP/failed.json"
	fi
	"$STATS" row "${args[@]}" ${json:+"$json"}
}

# Runs one record of the plan and appends its row to runs.csv; prints one
# line on how it went. Status 0 if the run was ok, 1 if not. It runs in the
# sweep's own shell (not in $(...)) so that clean-up can stop its tbench.
run_one() { # RUN
	local rep b c label tso gso gro net knobs id json log route ns server devs readback started rc=""
	local set=() json_arg=() srv0="" srv1="" row outcome why tbench_ns=0 own=1 cmd
	IFS='|' read -r rep b c label tso gso gro net knobs <<<"$1"
	id="$(run_id "$b" "$c" "$label" "$rep" "$knobs")"
	json="$OUT/runs/$id.json"
	log="$OUT/runs/$id.log"
	CUR_PARTS=("$json.part" "$log.part")
	rm -f "${CUR_PARTS[@]}"
	: >"$log.part"
	route="$(net_route "$MODE" "$net" "$b" "$DEV" "$SERVER")"
	IFS='|' read -r ns server devs <<<"$route"
	if [ "$MODE" = veth ] && [ -n "$server" ] && [ "$(knob_value "$knobs" family)" = ipv6 ]; then
		server="$NET_ADDR6_SRV"
	fi
	[ "$MODE" != lo ] || tbench_ns=1
	[ -z "$server" ] || own=0
	set=(--set "backend=$b" --set "clients=$c" --set "offload=$label" --set "rep=$rep" --set "model=$(knob_model "$knobs" "$(model_name)")")
	mapfile -t -O "${#set[@]}" set < <(knob_set_args "$knobs" "$label" "$net")
	if [ "$net" -eq 0 ]; then
		set+=(--set dev= --set "tso$KNOB_READ=n/a" --set "gso$KNOB_READ=n/a" --set "gro$KNOB_READ=n/a")
	elif [ -n "$devs" ]; then
		readback="$(net_apply_offloads "$devs" "$tso" "$gso" "$gro" 2>>"$log.part")"
		IFS='|' read -r -a readback <<<"$readback"
		set+=(--set "dev=${readback[0]}" --set "tso$KNOB_READ=${readback[1]}" --set "gso$KNOB_READ=${readback[2]}"
			--set "gro$KNOB_READ=${readback[3]}")
		if [ -n "$tso" ] && [ "$tso" != "${readback[1]}" ] || [ -n "$gso" ] && [ "$gso" != "${readback[2]}" ] ||
			[ -n "$gro" ] && [ "$gro" != "${readback[3]}" ]; then
			echo "$PROG: warning: $b offload=$label: read back tso=${readback[1]} gso=${readback[2]} gro=${readback[3]}" >&2
		fi
	fi
	# Else tbench --netns sets them on its lo and fails the run unless they
	# read back as asked; its JSON says what they were.
	prepare_run "$knobs" "$devs" "$server" "$TB_TMP/why" "$b" 2>>"$log.part"
	why="$(join_lines <"$TB_TMP/why")"

	mapfile -t cmd < <(tbench_command "$TBENCH_BIN" "$1" "$server")
	cmd=("${cmd[0]}" --json "$json.part" "${cmd[@]:1}")
	echo "+ ${cmd[*]}" >>"$log.part"
	if [ -n "$why" ]; then
		echo "not run: $why" >>"$log.part"
	else
		[ -z "$NET_SRV_PID" ] || [ -z "$server" ] || srv0="$("$STATS" proc-cpu "$NET_SRV_PID")"
		started="$(date -Iseconds)"
		# Started directly (no function, no subshell), so that $! is tbench itself:
		# ip netns exec execs its command.
		if remote_clients_for "$server"; then
			remote_clients_run "$json.part" "$log.part" "${cmd[@]}" &
		elif [ -n "$ns" ]; then
			ip netns exec "$ns" "${cmd[@]}" >>"$log.part" 2>&1 &
		else
			"${cmd[@]}" >>"$log.part" 2>&1 &
		fi
		CHILD=$!
		supervise_child "$CHILD"
		rc=0
		wait "$CHILD" || rc=$?
		CHILD=""
		supervise_child
		supervise_check     # an interrupted run is not recorded
		! remote_clients_for "$server" || why="$(remote_clients_why)"
		[ -z "$srv0" ] || srv1="$("$STATS" proc-cpu "$NET_SRV_PID")"
		[ -z "$srv1" ] || set+=(--server-cpu-start "$srv0" --server-cpu-end "$srv1")
		echo "exit status $rc" >>"$log.part"
		set+=(--set "exit_code=$rc" --set "started=$started")
		[ "$rc" -eq 0 ] || set+=(--set "error=$(log_error "$log.part" | grep . || echo "exit status $rc")")
	fi
	net_restore_devices
	if [ -s "$json.part" ]; then
		mv -f "$json.part" "$json"
		set+=(--set "json=runs/$id.json")
		json_arg=("$json")
		[ "$rc" != 0 ] || why="$(knob_check_json "$json" "$knobs" "$tbench_ns" "$own" 2>>"$log.part" | join_lines)"
		[ -z "$why" ] || echo "read back: $why" >>"$log.part"
	fi
	[ -z "$why" ] || set+=(--set "error=$why")
	# A JSON that tbench-stats cannot read: the run is recorded without it.
	if ! row="$(run_row "$why" "${set[@]}" -- "${json_arg[@]}" 2>"$TB_TMP/row.err")"; then
		set+=(--set "error=$(head -n 1 "$TB_TMP/row.err")")
		json_arg=()
		row="$("$STATS" row "${set[@]}")"
	fi
	mv -f "$log.part" "$log"
	CUR_PARTS=()
	{ cat "$OUT/runs.csv"; echo "$row"; } | write_file "$OUT/runs.csv"
	write_summary

	# One cell a line: read would merge the tabs around an empty cell.
	mapfile -t outcome < <(run_row "$why" --columns \
		"status,mb_per_sec,dev,tso$KNOB_READ,gso$KNOB_READ,gro$KNOB_READ,error,disturbed" \
		"${set[@]}" -- "${json_arg[@]}" | tr '\t' '\n')
	if [ "${outcome[0]}" = ok ]; then
		local offloads="" noise=""
		[ "$net" -eq 0 ] || offloads="  (${outcome[2]}: tso=${outcome[3]} gso=${outcome[4]} gro=${outcome[5]})"
		case "${outcome[7]:-}" in
		"" | no) ;;
		*) noise="  disturbed: ${outcome[7]}, left out of summary.csv (runs/$id.log says why)" ;;
		esac
		log "        ok: $(printf '%.2f' "${outcome[1]}") MB/sec$offloads$noise"
		return 0
	fi
	local exit=""
	[ "${rc:-0}" -eq 0 ] || exit="exit $rc: "
	echo "        ${outcome[0]}: $exit${outcome[6]:-no reason given} (log: runs/$id.log)" >&2
	return 1
}
