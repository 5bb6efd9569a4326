"""tbench-plot's charts of where an operation's time goes: the
decomposition (a stack of layers, each a level minus the one below, from
tbench-stats decompose), the siblings (each newer backend against its
nearest sibling) and the trace (the clients' time as tbench --trace
measured it in the kernel). One sweep at a time."""

import os
import sys

from . import gnuplot, picked, plot_meta, plot_style
from .plot_series import Layers, TraceBars, awk_number
from .text import gnuplot_str

LAYER_COLUMNS = ["clients", "layer", "label", "bottom", "top", "mean", "ci95", "subtrahend"]
WALL_LABEL = "wall µs per operation = clients × 1e6 / (ops/sec)"


def decomp_inputs(ctx):
    """(runs, summary) the decomposition reads: where knobs other than the
    offload vary, cut down to the point picked (ctx.picked: the first
    value of each); the runs None without a runs.csv."""
    if ctx.decomp_inputs is None:
        dims = [d for d in ctx.vary_all if d not in ("offload", "sweep")]
        rows = picked.dict_rows(ctx.stats.out(["select", ctx.inputs.summary])) if dims else []
        ctx.picked = picked.first_values(rows, dims)
        if not ctx.picked:
            ctx.decomp_inputs = (ctx.inputs.runs, ctx.inputs.summary)
            return ctx.decomp_inputs
        out = []
        for src, name in ((ctx.inputs.runs, "runs.picked.csv"), (ctx.inputs.summary, "summary.picked.csv")):
            if src is None:
                out.append(None)
                continue
            path = os.path.join(ctx.tmp, name)
            with open(path, "w") as f:
                f.write(picked.keep_point(ctx.stats.out(["select", src]), ctx.picked))
            out.append(path)
        ctx.decomp_inputs = tuple(out)
    return ctx.decomp_inputs


def decomposed(ctx, figure, levels, csv_path, kinds=("layer", "setting", "total")):
    """tbench-stats decompose of FIGURE at LEVELS ("": its default), kept
    in CSV_PATH, as rows of LAYER_COLUMNS + kind of KINDS; None when it
    failed. From the runs kept, so that levels run in the same
    repetitions pair up; from the summary (unpaired) where that gives no
    layer. Both at the point picked (decomp_inputs)."""
    runs, summary = decomp_inputs(ctx)
    args = ["decompose", "--figure", figure] + (["--levels", levels] if levels else [])
    text = ctx.stats.out(args + [runs], quiet=True, check=False) if runs else None
    if text is None or len([ln for ln in text.split("\n") if ln]) < 2:
        text = ctx.stats.out(args + [summary], quiet=True, check=False)
        if text is None:
            return None
    with open(csv_path, "w") as f:
        f.write(text)
    rows = ctx.stats.rows(csv_path, LAYER_COLUMNS + ["kind"], quiet=True)
    return None if rows is None else [r for r in rows if r[-1] in kinds]


def layer_series(ctx, figure, name, max_clients=None):
    """The Layers NAME of FIGURE at the sweep's levels; None without any."""
    rows = decomposed(ctx, figure, ",".join(ctx.levels), f"{ctx.tmp}/{name}.csv")
    for r in rows or []:
        if r[-1] == "total":  # a first level that is no root: its whole cost, the stack's base
            r[2] = f"{r[2]}: its whole cost (no level below it swept)"
    layers = Layers(f"{ctx.tmp}/{name}", rows or [], ctx.xtics, max_clients)
    return layers if layers.layers else None


def sibling_level(ctx, backend):
    """The level of BACKEND to set against a sibling: at TSO/GSO on (lo's
    default) where the sweep has that, else its first point."""
    return f"{backend}:on" if ctx.swept(backend, "on") else backend


def sibling_series(ctx, figure, name):
    """Each difference of the model's siblings that the sweep has, as
    Layers: a box from 0 to the difference. A pair the sweep lacks has no
    difference: its lone level is left out."""
    rows = []
    for sib in ctx.model.siblings:
        levels = f"{sibling_level(ctx, sib.lower)},{sibling_level(ctx, sib.upper)}"
        for r in decomposed(ctx, figure, levels, f"{ctx.tmp}/{name}.csv") or []:
            if r[7] != "":
                rows.append([r[0], sib.name, sib.label, "0", r[5], r[5], r[6]])
    layers = Layers(f"{ctx.tmp}/{name}", rows, ctx.xtics)
    return layers if layers.layers else None


