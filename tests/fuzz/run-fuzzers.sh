#!/bin/bash
# `make fuzz`: builds each fuzz target with clang's libFuzzer, AddressSanitizer
# and UBSan, and runs it for FUZZ_SECONDS from its seed corpus. New inputs
# that reach new code go to BUILDDIR/tests/fuzz/work-TARGET/; an input that
# crashes is saved in SRCDIR/tests/fuzz/regressions-TARGET/, where `make
# check` replays it from then on (so it fails until the bug is fixed).
#
#   run-fuzzers.sh SRCDIR BUILDDIR [TARGET...]     (targets: loadfile frame)
#   environment: FUZZ_CC (clang), FUZZ_SECONDS (60), FUZZ_TIMEOUT (60 s for
#   one input to count as a hang), FUZZ_FLAGS (more libFuzzer flags)
# Exit 0: nothing found; 1: a target crashed (its input is saved); 2: no
# clang with libFuzzer, or bad usage.
set -euo pipefail

usage() {
	echo "usage: $0 SRCDIR BUILDDIR [loadfile|frame]..." >&2
	exit 2
}
[ "$#" -ge 2 ] || usage
srcdir="$(cd "$1" && pwd)"
builddir="$(cd "$2" && pwd)"
shift 2
targets=("$@")
[ "${#targets[@]}" -gt 0 ] || targets=(loadfile frame)
cc="${FUZZ_CC:-clang}"
seconds="${FUZZ_SECONDS:-60}"
timeout="${FUZZ_TIMEOUT:-60}"
read -r -a extra_flags <<< "${FUZZ_FLAGS:-}"
for value in "FUZZ_SECONDS=$seconds" "FUZZ_TIMEOUT=$timeout"; do
	case "${value#*=}" in
	''|*[!0-9]*) echo "run-fuzzers: $value is not a whole number of seconds" >&2; exit 2 ;;
	esac
done
[ -f "$builddir/config.h" ] || { echo "run-fuzzers: no config.h in $builddir: run configure first" >&2; exit 2; }

out="$builddir/tests/fuzz"
mkdir -p "$out"
probe_dir="$(mktemp -d "$out/probe.XXXXXX")"
trap 'rm -rf "$probe_dir"' EXIT

# Whether $cc builds a libFuzzer program: clang alone lacks the runtime.
printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' \
	> "$probe_dir/probe.c"
if ! "$cc" -fsanitize=fuzzer,address,undefined "$probe_dir/probe.c" -o "$probe_dir/probe" \
	> "$probe_dir/probe.log" 2>&1; then
	echo "run-fuzzers: '$cc' cannot build a libFuzzer program:" >&2
	sed 's/^/  /' "$probe_dir/probe.log" >&2
	echo "make fuzz needs clang and its libFuzzer runtime: on Debian/Ubuntu" \
		"'apt-get install clang libclang-rt-dev' (scripts/install-deps does it)," \
		"or pass FUZZ_CC=clang-NN" >&2
	exit 2
fi

# The code under test of each target: the fuzzer source and the files of
# src/ it needs, compiled here with coverage for libFuzzer.
sources() {
	case "$1" in
	loadfile) echo tests/fuzz/fuzz_loadfile.c src/loadfile.c src/smb.c src/util.c src/clock.c ;;
	frame) echo tests/fuzz/fuzz_frame.c src/wire.c src/util.c src/clock.c ;;
	*) echo "run-fuzzers: unknown target '$1' (loadfile, frame)" >&2; return 2 ;;
	esac
}

# Flags each target adds: the loadfile's words; frames as long as the limit.
target_flags() {
	case "$1" in
	loadfile) echo "-dict=$srcdir/tests/fuzz/loadfile.dict" ;;
	frame) echo "-max_len=70100" ;;
	esac
}

build() {  # build TARGET: the fuzzer binary, or exit 1
	local target="$1" files=() f
	read -r -a files <<< "$(sources "$target")"
	for f in "${!files[@]}"; do files[f]="$srcdir/${files[f]}"; done
	echo "run-fuzzers: building $out/fuzz-$target"
	"$cc" -std=c11 -g -O1 -Wall -Wextra -pthread \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-fno-omit-frame-pointer -I"$builddir" -I"$srcdir/src" -I"$srcdir/tests/fuzz" \
		"${files[@]}" -o "$out/fuzz-$target"
}

found=()
run() {  # run TARGET: fuzz it for $seconds; a crash adds it to found
	local target="$1" flags=()
	local log="$out/fuzz-$target.log" work="$out/work-$target"
	local saved="$srcdir/tests/fuzz/regressions-$target"
	read -r -a flags <<< "$(target_flags "$target")"
	mkdir -p "$work" "$saved"
	echo "run-fuzzers: fuzzing $target for $seconds s (log: $log)"
	# In-process, one worker: the machine may be shared. -timeout: an input
	# that takes that long is a hang, saved as one; generous, because on a
	# loaded machine a few seconds without the CPU are no hang.
	if "$out/fuzz-$target" -max_total_time="$seconds" -timeout="$timeout" -print_final_stats=1 \
		-artifact_prefix="$saved/" "${flags[@]}" "${extra_flags[@]}" \
		"$work" "$srcdir/tests/fuzz/corpus-$target" > "$log" 2>&1; then
		grep -E '^#[0-9]+[[:space:]]+DONE|^stat::number_of_executed_units|^Done ' "$log" | sed "s/^/  $target: /" || true
	else
		found+=("$target")
		echo "run-fuzzers: $target FAILED; the end of its log:"
		tail -40 "$log" | sed 's/^/  /'
	fi
	rmdir "$saved" 2>/dev/null || true   # only kept when it holds an input
}

for target in "${targets[@]}"; do
	sources "$target" > /dev/null || usage
done
for target in "${targets[@]}"; do
	build "$target"
done
for target in "${targets[@]}"; do
	run "$target"
done
if [ "${#found[@]}" -gt 0 ]; then
	echo "run-fuzzers: crash inputs of ${found[*]} saved under $srcdir/tests/fuzz/regressions-*/;" \
		"fix the bug, then keep the input: make check replays it"
	exit 1
fi
echo "run-fuzzers: ${targets[*]}: nothing found in $seconds s each"
