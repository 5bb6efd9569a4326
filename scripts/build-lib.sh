# shellcheck shell=bash
# Sourced by scripts/quickstart and scripts/test.sh: where out-of-tree builds
# take their sources from. Both build out of tree (build/, build-test/,
# build-asan/), which automake refuses while the top is configured in-tree
# ("source directory already configured"). Instead of `make distclean` at
# the top (which would delete an in-tree ./tbench someone still uses), such a
# tree is built from a clean copy of its sources in build-src/.

# tb_generate DIR: run autogen.sh in DIR when configure is missing or older
# than what it is made from (a fresh clone, or a `git pull` that changed
# configure.ac or Makefile.am). Its output is shown only if it fails.
tb_generate() {
	local dir="$1" log
	if [ -x "$dir/configure" ] && [ "$dir/configure" -nt "$dir/configure.ac" ] &&
		[ "$dir/Makefile.in" -nt "$dir/Makefile.am" ]; then
		return 0
	fi
	log="$(mktemp)"
	if ! (cd "$dir" && ./autogen.sh) >"$log" 2>&1; then
		cat "$log" >&2
		rm -f "$log"
		echo "$dir/autogen.sh failed (above): are autoconf and automake installed? (scripts/install-deps)" >&2
		return 1
	fi
	rm -f "$log"
}

# tb_source_dir TOP: print the directory to run configure from for an
# out-of-tree build of TOP: TOP itself, or, when TOP is configured in-tree, a
# fresh copy in TOP/build-src of every file git does not ignore (tracked
# files as they are in the working tree, uncommitted edits included, and new
# untracked ones), so the build is of what the developer sees.
tb_source_dir() {
	local top="$1" copy="$1/build-src"
	if [ ! -f "$top/config.status" ]; then
		tb_generate "$top" || return 1
		echo "$top"
		return 0
	fi
	if ! git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		echo "$top is configured in-tree (config.status) and is not a git checkout, so its" \
			"sources cannot be told from build output: run 'make distclean' in $top, then again" >&2
		return 2
	fi
	echo "note: $top is configured in-tree; building from a clean copy of its sources in $copy" >&2
	rm -rf "$copy"
	mkdir -p "$copy"
	# tar keeps modes and times; --ignore-failed-read skips files deleted but not yet committed.
	(cd "$top" && git ls-files -z --cached --others --exclude-standard |
		tar --null --files-from=- --ignore-failed-read -cf - 2>/dev/null) | tar -xf - -C "$copy"
	tb_generate "$copy" || return 1
	echo "$copy"
}
