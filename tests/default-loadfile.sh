#!/bin/bash
# shellcheck disable=SC2016  # the bash -c programs take their files as "$1".. on purpose
# The committed default loadfile is what genload makes from its fixed seed,
# byte for byte, and it follows the op mix and size limits of docs/loadfile.md.
set -euo pipefail
# shellcheck source=tests/testlib.sh
. "${top_srcdir:-.}/tests/testlib.sh"

GENLOAD="${top_builddir:-.}/loadfiles/genload"
DEFAULT="$SRCDIR/loadfiles/default.txt"

check "genload regenerates loadfiles/default.txt exactly" \
	bash -c '"$1" > "$2" && cmp "$2" "$3"' _ "$GENLOAD" "$TL_TMP/regen.txt" "$DEFAULT"
check "a second generation is identical (no hidden state)" \
	bash -c '"$1" > "$2" && cmp "$2" "$3"' _ "$GENLOAD" "$TL_TMP/regen2.txt" "$TL_TMP/regen.txt"
check "default.txt follows the op mix within 0.5 points" \
	bash "$SRCDIR/loadfiles/check-mix.sh" "$DEFAULT"
"$GENLOAD" --seed 7 --ops 20000 >"$TL_TMP/seed7.txt"
check "another seed gives another file" bash -c '! cmp -s "$1" "$2"' _ "$TL_TMP/seed7.txt" "$DEFAULT"
check "another seed follows the mix too" bash "$SRCDIR/loadfiles/check-mix.sh" "$TL_TMP/seed7.txt"
check "tbench parses it" "$TBENCH" -b nop 2 --run-once -q -c "$TL_TMP/seed7.txt"
tl_done
