#!/usr/bin/env bash
# check-mix.sh LOADFILE - print a loadfile's op mix and I/O size percentiles,
# and fail (exit 1) unless it follows the operation mix of docs/loadfile.md:
# each listed op within 0.5 percentage points of its share of lines,
# ReadX/WriteX sizes at most 65536, FIND_FIRST counts at most 26.
# Exit 2 on usage errors.  Needs only awk and sort.
set -euo pipefail

if [[ $# -ne 1 || ! -r $1 ]]; then
	echo "usage: $0 LOADFILE" >&2
	exit 2
fi
file=$1

# op:percent of dbench 4.0's client.txt (docs/loadfile.md)
targets="ReadX:27 NTCreateX:17 QUERY_PATH_INFORMATION:16 Close:13 WriteX:8.6
FIND_FIRST:6.1 Unlink:3.5 QUERY_FS_INFORMATION:2.9 QUERY_FILE_INFORMATION:2.7
SET_FILE_INFORMATION:1.4 Flush:1.2 Rename:0.7 LockX:0.06 UnlockX:0.06"

status=0

# Comment and blank lines are not operations (the parser skips them too).
# Counts are read from the end of the line so that quoted paths with
# blanks cannot shift them.
awk -v targets="$targets" '
/^[ \t]*#/ || NF == 0 { next }
{ n++; count[$1]++ }
($1 == "ReadX" || $1 == "WriteX") && ($(NF-2) > 65536 || $(NF-1) > 65536) {
	printf "line %d: %s size over 65536: %s\n", NR, $1, $0; bad++
}
$1 == "FIND_FIRST" && $(NF-1) > 26 {
	printf "line %d: FIND_FIRST count over 26: %s\n", NR, $0; bad++
}
END {
	if (n == 0) { print "no operations"; exit 1 }
	printf "%-24s %7s %8s %8s %7s\n", "operation", "count", "percent", "target", "delta"
	nt = split(targets, t, /[ \n]+/)
	for (i = 1; i <= nt; i++) {
		split(t[i], kv, ":")
		op = kv[1]; want = kv[2] + 0; seen[op] = 1
		pct = 100 * count[op] / n; d = pct - want
		flag = (d > 0.5 || d < -0.5) ? "  OFF" : ""
		if (flag != "") bad++
		printf "%-24s %7d %7.2f%% %7.2f%% %+7.2f%s\n", op, count[op], pct, want, d, flag
	}
	for (op in count)
		if (!(op in seen))
			printf "%-24s %7d %7.2f%%   (not checked)\n", op, count[op], 100 * count[op] / n
	printf "%-24s %7d\n", "total", n
	exit bad ? 1 : 0
}' "$file" || status=1

# Nearest-rank percentiles of the requested size (4th field).
for op in ReadX WriteX; do
	awk -v op="$op" '$1 == op { print $4 }' "$file" | sort -n | awk -v op="$op" '
	{ v[NR] = $1 }
	END {
		if (NR == 0) { printf "%-7s no requests\n", op; exit }
		printf "%-7s size p50 %6d  p90 %6d  p99 %6d  max %6d  (%d requests)\n", op,
		       v[int((NR * 50 + 99) / 100)], v[int((NR * 90 + 99) / 100)],
		       v[int((NR * 99 + 99) / 100)], v[NR], NR
	}'
done

if [[ $status -ne 0 ]]; then
	echo "FAIL: $file does not follow the target mix" >&2
else
	echo "OK: $file follows the target mix"
fi
exit "$status"
