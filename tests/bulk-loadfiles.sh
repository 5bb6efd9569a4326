#!/bin/bash
# shellcheck disable=SC2016  # the bash -c programs take their files as "$1".. on purpose
# The bulk loadfiles (loadfiles/bulk-*.txt) are what genload makes, byte for
# byte, and follow the size rule of docs/loadfile.md at any --io-size: every
# ReadX and WriteX asks for and moves the io size, so a pass carries
# (ReadX + WriteX lines) x io size of payload, as tbench counts it.
set -euo pipefail
# shellcheck source=tests/testlib.sh
. "${top_srcdir:-.}/tests/testlib.sh"

GENLOAD="${top_builddir:-.}/loadfiles/genload"

for shape in bulk-write bulk-read bulk-mix; do
	check "genload --shape $shape regenerates loadfiles/$shape.txt exactly" \
		bash -c '"$1" --shape "$2" > "$3" && cmp "$3" "$4"' _ "$GENLOAD" "$shape" \
		"$TL_TMP/$shape.txt" "$SRCDIR/loadfiles/$shape.txt"
done

# sizes_follow FILE IO: every ReadX/WriteX has size and ret_size IO (the
# two fields before the status), and there is at least one.
sizes_follow() {
	awk -v io="$2" '$1 == "ReadX" || $1 == "WriteX" {
		n++; if ($(NF-2) != io || $(NF-1) != io) { print FILENAME ":" FNR ": " $0; bad++ } }
		END { exit !(n > 0 && !bad) }' "$1"
}
# payload_of FILE: the payload one client carries in one pass, as tbench counts it.
payload_of() {
	"$TBENCH" -b nop 1 --run-once -q -c "$1" --json "$TL_TMP/pass.json" >/dev/null &&
		jq -r '.result.payload_bytes' "$TL_TMP/pass.json"
}

for io in 1 1000 8948 65536; do
	"$GENLOAD" --shape bulk-mix --io-size "$io" >"$TL_TMP/mix-$io.txt"
	check "--io-size $io: every ReadX/WriteX moves $io bytes" sizes_follow "$TL_TMP/mix-$io.txt" "$io"
	lines=$(grep -cE '^(ReadX|WriteX) ' "$TL_TMP/mix-$io.txt")
	got=$(payload_of "$TL_TMP/mix-$io.txt")
	if [ "$got" = $((lines * io)) ]; then
		ok "--io-size $io: tbench counts $lines x $io bytes a pass"
	else
		not_ok "--io-size $io: tbench counts $got bytes a pass, want $lines x $io"
	fi
done
check "bulk-write has no ReadX" bash -c '! grep -q "^ReadX " "$1"' _ "$SRCDIR/loadfiles/bulk-write.txt"
check "bulk-read reads more than it writes" bash -c \
	'[ "$(grep -c "^ReadX " "$1")" -gt "$(grep -c "^WriteX " "$1")" ]' _ "$SRCDIR/loadfiles/bulk-read.txt"

expect_exit 2 "--io-size 0 is refused" "$GENLOAD" --shape bulk-write --io-size 0
expect_exit 2 "--io-size 65537 (over SMB1's 64 KiB) is refused" "$GENLOAD" --shape bulk-write --io-size 65537
expect_exit 2 "--io-size without a bulk shape is refused" "$GENLOAD" --io-size 4096
expect_exit 2 "--ops with a bulk shape is refused" "$GENLOAD" --shape bulk-read --ops 1000
expect_exit 2 "an unknown shape is refused" "$GENLOAD" --shape bulk-copy
check "--shape default is the default trace" \
	bash -c '"$1" --shape default --ops 500 > "$2" && "$1" --ops 500 | cmp - "$2"' _ "$GENLOAD" "$TL_TMP/d.txt"
tl_done
