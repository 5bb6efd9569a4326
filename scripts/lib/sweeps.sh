# shellcheck shell=bash
# Sweeps' tables (sourced by tbench-plot and tbench-report, which set
# STATS): the dimensions a table varies; and several sweeps as one table,
# their runs.csv joined under a first column "sweep" that names each by its
# directory, so that a summary keyed on it keeps their points apart and a
# plot can draw them side by side (--by sweep) or as lines of one panel.

header_of() { # FILE
	"$STATS" select "$1" | sed -n 1p
}

# The dimensions of SUMMARY that vary (model and knob columns with more
# than one value other than n/a), one a line, except SKIP (the --by knob).
varying_dims() { # SUMMARY SKIP
	local header d
	header=",$(header_of "$1"),"
	for d in sweep model $("$STATS" row --knobs); do
		if [ "$d" = "$2" ] || [[ "$header" != *",$d,"* ]]; then continue; fi
		[ "$("$STATS" select --columns "$d" --tsv "$1" | grep -v -x -e 'n/a' -e '' | sort -u | wc -l)" -le 1 ] ||
			echo "$d"
	done
}

declare -A SWEEP_DIR=()   # label -> directory
SWEEP_LABELS=()           # in the order given

# A label per directory: its base name, made unique with "#2", "#3" ...,
# commas and quotes (CSV) replaced.
sweeps_label() { # DIR...
	local d base label n
	SWEEP_LABELS=()
	SWEEP_DIR=()
	for d in "$@"; do
		base="$(basename "$(cd "$d" && pwd)")"
		base="${base//[,\"]/_}"
		label="$base" n=1
		while [ -n "${SWEEP_DIR[$label]:-}" ]; do
			n=$((n + 1))
			label="$base#$n"
		done
		SWEEP_DIR[$label]="$d"
		SWEEP_LABELS+=("$label")
	done
}

# OUT: the runs.csv of every sweep of SWEEP_LABELS under one header with a
# first column "sweep". They must have the same columns (one version of
# tbench-stats wrote them).
sweeps_join() { # OUT
	local label dir header="" h
	for label in "${SWEEP_LABELS[@]}"; do
		dir="${SWEEP_DIR[$label]}"
		[ -f "$dir/runs.csv" ] || die "$dir has no runs.csv: several sweeps are drawn from their runs.csv (a tbench-sweep results directory)"
		h="$(head -n 1 "$dir/runs.csv")"
		if [ -z "$header" ]; then
			header="$h"
			echo "sweep,$header"
		elif [ "$h" != "$header" ]; then
			die "$dir/runs.csv has other columns than ${SWEEP_DIR[${SWEEP_LABELS[0]}]}/runs.csv: sweeps of one version of the suite can be drawn together"
		fi
		tail -n +2 "$dir/runs.csv" | awk -v l="$label" 'NF { print l "," $0 }'
	done >"$1"
}

# The key columns of a joined table: tbench-stats' own (backend, clients,
# model and the knob columns it has) with sweep after clients (cost wants
# backend and clients first).
sweeps_keys() { # STATS FILE
	local header k keys="backend,clients,sweep"
	header=",$(head -n 1 "$2"),"
	for k in model $("$1" row --knobs); do
		[[ "$header" != *",$k,"* ]] || keys+=",$k"
	done
	echo "$keys"
}
