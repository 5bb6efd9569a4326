"""tbench-sweep --precision: repeat each point until the 95% confidence
interval of a figure is narrow enough. The statistics are tbench-stats
summarize's; this compares its half-width with the mean and chooses the
points of the next rep."""

import csv
import io
import re
from collections import namedtuple

from . import plan, programs
from .errors import UsageError

# The figures a target can be set on: CPU and wall time per operation,
# throughput (columns of tbench-stats row --header).
FIGURES = ("cost_cpu_us", "wall_us_per_op", "mb_per_sec")
DEFAULT_MAX_REPS = 10

# reps: the highest rep run; n: runs counted; half: the half-width in % of
# the mean ("" with fewer than 2 runs or a mean of 0); met: half <= pct.
Status = namedtuple("Status", "reps n half met")
NONE_YET = Status(0, 0, "", False)


def parse(text):
    """--precision PCT[,FIGURE] -> (pct text, figure)."""
    pct, _, fig = text.partition(",")
    fig = fig or "cost_cpu_us"
    if not re.fullmatch(r"[0-9]{1,3}(\.[0-9]+)?", pct) or not 0 < float(pct) <= 100:
        raise UsageError(f"--precision: '{pct}' is not a percentage above 0 and at most 100 (e.g. --precision 2)")
    if fig not in FIGURES:
        raise UsageError(f"--precision: unknown figure '{fig}' (one of: {', '.join(FIGURES)})")
    return pct, fig


def quiet_notes(stderr):
    """tbench-stats's stderr without the notes on disturbed runs, which
    were said as each run ended."""
    return "".join(line for line in stderr.splitlines(True)
                   if not re.match(r"tbench-stats: note: .* disturbed run", line))


def status(stats, runs_csv, pct, figure, knob_columns):
    """{point key (plan.point_key): Status} of every point of RUNS_CSV."""
    keys = ["backend", "clients", "offload"] + list(knob_columns)
    nk = len(keys)
    reps = {}
    for row in programs.run_stats(stats, ["select", "--columns", ",".join(keys + ["rep"]), "--tsv", runs_csv]).splitlines():
        cells = row.split("\t")
        k = tuple(cells[:nk])
        reps[k] = max(reps.get(k, 0), int(cells[nk] or 0))
    summary = programs.run_stats(stats, ["summarize", "--keys", ",".join(keys), "--metrics", figure, runs_csv])
    out = {}
    rows = list(csv.reader(io.StringIO(summary)))
    if not rows:
        return out
    col = {name: i for i, name in enumerate(rows[0])}
    for cells in rows[1:]:
        k = tuple(cells[:nk])
        mean, half, n = cells[col[figure + "_mean"]], cells[col[figure + "_ci95"]], int(cells[col["n"]])
        pct_of_mean = ""
        if n >= 2 and mean and half and float(mean) != 0:
            pct_of_mean = f"{100 * float(half) / abs(float(mean)):.3f}"
        out[k] = Status(reps.get(k, 0), n, pct_of_mean, pct_of_mean != "" and float(pct_of_mean) <= float(pct))
    return out


def unmet(points, by_key, knob_columns):
    """The points not within the target yet."""
    return [p for p in points if not by_key.get(plan.point_key(p, knob_columns), NONE_YET).met]


def rep_runs(points, rep, seed):
    """The runs of one more rep of POINTS, shuffled as plan.runs does; the
    seed depends on the rep, so that a resumed sweep plans it again."""
    return plan.runs(points, 1, (seed + rep * 7919) % 2147483648, first_rep=rep)


def report(prog, points, by_key, why, pct, figure, knob_columns):
    """The final lines: each point, its reps and the half-width reached;
    WHY is what stopped the reps of the points not met."""
    lines = [f"{prog}: precision: the 95% interval's half-width of {figure} within {pct}% of the mean:"]
    nmet = 0
    for p in points:
        st = by_key.get(plan.point_key(p, knob_columns), NONE_YET)
        nmet += st.met
        half = f"{st.half}%" if st.half else "n/a (fewer than 2 runs counted)"
        met = "met" if st.met else f"not met ({why or 'stopped'})"
        lines.append(f"  {plan.describe(p)}: {st.reps} reps, {st.n} counted, half-width {half}: {met}")
    lines.append(f"{prog}: precision: {nmet} of {len(points)} points met the target")
    return lines


def plan_lines(rule, npoints, nclients, time, warmup):
    """What --plan says of the rule: the reps, runs and time between the
    minimum and the maximum (and the budget). NCLIENTS: of the points."""
    lo, hi = npoints * rule.min_reps, npoints * rule.max_reps
    t_lo = plan.estimate_s(lo, time, warmup, nclients * rule.min_reps)
    t_hi = plan.estimate_s(hi, time, warmup, nclients * rule.max_reps)
    budget = (f"; no rep beyond the minimum starts that would end after --budget {plan.fmt_secs(rule.budget)}"
              if rule.budget else "")
    return [f"precision: each point repeated until the 95% interval's half-width of {rule.figure} is within "
            f"{rule.pct}% of its mean: at least {rule.min_reps} reps (--reps), at most {rule.max_reps} (--max-reps)",
            f"  {lo} to {hi} runs, {plan.fmt_secs(t_lo)} to {plan.fmt_secs(t_hi)}{budget}",
            f"  below: the first {rule.min_reps} reps; each later rep only of the points not within the target yet"]


# pct: text as given; budget: whole seconds or None.
Rule = namedtuple("Rule", "pct figure min_reps max_reps budget")


def rule_json(rule):
    """The rule as meta.json keeps it (None without one)."""
    if rule is None:
        return None
    pct = float(rule.pct)
    return {"pct": int(pct) if pct.is_integer() else pct, "figure": rule.figure,
            "min_reps": rule.min_reps, "max_reps": rule.max_reps, "budget_s": rule.budget}


def rule_of(opts, why_not=""):
    """--max-reps and --budget go with --precision, whose minimum is 2
    reps (one run has no interval). Returns the rule, or None."""
    if opts.precision is None:
        if opts.max_reps is not None:
            raise UsageError(f"--max-reps needs --precision PCT{why_not}")
        if opts.budget is not None:
            raise UsageError(f"--budget needs --precision PCT{why_not}")
        return None
    pct, figure = parse(opts.precision)
    reps = int(opts.reps or 3)
    if reps < 2:
        raise UsageError(f"--reps: {reps} with --precision: give at least 2 (an interval needs 2 runs)")
    max_reps = opts.max_reps if opts.max_reps is not None else str(max(reps, DEFAULT_MAX_REPS))
    if not (max_reps.isdigit() and len(max_reps) <= 4 and int(max_reps) >= reps):
        raise UsageError(f"--max-reps: '{max_reps}' is not a whole number of at least --reps ({reps})")
    budget = opts.budget
    if budget is not None and not (budget.isdigit() and len(budget) <= 7 and int(budget) > 0):
        raise UsageError(f"--budget: '{budget}' is not a positive whole number of seconds")
    return Rule(pct, figure, reps, int(max_reps), int(budget) if budget else None)