def cpu_layers(ctx, series, name):
    """(figure, Layers) of SERIES (layer_series or sibling_series) of the
    CPU per operation: the clients' and servers' CPU, else the task
    clock; None without either."""
    for figure in ("cost_cpu_us", "cost_task_clock_us"):
        layers = series(ctx, figure, name)
        if layers:
            return figure, layers
    return None


def cpu_what(figure):
    return "clients + servers, user + system" if figure == "cost_cpu_us" else "task clock of every thread"


def picked_note(ctx):
    """Where other dimensions vary, a line saying at which of their values
    the levels were taken (ctx.picked, decomp_inputs)."""
    if not ctx.picked:
        return ""
    return (f"\nDecomposed at {picked.words(ctx.picked)}: the first value swept of each knob that varies "
            "(other values: tbench-stats decompose --levels BACKEND:NAME=VALUE:...).")


def picked_title(ctx):
    """The end of a decomposition's title that names the knob values it used."""
    return f" (decomposed at {picked.words(ctx.picked)})" if ctx.picked else ""


def stack_levels_swept(ctx):
    """The stack's levels as this sweep can have them: a backend none of
    whose points has a setting the stack asks of it (a sweep that left
    the offload alone) is one level, the backend alone; decompose skips
    the other missing."""
    found = {level.split(":")[0] for level in ctx.model.levels
             if ":" in level and ctx.swept(level.split(":")[0], level.split(":", 1)[1])}
    out = []
    for level in ctx.model.levels:
        backend = level.split(":")[0]
        level = level if backend in found else backend
        if level not in out:
            out.append(level)
    return out


def level_words(level):
    """A level in words: "tcp:on" -> "tcp, offload on"; "tcp:mtu=1500" -> "tcp, mtu=1500"."""
    if ":" not in level:
        return level
    backend, setting = level.split(":", 1)
    if "=" in setting:
        return f"{backend}, {setting.replace(':', ' ')}"
    return f"{backend}, offload {setting}"


def axis_labels(xtics):
    """The x tics of a panel of slots: "CLIENTS" N, a slot per client count."""
    return ", ".join(f"{gnuplot_str(str(c))} {i}" for i, c in enumerate(xtics))


def panel_frame(title, ylabel, xtics, left, right):
    """The frame of a panel of slots: title, margins, x tics per client
    count; the y range is the panel's own."""
    return (f"set title {gnuplot_str(title)}\nset ylabel {gnuplot_str(ylabel)}\n"
            f"set lmargin at screen {left}\nset rmargin at screen {right}\n"
            "set autoscale xy\nmax(a, b) = a > b ? a : b\nmin(a, b) = a < b ? a : b\n"
            f"set xrange [-0.6 : {len(xtics)} - 0.4]\nset xtics ({axis_labels(xtics)})\n")


def _numbers(layers, *cols):
    """The rows of LAYERS as numbers in COLS, those not all numbers left out."""
    out = []
    for r in layers.rows():
        vals = [gnuplot.number(r[c]) for c in cols]
        if None not in vals:
            out.append(vals)
    return out


# a line of the panels' numbers (font 10-11) in pixels, with air
LABEL_PX = 17


def layer_labels(layers, gap_fraction):
    """(ymin, ymax, labels) of a panel of LAYERS: the range of its boxes
    and intervals with room above for the labels (Layers.labels), which
    keep GAP_FRACTION of the range apart."""
    lo, hi = layers.y_limits()
    span = (hi - lo) * 1.1
    gap = span * gap_fraction
    labels = layers.labels(gap, 1.5 * gap)
    top = max([hi * 1.1 if hi > 0 else hi] + [y + gap for _, y, _, _ in labels])
    return (lo * 1.1 if lo < 0 else 0.0), top, labels


def write_labels(path, labels, totals):
    """The labels (x y "text") of the totals (TOTALS) or of the layers."""
    with open(path, "w") as f:
        f.write("".join(f'{x} {gnuplot.num(y)} "{text}"\n' for x, y, text, is_total in labels
                        if is_total == totals))


