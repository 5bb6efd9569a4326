#!/bin/bash
# A loopback sweep as an unprivileged user: as root, the sweep is started as
# `nobody` (setpriv); as anyone else, as that user. Each run's tbench
# --netns makes a user namespace and a network namespace of its own, sets
# the offloads on its lo and reads them back. Skipped (77), saying why,
# where the kernel refuses user namespaces to that user.
# ok and not_ok always succeed, so "test && ok || not_ok" is safe here.
# shellcheck disable=SC2015
set -euo pipefail
# shellcheck source=tests/testlib.sh
. "${top_srcdir:-.}/tests/testlib.sh"

skip() { echo "SKIP: $*"; exit 77; }
command -v jq >/dev/null || skip "jq not installed"
TBENCH="$(cd "$(dirname "$TBENCH")" && pwd)/$(basename "$TBENCH")"
STATS="$(dirname "$TBENCH")/tbench-stats"
SWEEP="$(cd "$SRCDIR/scripts" && pwd)/tbench-sweep"

AS=()
WORK="$TL_TMP"
if [ "$(id -u)" -eq 0 ]; then
	command -v setpriv >/dev/null || skip "setpriv not installed (util-linux): cannot become nobody"
	AS=(setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups --reset-env)
	# nobody must reach its directory through ours, and own it.
	chmod 755 "$TL_TMP"
	WORK="$TL_TMP/nobody"
	mkdir "$WORK"
	chown nobody "$WORK"
	"${AS[@]}" test -x "$TBENCH" -a -r "$SWEEP" ||
		skip "nobody cannot run $TBENCH or read $SWEEP (a directory on the way is closed to others)"
fi
who="$("${AS[@]}" id -un 2>/dev/null || "${AS[@]}" id -u)"
if command -v unshare >/dev/null && ! "${AS[@]}" unshare --user --map-root-user --net true 2>"$TL_TMP/userns.err"; then
	skip "the kernel refuses user namespaces to $who: $(head -n 1 "$TL_TMP/userns.err")" \
		"(see sysctl kernel.unprivileged_userns_clone, user.max_user_namespaces)"
fi

out="$WORK/sweep"
# cd: the sweep records its working directory, which must be nobody's to enter.
expect_exit 0 "a loopback sweep as $who: tcp and pipe, offload on and off" \
	"${AS[@]}" env -C "$WORK" PATH="$PATH" TBENCH="$TBENCH" TBENCH_STATS="$STATS" \
	"$SWEEP" --backends pipe,tcp --clients 1 --reps 1 -t 1 --warmup 0 --out "$out"
[ "$(tail -n +2 "$out/runs.csv" | wc -l)" -eq 3 ] && ok "3 runs recorded" || not_ok "3 runs: $(cat "$out/runs.csv")"
cols() { "$STATS" select --columns "$1" --tsv "$out/runs.csv"; }
[ "$(cols status | sort -u)" = ok ] && ok "every run ok" || { not_ok "every run ok"; cat "$out/runs.csv"; }
[ "$(cols netns | sort -u)" = private+userns ] && ok "each in a user and a network namespace of its own" ||
	not_ok "netns: $(cols netns | sort -u)"
R=""   # the read-back offloads: tso_read, ... where runs.csv has the knobs asked for too
# (the header read whole: under pipefail a "| grep -q" may SIGPIPE its writer)
header="$("$STATS" row --header)" || header=""
[[ ",$header," != *,tso_read,* ]] || R=_read
[ "$("$STATS" select --where backend=tcp --columns "offload,dev,tso$R,gso$R" --tsv "$out/runs.csv" | sort)" = \
	$'off\tlo\toff\toff\non\tlo\ton\ton' ] && ok "tcp: offloads set and read back on its own lo" ||
	not_ok "tcp offloads: $(cols "offload,dev,tso$R,gso$R")"
"$STATS" select --where backend=tcp --columns cost_segments_out --tsv "$out/runs.csv" |
	awk '!($1 > 0) { bad = 1 } END { exit bad }' && ok "tcp: segments per operation counted" ||
	not_ok "tcp segments: $(cols cost_segments_out)"
[ "$(stat -c %U "$out/runs.csv")" = "$who" ] || [ "${#AS[@]}" -eq 0 ] && ok "the results are $who's" ||
	not_ok "results owned by $(stat -c %U "$out/runs.csv")"
tl_done
