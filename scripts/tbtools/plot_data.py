"""tbench-plot's tables, through tbench-stats: the summary and the single
runs of one sweep or of several joined, the dimensions they vary, the
decomposition's model, and the columns of a table as rows of text. Every
statistic is tbench-stats's; this reads, joins and selects."""

import contextlib
import os
import re
import subprocess
from collections import namedtuple

from .errors import RunError, UsageError

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class Stats:
    """tbench-stats, run with argument lists. Its messages go to the
    user's stderr unless QUIET (where a failure is expected and answered)."""

    def __init__(self, path):
        self.path = path
        self._headers = {}
        self._knobs = None

    def out(self, args, quiet=False, check=True, stderr_to=None):
        """Its stdout; on failure RunError (UsageError when it said bad
        input), or None when not CHECK. STDERR_TO: a file for its messages."""
        try:
            with open(stderr_to, "w") if stderr_to else contextlib.nullcontext() as err:
                p = subprocess.run([self.path] + list(args), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=err or (subprocess.DEVNULL if quiet else None), text=True, errors="replace")
        except OSError as e:
            raise RunError(f"{self.path}: {e.strerror}") from None
        if p.returncode == 0:
            return p.stdout
        if not check:
            return None
        raise (UsageError if p.returncode == 2 else RunError)(
            f"tbench-stats {args[0]} {args[-1]} failed (exit {p.returncode})")

    def to_file(self, args, path):
        """Its stdout into PATH (a file of our temporary directory)."""
        text = self.out(args)
        with open(path, "w") as f:
            f.write(text)

    def header(self, path):
        """The column names of a CSV file as tbench-stats reads it (an
        older runs.csv's read-back offloads renamed)."""
        if path not in self._headers:
            self._headers[path] = self.out(["select", path]).split("\n", 1)[0].split(",")
        return self._headers[path]

    def rows(self, path, columns, where=(), quiet=False):
        """COLUMNS of PATH's rows (that match every NAME=VALUE of WHERE) as
        lists of strings, each as long as COLUMNS; None when tbench-stats
        refused (a column missing)."""
        args = ["select"]
        for w in where:
            args += ["--where", w]
        text = self.out(args + ["--columns", ",".join(columns), "--tsv", path], quiet=quiet, check=False)
        if text is None:
            return None
        n = len(columns)
        return [(line.split("\t") + [""] * n)[:n] for line in text.split("\n") if line != ""]

    def knobs(self):
        if self._knobs is None:
            self._knobs = self.out(["row", "--knobs"]).split()
        return self._knobs

    def trace_parts(self):
        """(column, label) of the clients' parts tbench --trace measures,
        in the order they stack."""
        parts = []
        for line in self.out(["row", "--trace-parts"]).splitlines():
            f = line.split("\t")
            if len(f) >= 3 and f[0] == "clients":
                parts.append((f[1], f[2]))
        return parts


Sibling = namedtuple("Sibling", "lower upper name label")


class Model:
    """The decomposition's model (tbench-stats decompose --model): the
    stack's levels, its steps' names and labels, and the siblings."""

    def __init__(self, text):
        self.levels, self.stack_names, self.stack_labels, self.siblings = [], [], [], []
        for line in text.splitlines():
            f = (line.split("\t") + [""] * 5)[:5]
            if f[0] == "stack":
                self.levels.append(f[2])
                self.stack_names.append(f[3])
                self.stack_labels.append(f[4])
            elif f[0] == "sibling":
                self.siblings.append(Sibling(*f[1:5]))

    @property
    def base(self):
        return self.levels[0] if self.levels else ""


def read_model(stats_path):
    """The Model of STATS_PATH; None when it has none."""
    try:
        p = subprocess.run([stats_path, "decompose", "--model"], stdin=subprocess.DEVNULL,
                           capture_output=True, text=True)
    except OSError:
        return None
    model = Model(p.stdout) if p.returncode == 0 else None
    return model if model and model.levels else None


class Inputs:
    """The tables a plot draws from: SUMMARY (made fresh from runs.csv
    when there is one), RUNS (the single runs it counts; None without a
    runs.csv), KEYS (--keys for tbench-stats where several sweeps are
    joined) and SWEEP_DIRS (sweep label -> its directory, in order)."""

    def __init__(self, summary, runs=None, keys=None, sweep_dirs=None):
        self.summary, self.runs, self.keys = summary, runs, keys or []
        self.sweep_dirs = sweep_dirs or {}


def kept_runs(stats, runs_csv, out):
    """OUT: the rows of RUNS_CSV that a summary counts: ok, and not
    disturbed ("no", or empty where tbench did not judge)."""
    if "disturbed" not in stats.header(runs_csv):
        text = stats.out(["select", "--where", "status=ok", runs_csv])
    else:
        text = stats.out(["select", "--where", "status=ok", "--where", "disturbed=no", runs_csv])
        more = stats.out(["select", "--where", "status=ok", "--where", "disturbed=", runs_csv])
        text += more.split("\n", 1)[1] if "\n" in more else ""
    with open(out, "w") as f:
        f.write(text)


