#!/bin/bash
# tbench-recipe: every recipe of experiments/ in its --quick variant (runs
# of a second) writes verdict.csv and verdict.md with a row per claim and
# point, each verdict one of agrees, disagrees, cannot tell; the veth one
# needs root and is skipped (its claims 'cannot tell', saying why) when not.
# A recipe with a bad field is refused with exit 2 naming file and field,
# and a recipe can never run a command it names (argument lists only).
# Disturbed runs are counted (TBENCH_KEEP_DISTURBED=1): beside other tests
# every run is disturbed, and the test is of the tables, not the verdicts.
# Skipped (77) where tbench --netns does not work.
# ok and not_ok always succeed, so "test && ok || not_ok" is safe here.
# shellcheck disable=SC2015
set -euo pipefail
# shellcheck source=tests/testlib.sh
. "${top_srcdir:-.}/tests/testlib.sh"

skip() { echo "SKIP: $*"; exit 77; }
if ! "$TBENCH" --netns -b nop 1 --run-once -q -c "$SRCDIR/loadfiles/tiny.txt" >/dev/null 2>"$TL_TMP/probe.err"; then
	skip "tbench --netns does not work here: $(head -n 1 "$TL_TMP/probe.err")"
fi

RECIPE="$SRCDIR/scripts/tbench-recipe"
TBENCH="$(cd "$(dirname "$TBENCH")" && pwd)/$(basename "$TBENCH")"
TBENCH_STATS="$(dirname "$TBENCH")/tbench-stats"
export TBENCH TBENCH_STATS TBENCH_KEEP_DISTURBED=1
cd "$TL_TMP"

# claims_of NAME: how many claims the recipe has
claims_of() { python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["claims"]))' "$SRCDIR/experiments/$1.json"; }

