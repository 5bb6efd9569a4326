#!/bin/bash
# tbench-sweep's results directory as data, never code, and its writes that
# cannot lose what was there: a meta.json whose argv was tampered with (a
# --tbench that would run a program of the attacker's; argv missing, a
# string, not strings, not JSON) is refused, exit 2, naming the file and
# the field, nothing run and nothing in the directory changed, with and
# without --dry-run; a --label that is not one path component is refused;
# and (as root, in a mount namespace of its own) a sweep onto a full tmpfs
# stops with exit 1 saying why, its earlier rows intact. Skipped (77) where
# tbench --netns does not work.
# ok and not_ok always succeed, so "test && ok || not_ok" is safe here.
# shellcheck disable=SC2015
set -euo pipefail
# shellcheck source=tests/testlib.sh
. "${top_srcdir:-.}/tests/testlib.sh"

skip() { echo "SKIP: $*"; exit 77; }
if ! "$TBENCH" --netns -b nop 1 --run-once -q -c "$SRCDIR/loadfiles/tiny.txt" >/dev/null 2>"$TL_TMP/probe.err"; then
	skip "tbench --netns does not work here: $(head -n 1 "$TL_TMP/probe.err")"
fi
SWEEP="$(cd "$SRCDIR/scripts" && pwd)/tbench-sweep"
TBENCH="$(cd "$(dirname "$TBENCH")" && pwd)/$(basename "$TBENCH")"
STATS="$(dirname "$TBENCH")/tbench-stats"
export TBENCH TBENCH_STATS="$STATS"
cd "$TL_TMP"

# sums DIR: a checksum of every file under DIR, to tell whether anything changed
sums() { find "$1" -type f -print0 | sort -z | xargs -0 sha256sum; }

# A sweep directory whose meta.json holds ARGV-JSON as its argv.
sweep_dir() { # DIR ARGV-JSON
	mkdir -p "$1/runs"
	"$STATS" row --header >"$1/runs.csv"
	printf '{ "status": "interrupted", "argv": %s, "sweep": { "order_seed": 5 } }\n' "$2" >"$1/meta.json"
}

tampered_argv() {
	local evil="$TL_TMP/evil.sh" marker="$TL_TMP/evil-ran" dir="$TL_TMP/tampered" before dry
	# A program that says it is of the suite, and leaves a mark when run.
	printf '#!/bin/sh\ntouch %s\necho "tbench (tbench suite) 0.1.0"\n' "$marker" >"$evil"
	chmod +x "$evil"
	for opt in --tbench --tbench-stats --tbench-srv; do
		sweep_dir "$dir" "[\"--backends\", \"pipe\", \"--clients\", \"1\", \"--reps\", \"1\", \"-t\", \"1\", \"$opt\", \"$evil\"]"
		before="$(sums "$dir")"
		for dry in "" --dry-run; do
			expect_exit 2 "meta.json argv with $opt EVIL: --resume ${dry:-(a real run)}" "$SWEEP" --resume --out "$dir" ${dry:+"$dry"}
			grep -q "$dir/meta.json: field 'argv' holds $opt" "$TL_TMP/err" && ok "names the file, the field and $opt" ||
				not_ok "names them: $(cat "$TL_TMP/err")"
			[ ! -e "$marker" ] && ok "$opt from meta.json: never run" || not_ok "$opt from meta.json ran"
			[ "$(sums "$dir")" = "$before" ] && ok "the directory unchanged" || not_ok "the directory changed"
		done
		rm -rf "$dir"
	done
	# The programs come from the command line: the tampered argv is not read for them.
	local bad what
	while IFS='|' read -r bad what; do
		sweep_dir "$dir" "$bad"
		[ "$bad" != NONE ] || printf '{ "status": "complete", "sweep": { "order_seed": 5 } }\n' >"$dir/meta.json"
		[ "$bad" != NOTJSON ] || printf '{ "argv": ["--backends", \n' >"$dir/meta.json"
		before="$(sums "$dir")"
		for dry in "" --dry-run; do
			expect_exit 2 "meta.json argv $what: --resume ${dry:-(a real run)}" "$SWEEP" --resume --out "$dir" ${dry:+"$dry"}
			grep -q "$dir/meta.json" "$TL_TMP/err" && grep -Eq "argv|not valid JSON" "$TL_TMP/err" &&
				ok "names the file and the field" || not_ok "names them: $(cat "$TL_TMP/err")"
			[ "$(sums "$dir")" = "$before" ] && ok "the directory unchanged" || not_ok "the directory changed"
		done
		rm -rf "$dir"
	done <<'EOF'
NONE|missing
"--backends pipe --clients 1"|a string
["--backends", 1, "--clients", "1"]|holding a number
["--backends", null]|holding null
NOTJSON|not valid JSON
["--backends", "pipe", "--nosuch"]|with an option this version does not take
EOF
}

