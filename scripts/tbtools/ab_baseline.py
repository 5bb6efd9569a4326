"""tbench-ab --baseline DIR: the runs of an earlier tbench-ab (another
sitting, e.g. before a reboot into a patched kernel), checked and carried
into the new runs.csv. DIR is input: its files are parsed, never run."""

import os
from collections import namedtuple

from . import programs, store
from .errors import UsageError

# rows: runs.csv's rows (tbench-stats select's CSV, no header); sides:
# {side: runs}; sittings: {side: [sitting, ...]}; meta: its meta.json.
Baseline = namedtuple("Baseline", "path rows sides sittings meta")


def _file(directory, name):
    path = os.path.join(directory, name)
    if os.path.islink(path) or not os.path.isfile(path):
        raise UsageError(f"--baseline {directory}: no file {name} (a tbench-ab results directory has "
                         "meta.json and runs.csv, not links)")
    return path


def load(directory, stats, header):
    """The Baseline in DIRECTORY; UsageError naming the file and what is
    wrong when it is not a tbench-ab directory of this version."""
    if not os.path.isdir(directory):
        raise UsageError(f"--baseline {directory}: not a directory")
    meta_path, runs_csv = _file(directory, "meta.json"), _file(directory, "runs.csv")
    meta = store.read_meta(meta_path)
    if store.meta_field(meta, meta_path, "tool", str) != "tbench-ab":
        raise UsageError(f"{meta_path}: field 'tool' is not tbench-ab: --baseline takes a tbench-ab directory")
    first = store.read_text(runs_csv).split("\n", 1)[0]
    if first != header:
        raise UsageError(f"{runs_csv}: its columns are not those this version writes "
                         "(tbench-stats row --header, then variant)")
    sides, sittings = {"a": 0, "b": 0}, {"a": [], "b": []}
    cells = programs.run_stats(stats, ["select", "--columns", "variant,status,sitting", "--tsv", runs_csv])
    for n, line in enumerate(cells.splitlines(), 2):
        variant, status, sitting = (line.split("\t") + ["", "", ""])[:3]
        if variant not in sides or status != "ok" or not sitting:
            raise UsageError(f"{runs_csv}:{n}: a run of tbench-ab has variant a or b, status ok and a "
                             f"sitting; this one: '{variant}', '{status}', '{sitting}'")
        sides[variant] += 1
        if sitting not in sittings[variant]:
            sittings[variant].append(sitting)
    rows = programs.run_stats(stats, ["select", runs_csv]).split("\n", 1)[1] if sum(sides.values()) else ""
    return Baseline(directory, rows, sides, sittings, meta)


def check_side(baseline, now):
    """The side not run now must have runs in the baseline."""
    other = "a" if now == "b" else "b"
    if not baseline.sides[other]:
        raise UsageError(f"--baseline {baseline.path}: no runs of side {other.upper()}, the side not run now "
                         f"(--now {now}): give a directory that ran {other.upper()}")


def boot_warning(sittings):
    """What a verdict across sittings cannot say, when a side has one."""
    if min(len(sittings["a"]), len(sittings["b"])) >= 2:
        return None
    return ("note: one sitting (boot) of a side: the interval has no between-sitting variance to include, so "
            "this verdict cannot tell the change from a boot effect; alternate A, B, A, B across boots "
            "(man tbench-ab, docs/method.md \"A/B across boots\")")
