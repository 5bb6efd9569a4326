#!/bin/bash
# A --veth sweep killed with -9 mid-run (its own processes only: its
# tbench_srv and tbench go on running in its namespaces), then a new
# sweep: it removes the dead one's namespaces, with what ran in them,
# and says so; nothing of either is left. Needs root, ip, ethtool and
# the tcp backend; skipped (77) without them.
# ok and not_ok always succeed, so "test && ok || not_ok" is safe here.
# shellcheck disable=SC2015
set -euo pipefail
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (ip netns, ethtool -K)"
for p in ip ethtool jq; do
	command -v "$p" >/dev/null || skip "$p not installed (apt-get install iproute2 ethtool jq)"
done
command -v unshare >/dev/null || skip "unshare not installed (apt-get install util-linux)"
# Every sweep removes what dead sweeps left: one of the other tests' sweeps,
# running beside this one, could remove the killed sweep's namespaces first
# and say so on its own stderr. In a mount namespace of its own, with its
# own /run/netns and state directory, this test's sweeps see only each other.
if [ -z "${TB_SWEEP_CRASH_PRIVATE:-}" ]; then
	mkdir -p /run/netns /run/tbench-sweep
	TB_SWEEP_CRASH_PRIVATE=1 exec unshare -m --propagation private "$BASH" "$0" "$@"
fi
# shellcheck source=tests/testlib.sh
. "${top_srcdir:-.}/tests/testlib.sh"

mount -t tmpfs tbcrash-netns /run/netns || skip "could not mount a private /run/netns"
mount -t tmpfs tbcrash-state /run/tbench-sweep || skip "could not mount a private /run/tbench-sweep"
ip netns add "tbprobe-$$" 2>/dev/null || skip "ip netns add failed: no network namespaces here"
ip netns del "tbprobe-$$"

SWEEP="$SRCDIR/scripts/tbench-sweep"
TBENCH="$(cd "$(dirname "$TBENCH")" && pwd)/$(basename "$TBENCH")"
BUILD="$(dirname "$TBENCH")"
export TBENCH TBENCH_STATS="$BUILD/tbench-stats" TBENCH_SRV="$BUILD/tbench_srv"
backends="$("$TBENCH" -b list)"
grep -q '^tcp ' <<<"$backends" || skip "this tbench has no tcp backend"
LOAD="$SRCDIR/loadfiles/tiny.txt"

namespaces_of() { # PID: the sweep's namespaces still there
	local n
	for n in "tbsweep-$1" "tbsweep-$1-srv" "tbsweep-$1-cli"; do
		[ ! -e "/run/netns/$n" ] || echo "$n"
	done
}

DEAD=""
teardown() {
	local n pid
	if [ -n "$DEAD" ]; then
		for n in $(namespaces_of "$DEAD"); do
			for pid in $(ip netns pids "$n" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
			ip netns del "$n" 2>/dev/null || true
		done
	fi
	rm -rf "$TL_TMP"
}
trap teardown EXIT

# The first sweep, in a process group of its own; killed with -9 once its
# tbench runs, as a crash would: no clean-up of its own.
set -m
"$SWEEP" --veth --backends tcp --clients 1 --reps 1 -t 60 --warmup 0 --offload off --out "$TL_TMP/dead" -- -c "$LOAD" \
	>"$TL_TMP/dead.out" 2>"$TL_TMP/dead.err" </dev/null &
DEAD=$!
set +m
running=""
for _ in $(seq 600); do   # 60 s at most: a loaded machine is slow to set up
	running="$(ip netns pids "tbsweep-$DEAD-cli" 2>/dev/null || true)"
	[ -z "$running" ] || break
	kill -0 "$DEAD" 2>/dev/null || break
	sleep 0.1
done
[ -n "$running" ] && ok "the first sweep's tbench runs in tbsweep-$DEAD-cli" ||
	{ not_ok "the first sweep never ran tbench: $(tail -n 3 "$TL_TMP/dead.err" | paste -sd' ')"; tl_done; exit 1; }
# Its own processes (the script's, not the programs it started) killed at once.
programs="$(ip netns pids "tbsweep-$DEAD-srv" 2>/dev/null || true) $running"
own=""
for pid in $(pgrep -g "$DEAD" || true); do
	[[ "$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline")" != *"$SWEEP"* ]] || own="$own $pid"
done
# shellcheck disable=SC2086
kill -KILL $own 2>/dev/null || true
wait "$DEAD" 2>/dev/null || true
left="$(namespaces_of "$DEAD" | paste -sd' ')"
[ -n "$left" ] && ok "the killed sweep left its namespaces ($left), with its programs in them" ||
	not_ok "the killed sweep left nothing: nothing for the next sweep to remove"

# The next sweep removes them.
rc=0
"$SWEEP" --veth --backends tcp --clients 1 --reps 1 -t 1 --warmup 0 --offload off --out "$TL_TMP/next" -- -c "$LOAD" \
	>"$TL_TMP/next.out" 2>"$TL_TMP/next.err" </dev/null &
NEXT=$!
wait "$NEXT" || rc=$?
[ "$rc" -eq 0 ] && ok "the next sweep (exit 0)" || not_ok "the next sweep: exit $rc: $(tail -n 3 "$TL_TMP/next.err" | paste -sd' ')"
grep -q "removed namespace tbsweep-$DEAD-srv left by sweep $DEAD (not running)" "$TL_TMP/next.err" &&
	ok "it says it removed tbsweep-$DEAD-srv" || not_ok "it did not say so: $(grep -i 'namespace' "$TL_TMP/next.err" | paste -sd' ')"
left="$(namespaces_of "$DEAD" | paste -sd' ')"
[ -z "$left" ] && ok "no namespace of the killed sweep left" || not_ok "left: $left"
left="$(namespaces_of "$NEXT" | paste -sd' ')"
[ -z "$left" ] && ok "no namespace of the next sweep left" || not_ok "left: $left"
[ ! -e "/run/tbench-sweep/tbsweep-$DEAD.json" ] && [ ! -e "/run/tbench-sweep/tbsweep-$NEXT.json" ] &&
	ok "no state file of either left" || not_ok "state files left: $(ls /run/tbench-sweep)"
# A zombie (killed, not yet reaped by PID 1) runs no more.
alive=""
for pid in $programs; do
	state="$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1)" || state=""
	[ -z "$state" ] || [ "$state" = Z ] || alive="$alive $pid"
done
[ -z "$alive" ] && ok "no tbench or tbench_srv of the killed sweep left" ||
	not_ok "left running:$alive"
[ "$("$TBENCH_STATS" select --columns status --tsv "$TL_TMP/next/runs.csv")" = ok ] &&
	ok "the next sweep's run is ok" || not_ok "the next sweep's runs.csv: $(cat "$TL_TMP/next/runs.csv")"
tl_done
