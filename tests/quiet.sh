#!/bin/bash
# The quiet-machine protocol's record (scripts/lib/quiet.sh): a benchmark
# refuses to start on a machine busier than the bound, goes on with
# TBENCH_ALLOW_NOISY=1 and says disturbed, says quiet under a bound the
# machine meets, and a results file of a benchmark without a record says so.
# ok and not_ok always succeed, so "test && ok || not_ok" is safe here.
# shellcheck disable=SC2015
set -euo pipefail
# shellcheck source=tests/testlib.sh
. "${top_srcdir:-.}/tests/testlib.sh"
# shellcheck source=scripts/lib/quiet.sh
. "$SRCDIR/scripts/lib/quiet.sh"
TL_TMP="$(mktemp -d)"
trap 'rm -rf "$TL_TMP"' EXIT
export TBENCH_QUIET_SECS=1

# The lock: a process below its holder (a benchmark run again inside a
# namespace) has it already; any other process waits for it.
# shellcheck disable=SC2016  # $1 is the inner shell's
(
	export TBENCH_QUIET_LOCK="$TL_TMP/lock"
	tb_quiet_lock holder 2>/dev/null
	lib="$SRCDIR/scripts/lib/quiet.sh"
	timeout 10 bash -c '. "$1"; tb_quiet_lock child' _ "$lib" 2>"$TL_TMP/child.err" && echo child-has-it
	env -u TBENCH_QUIET_LOCK_HELD timeout 2 bash -c '. "$1"; tb_quiet_lock other' _ "$lib" 2>"$TL_TMP/other.err" ||
		echo other-waited
) >"$TL_TMP/lock.out"
[ "$(paste -sd' ' "$TL_TMP/lock.out")" = "child-has-it other-waited" ] &&
	grep -q 'other: waiting for the lock .*, held by: holder (pid' "$TL_TMP/other.err" &&
	ok "the lock: a child of its holder goes on, another process waits, told who holds it" ||
	not_ok "the lock: $(cat "$TL_TMP/lock.out" "$TL_TMP/child.err" "$TL_TMP/other.err")"

# A bound below any reading: always too busy.
rc=0
TBENCH_QUIET_MAX_BUSY=-1 tb_noise_begin bench-x 2>"$TL_TMP/err" || rc=$?
[ "$rc" -eq 1 ] && grep -q 'bench-x: the machine is not quiet: busy .* over -1%.*TBENCH_ALLOW_NOISY=1' "$TL_TMP/err" &&
	ok "too busy: refused, saying how to measure anyway" || not_ok "too busy: status $rc: $(cat "$TL_TMP/err")"

TBENCH_QUIET_MAX_BUSY=-1 TBENCH_ALLOW_NOISY=1 tb_noise_begin bench-x 2>"$TL_TMP/err" &&
	tb_noise_end "$TL_TMP/noisy" &&
	grep -q '^verdict: DISTURBED: the machine is not quiet: busy' "$TL_TMP/noisy" &&
	grep -q '^- \*\*Verdict: DISTURBED' <<<"$(tb_noise_md "$TL_TMP/noisy")" &&
	ok "TBENCH_ALLOW_NOISY=1: measured, the record and the results file say disturbed" ||
	not_ok "TBENCH_ALLOW_NOISY=1: $(cat "$TL_TMP/err" "$TL_TMP/noisy" 2>/dev/null)"

# Bounds any machine meets: quiet, with the readings in the record.
TBENCH_QUIET_MAX_BUSY=101 TBENCH_QUIET_MAX_STEAL=101 tb_noise_begin bench-x 2>"$TL_TMP/err" &&
	TBENCH_QUIET_MAX_STEAL=101 tb_noise_end "$TL_TMP/quiet" &&
	grep -q '^verdict: quiet$' "$TL_TMP/quiet" &&
	grep -Eq '^before: load [0-9.]+ [0-9.]+ [0-9.]+; over 1 s: busy [0-9.]+%, steal [0-9.]+% of [0-9]+ CPUs$' "$TL_TMP/quiet" &&
	grep -Eq '^during: steal [0-9.]+% of the CPUs' "$TL_TMP/quiet" &&
	ok "under bounds it meets: quiet, with load, busy and steal recorded" ||
	not_ok "quiet case: $(cat "$TL_TMP/err" "$TL_TMP/quiet" 2>/dev/null)"
grep -q '^- Verdict: quiet' <<<"$(tb_noise_md "$TL_TMP/quiet")" &&
	ok "the results file's lines say quiet" || not_ok "results lines: $(tb_noise_md "$TL_TMP/quiet")"

grep -q 'not recorded' <<<"$(tb_noise_md "$TL_TMP/none")" &&
	ok "no record: the results file says it was not recorded" || not_ok "no record: $(tb_noise_md "$TL_TMP/none")"
tl_done
