#!/bin/bash
# A sweep's yardstick (tbench-sweep, scripts/tbtools/yardstick.py) and what
# tbench-compare makes of two: one tiny real sweep with a shortened
# yardstick (--yardstick-seconds 0.5: 12 runs of a fraction of a second),
# its --plan, --resume, --no-yardstick and runs that fail; then made-up copies of it whose
# yardsticks differ by 10% and whose one point differs by 3%, where the
# change must be called "within the sittings' difference", not significant.
# ok and not_ok always succeed, so "test && ok || not_ok" is safe here.
# shellcheck disable=SC2015
set -euo pipefail
# shellcheck source=tests/testlib.sh
. "${top_srcdir:-.}/tests/testlib.sh"
unset TBENCH_NO_YARDSTICK   # testlib's default for the other tests

SWEEP="$SRCDIR/scripts/tbench-sweep"
COMPARE="$SRCDIR/scripts/tbench-compare"
export TBENCH TBENCH_STATS="${top_builddir:-.}/tbench-stats"
A="$TL_TMP/a"
TINY=(--backends pipe --clients 1 --reps 3 -t 0.3 --warmup 0 --yardstick-seconds 0.5)

# py EXPR-FILE ARGS: python3 reading a results directory's files for a check
py() { python3 - "$@"; }

plan() {
	expect_exit 0 "--plan lists the yardstick" "$SWEEP" --plan "${TINY[@]}" --out "$TL_TMP/p"
	check "--plan: its line" grep -q '^yardstick: .* x clients 1,2, 3 reps interleaved' "$TL_TMP/out"
	check "--plan: its 12 runs" test "$(grep -c '^\[yardstick [0-9]*/12\]' "$TL_TMP/out")" = 12
	check "--plan: in tbench --netns" grep -q '^\[yardstick 1/12\] .*--netns -b ' "$TL_TMP/out"
	expect_exit 0 "--plan --no-yardstick" "$SWEEP" --plan --no-yardstick "${TINY[@]}" --out "$TL_TMP/p"
	check "--plan --no-yardstick: skipped" grep -q '^yardstick: skipped (--no-yardstick)' "$TL_TMP/out"
	check "--plan --no-yardstick: no yardstick run" test "$(grep -c '^\[yardstick' "$TL_TMP/out")" = 0
	expect_exit 2 "--yardstick-seconds 0" "$SWEEP" --plan "${TINY[@]}" --yardstick-seconds 0
}

sweep_with_yardstick() {
	expect_exit 0 "a tiny sweep with its yardstick" "$SWEEP" "${TINY[@]}" --out "$A"
	check "the sweep says its yardstick" grep -q 'tbench-sweep: yardstick (.* s): ' "$TL_TMP/out"
	check "yardstick/runs.csv: 12 runs" test "$(($(wc -l <"$A/yardstick/runs.csv") - 1))" = 12
	check "yardstick/runs/: their JSON" test "$(find "$A/yardstick/runs" -name '*.json' | wc -l)" = 12
	check "the sweep's own runs.csv: its 3 runs only" test "$(($(wc -l <"$A/runs.csv") - 1))" = 3
	local why
	why="$(py "$A/meta.json" <<'EOF'
import json, sys
y = json.load(open(sys.argv[1]))["yardstick"]
pts = y["points"]
bad = []
if len(pts) != 4: bad.append(f"{len(pts)} points")
for p in pts:
    # MB/sec's interval at every point; CPU per operation where its runs
    # had one (tbench leaves it out of a run it cannot measure it in)
    for f in ("mb_per_sec", "cost_cpu_us"):
        m = p[f]
        ci_ok = isinstance(m["ci95"], float) or (f == "cost_cpu_us" and m["ci95"] is None)
        if not (isinstance(m["mean"], float) and m["mean"] > 0 and ci_ok):
            bad.append(f"{p['backend']} {p['clients']} {f}: {m}")
    if p["n"] != 3: bad.append(f"{p['backend']} {p['clients']}: n {p['n']}")
if not (y["duration_s"] > 0 and y["dir"] == "yardstick" and y["reps"] == 3): bad.append("duration/dir/reps")
if sorted((p["backend"], p["clients"]) for p in pts)[0][1] != 1: bad.append("clients")
print("; ".join(bad))
EOF
)"
	[[ -z "$why" ]] && ok "meta.json: yardstick with 4 points, n 3, means and intervals, duration" ||
		not_ok "meta.json's yardstick: $why"
	local before
	before="$(md5sum <"$A/yardstick/runs.csv")"
	expect_exit 0 "--resume of the finished sweep" "$SWEEP" --resume --out "$A"
	check "--resume did not run the yardstick again" test "$(md5sum <"$A/yardstick/runs.csv")" = "$before"
	check "--resume kept it in meta.json" py "$A/meta.json" <<'EOF'
