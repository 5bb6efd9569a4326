# shellcheck shell=bash
# A client against a server of its own, both in a fresh network namespace
# (sourced, not run): for benchmarks whose server is a separate program
# (dbench's or our tbench_srv), where `tbench --netns` cannot help because
# the server must be inside the same namespace as the client.

# tb_ns_with_server SRV-LOG LIMIT SERVER-COMMAND... -- CLIENT-COMMAND...:
# in a new network namespace (a user namespace too when not root) with its
# loopback up and the soft limit on open files raised to the hard one (many
# clients need many), start the server in the background (its output to
# SRV-LOG), wait until it listens on 127.0.0.1:7003, run the client under
# `timeout -s INT -k 30 LIMIT`, then kill the server. The client's exit
# status, 124 when it ran out of time; 125 when the server never listened.
tb_ns_with_server() {
	local unshare=(unshare -n)
	[ "$(id -u)" -eq 0 ] || unshare=(unshare --user --map-root-user --net)
	# shellcheck disable=SC2016  # the program is for the inner bash
	"${unshare[@]}" bash -c '
		set -uo pipefail
		log="$1" limit="$2"
		shift 2
		srv=()
		while [ "$1" != -- ]; do srv+=("$1"); shift; done
		shift
		ulimit -n "$(ulimit -Hn)"
		ip link set lo up
		"${srv[@]}" </dev/null >"$log" 2>&1 &
		pid=$!
		listening=0
		for _ in $(seq 300); do
			if (exec 3<>/dev/tcp/127.0.0.1/7003) 2>/dev/null; then listening=1; break; fi
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		rc=125
		if [ "$listening" -eq 1 ]; then
			rc=0
			timeout -s INT -k 30 "$limit" "$@" || rc=$?
		else
			echo "${srv[0]}: did not listen on 127.0.0.1:7003 (its output: $log)" >&2
		fi
		kill -9 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		exit "$rc"
	' _ "$@"
}