def layer_panel(ctx, layers, title, ylabel, left, right):
    """A panel of stacks: at each client count a box per layer from the
    level below to its own; the bar at its top the 95% interval of the
    difference, in a darker shade of its colour. A negative layer is an
    outline only, dashed: it hides nothing of the layer below it. The
    numbers are placed here, in one column left of the boxes, apart."""
    ymin, ymax, labels = layer_labels(layers, LABEL_PX / (ctx.size[1] * 0.53))
    write_labels(layers.prefix + ".labels", labels, False)
    write_labels(layers.prefix + ".totals", labels, True)
    text = panel_frame(title, ylabel, ctx.xtics, left, right)
    text += (f"YMIN = {gnuplot.num(ymin)}; YMAX = {gnuplot.num(ymax)}\n"
             "set yrange [YMIN : YMAX]\nplot \\\n")
    out, total = [], len(layers.layers)
    for ly in layers.layers:
        color = plot_style.layer_color(ly.name, ly.id, ctx.model, ctx.registry)
        dark = plot_style.shade(color, 0.55)
        dat = gnuplot_str(f"{layers.prefix}.{ly.id}.dat")
        # bars in the right half of the box, one place per layer; numbers in the left
        off = "%.3f" % (0.04 + 0.24 * ly.id / (total - 1 if total > 1 else 1))
        # A NaN y leaves a point out (a NaN bound would be taken as 0).
        out.append(f"  {dat} using 1:($3 >= $2 ? ($2+$3)/2 : NaN):($1-0.32):($1+0.32):2:3 with boxxyerror "
                   f"fs solid 0.85 noborder lc rgb '#{color}' title {gnuplot_str(ly.label)}")
        out.append(f"  {dat} using 1:($3 < $2 ? ($2+$3)/2 : NaN):($1+0.0):($1+0.32):3:2 with boxxyerror "
                   f"fs empty border lc rgb '#{dark}' lw 2.2 dt 2 lc rgb '#{dark}' notitle")
        # the interval as a vector with flat heads (yerrorbars would draw a point too), a dot where the layer ends
        out.append(f"  {dat} using ($1+{off}):($5 > 0 ? $3-$5 : NaN):(0):(2*$5) with vectors heads size screen "
                   f"0.006,90 lw 1.6 lc rgb '#{dark}' notitle")
        out.append(f"  {dat} using ($1+{off}):($5 > 0 ? $3 : NaN) with points pt 7 ps 0.5 lc rgb '#{dark}' notitle")
    if any(float(t) < float(b) for _, b, t, _, _ in layers.rows() if gnuplot.number(b) is not None
           and gnuplot.number(t) is not None):
        out.append("  NaN with boxes fs empty border lc rgb '#404040' lw 2.2 dt 2 lc rgb '#404040' "
                   "title 'dashed outline: a negative layer'")
    out.append(f"  {gnuplot_str(layers.prefix + '.labels')} using ($1-0.30):2:3 with labels left font ',10' notitle")
    out.append(f"  {gnuplot_str(layers.prefix + '.totals')} using ($1-0.30):2:3 with labels left font ',11' notitle")
    return text + gnuplot.CLAUSE_SEP.join(out) + "\n"


def _multiplot_head(title, ctx, tmargin, bmargin):
    return ("set datafile missing \"\"\nset style line 100 lt 1 lc rgb '#d4d4d4' lw 1\n"
            "set grid ytics ls 100\nset border lw 1.2\n"
            f"set multiplot title {gnuplot_str(title + picked_title(ctx) + chr(10) + ctx.title)}\n"
            f"set tmargin at screen {tmargin}\nset bmargin at screen {bmargin}\n"
            "set xlabel \"clients (tbench NCLIENTS)\"\n")


