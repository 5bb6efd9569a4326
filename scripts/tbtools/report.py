"""tbench-report: one self-contained HTML page of a tbench-sweep results
directory. This gathers what the page shows (meta.json, tbench-stats'
summary and decomposition, the runs left out, tbench-plot's charts); the
page itself is report_html's."""

import csv
import io
import json
import math
import os
import subprocess
import sys
import tempfile

from . import picked, programs, report_html, store, yardstick
from .errors import Parser, RunError, UsageError

PROG = "tbench-report"
CHARTS = ("throughput", "cost", "cpu", "decomposition", "siblings", "segments", "trace", "paths")
DECOMPOSED_FIGURES = ("cost_cpu_us", "cost_task_clock_us")

HELP = """Write DIR/index.html: one page of the sweep in DIR (a tbench-sweep results
directory) that needs nothing beside it (the charts are inside it):
  - the sweep's command, when it ran, the machine, and the noise around it
    (load and CPU pressure at its start, runs judged disturbed), and its
    yardstick's figures (tbench-sweep's YARDSTICK);
  - every chart of tbench-plot, drawn afresh (throughput, cost, cpu,
    decomposition, siblings, segments, trace, paths: those the sweep has);
  - the summary table: per point, runs, MB/sec, CPU and wall time per
    operation, each mean with the half-width of its 95% interval;
  - the decomposition in words: a sentence per layer and client count, with
    its interval, and whether that is clear of 0; two backends whose paths
    differ set side by side, not as a layer; where knobs vary, at the first
    value swept of each (named);
  - the runs that failed or were disturbed, and why, with the knobs that vary.
A sweep that meta.json says is running but whose process (its pid) is gone
from this machine is shown as interrupted."""

USAGE_TAIL = """
Needs, for the charts, tbench-plot (beside this script) with gnuplot.
Exit status: 0 written, 1 error, 2 usage error."""


def parser():
    p = Parser(prog=PROG, usage=f"{PROG} [OPTIONS] DIR", description=HELP, epilog=USAGE_TAIL)
    p.add_argument("dirs", nargs="*", metavar="DIR")
    p.add_argument("--out", metavar="FILE", help="write the page to FILE instead of DIR/index.html")
    p.add_argument("--no-plot", action="store_true",
                   help="use the PNGs already in DIR instead of drawing them")
    p.add_argument("--tbench-stats", metavar="P", dest="stats",
                   help="tbench-stats program (default: $TBENCH_STATS, else the first of this "
                        "suite beside $TBENCH, beside this script, in its tree's build/, here, "
                        "then in PATH)")
    p.add_argument("-h", "--help", action="help", help="this text")
    p.add_argument("--version", action="store_true",
                   help="the suite's version, as the tbench it would use says")
    return p


def check_options(opts):
    """The results directory and the page's path; UsageError when wrong."""
    if not opts.dirs:
        raise UsageError("missing DIR")
    if len(opts.dirs) > 1:
        raise UsageError("one DIR only")
    d = opts.dirs[0]
    if not os.path.isdir(d):
        raise UsageError(f"{d}: not a directory")
    if not os.path.isfile(os.path.join(d, "runs.csv")):
        raise UsageError(f"{d} has no runs.csv: is it a tbench-sweep results directory?")
    out = opts.out or os.path.join(d, "index.html")
    try:
        os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    except OSError:
        raise UsageError(f"--out {out}: cannot make its directory") from None
    return d, out


def csv_rows(text):
    """The rows of CSV TEXT as dicts of its header's columns."""
    return [r for r in csv.DictReader(io.StringIO(text)) if any(r.values())]


# --- meta.json, read as jq read it before: a missing field is "null"
# inside a sentence; a sentence whose parts are of the wrong kind is left out.

class _Shape(Exception):
    """A field of meta.json is not of the kind a sentence needs."""