# table_ok NAME DIR: verdict.csv has a row per claim at least, each with a
# verdict of the allowed set; verdict.md a table row per CSV row
table_ok() {
	local name="$1" dir="$2" rows bad
	rows=$(python3 -c 'import csv,sys; print(len(list(csv.DictReader(open(sys.argv[1])))))' "$dir/verdict.csv")
	bad=$(python3 -c 'import csv,sys
for r in csv.DictReader(open(sys.argv[1])):
    if r["verdict"] not in ("agrees", "disagrees", "cannot tell") or not r["claim_text"] or not r["why"]:
        print(r["claim"], r["verdict"])' "$dir/verdict.csv")
	[ "$rows" -ge "$(claims_of "$name")" ] && ok "$name: $rows verdict rows for $(claims_of "$name") claims" ||
		not_ok "$name: $rows verdict rows, $(claims_of "$name") claims"
	[ -z "$bad" ] && ok "$name: every row has a claim, an allowed verdict and a why" || not_ok "$name: rows $bad"
	[ "$(grep -c '^| .*\*\*\(agrees\|disagrees\|cannot tell\)\*\* |' "$dir/verdict.md")" -eq "$rows" ] &&
		ok "$name: verdict.md has the $rows rows" || not_ok "$name: verdict.md rows differ from verdict.csv's"
	grep -q '^## Verdicts' "$dir/README.md" && ok "$name: README.md has the reading" || not_ok "$name: no README.md reading"
	# A chart where some claim has two measured sides (quick runs may leave none).
	if python3 -c 'import csv, sys
sys.exit(not any(r["test"] != "noise" and r["mean_a"] and r["mean_b"] for r in csv.DictReader(open(sys.argv[1]))))' \
		"$dir/verdict.csv"; then
		[ -s "$dir/chart.png" ] && [ -s "$dir/chart.svg" ] && ok "$name: chart.png and chart.svg" ||
			not_ok "$name: verdicts measured but no chart"
		rm -f "$dir/chart.png"
		expect_exit 0 "$name: chart DIR draws it again" "$RECIPE" chart "$dir"
		[ -s "$dir/chart.png" ] && ok "$name: chart.png again" || not_ok "$name: chart DIR made no chart.png"
	fi
}

mapfile -t NAMES < <("$RECIPE" list | cut -f1)
expect_exit 0 "--plan --quick all" "$RECIPE" --plan --quick all
[ "$(grep -c '^estimated time' "$TL_TMP/out")" -eq "${#NAMES[@]}" ] && [ ! -e "$TL_TMP/tbench-results" ] &&
	ok "--plan: a plan per recipe, nothing written" || not_ok "--plan: $(grep -c '^estimated time' "$TL_TMP/out") plans"
[ "${#NAMES[@]}" -ge 6 ] && ok "list names ${#NAMES[@]} recipes" || not_ok "list names ${#NAMES[@]} recipes: ${NAMES[*]}"
for name in "${NAMES[@]}"; do
	expect_exit 0 "$name --quick" "$RECIPE" --quick --out "$TL_TMP/$name" "$name"
	if [ -f "$TL_TMP/$name/verdict.csv" ]; then table_ok "$name" "$TL_TMP/$name"; else not_ok "$name: no verdict.csv"; fi
	if grep -q '"needs_root": true' "$SRCDIR/experiments/$name.json" && [ "$(id -u)" -ne 0 ]; then
		grep -q 'needs root' "$TL_TMP/$name/verdict.csv" && ok "$name: skipped, saying it needs root" ||
			not_ok "$name: not root, but no 'needs root' in its verdicts"
	fi
done

# A bad field: exit 2, the file and the field named.
sed 's/"test": "equivalent"/"test": "roughly"/' "$SRCDIR/experiments/miller-small-writes.json" >"$TL_TMP/bad.json"
expect_exit 2 "a recipe whose test is not one of the tests" "$RECIPE" --quick --out "$TL_TMP/bad" "$TL_TMP/bad.json"
grep -q "bad.json: field 'claims\[0\].test'" "$TL_TMP/err" && ok "the error names file and field" ||
	not_ok "the error names file and field: $(cat "$TL_TMP/err")"
[ ! -e "$TL_TMP/bad" ] && ok "a refused recipe writes nothing" || not_ok "a refused recipe made $TL_TMP/bad"

# A recipe never runs what it names: its arguments reach tbench-sweep as
# words, so the sweep refuses the unknown one (exit 2) and no marker exists.
python3 - "$SRCDIR/experiments/splice-read.json" "$TL_TMP/hostile.json" "$TL_TMP/MARKER" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
r["sweep"]["quick"] = ["--backends", "tcp;touch " + sys.argv[3], "$(touch " + sys.argv[3] + ")"]
r["tbench"] = ["`touch " + sys.argv[3] + "`"]
json.dump(r, open(sys.argv[2], "w"))
EOF
expect_exit 2 "a recipe holding \$(touch MARKER) as an argument" "$RECIPE" --quick --out "$TL_TMP/hostile" "$TL_TMP/hostile.json"
[ ! -e "$TL_TMP/MARKER" ] && [ ! -e "$TL_TMP/hostile/MARKER" ] && ok "no command of the recipe ran: no marker" ||
	not_ok "a recipe's argument ran as a command: $TL_TMP/MARKER exists"
# Nor through an option that names a command (tbench-sweep --ssh): refused.
python3 - "$SRCDIR/experiments/splice-read.json" "$TL_TMP/ssh.json" "$TL_TMP/MARKER" <<'EOF2'
import json, sys
r = json.load(open(sys.argv[1]))
r["sweep"]["quick"] = ["--server-host", "localhost", "--ssh", "touch " + sys.argv[3]]
json.dump(r, open(sys.argv[2], "w"))
EOF2
expect_exit 2 "a recipe giving tbench-sweep --ssh" "$RECIPE" --quick --out "$TL_TMP/ssh" "$TL_TMP/ssh.json"
grep -q "ssh.json: field 'sweep.quick\[0\]'" "$TL_TMP/err" && [ ! -e "$TL_TMP/MARKER" ] &&
	ok "refused before anything ran, naming the field" || not_ok "--ssh in a recipe: $(cat "$TL_TMP/err")"

tl_done