def plot_decomposition(ctx):
    """decomposition.{png,svg}: the cost of an operation, layer by layer,
    in CPU and in wall time, side by side; none when the sweep lacks the
    levels. Wall time per operation and client is a cost only while every
    client has a CPU: beyond the CPUs it is mostly the wait for one, so
    that panel draws the client counts up to the CPUs alone."""
    ctx.levels = stack_levels_swept(ctx)
    ncpu = plot_meta.cpus_of(ctx.dirs[0])
    cpu = cpu_layers(ctx, layer_series, "lcpu")
    if not cpu:
        print(f"{ctx.prog}: no decomposition: the sweep has no cost figures, or none of the levels "
              f"{', '.join(ctx.levels)}", file=sys.stderr)
        return
    wall = layer_series(ctx, "wall_us_per_op", "lwall", ncpu)
    for layers in (cpu[1], wall):
        if layers:
            layers.write()
    body = (_multiplot_head("Where the time of a tbench operation goes: the stack of layers at each client count",
                            ctx, "0.86", "0.31") + "unset key\n")
    # the footnote and the key are drawn with the last panel
    note = (f"Each layer is the difference of two backends' means at the same client count; the top of a stack is "
            f"{level_words(ctx.levels[-1])}, its total written above it.\n"
            "Bars: 95% confidence interval of each difference, in a darker shade of its layer's colour, about the layer's top (dot):\n"
            "from the per-rep differences where the two levels ran in the same repetitions (paired), else Welch's "
            f"(of {ctx.levels[0]} alone for the first).\n"
            "A dashed outline is a negative layer (the upper level cost less), drawn down from the level below over it; "
            f"a box's height is written left of it where it fits.{picked_note(ctx)}")
    notes = (f"set label 1 {gnuplot_str(note)} at screen 0.02, 0.095 left font ',10'\n"
             "set key at screen 0.5, 0.205 center top vertical maxrows 2 reverse Left box opaque spacing 1.2 width 1 "
             "title 'layers, bottom to top (each: level − level below)'\n")
    if not wall:
        why = (f"No wall-time panel: every client count swept is above the {ncpu} CPUs,\n"
               "where a client's wall time is mostly its wait for a CPU, not a cost.")
        body += notes + f"set label 2 {gnuplot_str(why)} at screen 0.6, 0.6 left\n"
    body += layer_panel(ctx, cpu[1], f"CPU time per operation ({cpu_what(cpu[0])})", "CPU µs per operation", "0.07", "0.47")
    if wall:
        body += notes + layer_panel(ctx, wall, f"wall time per operation, per client, up to {ncpu} clients (the CPUs):\n"
                                    "beyond them a client's wall time is mostly its wait for a CPU",
                                    WALL_LABEL, "0.57", "0.97")
    gnuplot.render("decomposition", body + "unset multiplot\n", ctx.size, ctx.outdir, ctx.tmp)


def sibling_panel(ctx, layers, title, ylabel, left, right):
    """A panel of sibling differences: at each client count a bar per
    pair, side by side, from 0 to the difference, its value above it, and
    its 95% interval. The y range follows the differences, not the
    intervals (3 runs a side can make one many times wider): an interval
    is cut at a third of the differences' span beyond them, marked with a
    triangle there."""
    means = [v for (v,) in _numbers(layers, 3)] or [0.0]
    text = panel_frame(title, ylabel, ctx.xtics, left, right)
    text += (f"DMAX = max(0, {gnuplot.num(max(means))}); DMIN = min(0, {gnuplot.num(min(means))}); "
             "SPAN = DMAX > DMIN ? DMAX - DMIN : 1\n"
             "CUTHI = DMAX + SPAN / 3.0; CUTLO = DMIN - SPAN / 3.0\n"
             "cut(v) = v > CUTHI ? CUTHI : v < CUTLO ? CUTLO : v\n"
             "set yrange [CUTLO : CUTHI + (CUTHI - CUTLO) * 0.16]\nset xzeroaxis lt -1 lw 1.2\nplot \\\n")
    out, total = [], len(layers.layers)
    for ly in layers.layers:
        color = plot_style.layer_color(ly.name, ly.id, ctx.model, ctx.registry)
        dat = gnuplot_str(f"{layers.prefix}.{ly.id}.dat")
        w = 0.84 / total
        x, hw = "%.4f" % ((ly.id - (total - 1) / 2) * w), "%.4f" % (w * 0.4)
        out.append(f"  {dat} using ($1+{x}):($4/2):($1+{x}-{hw}):($1+{x}+{hw}):(min(0,$4)):(max(0,$4)) with boxxyerror "
                   f"fs solid 0.85 noborder lc rgb '#{color}' title {gnuplot_str(ly.label)}")
        out.append(f"  {dat} using ($1+{x}):($5 > 0 ? cut($4-$5) : NaN):(0):(cut($4+$5)-cut($4-$5)) with vectors "
                   "heads size screen 0.004,90 lw 1.4 lc rgb '#202020' notitle")
        out.append(f"  {dat} using ($1+{x}):($4+$5 > CUTHI ? CUTHI : NaN) with points pt 9 ps 1.1 lc rgb '#202020' notitle")
        out.append(f"  {dat} using ($1+{x}):($5 > 0 && $4-$5 < CUTLO ? CUTLO : NaN) with points pt 11 ps 1.1 "
                   "lc rgb '#202020' notitle")
        # the value upright above the interval (above 0 when that is lower)
        out.append(f"  {dat} using ($1+{x}):(cut(max($4+$5, 0))):(sprintf('%+.2f', $4)) with labels rotate by 90 "
                   "left offset 0,0.5 font ',9' notitle")
    return text + gnuplot.CLAUSE_SEP.join(out) + "\n"


