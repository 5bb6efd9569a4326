#!/bin/bash
# tbench-report on the committed sample sweep: the page holds every chart
# tbench-plot draws (the same PNGs), the summary table, a sentence per layer
# of the decomposition; and a headless Chromium shows all of it: its
# screenshot has each chart's own colours, pixel for pixel as many as the
# charts have, the table's header, and white below the page's end.
# ok and not_ok always succeed, so "test && ok || not_ok" is safe here.
# shellcheck disable=SC2015
set -euo pipefail
# shellcheck source=tests/testlib.sh
. "${top_srcdir:-.}/tests/testlib.sh"

STATS="${top_builddir:-.}/tbench-stats"
export TBENCH_STATS="$STATS"
SAMPLE="$SRCDIR/results/2026-12-03-0659-vm-resolved"
REPORT="$SRCDIR/scripts/tbench-report"
command -v gnuplot >/dev/null || { echo "SKIP: gnuplot not installed (apt-get install gnuplot-nox)"; exit 77; }
[ -f "$SAMPLE/runs.csv" ] || { echo "SKIP: the sample sweep $SAMPLE is not in this tree"; exit 77; }

page="$TL_TMP/index.html"
expect_exit 0 "tbench-report of the sample sweep" "$REPORT" --out "$page" "$SAMPLE"
[ "$(cat "$TL_TMP/out")" = "$page" ] && ok "says where it wrote" || not_ok "output: $(cat "$TL_TMP/out")"
[ ! -e "$SAMPLE/index.html" ] && ok "--out: nothing written into the sweep" || not_ok "wrote $SAMPLE/index.html"

# The charts: the page's are tbench-plot's, byte for byte.
img="$TL_TMP/img"
"$SRCDIR/scripts/tbench-plot" --out-dir "$img" "$SAMPLE" >/dev/null 2>&1
charts="$(cd "$img" && for c in throughput cost cpu decomposition siblings segments trace paths; do [ ! -s "$c.png" ] || echo "$c"; done)"
[ "$(grep -c . <<<"$charts")" -ge 4 ] && ok "tbench-plot drew $(paste -sd' ' <<<"$charts")" || not_ok "charts: $charts"
while IFS= read -r c; do
	sed -n "s/.*<figure id=\"chart-$c\"><img alt=\"$c\" src=\"data:image\/png;base64,\([^\"]*\)\".*/\1/p" "$page" |
		base64 -d >"$TL_TMP/$c.png" 2>/dev/null || true
	cmp -s "$TL_TMP/$c.png" "$img/$c.png" && ok "$c.png inside the page" || not_ok "$c.png not in the page as drawn"
done <<<"$charts"
[ "$(grep -c '<figure id="chart-' "$page")" -eq "$(grep -c . <<<"$charts")" ] && ok "no other chart" ||
	not_ok "figures: $(grep -o '<figure id="chart-[a-z]*"' "$page")"

# The table: a row per point of the summary; the decomposition: a sentence per layer.
points=$(("$("$STATS" summarize "$SAMPLE/runs.csv" | wc -l)" - 1))
[ "$(sed -n '/<table id="summary-table">/,/<\/table>/p' "$page" | grep -c '^<tr><td>')" -eq "$points" ] &&
	ok "the summary table: $points points" || not_ok "table rows: $(sed -n '/summary-table/,/<\/table>/p' "$page" | head -5)"
grep -q '<td class="n">[0-9.]* ± [0-9.]*</td>' "$page" && ok "means with their intervals" || not_ok "no 'mean ± ci' cell"
layers=$(("$("$STATS" decompose "$SAMPLE/runs.csv" | wc -l)" - 1))
[ "$(grep -c '^<p class="\(clear\|covers\)">At [0-9]* client' "$page")" -eq "$layers" ] &&
	ok "a sentence per layer and client count: $layers" || not_ok "sentences: $(grep -c '^<p class=' "$page")"
grep -q 'At 1 client, <b>copy + wake-up (pipe − nop)</b> adds [0-9.]* µs per operation (95% interval [0-9.]* to [0-9.]*, paired over [0-9]* reps): larger than its error bar.' "$page" &&
	ok "read out: copy + wake-up at 1 client" || not_ok "sentence: $(grep -m1 'copy + wake-up' "$page")"
check "the sweep's command" grep -q 'tbench-sweep --backends tcp,unix,pipe,nop' "$page"
check "the noise at its start" grep -q 'load average 2.78, 1.75, 3.02' "$page"
check "the runs left out: none" grep -q 'None: every run finished and none was judged disturbed' "$page"

# In a browser.
browser=""
for b in chromium-headless-shell chromium; do
	if command -v "$b" >/dev/null; then browser="$b"; break; fi
done
if [ -z "$browser" ]; then
	echo "# skipped the screenshot: no headless Chromium (apt-get install chromium-headless-shell)"
	tl_done
	exit
fi
command -v pngtopnm >/dev/null || { echo "# skipped the screenshot: no netpbm (apt-get install netpbm)"; tl_done; exit; }
shot="$TL_TMP/shot.png"
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --force-device-scale-factor=1 \
	--window-size=1400,12000 --screenshot="$shot" "file://$page" >"$TL_TMP/browser.log" 2>&1 || true
if [ ! -s "$shot" ]; then
	not_ok "no screenshot from $browser: $(tail -n 3 "$TL_TMP/browser.log")"
	tl_done
	exit
fi
ok "a screenshot from $browser"

# "R,G,B COUNT" lines of an image's colours.
colours() { pngtopnm "$1" | ppmhist -noheader | awk '{ print $1 "," $2 "," $3, $5 }'; }
colours "$shot" >"$TL_TMP/shot.hist"
# Each chart's five commonest colours but white, summed over the charts: the
# screenshot has at least as many of each (the charts at their own size).
while IFS= read -r c; do colours "$img/$c.png" | grep -v '^255,255,255 ' | sort -k2 -rn | awk 'NR <= 5'; done <<<"$charts" |
	awk '{ want[$1] += $2 } END { for (k in want) print k, want[k] }' >"$TL_TMP/want"
short="$(awk 'NR == FNR { have[$1] = $2; next } (have[$1] + 0) < $2 { print $1 ": " have[$1] + 0 " of " $2 }' \
	"$TL_TMP/shot.hist" "$TL_TMP/want")"
[ -z "$short" ] && ok "the screenshot shows every chart: their colours, $(wc -l <"$TL_TMP/want") of them, in full" ||
	not_ok "colours short in the screenshot: $short"
# the table's header background (#e8eef7): a row of 6 columns at least
[ "$(awk '$1 == "232,238,247" { print $2 }' "$TL_TMP/shot.hist")" -gt 5000 ] 2>/dev/null &&
	ok "and the table" || not_ok "no table header in the screenshot: $(grep '^232,238,247 ' "$TL_TMP/shot.hist")"
# nothing cut off: the last 300 rows are white
pngtopnm "$shot" | pamcut -bottom -1 -height 300 | ppmhist -noheader | awk '{ print $1 "," $2 "," $3 }' >"$TL_TMP/tail"
[ "$(cat "$TL_TMP/tail")" = 255,255,255 ] && ok "the whole page is in it (white below its end)" ||
	not_ok "the page runs past 12000 px: $(head -n 3 "$TL_TMP/tail")"

tl_done
