#!/bin/bash
# Build from scratch, out of tree, and run the whole test suite: the normal
# build in build-test/, then the AddressSanitizer+UBSan build in build-asan/.
# Works next to an in-tree build (see build-lib.sh). Prints "N passed,
# N failed, N skipped" last; exits non-zero if anything failed.
set -euo pipefail
cd "$(dirname "$0")/.."
top="$(pwd)"
# shellcheck source=scripts/build-lib.sh
. "$top/scripts/build-lib.sh"

src="$(tb_source_dir "$top")" || { echo "0 passed, 1 failed, 0 skipped"; exit 1; }

passed=0 failed=0 skipped=0
count() {  # adds the automake summary of one build dir to the totals
	local log="$1/test-suite.log"
	[ -f "$log" ] || { failed=$((failed + 1)); echo "no test-suite.log in $1"; return; }
	local p f s e
	p="$(awk '/^# PASS:/ { print $3 }' "$log")"
	f="$(awk '/^# FAIL:/ { print $3 }' "$log")"
	s="$(awk '/^# SKIP:/ { print $3 }' "$log")"
	e="$(awk '/^# ERROR:/ { print $3 }' "$log")"
	passed=$((passed + p)) failed=$((failed + f + e)) skipped=$((skipped + s))
	grep -E '^(SKIP|FAIL|ERROR):' "$1"/tests/*.log 2>/dev/null | sed 's/^/  /' || true
}

run_build() {  # run_build DIR [configure args...]
	local dir="$top/$1"
	shift
	rm -rf "$dir"
	mkdir -p "$dir"
	(cd "$dir" && "$src/configure" -q "$@" && make -j2 >/dev/null && make -j2 check >/dev/null 2>&1) || true
	echo "== $(basename "$dir"): $(grep -E '^# (TOTAL|PASS|SKIP|FAIL|ERROR):' "$dir/test-suite.log" 2>/dev/null | tr '\n' ' ')"
	count "$dir"
	for trs in "$dir"/tests/*.trs; do
		if grep -q ':test-result: \(FAIL\|ERROR\)' "$trs" 2>/dev/null; then
			echo "--- ${trs%.trs}.log: its failed checks, then its end"
			grep -A3 '^not ok' "${trs%.trs}.log" | head -30 || true
			tail -40 "${trs%.trs}.log"
		fi
	done
	return 0
}

run_build build-test
run_build build-asan --enable-sanitizers CFLAGS="-O1 -g"

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

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
