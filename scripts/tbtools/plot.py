"""tbench-plot: draw tbench-sweep results directories with gnuplot
(man tbench-plot): the options, which charts, and the order they are
drawn in. The tables come through plot_data, the charts from plot_lines
and plot_layers."""

import contextlib
import io
import os
import re
import shutil
import signal
import sys
import tempfile

from . import plot_data, plot_layers, plot_lines, plot_meta, plot_paths, programs
from .errors import Parser, RunError, UsageError

PROG = "tbench-plot"
INDENT = " " * 30
DEFAULT_SIZE = "1280x760"

USAGE = """Usage: @PROG@ [OPTIONS] DIR
       @PROG@ [OPTIONS] --out-dir D DIR1 DIR2 ...

Plot the sweep in DIR (a tbench-sweep results directory) as PNG and SVG:
  DIR/throughput.{png,svg}  MB/sec against clients (log2 axis), one line per
                            backend and combination of the dimensions that
                            vary in the data (model and the knob columns of
                            tbench-stats row --knobs: offload, mtu,
                            placement, ...), titled e.g. "BACKEND mtu=65536
                            placement=split" (n/a left out, "-" is default);
                            the stack's base (@BASE@, no transport) is
                            left off the axis and its range said in the
                            title, unless --logy or --linear
  DIR/cost.{png,svg}        wall-clock time per operation above B, in
                            microseconds (not CPU time: decomposition.png has
                            that): 1e6/ops_per_sec(backend) - 1e6/ops_per_sec(B) at
                            the same client count, B the first level of the
                            stack below (@BASE@; needs it in the sweep)
  DIR/cpu.{png,svg}         CPU microseconds per MB moved (clients + servers,
                            user + system), against clients; the stack's base
                            apart, as in throughput
  DIR/decomposition.{png,svg}
                            where an operation's time goes, per client count:
                            a stack of levels, each layer a level minus the
                            one below (tbench-stats decompose --model):
@STACK@
                            in CPU us per operation (cost_cpu_us)
                            and in wall us per operation per client
                            (clients x 1e6 / ops_per_sec) at client counts up
                            to the CPUs (beyond, it is mostly the wait for
                            one, not a cost); bars: the 95%
                            interval of each difference (tbench-stats
                            decompose: paired by repetition, else Welch); a
                            negative layer a dashed outline; where knobs
                            vary, made at the first value of each (named)
  DIR/siblings.{png,svg}    the newer backends beside that stack, each against
                            its nearest sibling at each client count (at
                            TSO/GSO on where swept so):
@SIBLING@
                            in CPU and wall us per operation, with the 95%
                            interval of each difference; the pairs the sweep
                            has
  DIR/segments.{png,svg}    TCP segments and device packets per operation,
                            payload bytes per segment, offload on and off
                            (@OFFLOADS@)
  DIR/paths.{png,svg}       two backends of different kernel paths (tcp and
                            unix, unix and pipe: decompose --model's paths)
                            side by side, no layer of one another: each
                            side's CPU us per operation, the difference above;
                            from runs of tbench --trace, each side's clients'
                            time stacked by part (tbench-stats decompose
                            --parts)
  DIR/trace.{png,svg}       only for runs of tbench --trace: at each client
                            count a bar per backend of the clients' time per
                            operation as the kernel saw it (user, each group
                            of system calls, softirq, run-queue wait,
                            blocked: tbench-stats row --trace-parts), beside
                            the decomposition in wall time
Each line joins the means of the runs of its points; small pale dots are the
single runs, error bars the 95% confidence interval of the mean, as every
chart says (a footnote or a key entry: "bars: ..., N reps"). A backend
has one colour; its lines differ in shade, dash and point. Series are nudged
apart along x by a few percent so that bars stay visible.

The y range follows the single runs and the means, not the bars: with 2 or 3
repetitions a 95% interval can be many times wider than the data. Bars that
leave the range are cut at its edge and marked with a triangle there. Axes of
quantities that cannot be negative (MB/sec, CPU per MB) start at 0, or use a
log scale when the values span more than a factor 20.

Several sweeps (DIR1 DIR2 ..., e.g. before and after a patch, or one of
processes and one of threads) are drawn together from their runs.csv:
throughput, cost and CPU, one panel per sweep titled from its meta.json
(--by sweep), the same y range in each. With --by KNOB instead, the sweeps
are lines of the same panels, named sweep=DIR. The decomposition, siblings,
segments, trace and paths charts are drawn for one sweep at a time.

Options:
  --by KNOB           throughput, cost and CPU in one panel per value of KNOB
                      (a knob column, model, or with several DIRs sweep),
                      side by side, the same y range in each, one key below
                      them; the lines are the combinations of the other
                      dimensions
  --out-dir D         write the images to D instead of DIR (needed with
                      several DIRs)
  --title TEXT        first line of every title (default: host, kernel, date)
  --keep-data D       keep gnuplot's scripts (NAME.gp) and data files in D (a
                      new or empty directory), to look into or restyle a plot
  --logy | --linear   y axis of throughput and CPU plots (default: log when
                      the values span more than a factor 20)
  --size WxH          PNG size in pixels (default 1280x760; with --by, wider
                      and taller by the number of panels and lines)
  --tbench-stats P    tbench-stats program (default: $TBENCH_STATS, else the
                      first of this suite beside $TBENCH, beside this script,
                      in its tree's build/, here, then in PATH)
  -h, --help          this text
      --version       the suite's version, as the tbench it would use says
Needs gnuplot with the pngcairo and svg terminals (Debian: gnuplot-nox).
Exit status: 0 plotted, 1 error, 2 usage error.
"""