import json, sys
sys.exit(len(json.load(open(sys.argv[1]))["yardstick"]["points"]) != 4)
EOF
	expect_exit 0 "a sweep with --no-yardstick" "$SWEEP" "${TINY[@]}" --reps 1 --no-yardstick --out "$TL_TMP/none"
	check "--no-yardstick: meta.json says skipped" py "$TL_TMP/none/meta.json" <<'EOF'
import json, sys
sys.exit(json.load(open(sys.argv[1]))["yardstick"] != {"skipped": "--no-yardstick"})
EOF
	check "--no-yardstick: no yardstick/" test ! -e "$TL_TMP/none/yardstick"
}

# A yardstick whose runs of one backend fail (a tbench that refuses
# -b nop): warned of and recorded, and the sweep goes on and ends ok.
failing_runs() {
	mkdir -p "$TL_TMP/fake"
	printf '#!/bin/bash\ncase " $* " in *" -b nop "*) echo "fake: nop refused" >&2; exit 1;; esac\nexec %q "$@"\n' \
		"$(cd "$(dirname "$TBENCH")" && pwd)/tbench" >"$TL_TMP/fake/tbench"
	chmod +x "$TL_TMP/fake/tbench"
	expect_exit 0 "a sweep whose yardstick's nop runs fail" "$SWEEP" --tbench "$TL_TMP/fake/tbench" "${TINY[@]}" \
		--reps 1 --yardstick-seconds 0.1 --out "$TL_TMP/failing"
	check "it warns of them" grep -q 'warning: yardstick: 6 of 12 runs failed' "$TL_TMP/err"
	check "yardstick/runs.csv records them failed" \
		test "$("$TBENCH_STATS" select --where backend=nop --where status=failed "$TL_TMP/failing/yardstick/runs.csv" | wc -l)" = 7
	check "meta.json: failed 6, nop's points without runs" py "$TL_TMP/failing/meta.json" <<'EOF'
import json, sys
y = json.load(open(sys.argv[1]))["yardstick"]
nop = [p for p in y["points"] if p["backend"] == "nop"]
sys.exit(not (y["failed"] == 6 and len(nop) == 2 and all(p["n"] == 0 and p["n_failed"] == 3 for p in nop)))
EOF
	check "the sweep's own run is ok" grep -q '^pipe,1,' "$TL_TMP/failing/runs.csv"
}

