# Shared by the benchmarks under bench/ (sourced, not run): messages and
# exits, whole numbers, a seeded shuffle. The caller sets PROG (its name).
# (The sweep layer's programs are Python: scripts/tbtools, whose
# programs.py finds the suite's programs.)
# shellcheck shell=bash

die() {
	echo "$PROG: $*" >&2
	exit 1
}

usage_error() {
	echo "$PROG: $*" >&2
	echo "Try '$PROG --help'." >&2
	exit 2
}

is_uint() { [[ "$1" =~ ^[0-9]+$ ]]; }

# Shuffles the array named NAME in place with bash's RANDOM (Fisher-Yates).
# In the caller's shell, not in a pipeline or $(...): a subshell reseeds
# RANDOM, and the same seed must give the same order.
shuffle_array() { # NAME
	local -n arr="$1"
	local i j tmp
	for ((i = ${#arr[@]} - 1; i > 0; i--)); do
		j=$((RANDOM % (i + 1)))
		tmp="${arr[i]}"
		arr[i]="${arr[j]}"
		arr[j]="$tmp"
	done
}