def _quiet(fn, *args):
    """FN(*ARGS) with what it says on stderr dropped; None when it fails."""
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            return fn(*args)
    except (UsageError, RunError):
        return None


def find_tbench(explicit, prefer_dir=None):
    return programs.find(PROG, "tbench", "TBENCH=PATH", explicit, prefer_dir)


def usage(opts):
    """The help text, with the decomposition's levels and the backends of
    the tbench-stats and tbench that would be used."""
    stats = _quiet(programs.find, PROG, "tbench-stats", "", opts.stats or os.environ.get("TBENCH_STATS"))
    model = plot_data.read_model(stats) if stats else None
    tbench = _quiet(find_tbench, os.environ.get("TBENCH"))
    backends = _quiet(programs.Backends, tbench) if tbench else None
    if model:
        base, stack = model.base, "\n".join(INDENT + label for label in model.stack_labels)
        sibling = "\n".join(INDENT + s.label for s in model.siblings)
    else:
        base, stack = "see tbench-stats decompose --model", INDENT + "(tbench-stats decompose --model lists them)"
        sibling = stack
    offloads = ",".join(backends.with_caps("offloads")) if backends else "those with offloads in 'tbench -b list'"
    text = USAGE
    for mark, value in (("@PROG@", PROG), ("@BASE@", base), ("@STACK@", stack), ("@SIBLING@", sibling),
                        ("@OFFLOADS@", offloads)):
        text = text.replace(mark, value)
    return text


def parser():
    p = Parser(prog=PROG)
    p.add_argument("dirs", nargs="*")
    p.add_argument("--by")
    p.add_argument("--out-dir", dest="out_dir")
    p.add_argument("--title")
    p.add_argument("--keep-data", dest="keep")
    p.add_argument("--logy", dest="logy", action="store_const", const="yes", default="auto")
    p.add_argument("--linear", dest="logy", action="store_const", const="no")
    p.add_argument("--size")
    p.add_argument("--tbench-stats", dest="stats")
    p.add_argument("-h", "--help", action="store_true")
    p.add_argument("--version", action="store_true")
    return p