# made_up DIR YARD CHANGE: a copy of A whose yardstick's mb_per_sec at
# every point is 100, 101, 99 times YARD and whose pipe 1 point's runs are
# 100, 101, 99 times CHANGE (meta.json's figures edited alike).
made_up() {
	rm -rf "$1"
	cp -r "$A" "$1"
	py "$1" "$2" "$3" <<'EOF'
import csv, json, sys
d, yard, change = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
def rewrite(path, scale):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    col, seen = rows[0].index("mb_per_sec"), {}
    for r in rows[1:]:
        k = (r[0], r[1])
        r[col] = str((100, 101, 99)[seen.get(k, 0) % 3] * scale)
        seen[k] = seen.get(k, 0) + 1
    with open(path, "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)
rewrite(f"{d}/yardstick/runs.csv", yard)
rewrite(f"{d}/runs.csv", change)
meta = json.load(open(f"{d}/meta.json"))
for p in meta["yardstick"]["points"]:
    p["mb_per_sec"] = {"mean": 100 * yard, "ci95": 2.4841 * yard}
json.dump(meta, open(f"{d}/meta.json", "w"), indent=2)
EOF
}

compare_yardsticks() {
	expect_exit 0 "tbench-compare A A" "$COMPARE" "$A" "$A"
	check "compare: the yardstick line" grep -qF "yardstick: $A against $A, the change of mb_per_sec" "$TL_TMP/out"
	check "compare: a line per yardstick point" test "$(grep -c '^  [a-z]* [12]: .*, significant: ' "$TL_TMP/out")" = 4

	# The yardsticks 10% apart, the change 3% [about +0.4, +5.6]: within it.
	made_up "$TL_TMP/x" 1 1
	made_up "$TL_TMP/y" 1.1 1.03
	expect_exit 0 "tbench-compare of sittings 10% apart, a change of 3%" "$COMPARE" "$TL_TMP/x" "$TL_TMP/y"
	check "the sittings differ by +10%" grep -q "^yardstick: the sittings differ by +10.00% at pipe 2 clients" "$TL_TMP/out"
	check "the change: 'sittings', not significant" grep -qE '^pipe +1 .*\+3\.00% .* sittings ' "$TL_TMP/out"
	check "the summary says so" grep -q "(0 significant: 0 up, 0 down; 0 not; 1 within the sittings' difference)" "$TL_TMP/out"
	expect_exit 0 "the same with --csv" "$COMPARE" --csv "$TL_TMP/x" "$TL_TMP/y"
	check "--csv: significant is sittings" grep -q '^pipe,1,.*,sittings,' "$TL_TMP/out"
	check "--csv: the yardstick on stderr" grep -q '^yardstick: the sittings differ' "$TL_TMP/err"

	# Relative to each sweep's yardstick: 1.03 / 1.1, about -6.36%, significant.
	expect_exit 0 "--relative-to-yardstick" "$COMPARE" --relative-to-yardstick "$TL_TMP/x" "$TL_TMP/y"
	check "relative: the ratio of ratios" grep -qE '^pipe +1 .* -6\.36% .* yes ' "$TL_TMP/out"
	check "relative: it says so" grep -q "^yardstick: each sweep's figures over its own yardstick's at pipe 2" "$TL_TMP/out"
	expect_exit 2 "--relative-to-yardstick without one in A" "$COMPARE" --relative-to-yardstick "$TL_TMP/none" "$A"

	# The same change with equal yardsticks: significant.
	made_up "$TL_TMP/z" 1 1.03
	expect_exit 0 "tbench-compare of equal yardsticks, a change of 3%" "$COMPARE" "$TL_TMP/x" "$TL_TMP/z"
	check "equal yardsticks: not significantly apart" grep -q "do not differ significantly at pipe 2" "$TL_TMP/out"
	check "equal yardsticks: the change is significant" grep -qE '^pipe +1 .*\+3\.00% .* yes ' "$TL_TMP/out"

	# An older sweep, without one: compared as before, saying so.
	cp -r "$TL_TMP/z" "$TL_TMP/old"
	py "$TL_TMP/old/meta.json" <<'EOF'
import json, sys
meta = json.load(open(sys.argv[1])); del meta["yardstick"]
json.dump(meta, open(sys.argv[1], "w"))
EOF
	expect_exit 0 "tbench-compare with an older B" "$COMPARE" "$TL_TMP/x" "$TL_TMP/old"
	check "no yardstick in B" grep -q '^yardstick: no yardstick in B (none recorded)' "$TL_TMP/out"
	check "older B: the change still significant" grep -qE '^pipe +1 .*\+3\.00% .* yes ' "$TL_TMP/out"
	expect_exit 0 "tbench-compare with --no-yardstick's A" "$COMPARE" "$TL_TMP/none" "$A"
	check "no yardstick in A (skipped)" grep -q '^yardstick: no yardstick in A (skipped (--no-yardstick))' "$TL_TMP/out"
	py "$TL_TMP/old/meta.json" <<'EOF'
import json, sys
meta = json.load(open(sys.argv[1])); meta["yardstick"] = 3
json.dump(meta, open(sys.argv[1], "w"))
EOF
	expect_exit 2 "a yardstick that is no object" "$COMPARE" "$TL_TMP/x" "$TL_TMP/old"
	check "it names the file and field" grep -q "meta.json: field 'yardstick' must be an object or null" "$TL_TMP/err"
}

plan
sweep_with_yardstick
failing_runs
compare_yardsticks
tl_done