def shown(value):
    """A JSON value in a sentence: text as it is, a whole number without
    '.0', null as 'null', arrays and objects as JSON."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e17:
        return str(int(value))
    if isinstance(value, (str, int, float)):
        return str(value)
    return json.dumps(value, ensure_ascii=False)


def field(doc, dotted):
    """DOC's field at the DOTTED path; None where missing; _Shape when a
    step is neither an object nor null."""
    for key in dotted.split("."):
        if doc is None:
            return None
        if not isinstance(doc, dict):
            raise _Shape(dotted)
        doc = doc.get(key)
    return doc


def plain(doc, dotted):
    """A field as a line of its own: '' when missing, null or false."""
    try:
        value = field(doc, dotted)
    except _Shape:
        return ""
    return "" if value is None or value is False else shown(value)


def machine(host):
    if not isinstance(host, dict) or not isinstance(host.get("memory_kb"), (int, float)):
        raise _Shape("host")
    gib = math.floor(host["memory_kb"] / 1048576)
    return (f"{shown(host.get('name'))}, Linux {shown(host.get('kernel'))}, "
            f"{shown(host.get('cpu_model'))}, {shown(host.get('cores_online'))} CPUs online, {gib} GiB")


def runs_text(sweep):
    if not isinstance(sweep, dict):
        raise _Shape("sweep")
    prec = sweep.get("precision")
    if prec not in (None, False):
        p = {k: shown(field(prec, k)) for k in ("min_reps", "max_reps", "figure", "pct")}
        reps = f"{p['min_reps']} to {p['max_reps']} reps (until {p['figure']} was known to {p['pct']}%)"
    else:
        reps = f"{shown(sweep.get('reps'))} reps"
    return (f"{shown(sweep.get('time_s'))} s each after {shown(sweep.get('warmup_s'))} s warm-up, "
            f"{reps}, clients as {shown(sweep.get('client_model'))}, {shown(sweep.get('mode'))}")


def noise(start):
    loadavg = field(start, "loadavg")
    if not isinstance(loadavg, list):
        raise _Shape("context.start.loadavg")
    return (f"load average {', '.join(shown(v) for v in loadavg)}; CPU pressure (some) "
            f"{shown(field(start, 'psi_cpu.some.avg10'))}% over 10 s, "
            f"{shown(field(start, 'psi_cpu.some.avg60'))}% over 60 s")


def sentence(make, doc, dotted):
    try:
        return make(field(doc, dotted))
    except _Shape:
        return ""


def status(meta):
    s = plain(meta, "status")
    return "interrupted" if s == "running" and store.sweep_status(meta) == "interrupted" else s


def read_meta(d):
    """meta.json as a dict, {} when there is none; one that is not valid
    JSON is said on stderr and read as none: the page is still worth having."""
    path = os.path.join(d, "meta.json")
    if not os.path.isfile(path):
        return {}
    try:
        return store.read_meta(path)
    except UsageError as e:
        print(f"{PROG}: {e}: the page leaves out the sweep's context", file=sys.stderr)
        return {}


def facts(meta):
    """What the page says of the sweep: its command and (heading, text) rows."""
    return {"command": plain(meta, "command"), "rows": [
        ("ran", f"{plain(meta, 'start')} to {plain(meta, 'end')} ({status(meta)})"),
        ("machine", sentence(machine, meta, "host")),
        ("tbench", plain(meta, "tbench.version")),
        ("runs", sentence(runs_text, meta, "sweep")),
        ("noise at the start", sentence(noise, meta, "context.start")),
        ("yardstick", yardstick_text(meta)),
    ]}


def yardstick_text(meta):
    """The sitting's yardstick in a line (its points' figures), or why
    there is none; a yardstick field of the wrong shape is said, not shown."""
    try:
        y = yardstick.read(meta, "meta.json")
    except UsageError as e:
        return f"not readable: {e}"
    return yardstick.line(y) if y is not None else yardstick.why_none(meta)


# --- the figures, from tbench-stats

def varying_dims(stats, points):
    """The columns of the summary beside backend and clients that name a
    point and take more than one value there (n/a and '' not counted):
    sweep, model and the knobs (tbench-stats row --knobs)."""
    knobs = programs.run_stats(stats, ["row", "--knobs"]).split()
    header = points[0].keys() if points else ()
    return [d for d in ["sweep", "model"] + knobs if d in header
            and len({p[d] for p in points if p[d] not in ("n/a", "")}) > 1]


def picked_runs(stats, runs_csv, dims, points, tmp):
    """(runs, chosen): RUNS_CSV cut down, in TMP, to the first value of
    each of DIMS but the offload in POINTS (the summary's order, as
    tbench-plot picks it: picked.py); as it is without such a dim."""
    chosen = picked.first_values(points, [d for d in dims if d not in ("offload", "sweep")])
    if not chosen:
        return runs_csv, {}
    try:
        text = programs.run_stats(stats, ["select", runs_csv])
    except (UsageError, RunError):
        return runs_csv, {}   # decompose will say what is wrong with it
    path = os.path.join(tmp, "runs.picked.csv")
    with open(path, "w") as f:
        f.write(picked.keep_point(text, chosen))
    return path, chosen


def decomposed(stats, runs_csv):
    """(figure, rows) of the first figure tbench-stats decomposes (every
    kind: layer, different-paths, setting, total); (None, []) when none."""
    for figure in DECOMPOSED_FIGURES:
        try:
            layers = csv_rows(programs.run_stats(stats, ["decompose", "--figure", figure, runs_csv]))
        except (UsageError, RunError):
            continue
        if layers:
            return figure, layers
    return None, []


def left_out(runs):
    """The runs no mean counts: failed, or judged disturbed."""
    return [r for r in runs if r.get("status") != "ok" or (r.get("disturbed") or "") not in ("", "no")]


def draw_charts(stats, d, img):
    """tbench-plot's charts of D into IMG; RunError with its last line if it failed."""
    here = os.path.dirname(os.path.realpath(sys.argv[0]))
    plot = next((p for p in (os.path.join(here, "tbench-plot"), os.path.join(programs.SCRIPT_DIR, "tbench-plot"))
                 if os.access(p, os.X_OK)), None)
    if plot is None:
        raise RunError(f"no tbench-plot beside {here}: reinstall, or give --no-plot")
    env = dict(os.environ, TBENCH_STATS=stats)
    p = subprocess.run([plot, "--out-dir", img, d], env=env, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, errors="replace")
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or [f"it exited {p.returncode}"])[-1]
        raise RunError(f"tbench-plot failed: {last}")


