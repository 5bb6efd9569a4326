#!/bin/bash
# scripts/tbench-ab end to end on tiny nop runs: a B with a large cost
# injected (--inject-ns) is slower within the minimum blocks, and bad for
# git bisect; A against itself is not faster nor slower twice; a failed run
# stops with exit 1 naming its side; usage errors exit 2 (128 with
# --bisect); a sysctl A/B (root, --netns) reads each side's value back in
# its runs' JSON and leaves the host's as it was; --baseline carries a
# first sitting's runs.
# ok and not_ok always succeed, so "test && ok || not_ok" is safe here.
# shellcheck disable=SC2015
set -euo pipefail
# shellcheck source=tests/testlib.sh
. "${top_srcdir:-.}/tests/testlib.sh"

export TBENCH TBENCH_STATS="${top_builddir:-.}/tbench-stats" PYTHONDONTWRITEBYTECODE=1
AB="$SRCDIR/scripts/tbench-ab"
TINY=(-b nop 1 -t 0.3 --warmup 0)

# kind DIR: the verdict's kind in DIR/meta.json
kind() {
	python3 -c 'import json, sys; v = json.load(open(sys.argv[1]))["verdict"]; print(v["kind"] if v else "none")' \
		"$1/meta.json"
}

# The CPU time per operation, not MB/sec: a machine others load (make
# check -j, other work) spreads a short run's MB/sec far more than what
# an operation costs, and the spin injected is CPU time.
expect_exit 1 "a large injected cost: bad for git bisect" "$AB" --out "$TL_TMP/slow" --seed 1 --max-blocks 3 \
	--figure cost_cpu_us --bisect --b-args '--inject-ns 20000' -- "${TINY[@]}"
[ "$(kind "$TL_TMP/slow")" = slower ] && ok "it says slower" || not_ok "it says $(kind "$TL_TMP/slow")"
grep -q '^B slower than A by .*% \[.*\] (cost_cpu_us, paired ratio, 95% interval)$' "$TL_TMP/slow/verdict.txt" &&
	ok "verdict.txt says B slower, of the paired ratio" ||
	not_ok "verdict.txt: $(head -1 "$TL_TMP/slow/verdict.txt")"
grep -q 'minimum detectable effect at this noise' "$TL_TMP/out" && ok "the MDE is said" || not_ok "no MDE said"
runs="$(find "$TL_TMP/slow/runs" -name '*.json' | wc -l)"
[ "$runs" -ge 12 ] && ok "a JSON per run ($runs)" || not_ok "$runs JSON files for 3 blocks"
[ "$("$TBENCH_STATS" select --where variant=b --columns inject_ns --tsv "$TL_TMP/slow/runs.csv" | sort -u)" = 20000 ] &&
	ok "runs.csv: B's runs injected, by variant" || not_ok "runs.csv's B runs are not the injected ones"

expect_exit 0 "the same large cost without --bisect: a verdict is 0" \
	"$AB" --out "$TL_TMP/slow0" --max-blocks 3 --figure cost_cpu_us --b-args '--inject-ns 20000' -- "${TINY[@]}"

# A against A, twice. A 95% interval excludes no change in one A/A of 20
# by chance (a loaded machine's drift between blocks makes it more
# likely), so one "faster" or "slower" is allowed; two are not, nor a side
# mislabelled, which would say it every time.
aa_different=0 aa_kinds=
for seed in 2 3; do
	"$AB" --out "$TL_TMP/aa$seed" --seed "$seed" --max-blocks 3 --equivalent 20% --figure cost_cpu_us \
		-- "${TINY[@]}" >/dev/null 2>&1 || true
	aa_kinds="$aa_kinds $(kind "$TL_TMP/aa$seed" | tr ' ' _)"
	case "$(kind "$TL_TMP/aa$seed")" in
	equivalent | "cannot tell") ;;
	*) aa_different=$((aa_different + 1)) ;;
	esac
done
[ "$aa_different" -le 1 ] && ok "A/A twice:$aa_kinds" || not_ok "A/A says a difference twice:$aa_kinds"

expect_exit 1 "a failed run stops the A/B" "$AB" --out "$TL_TMP/fail" --b-args=--no-such-option -- "${TINY[@]}"
grep -q 'side B failed in block 1' "$TL_TMP/err" && ok "it names side B and the block" ||
	not_ok "the error: $(head -1 "$TL_TMP/err")"
grep -q '^no verdict' "$TL_TMP/fail/verdict.txt" && ok "no verdict from a failed run" || not_ok "a verdict written"

expect_exit 2 "a sysctl outside net." "$AB" --out "$TL_TMP/u1" --a-sysctl kernel.pid_max=1
expect_exit 2 "an unknown figure" "$AB" --out "$TL_TMP/u2" --figure nonsense
expect_exit 128 "a usage error under --bisect stops git bisect" "$AB" --bisect --min-blocks x
expect_exit 128 "--bisect of one side alone" "$AB" --bisect --now a --out "$TL_TMP/u4"
expect_exit 2 "a baseline that is no tbench-ab directory" "$AB" --out "$TL_TMP/u3" --baseline "$SRCDIR/tests"

# --baseline: a first sitting of A alone (no verdict), then B against it.
expect_exit 0 "a first sitting of A alone" "$AB" --out "$TL_TMP/s1" --now a --min-blocks 2 -- "${TINY[@]}"
expect_exit 1 "B in a second sitting against it" "$AB" --out "$TL_TMP/s2" --baseline "$TL_TMP/s1" \
	--max-blocks 2 --min-blocks 2 --figure cost_cpu_us --bisect --b-args '--inject-ns 20000' -- "${TINY[@]}"
grep -q 'cannot tell the change from a boot effect' "$TL_TMP/s2/verdict.txt" &&
	ok "one sitting a side: the boot effect is said" || not_ok "no word of the boot effect"

# A sysctl A/B inside each run's namespace; the host's value unchanged.
SYSCTL=net.ipv4.tcp_autocorking
if [ "$(id -u)" -ne 0 ] && ! "$TBENCH" --netns -b nop 1 -t 0.1 --warmup 0 -q >/dev/null 2>&1; then
	echo "# skipped the sysctl A/B: tbench --netns does not work for this user here"
else
	before="$(cat /proc/sys/net/ipv4/tcp_autocorking)"
	"$AB" --out "$TL_TMP/sys" --max-blocks 2 --min-blocks 2 --a-sysctl "$SYSCTL=1" --b-sysctl "$SYSCTL=0" \
		-- -b tcp 1 -t 0.3 --warmup 0 >/dev/null 2>&1 || true
	read_back() { # SIDE: the values read back in that side's runs' JSON, one a line
		python3 -c 'import json, sys
for p in sys.argv[2:]:
    for s in json.load(open(p))["netns"]["sysctls"]:
        print(s["read"])' "$1" "$TL_TMP"/sys/runs/*-"$1".json | sort -u
	}
	[ "$(read_back a)" = 1 ] && [ "$(read_back b)" = 0 ] && ok "each side's sysctl read back in its runs" ||
		not_ok "read back: A '$(read_back a)', B '$(read_back b)'"
	[ "$(cat /proc/sys/net/ipv4/tcp_autocorking)" = "$before" ] && ok "the host's $SYSCTL unchanged" ||
		not_ok "the host's $SYSCTL changed"
fi

left="$(tl_left_running tbench tbench_srv)"
[ -z "$left" ] && ok "nothing left running" || not_ok "left running: $left"
tl_done