def check_options(opts):
    """UsageError for what the options and DIRs cannot be."""
    if not opts.dirs:
        raise UsageError("missing DIR")
    for d in opts.dirs:
        if not os.path.isdir(d):
            raise UsageError(f"{d}: not a directory")
    if len(opts.dirs) > 1 and not opts.out_dir:
        raise UsageError("several DIRs: give --out-dir D (the images belong to none of them)")
    if opts.size is not None and not re.fullmatch(r"[0-9]{2,5}x[0-9]{2,5}", opts.size):
        raise UsageError("--size: want WxH, e.g. 1280x760")
    # the data files are written into it: another plot's would mix in
    if opts.keep and os.path.exists(opts.keep) and (not os.path.isdir(opts.keep) or os.listdir(opts.keep)):
        raise UsageError(f"--keep-data {opts.keep}: not empty (name a new or empty directory)")


class Context:
    """What every chart of a plot needs: the options, the programs, the
    tables and the dimensions; a chart adds the levels it draws."""

    def __init__(self, opts, stats, model, registry, tmp):
        self.prog, self.stats, self.model, self.registry, self.tmp = PROG, stats, model, registry, tmp
        self.dirs, self.outdir = opts.dirs, opts.out_dir or opts.dirs[0]
        self.logy, self.by = opts.logy, opts.by or ""
        self.size_given = opts.size is not None
        self.size = tuple(int(v) for v in (opts.size or DEFAULT_SIZE).split("x"))
        self.inputs = self.xtics = self.swept = None
        self.title, self.vary, self.vary_all, self.levels = "", [], [], []
        # the point the decomposition is made at (picked.py) and its tables
        self.picked, self.decomp_inputs = {}, None


def backend_registry(stats_path):
    """The backends in tbench -b list's order (their colours), or [] with
    a word that the colours are not the registry's."""
    tbench = _quiet(find_tbench, os.environ.get("TBENCH"), os.path.dirname(stats_path))
    backends = _quiet(programs.Backends, tbench) if tbench else None
    if not backends:
        print(f"{PROG}: no tbench of this suite to list the backends: their colours are not the registry's "
              "(TBENCH=PATH names one)", file=sys.stderr)
        return []
    return backends.names()


def read_tables(ctx, opts):
    """The summary and runs, the title, the client counts and the
    dimensions: the varied ones make the lines, the --by knob the panels."""
    stats = ctx.stats
    ctx.inputs = plot_data.prepare(stats, ctx.dirs, ctx.tmp)
    summary = ctx.inputs.summary
    if len(ctx.dirs) > 1:
        ctx.by = ctx.by or "sweep"
    ctx.title = opts.title or (plot_meta.title_of(ctx.dirs[0]) if len(ctx.dirs) == 1 else
                               f"{len(ctx.dirs)} sweeps: {' '.join(ctx.inputs.sweep_dirs)}")
    ctx.xtics = plot_data.client_counts(stats, summary)
    ctx.vary_all = plot_data.varying_dims(stats, summary)
    if ctx.by:
        knobs = stats.knobs()
        if ctx.by not in ["model"] + knobs and not (ctx.by == "sweep" and len(ctx.dirs) > 1):
            raise UsageError(f"--by {ctx.by}: not a knob (they are: {' '.join(knobs)}; or model; with several DIRs, sweep)")
        if ctx.by not in stats.header(summary):
            raise UsageError(f"--by {ctx.by}: {summary} has no column '{ctx.by}' "
                             f"(varied here: {' '.join(ctx.vary_all) or 'none'})")
    ctx.vary = plot_data.varying_dims(stats, summary, ctx.by)
    ctx.swept = plot_data.Swept(stats, summary)


def plot_throughput(ctx):
    base = ctx.model.base.split(":")[0]
    tp = plot_lines.metric_series(ctx, "mb_per_sec", "tp")
    if not tp:
        raise RunError(f"{ctx.inputs.summary}: no throughput figures")
    apart = plot_lines.set_apart(ctx, tp, base, "MB/sec")
    if not ctx.by and len(tp.lines) > 10 and ctx.vary:
        print(f"{PROG}: {len(tp.lines)} lines in one plot: --by {ctx.vary[0]} draws a panel per value", file=sys.stderr)
    plot_lines.plot_one(ctx, "throughput", tp, "tbench throughput against clients" + (f"\n{apart}" if apart else ""),
                        "throughput (MB/sec of SMB payload)", True, ctx.logy)


