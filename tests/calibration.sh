#!/bin/bash
# shellcheck disable=SC2016  # jq programs are single-quoted on purpose
# tbench --inject-ns, the calibration aid: each client spins a known number
# of nanoseconds after every exchange. Every check is a lower bound, which
# the spin makes certain: it cannot take less than asked. The value is in
# --json's settings and in runs.csv's inject_ns knob; runs with another
# cost are not merged; bad values are bad usage (exit 2).
# ok and not_ok always succeed, so "test && ok || not_ok" is safe here.
# shellcheck disable=SC2015
set -euo pipefail
# shellcheck source=tests/testlib.sh
. "${top_srcdir:-.}/tests/testlib.sh"
command -v jq >/dev/null || { echo "SKIP: jq not installed"; exit 77; }

STATS="$(dirname "$TBENCH")/tbench-stats"
INJECT_NS=20000
# Every line exchanges: tiny.txt without Deltree, which sends nothing.
EXCHANGES="$TL_TMP/exchanges.txt"
grep -v '^Deltree' "$SRCDIR/loadfiles/tiny.txt" >"$EXCHANGES"

run() {   # run NAME ARGS...: one second of nop, its JSON in $TL_TMP/NAME.json
	local name="$1"
	shift
	expect_exit 0 "$name" "$TBENCH" -b nop -c "$EXCHANGES" -t 1 --warmup 0 -q \
		--json "$TL_TMP/$name.json" "$@" 1
	cp "$TL_TMP/out" "$TL_TMP/$name.out"
}

run plain
run injected --inject-ns "$INJECT_NS"
j="$TL_TMP/injected.json"
[ "$(jq '.settings.inject_ns' "$j")" = "$INJECT_NS" ] && [ "$(jq '.settings.inject_ns' "$TL_TMP/plain.json")" = 0 ] &&
	ok "--json: settings.inject_ns is the value asked for, 0 without" ||
	not_ok "settings.inject_ns: $(jq -c '.settings.inject_ns' "$j" "$TL_TMP/plain.json")"
grep -q "^(calibration: $INJECT_NS ns spun by each client after every exchange)" "$TL_TMP/injected.out" &&
	! grep -q calibration "$TL_TMP/plain.out" && ok "the header says a cost was injected" ||
	not_ok "header: $(head -n 5 "$TL_TMP/injected.out")"

# Each operation took at least the spin: its average too (sum_ns is exact).
jq -e --argjson ms "$(awk -v ns="$INJECT_NS" 'BEGIN { print ns / 1e6 }')" \
	'[.operations[] | select(.count > 0) | .avg_ms >= $ms] | length > 0 and all' "$j" >/dev/null &&
	ok "every operation's average is at least $INJECT_NS ns" ||
	not_ok "averages: $(jq -c '[.operations[] | {name, avg_ms}]' "$j")"
# One client does its operations one after another, each spinning: all but
# the one that straddles the execute phase's start lie within it.
jq -e --argjson ns "$INJECT_NS" '.result.execute_s * 1e9 >= $ns * (.result.ops - 1)' "$j" >/dev/null &&
	ok "the execute phase holds the spin of every operation counted" ||
	not_ok "execute_s $(jq '.result.execute_s' "$j") for $(jq '.result.ops' "$j") operations"

wall() { "$STATS" row --columns wall_us_per_op "$1" | tail -n 1; }
plain_us="$(wall "$TL_TMP/plain.json")" injected_us="$(wall "$j")"
awk -v a="$plain_us" -v b="$injected_us" 'BEGIN { exit !(b > a) }' &&
	ok "wall µs per operation: $plain_us without, $injected_us with $INJECT_NS ns injected" ||
	not_ok "wall µs per operation: $plain_us without, $injected_us with"

# runs.csv: the knob as the sweep asked, else as the run says; "-" for none.
knob() { "$STATS" row --columns inject_ns "$@" | tail -n 1; }
[ "$("$STATS" row --knobs | grep -cx inject_ns)" = 1 ] && ok "inject_ns is a knob of the sweep" ||
	not_ok "row --knobs: $("$STATS" row --knobs | paste -sd,)"
[ "$(knob "$j")" = "$INJECT_NS" ] && [ "$(knob "$TL_TMP/plain.json")" = - ] &&
	[ "$(knob --set inject_ns=0 "$TL_TMP/plain.json")" = 0 ] &&
	ok "row: inject_ns from the JSON, '-' for none, the sweep's --set first" ||
	not_ok "row inject_ns: $(knob "$j") $(knob "$TL_TMP/plain.json")"

# Hosts' runs with different costs are not one run.
expect_exit 2 "merge of a plain and an injected run refused" "$STATS" merge "$TL_TMP/plain.json" "$j"
check "merge names --inject-ns" grep -q -- "--inject-ns" "$TL_TMP/err"

# Any backend: threads, and a backend whose exchange blocks.
expect_exit 0 "pipe, threads, 2 clients, injected" "$TBENCH" -b pipe --threads -c "$EXCHANGES" -t 1 \
	--warmup 0 -q --json "$TL_TMP/pipe.json" --inject-ns "$INJECT_NS" 2
jq -e --argjson ms "$(awk -v ns="$INJECT_NS" 'BEGIN { print ns / 1e6 }')" \
	'[.operations[] | select(.count > 0) | .avg_ms >= $ms] | length > 0 and all' "$TL_TMP/pipe.json" >/dev/null &&
	ok "pipe: every operation's average is at least $INJECT_NS ns" ||
	not_ok "pipe averages: $(jq -c '[.operations[] | {name, avg_ms}]' "$TL_TMP/pipe.json")"

for bad in -1 abc 1e3 "" 1000000001 " 5"; do
	expect_exit 2 "--inject-ns '$bad' refused" "$TBENCH" -b nop -t 1 --inject-ns "$bad" 1
	grep -q -- '--inject-ns' "$TL_TMP/err" || not_ok "--inject-ns '$bad': the message names the flag"
done
tl_done