labels() {
	local bad
	for bad in "a/b" ".." "../up" "." "$(printf 'a\tb')"; do
		expect_exit 2 "--label '$bad' refused" "$SWEEP" --plan --backends pipe --clients 1 --reps 1 --label "$bad"
		grep -q -- "--label" "$TL_TMP/err" && ok "names --label" || not_ok "names --label: $(cat "$TL_TMP/err")"
	done
	[ ! -e "$TL_TMP/tbench-results" ] && ok "no results directory made" || not_ok "a results directory was made"
	expect_exit 0 "--label 'rc-1 x' is one name" "$SWEEP" --plan --backends pipe --clients 1 --reps 1 --label "rc-1 x"
}

# A sweep whose --out is a tmpfs of 128 KB: the runs' JSON fill it within
# a few runs. It must stop with exit 1 and the cause, the rows written
# before the failed write intact.
full_disk() {
	if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null; then
		echo "# skipped the full tmpfs: it needs root and unshare (a mount namespace of its own)"
		return
	fi
	local mnt="$TL_TMP/full" rc
	mkdir -p "$mnt"
	rc=0
	# shellcheck disable=SC2016  # expanded by the inner shell
	unshare --mount --propagation private env SWEEP="$SWEEP" M="$mnt" T="$TL_TMP" bash -c '
		mount -t tmpfs -o size=128k tbtest "$M" || exit 99
		rc=0
		"$SWEEP" --backends pipe,nop --clients 1 --reps 20 -t 1 --warmup 0 --out "$M/out" >"$T/full.out" 2>"$T/full.err" || rc=$?
		cp -r "$M/out" "$T/full-copy" 2>/dev/null || true
		exit "$rc"' || rc=$?
	[ "$rc" -ne 99 ] || { not_ok "mount a tmpfs in a mount namespace"; return; }
	[ "$rc" -eq 1 ] && ok "a full tmpfs: exit 1" || not_ok "a full tmpfs: exit $rc, want 1: $(tail -n 3 "$TL_TMP/full.err")"
	grep -q 'No space left on device' "$TL_TMP/full.err" && ok "says why: No space left on device" ||
		not_ok "the cause: $(tail -n 3 "$TL_TMP/full.err")"
	local runs="$TL_TMP/full-copy/runs.csv" n
	[ "$(head -n 1 "$runs")" = "$("$STATS" row --header)" ] && ok "runs.csv: its header intact" ||
		not_ok "runs.csv header: $(head -c 200 "$runs")"
	n="$("$STATS" select --columns backend,rep,status --tsv "$runs" | grep -c . || true)"
	[ "$n" -ge 1 ] && [ "$n" -lt 40 ] && ok "runs.csv: the $n rows before the failed write, each whole" ||
		not_ok "runs.csv rows: $n"
	grep -q "ok: .* MB/sec" "$TL_TMP/full.out" && ok "the first runs were ok" || not_ok "no run ok: $(head "$TL_TMP/full.out")"
	[ "$(find "$TL_TMP/full-copy" -name '.*.csv.*' -o -name '*.part' | wc -l)" -eq 0 ] &&
		ok "no temporary file left" || not_ok "temporary files left: $(find "$TL_TMP/full-copy" -name '.*')"
}

tampered_argv
labels
full_disk
tl_done