def plot_siblings(ctx):
    """siblings.{png,svg}: the newer backends each against its nearest
    sibling per client count, in CPU and in wall time, beside the
    decomposition's stack; no word of it when the sweep has no such pair."""
    if not any(ctx.swept(s.lower) and ctx.swept(s.upper) for s in ctx.model.siblings):
        return
    cpu = cpu_layers(ctx, sibling_series, "scpu")
    wall = cpu and sibling_series(ctx, "wall_us_per_op", "swall")
    if not wall:
        pairs = ", ".join(f"{s.upper} - {s.lower}" for s in ctx.model.siblings)
        print(f"{ctx.prog}: no siblings chart: no cost figures, or no pair of {pairs}", file=sys.stderr)
        return
    cpu[1].write()
    wall.write()
    note = ("Each bar is a backend's mean minus its sibling's at the same client count, written above it: above 0 the "
            "backend costs more. The pairs are siblings, not layers of one stack.\n"
            "Black bars: 95% confidence interval of each difference, paired by repetition where the two ran in the same "
            "ones, else Welch's (tbench-stats decompose --levels SIBLING,BACKEND).\n"
            f"The y range follows the differences, not the intervals: a triangle marks an interval cut at the edge.{picked_note(ctx)}")
    body = (_multiplot_head("The newer backends against their nearest sibling: the difference of the two backends' "
                            "means at each client count", ctx, "0.87", "0.36") + "unset key\n"
            + sibling_panel(ctx, cpu[1], f"CPU time per operation ({cpu_what(cpu[0])})",
                            "CPU µs per operation, backend − sibling", "0.07", "0.47")
            + f"set label 1 {gnuplot_str(note)} at screen 0.02, 0.075 left font ',10'\n"
            "set key at screen 0.5, 0.265 center top vertical maxrows 5 Left reverse box opaque spacing 1.1 width 1 "
            "title 'difference: backend − sibling'\n"
            + sibling_panel(ctx, wall, "wall time per operation, per client", "wall µs per operation, backend − sibling",
                            "0.57", "0.97") + "unset multiplot\n")
    # taller than the others by the key's five lines and the note's three
    size = ctx.size if ctx.size_given else (ctx.size[0], ctx.size[1] + 80)
    gnuplot.render("siblings", body, size, ctx.outdir, ctx.tmp)


def trace_panel(ctx, bars, title, ylabel, left, right):
    """A panel of the trace's bars: each a stack of the clients' parts, a
    black line across it at the wall time per operation, its series above."""
    hw = bars.half_width()
    text = panel_frame(title, ylabel, ctx.xtics, left, right)
    text += f"set yrange [0 : {gnuplot.num(bars.top())} * 1.3]\nplot \\\n"
    out = [f"  {gnuplot_str(f'{bars.prefix}.{k}.dat')} using 1:(($2+$3)/2):($1-{hw}):($1+{hw}):2:3 with boxxyerror "
           f"fs solid 0.9 noborder lc rgb '#{colour}' title {gnuplot_str(label)}"
           for k, (_, label, colour) in enumerate(bars.parts, 1)]
    bars_file = gnuplot_str(bars.prefix + ".bars")
    out.append(f"  {bars_file} using ($1-{hw}):3:(2*{hw}):(0) with vectors nohead lw 2 lc rgb '#000000' "
               "title 'wall µs per operation'")
    out.append(f"  {bars_file} using 1:(max($2, $3)):4 with labels rotate by 90 left offset 0,0.4 font ',8' notitle")
    return text + gnuplot.CLAUSE_SEP.join(out) + "\n"


