#!/bin/bash
# No header of src/, cmd/ or backends/ includes itself, directly or through
# others: the graph drawn from their #include "..." lines has no cycle. A
# cycle compiles only by the include guards' luck, in one order.
set -euo pipefail
# shellcheck source=tests/testlib.sh
. "${top_srcdir:-.}/tests/testlib.sh"

cd "$SRCDIR"
# A quoted name is looked for beside the file, then along the build's -I
# path (src, backends); one found nowhere is generated (config.h), a leaf.
resolve() {
	local dir="$1" name="$2" d
	for d in "$dir" src backends; do
		[ -f "$d/$name" ] && { echo "$d/$name"; return 0; }
	done
	return 0
}

edges() {
	local file name to
	for file in src/*.[ch] cmd/*.[ch] backends/*.[ch]; do
		echo "$file $file"   # every file a node, even one including nothing
		while read -r name; do
			to="$(resolve "$(dirname "$file")" "$name")"
			[ -n "$to" ] && echo "$file $to"
		done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file")
	done
}

edges >"$TL_TMP/edges"
check "the graph has edges (the script reads the #include lines)" \
	grep -q '^src/driver.c src/' "$TL_TMP/edges"
# tsort takes "a a" for a node, not a loop: a file including itself is checked apart.
self="$(awk '$1 == $2 && seen[$0]++ { print $1 }' "$TL_TMP/edges")"
if [ -z "$self" ]; then ok "no file includes itself"; else not_ok "a file includes itself: $self"; fi
if tsort "$TL_TMP/edges" >/dev/null 2>"$TL_TMP/loop"; then
	ok "no include cycle in src/, cmd/, backends/"
else
	not_ok "an include cycle:"
	sed 's/^/    /' "$TL_TMP/loop"
fi
tl_done
