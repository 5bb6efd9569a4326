#!/bin/bash
# Builds from scratch, out of tree, and runs the test suite in one of its two
# tiers (Makefile.am says which test is in which):
#   scripts/test.sh         the fast tier: `make check` in the normal build
#                           (build-test/), the unit tests and fuzz-corpus
#                           replays again under ASan+UBSan (build-asan/,
#                           `make check-unit`); a few minutes
#   scripts/test.sh --full  the full tier, `make check-full`, in both builds
# One line per test as it finishes (build, result, name, seconds), the
# slowest tests at the end, and "N passed, N failed, N skipped" last; exits
# non-zero if anything failed. Takes the quiet-machine lock (scripts/lib/
# quiet.sh) so that no benchmark runs beside it. Works next to an in-tree
# build (see build-lib.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
top="$(pwd)"
# shellcheck source=scripts/build-lib.sh
. "$top/scripts/build-lib.sh"
# shellcheck source=scripts/lib/quiet.sh
. "$top/scripts/lib/quiet.sh"

usage() {
	cat <<EOF
Usage: scripts/test.sh [--full] [-j N]
  (none)    the fast tier: every unit test and fuzz-corpus replay (also under
            ASan+UBSan) and end-to-end checks of every program and backend
  --full    everything: the sweeps, the fault table, uring's flags, MPTCP over
            veth, the cluster over ssh; both builds run the whole suite
  -j N      tests run at once (default 4)
One test alone, in a configured build: make check TESTS=tests/cli.sh
EOF
}

full=0 jobs=4
while [ $# -gt 0 ]; do
	case "$1" in
	--full) full=1 ;;
	-j) [ $# -ge 2 ] || { usage >&2; exit 2; }; jobs="$2"; shift ;;
	-j[0-9]*) jobs="${1#-j}" ;;
	-h | --help) usage; exit 0 ;;
	*) echo "test.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
	esac
	shift
done
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "test.sh: -j takes a whole number of tests, not '$jobs'" >&2; exit 2; }

src="$(tb_source_dir "$top")" || { echo "0 passed, 1 failed, 0 skipped"; exit 1; }
tb_quiet_lock test.sh

times="$(mktemp)"
trap 'rm -f "$times"' EXIT
passed=0 failed=0 skipped=0
start=$SECONDS

count() {  # adds the automake summary of one build dir to the totals
	local log="$1/test-suite.log" p f s e
	[ -f "$log" ] || { failed=$((failed + 1)); echo "no test-suite.log in $1"; return; }
	p="$(awk '/^# PASS:/ { print $3 }' "$log")"
	f="$(awk '/^# FAIL:/ { print $3 }' "$log")"
	s="$(awk '/^# SKIP:/ { print $3 }' "$log")"
	e="$(awk '/^# ERROR:/ { print $3 }' "$log")"
	passed=$((passed + p)) failed=$((failed + f + e)) skipped=$((skipped + s))
}

# show_failures DIR: each failed test's "not ok" checks, then the end of its log.
show_failures() {
	local trs
	for trs in "$1"/tests/*.trs "$1"/tests/fuzz/*.trs; do
		[ -f "$trs" ] || continue
		grep -q ':test-result: \(FAIL\|ERROR\)' "$trs" || continue
		echo "--- ${trs%.trs}.log: its failed checks, then its end"
		# Each "not ok" with the indented lines that explain it, 20 at most.
		awk '/^not ok/ { n = 21 } /^[^ \t]/ && !/^not ok/ { n = 0 } n-- > 0' "${trs%.trs}.log" |
			head -n 80 || true
		tail -40 "${trs%.trs}.log"
	done
	grep -h '^SKIP:' "$1"/tests/*.log "$1"/tests/fuzz/*.log 2>/dev/null | sed 's/^/  /' || true
}

# run_build DIR TARGET [configure args...]: configure and build DIR from
# scratch, then `make TARGET`, each test's result line shown as it comes.
run_build() {
	local name="$1" target="$2" dir="$top/$1" t0=$SECONDS
	shift 2
	rm -rf "$dir"
	mkdir -p "$dir"
	echo "== $name: configure and build"
	if ! (cd "$dir" && "$src/configure" -q "$@" && make -j"$(nproc)" >/dev/null) >"$dir/build.log" 2>&1; then
		tail -30 "$dir/build.log"
		echo "== $name: the build failed (above; all of it in $dir/build.log)"
		failed=$((failed + 1))
		return 0
	fi
	echo "== $name: make $target, $jobs at once (built in $((SECONDS - t0)) s)"
	(cd "$dir" && make -j"$jobs" "$target" 2>&1) | tee "$dir/check.log" |
		awk -v b="$name" '/^(PASS|FAIL|SKIP|XFAIL|XPASS|ERROR): / { print b ": " $0; fflush() }' |
		tee -a "$times" || true
	if [ ! -f "$dir/test-suite.log" ]; then
		tail -20 "$dir/check.log"
		echo "== $name: make $target ended before any test ran (above; all of it in $dir/check.log)"
	fi
	echo "== $name: $(grep -E '^# (TOTAL|PASS|SKIP|FAIL|ERROR):' "$dir/test-suite.log" 2>/dev/null | tr '\n' ' ')in $((SECONDS - t0)) s"
	count "$dir"
	show_failures "$dir"
}

if [ "$full" -eq 1 ]; then
	run_build build-test check-full
	run_build build-asan check-full --enable-sanitizers CFLAGS="-O1 -g"
else
	run_build build-test check
	run_build build-asan check-unit --enable-sanitizers CFLAGS="-O1 -g"
fi

echo "== the slowest tests:"
sed -nE 's/^([^:]*): [A-Z]+: (.*) \(([0-9.]+) s\)$/\3 \1 \2/p' "$times" | sort -rn | head -10 |
	awk '{ printf "  %7.1f s  %s %s\n", $1, $2, $3 }'

# Shell scripts stay shellcheck clean: every file of ours that starts with a bash #! line.
mapfile -t shell_scripts < <(grep -lr --exclude-dir='build*' --exclude-dir=.git -m1 '^#!.*bash' \
	scripts tests bench loadfiles .ci autogen.sh 2>/dev/null | sort)
if command -v shellcheck >/dev/null; then
	if shellcheck -x "${shell_scripts[@]}"; then
		passed=$((passed + 1)); echo "shellcheck: clean (${#shell_scripts[@]} scripts)"
	else
		failed=$((failed + 1)); echo "shellcheck: FAILED"
	fi
else
	skipped=$((skipped + 1)); echo "shellcheck: skipped (not installed)"
fi

tier=fast
[ "$full" -eq 0 ] || tier=full
echo "test.sh: the $tier tier in $((SECONDS - start)) s"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