def pngs(img):
    """(name, bytes) of every chart in IMG there is, in CHARTS' order."""
    found = []
    for name in CHARTS:
        path = os.path.join(img, name + ".png")
        if os.path.isfile(path) and os.path.getsize(path) > 0:
            with open(path, "rb") as f:
                found.append((name, f.read()))
    return found


def main(argv):
    opts = parser().parse_args(argv)
    if opts.version:
        print(programs.script_version(PROG, os.environ.get("TBENCH")))
        return 0
    d, out = check_options(opts)
    stats = programs.find_stats(PROG, opts.stats)
    runs_csv = os.path.join(d, "runs.csv")
    with tempfile.TemporaryDirectory(prefix="tbench-report.") as tmp:
        img = d
        if not opts.no_plot:
            img = os.path.join(tmp, "img")
            draw_charts(stats, d, img)
        charts = pngs(img)
        points = csv_rows(programs.run_stats(stats, ["summarize", runs_csv]))
        dims = varying_dims(stats, points)
        decomposed_runs, chosen = picked_runs(stats, runs_csv, dims, points, tmp)
        figure, layers = decomposed(stats, decomposed_runs)
    runs = csv_rows(store.read_text(runs_csv))
    name = os.path.basename(os.path.abspath(d))
    parts = report_html.page(name, facts(read_meta(d)), charts, dims, points,
                             report_html.Decomposition(figure, layers, picked.words(chosen)), left_out(runs), len(runs))
    store.atomic_write(out, report_html.render(parts))
    print(out)
    return 0
