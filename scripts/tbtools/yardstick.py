"""A sitting's yardstick: a short, fixed set of runs a sweep makes before
its plan (the backends that `tbench -b list` marks yardstick, at 1 and 2
clients, a few seconds each, repeated and interleaved), so that two sweeps
made in different sittings (another boot, another kernel build) can say
how much the machine itself moved between them. Its runs go to
yardstick/ of the results directory through the sweep's own Runner; its
figures, with their intervals, come from tbench-stats summarize and go to
meta.json's "yardstick". tbench-compare reads them (compare.py)."""

import argparse
import csv
import io
import os
import shutil
import sys
import time

from . import plan, programs, results, store, supervise
from .errors import UsageError
from .netns import Route
from .runner import Runner

DIR = "yardstick"
CLIENTS = (1, 2)
REPS = 3
DEFAULT_SECONDS = "2"
# The figures kept per point in meta.json: MB/sec, and CPU µs per operation
# (clients and servers), steadier on a shared machine.
FIGURES = ("mb_per_sec", "cost_cpu_us")
SKIP_ENV = "TBENCH_NO_YARDSTICK"


def warmup_of(seconds):
    """The warm-up of a yardstick run: a quarter of its execute phase (text)."""
    return f"{plan.secs_to_ms(seconds) // 4 / 1000:g}"


def backends_of(backends):
    """The yardstick's backends, in tbench -b list's order."""
    return backends.with_caps("yardstick")


def reference(backends):
    """{backend, clients}: the yardstick point that stands for the sitting
    (tbench-compare's --sittings-pct): the first yardstick backend of
    tbench -b list at the most clients."""
    return {"backend": backends[0], "clients": max(CLIENTS)}


def runs(backends, seed):
    """The yardstick's runs: every backend at every client count, REPS
    times interleaved, each client count's points shuffled (plan.runs)."""
    pts = [plan.Point(b, c, "n/a", "", "", "", False, ()) for b in backends for c in CLIENTS]
    return plan.runs(pts, REPS, seed)


def skipped_why(opts):
    """Why the yardstick is not run this sweep, or None."""
    if opts.no_yardstick:
        return "--no-yardstick"
    if os.environ.get(SKIP_ENV) == "1":
        return f"{SKIP_ENV}=1"
    return None


def estimate_s(todo, seconds):
    return plan.estimate_s(len(todo), seconds, warmup_of(seconds), sum(r.point.clients for r in todo))


def plan_lines(sweep, todo, seconds):
    """The yardstick's part of --plan: a line saying what and how long, then its runs."""
    lines = [f"yardstick: {','.join(backends_of(sweep.backends))} x clients "
             f"{','.join(map(str, CLIENTS))}, {REPS} reps interleaved, {seconds} s + {warmup_of(seconds)} s "
             f"warm-up each: {len(todo)} runs, about {plan.fmt_secs(estimate_s(todo, seconds))} "
             f"(in {DIR}/; --no-yardstick skips it)"]
    view = View(sweep, seconds)
    for n, run in enumerate(todo, 1):
        lines.append(f"[yardstick {n}/{len(todo)}] {plan.describe_run(run, REPS)}: "
                     f"{' '.join(Runner(view).command(run))}")
    return lines


class View:
    """The session as the yardstick's Runner sees it: the same programs,
    sitting and temporary directory, but its own directory and results,
    its own run length, the loopback mode (tbench --netns, whatever the
    sweep's mode: a yardstick is of this machine), no knobs, no extra
    tbench arguments and no remote hosts."""

    class _LocalNet:
        """netns.Net's part the Runner uses, for runs in tbench's own namespace."""

        server_pid = None

        def route(self, net, backend, server=""):
            return Route("", "", ())

        def restore_devices(self):
            pass

    def __init__(self, session, seconds):
        self._session = session
        self.out = os.path.join(session.out, DIR)
        self.results = results.Results(self.out, session.stats)
        self.opts = argparse.Namespace(**vars(session.opts))
        self.opts.time, self.opts.warmup = seconds, warmup_of(seconds)
        self.opts.threads, self.opts.extra = False, []
        self.mode, self.model, self.server, self.remote = "lo", "processes", "", None
        self.net = self._LocalNet()

    def __getattr__(self, name):
        return getattr(self._session, name)