def stack_backends(model):
    """The backends of the stack's levels, in its order, once each."""
    out = []
    for level in model.levels:
        if level.split(":")[0] not in out:
            out.append(level.split(":")[0])
    return out


TRACE_NOTE = (
    "Right: a bar per backend at each client count (the mean of its runs): its clients' time per operation as tbench "
    "--trace measured it, on a CPU in user space, in each group of system calls,\n"
    "in softirqs while current, waiting in the run queue, or blocked. The parts add up to the clients' tasks' time; "
    "the black line is the wall time per operation (clients × 1e6 / ops/sec).\n"
    "Left: tbench-stats decompose in wall time, each layer the difference of two backends' means: a layer there is "
    "what a backend adds, a part here is where the time went.\n"
    "Bars: right, each the mean of a point's runs, no interval drawn; left, the 95% interval of each difference.")


def trace_bars(ctx):
    """The TraceBars of the summary; None unless its runs carry trace figures."""
    summary = ctx.inputs.summary
    if "trace_clients_user_us_mean" not in ctx.stats.header(summary):
        return None
    parts = ctx.stats.trace_parts()
    with open(os.path.join(ctx.tmp, "trace.partlist"), "w") as f:
        f.write("".join(f"{c}\t{label}\n" for c, label in parts))
    cols = ["backend"] + ctx.vary_all + ["clients", "wall_us_per_op_mean"] + [c + "_mean" for c, _ in parts]
    rows = ctx.stats.rows(summary, cols)
    bars = TraceBars(f"{ctx.tmp}/trace", rows or [], ctx.xtics, parts, ctx.vary_all, stack_backends(ctx.model))
    return bars if bars.bars else None


def plot_trace(ctx):
    """trace.{png,svg}: where the clients' time per operation went, as
    tbench --trace measured it in the kernel, for each backend (and dims)
    and client count, beside the decomposition by subtraction of the same
    sweep in wall time. None unless the sweep's runs carry trace figures."""
    bars = trace_bars(ctx)
    if not bars:
        return
    bars.write()
    ncpu = plot_meta.cpus_of(ctx.dirs[0])
    ctx.levels = stack_levels_swept(ctx)
    wall = layer_series(ctx, "wall_us_per_op", "twall", ncpu)
    left = "0.55" if wall else "0.07"
    body = _multiplot_head("Where a client's time per operation goes: by subtraction of backends (left) and as the "
                           "kernel saw it (tbench --trace, right)", ctx, "0.86", "0.34")
    if wall:
        wall.write()
        body += ("set key at screen 0.26, 0.25 center top vertical maxrows 5 reverse Left box opaque spacing 1.1 "
                 "width 1 title 'layers (each: level − level below)'\n"
                 + layer_panel(ctx, wall, f"by subtraction: wall time per operation, per client, up to {ncpu} clients "
                               "(the CPUs)", WALL_LABEL, "0.06", "0.46"))
    body += (f"set label 1 {gnuplot_str(TRACE_NOTE)} at screen 0.02, 0.075 left font ',10'\n"
             f"set key at screen {awk_number((float(left) + 0.97) / 2)}, 0.25 center top vertical maxrows 4 reverse "
             "Left box opaque spacing 1.1 width 1 title 'parts of the clients’ time'\n"
             + trace_panel(ctx, bars, "as tbench --trace measured it: the clients' time per operation, every client "
                           "count", "µs per operation (the clients' tasks)", left, "0.97") + "unset multiplot\n")
    size = ctx.size if ctx.size_given else (ctx.size[0] * 5 // 4, ctx.size[1] + 140)
    gnuplot.render("trace", body, size, ctx.outdir, ctx.tmp)
