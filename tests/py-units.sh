#!/bin/bash
# The sweep layer's Python modules (scripts/tbtools/), unit by unit:
# python3 -m unittest over tests/py/test_*.py, standard library only.
# Programs of the build (tbench, tbench_srv, tbench-stats) are named to the
# tests through TBENCH, TBENCH_SRV and TBENCH_STATS.
set -uo pipefail
# shellcheck source=tests/testlib.sh
. "${top_srcdir:-.}/tests/testlib.sh"

export PYTHONPATH="$SRCDIR/scripts${PYTHONPATH:+:$PYTHONPATH}"
export TBENCH="${top_builddir:-.}/tbench" TBENCH_SRV="${top_builddir:-.}/tbench_srv"
export TBENCH_STATS="${top_builddir:-.}/tbench-stats"
export PYTHONDONTWRITEBYTECODE=1
python3 -m unittest discover -v -s "$SRCDIR/tests/py" -t "$SRCDIR/tests/py" 2>&1
