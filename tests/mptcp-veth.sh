#!/bin/bash
# MPTCP on the sweep's --veth set-up (scripts/tbtools/netns.py, through
# python3 -m tbtools.netns): tbench -b mptcp in the client namespace
# against tbench_srv --mptcp across the veth pair. First as its veth
# command leaves it: one subflow a connection. Then with mptcp-paths
# (Net.mptcp_paths): more subflows than connections in tbench's counts,
# MP_JOINs in both namespaces' MPTcpExt counters, and bytes on the second
# pair. Needs root, network namespaces and MPTCP; skipped (77), saying
# why, without.
set -euo pipefail
# shellcheck source=tests/testlib.sh
. "${top_srcdir:-.}/tests/testlib.sh"
BUILD="$(cd "${top_builddir:-.}" && pwd)"
TINY="$SRCDIR/loadfiles/tiny.txt"
# The sweep's own set-up, its namespaces named by this shell's PID.
NETNS=(env PYTHONPATH="$SRCDIR/scripts" PYTHONDONTWRITEBYTECODE=1 python3 -m tbtools.netns)
NET_NS_CLI="" NET_NS_SRV="" NET_ADDR_SRV="" NET_VETH2_CLI=""
while read -r name value; do
	case "$name" in NET_NS_CLI | NET_NS_SRV | NET_ADDR_SRV | NET_VETH2_CLI) printf -v "$name" %s "$value" ;; esac
done < <("${NETNS[@]}" names --owner $$)

skip() {
	echo "SKIP: $*"
	exit 77
}

# An MPTcpExt counter of a namespace (/proc/net/netstat: a line of names, a line of values).
mptcp_counter() { # NS NAME
	ip netns exec "$1" cat /proc/net/netstat |
		awk -v name="$2" '$1 == "MPTcpExt:" { if (!n) { for (i = 2; i <= NF; i++) col[$i] = i; n = 1 } else v = $col[name] }
			END { print v + 0 }'
}

# A timed run (subflows join after the connection is made) into FILE.
run_mptcp() { # WHAT FILE
	expect_exit 0 "$1" ip netns exec "$NET_NS_CLI" "$BUILD/tbench" -b mptcp 2 -t 2 --warmup 1 -q \
		-c "$TINY" --json "$2" "$NET_ADDR_SRV"
}

{ [ -x "$BUILD/tbench" ] && [ -x "$BUILD/tbench_srv" ]; } || skip "build tbench and tbench_srv first"
[ "$(id -u)" -eq 0 ] || skip "needs root: the veth set-up makes network namespaces"
{ command -v ip >/dev/null && command -v jq >/dev/null; } || skip "needs ip (iproute2) and jq"
ip netns add "tbprobe-$$" 2>/dev/null || skip "ip netns add failed: no network namespaces here"
ip netns del "tbprobe-$$"
[ "$(sysctl -n net.mptcp.enabled 2>/dev/null || echo 0)" = 1 ] || skip "no MPTCP here (net.mptcp.enabled)"

trap '"${NETNS[@]}" down --owner $$; rm -rf "$TL_TMP"' EXIT
"${NETNS[@]}" veth --owner $$ --mtu 1500 --srv-log "$TL_TMP/srv.log" --tbench-srv "$BUILD/tbench_srv" -- --mptcp

run_mptcp "mptcp across the veth pair, one path" "$TL_TMP/one.json"
check "one path: MPTCP used, one subflow a connection" jq -e '.backend_counters |
	.mptcp_connections > 0 and .subflows == .mptcp_connections' "$TL_TMP/one.json"

"${NETNS[@]}" mptcp-paths --owner $$ --mtu 1500 || skip "mptcp-paths could not set up the second path (above)"
run_mptcp "mptcp across the veth pair, two paths" "$TL_TMP/two.json"
jq -c .backend_counters "$TL_TMP/two.json"
check "two paths: more subflows than connections" jq -e '.backend_counters |
	.mptcp_connections > 0 and .subflows > .mptcp_connections' "$TL_TMP/two.json"
joins_cli="$(mptcp_counter "$NET_NS_CLI" MPJoinSynAckRx)"
joins_srv="$(mptcp_counter "$NET_NS_SRV" MPJoinAckRx)"
echo "# MPJoinSynAckRx (client) $joins_cli, MPJoinAckRx (server) $joins_srv"
check "the client's MP_JOINs were answered" [ "$joins_cli" -gt 0 ]
check "the server accepted MP_JOINs" [ "$joins_srv" -gt 0 ]
read -r bytes packets < <(ip -n "$NET_NS_CLI" -s -j link show "$NET_VETH2_CLI" |
	jq -r '.[0].stats64.tx | "\(.bytes) \(.packets)"')
echo "# sent over $NET_VETH2_CLI: $bytes bytes in $packets packets"
# Requests, not only the joins and acknowledgements: a frame without data
# is under 100 bytes (Ethernet, IP, TCP with timestamps and MPTCP's DSS).
# How much more depends on when the join completed and on the scheduler,
# so the floor is small (seen: 73 KB to 1.3 MB in 2 s).
check "the second pair carried requests (bytes beyond 100 a frame: $((bytes - 100 * packets)))" \
	[ "$((bytes - 100 * packets))" -gt 5000 ]
tl_done