def run(session, seed, seconds):
    """Runs the yardstick into SESSION's results directory: the value of
    meta.json's "yardstick". A run that fails is recorded and warned of;
    it never fails the sweep."""
    view = View(session, seconds)
    shutil.rmtree(view.out, ignore_errors=True)   # one an interrupted session left half made
    os.makedirs(os.path.join(view.out, "runs"), exist_ok=True)
    view.results.start(False, False, session.header)
    todo = runs(backends_of(session.backends), seed)
    runner, failed, t0 = Runner(view), 0, time.monotonic()
    session.log(f"{session.prog}: yardstick: {len(todo)} runs of {seconds} s into {view.out} (--no-yardstick skips it)")
    for n, one in enumerate(todo, 1):
        supervise.check()
        session.log(f"[yardstick {n}/{len(todo)}] {plan.describe_run(one, REPS)}")
        if not runner.run(one):
            failed += 1
    supervise.check()
    took = time.monotonic() - t0
    if failed:
        print(f"{session.prog}: warning: yardstick: {failed} of {len(todo)} runs failed "
              f"({os.path.join(view.out, 'runs.csv')} says why); the sweep goes on", file=sys.stderr)
    points = summarize(session.stats, view.results.runs_csv)
    thin = [f"{p['backend']} {p['clients']}" for p in points if p["n"] < 2]
    if thin:
        print(f"{session.prog}: warning: yardstick: {', '.join(thin)}: fewer than 2 runs ok and not disturbed "
              "(a busy machine?): no interval there, and tbench-compare cannot judge by it", file=sys.stderr)
    return {"dir": DIR, "backends": backends_of(session.backends), "clients": list(CLIENTS), "reps": REPS,
            "time_s": float(seconds), "warmup_s": float(warmup_of(seconds)), "runs": len(todo),
            "failed": failed, "duration_s": round(took, 1),
            "reference": reference(backends_of(session.backends)),
            "points": points}


def summarize(stats, runs_csv):
    """Per point (backend, clients): n, n_failed and of each of FIGURES the
    mean and the half-width of its 95% interval, as tbench-stats summarize
    gives them (None where it gives none)."""
    text = programs.run_stats(stats, ["summarize", "--keys", "backend,clients", "--metrics",
                                      ",".join(FIGURES), runs_csv])
    points = []
    for row in csv.DictReader(io.StringIO(text)):
        point = {"backend": row["backend"], "clients": int(row["clients"]), "n": int(row["n"]),
                 "n_failed": int(row.get("n_failed") or 0)}
        for f in FIGURES:
            point[f] = {"mean": programs.stats_number(row.get(f + "_mean")),
                        "ci95": programs.stats_number(row.get(f + "_ci95"))}
        points.append(point)
    return points


def skipped(why):
    return {"skipped": why}


def read(meta, path):
    """meta.json's "yardstick", checked: None when there is none (an older
    sweep, or one that skipped it: then "skipped" says why); else the
    object with its points. UsageError names the file and the field."""
    value = meta.get("yardstick")
    if value is None:
        return None
    if not isinstance(value, dict):
        raise UsageError(f"{path}: field 'yardstick' must be an object or null")
    if "skipped" in value:
        return None
    points = store.meta_field(value, path, "points", list)
    for i, p in enumerate(points):
        where = f"yardstick.points[{i}]"
        if not isinstance(p, dict):
            raise UsageError(f"{path}: field '{where}' must be an object")
        store.meta_field(p, path, "backend", str)
        store.meta_field(p, path, "clients", int)
        store.meta_field(p, path, "n", int)
        for f in FIGURES:
            fig = store.meta_field(p, path, f, dict)
            for k in ("mean", "ci95"):
                if fig.get(k) is not None:
                    store.meta_field(fig, path, k, float)
    store.meta_field(value, path, "dir", str)
    if os.path.isabs(value["dir"]) or ".." in value["dir"].split("/"):
        raise UsageError(f"{path}: field 'yardstick.dir' must be a directory inside the results directory")
    return value


def why_none(meta):
    """Why a meta.json has no yardstick: its "skipped", else an older sweep."""
    value = meta.get("yardstick")
    if isinstance(value, dict) and isinstance(value.get("skipped"), str):
        return f"skipped ({value['skipped']})"
    return "none recorded"


def line(y):
    """The sweep's summary line of its yardstick, e.g. for the end of a
    sweep or tbench-report: each point's MB/sec and CPU µs per operation."""
    parts = []
    for p in y["points"]:
        figs = []
        for f, unit in (("mb_per_sec", "MB/s"), ("cost_cpu_us", "CPU us/op")):
            m = p.get(f) or {}
            if m.get("mean") is not None:
                ci = f" ±{m['ci95']:.3g}" if m.get("ci95") is not None else ""
                figs.append(f"{m['mean']:.4g}{ci} {unit}")
        parts.append(f"{p['backend']} {p['clients']}: {', '.join(figs) or 'no figures'} (n={p['n']})")
    return f"yardstick ({y.get('duration_s', '?')} s): " + "; ".join(parts)