def plot_cost(ctx):
    """cost.{png,svg}: wall-clock time per operation above the stack's
    base (tbench-stats cost), when the sweep has runs of it."""
    base = ctx.model.base
    cost_csv, cost_err = os.path.join(ctx.tmp, "cost.csv"), os.path.join(ctx.tmp, "cost.err")
    text = ctx.stats.out(["cost"] + ctx.inputs.keys + ["--baseline", base, ctx.inputs.summary],
                         check=False, stderr_to=cost_err)
    ss = None
    if text is not None and len(text.splitlines()) > 1:
        with open(cost_csv, "w") as f:
            f.write(text)
        ss = plot_lines.series_of(ctx, "cost", cost_csv, "cost_us", "cost_ci95_us")
        if ss:
            ss.bars_title = plot_lines.bars_title(ctx, f"the difference of the means (backend − {base})")
    if not ss:
        print(f"{PROG}: no cost plot: the sweep has no {base} runs to subtract", file=sys.stderr)
        return
    plot_lines.plot_one(ctx, "cost", ss, f"wall-clock time per operation above {base}: 1e6/ops rate - 1e6/ops "
                        f"rate({base}), same clients (not CPU time)", f"wall-clock µs per operation above {base} "
                        "(all clients)", False, "no", "set xzeroaxis lt -1")


def plot_cpu(ctx):
    cpu = plot_lines.metric_series(ctx, "cpu_us_per_mb", "cpu")
    if cpu:
        apart = plot_lines.set_apart(ctx, cpu, ctx.model.base.split(":")[0], "µs per MB")
        plot_lines.plot_one(ctx, "cpu", cpu, "CPU cost: CPU time (user + system, clients + servers) per MB of "
                            "payload" + (f"\n{apart}" if apart else ""), "CPU µs per MB (lower is better)",
                            True, ctx.logy)


def draw(ctx, opts):
    read_tables(ctx, opts)
    plot_throughput(ctx)
    plot_cost(ctx)
    plot_cpu(ctx)
    if len(ctx.dirs) > 1:
        print(f"{PROG}: several sweeps: no decomposition, siblings, segments, trace or paths chart "
              "(tbench-plot DIR draws them for one)", file=sys.stderr)
        return
    plot_layers.plot_decomposition(ctx)
    plot_layers.plot_siblings(ctx)
    plot_lines.plot_segments(ctx)
    plot_layers.plot_trace(ctx)
    plot_paths.plot_paths(ctx)


@contextlib.contextmanager
def work_dir(keep):
    """Where the scripts and data files go: --keep-data's directory, kept,
    else a temporary one, removed."""
    if keep:
        try:
            os.makedirs(keep, exist_ok=True)
        except OSError as e:
            raise RunError(f"--keep-data {keep}: {e.strerror}") from None
        yield os.path.realpath(keep)
    else:
        with tempfile.TemporaryDirectory(prefix="tbench-plot.") as tmp:
            yield tmp


def main(argv):
    opts = parser().parse_args(argv)
    if opts.help:
        print(usage(opts), end="")
        return 0
    if opts.version:
        print(programs.script_version(PROG, os.environ.get("TBENCH")))
        return 0
    check_options(opts)
    outdir = opts.out_dir or opts.dirs[0]
    try:
        os.makedirs(outdir, exist_ok=True)
    except OSError as e:
        raise RunError(f"{outdir}: {e.strerror}") from None
    if not shutil.which("gnuplot"):
        raise RunError("gnuplot not found (Debian/Ubuntu: apt-get install gnuplot-nox)")
    stats_path = programs.find_stats(PROG, opts.stats)
    model = plot_data.read_model(stats_path)
    if not model:
        raise RunError(f"'{stats_path} decompose --model' failed: use the tbench-stats of this suite's version")
    registry = backend_registry(stats_path)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    with work_dir(opts.keep) as tmp:
        draw(Context(opts, plot_data.Stats(stats_path), model, registry, tmp), opts)
    return 0