def prepare(stats, dirs, tmp):
    """The Inputs of DIRS: one sweep's summary, made fresh from its
    runs.csv when it has one; several sweeps' runs.csv joined."""
    if len(dirs) > 1:
        sweep_dirs = sweep_labels(dirs)
        joined = os.path.join(tmp, "joined.csv")
        join_sweeps(sweep_dirs, joined)
        keys = ["--keys", join_keys(stats, joined)]
        summary, runs = os.path.join(tmp, "summary.csv"), os.path.join(tmp, "runs.csv")
        stats.to_file(["summarize"] + keys + [joined], summary)
        kept_runs(stats, joined, runs)
        return Inputs(summary, runs, keys, sweep_dirs)
    runs_csv = os.path.join(dirs[0], "runs.csv")
    if os.path.isfile(runs_csv):
        summary, runs = os.path.join(tmp, "summary.csv"), os.path.join(tmp, "runs.csv")
        stats.to_file(["summarize", runs_csv], summary)
        kept_runs(stats, runs_csv, runs)
        return Inputs(summary, runs)
    summary = os.path.join(dirs[0], "summary.csv")
    if not os.path.isfile(summary):
        raise RunError(f"{dirs[0]} has no runs.csv or summary.csv: is it a tbench-sweep results directory?")
    return Inputs(summary)


def sweep_labels(dirs):
    """A label per directory, in order: its base name, made unique with
    "#2", "#3" ...; what CSV or a line of text cannot hold (commas,
    quotes, control characters) replaced by "_"."""
    labels = {}
    for d in dirs:
        base = re.sub(r'[,"]', "_", _CONTROL.sub("_", os.path.basename(os.path.realpath(d))))
        label, n = base, 1
        while label in labels:
            n += 1
            label = f"{base}#{n}"
        labels[label] = d
    return labels


def join_sweeps(sweep_dirs, out):
    """OUT: the runs.csv of every sweep under one header with a first
    column "sweep". They must have the same columns (one version of
    tbench-stats wrote them)."""
    header, first, lines = None, None, []
    for label, d in sweep_dirs.items():
        path = os.path.join(d, "runs.csv")
        if not os.path.isfile(path):
            raise RunError(f"{d} has no runs.csv: several sweeps are drawn from their runs.csv "
                           "(a tbench-sweep results directory)")
        with open(path, encoding="utf-8", errors="replace") as f:
            own = f.read().split("\n")
        if header is None:
            header, first = own[0], d
            lines.append("sweep," + header)
        elif own[0] != header:
            raise RunError(f"{path} has other columns than {first}/runs.csv: sweeps of one version "
                           "of the suite can be drawn together")
        lines += [f"{label},{line}" for line in own[1:] if line.strip()]
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


def join_keys(stats, joined):
    """The key columns of a joined table: tbench-stats' own (backend,
    clients, model and the knob columns it has) with sweep after clients
    (cost wants backend and clients first)."""
    with open(joined) as f:
        header = f.readline().rstrip("\n").split(",")
    return ",".join(["backend", "clients", "sweep"] + [k for k in ["model"] + stats.knobs() if k in header])


def varying_dims(stats, summary, skip=""):
    """The dimensions of SUMMARY that vary (sweep, model and the knob
    columns with more than one value other than n/a), except SKIP."""
    header = stats.header(summary)
    dims = [d for d in ["sweep", "model"] + stats.knobs() if d != skip and d in header]
    if not dims:
        return []
    rows = stats.rows(summary, dims) or []
    return [d for i, d in enumerate(dims) if len({r[i] for r in rows} - {"n/a", ""}) > 1]


def client_counts(stats, summary):
    """The client counts of SUMMARY, in order: whole numbers, or
    UsageError (they go on the axis of every chart)."""
    counts = set()
    for (c,) in stats.rows(summary, ["clients"]) or []:
        if not re.fullmatch(r"[0-9]{1,9}", c):
            raise UsageError(f"{summary}: column 'clients' holds '{c[:40]}', not a whole number")
        counts.add(int(c))
    if not counts:
        raise RunError(f"{summary}: no points")
    return sorted(counts)


class Swept:
    """Whether the summary has points of a backend (at an offload): asked
    of tbench-stats once each."""

    def __init__(self, stats, summary):
        self.stats, self.summary, self._seen = stats, summary, {}

    def __call__(self, backend, offload=""):
        if (backend, offload) not in self._seen:
            where = [f"backend={backend}"] + ([f"offload={offload}"] if offload else [])
            rows = self.stats.rows(self.summary, ["backend"], where, quiet=True)
            self._seen[(backend, offload)] = bool(rows)
        return self._seen[(backend, offload)]
