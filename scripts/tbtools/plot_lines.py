"""tbench-plot's line charts of a figure against clients (throughput,
cost, CPU, segments): a line per backend and combination of the varied
dimensions, each point the mean of its runs with its 95% interval, the
single runs pale around it; one panel per value of the --by knob."""

import sys

from . import gnuplot, plot_meta, plot_style
from .plot_series import SeriesSet
from .text import gnuplot_str



def series_columns(ctx, src, value, ci, by, vary):
    """The columns SeriesSet reads from SRC: the offload (else backend) to
    filter on, the --by knob (else backend), backend, the varying
    dimensions, clients, VALUE and CI."""
    filt = "offload" if "offload" in ctx.stats.header(src) else "backend"
    return [filt, by or "backend", "backend"] + list(vary) + ["clients", value] + ([ci] if ci else [])


def series_of(ctx, name, src, value, ci, net=False, by=None, vary=None, quiet=False):
    """The SeriesSet NAME of means VALUE and intervals CI from SRC (a
    summary, or tbench-stats cost's table); None when it has no line.
    NET: only the lines whose offload is not n/a (bytes cross a device)."""
    by = ctx.by if by is None else by
    vary = ctx.vary if vary is None else vary
    rows = ctx.stats.rows(src, series_columns(ctx, src, value, ci, by, vary), quiet=quiet)
    ss = SeriesSet(f"{ctx.tmp}/{name}", vary, bool(by))
    ss.add(rows or [], net)
    return ss if ss.lines else None


def reps_words(ctx):
    """"3 reps", or "2–5 reps" where the points had different numbers of
    runs (the summary's n)."""
    ns = sorted({int(n) for (n,) in ctx.stats.rows(ctx.inputs.summary, ["n"], quiet=True) or [] if n.isdigit()})
    if not ns:
        return "reps not known"
    return f"{ns[0]} rep{'s' if ns[0] != 1 else ''}" if len(ns) == 1 else f"{ns[0]}–{ns[-1]} reps"


def bars_title(ctx, of="the mean"):
    """What a line chart's error bars are, for its key."""
    return f"bars: 95% interval of {of}, {reps_words(ctx)}"


def metric_series(ctx, metric, name, net=False, by=None, vary=None, quiet=False):
    """The means and intervals of METRIC from the summary; its single
    runs from the runs kept (when there is a runs.csv)."""
    by = ctx.by if by is None else by
    ss = series_of(ctx, name, ctx.inputs.summary, metric + "_mean", metric + "_ci95", net, by, vary, quiet)
    if ss:
        ss.bars_title = bars_title(ctx)
    if ss and ctx.inputs.runs:
        runs = ctx.inputs.runs
        rows = ctx.stats.rows(runs, series_columns(ctx, runs, metric, None, by, ss.vary), quiet=quiet)
        ss.add(rows or [], net, runs=True)
    return ss


def set_apart(ctx, ss, backend, unit):
    """The stack's base (nop: a memcpy, no transport) moves many times the
    bytes of any transport for a fraction of the CPU: on their axis it
    would flatten their differences, or force a log scale. Unless --logy
    or --linear, its lines leave SS; returns the title's line that says
    its range in UNIT, else ""."""
    if ctx.logy != "auto" or not any(ln.backend == backend for ln in ss.lines) \
            or all(ln.backend == backend for ln in ss.lines):
        return ""
    ids = {ln.id for ln in ss.lines if ln.backend == backend}
    values = [gnuplot.number(p[1]) for fk, pts in ss.dat.items() if fk[1] in ids for p in pts]
    values = [v for v in values if v is not None] or [0.0]
    ss.drop_backend(backend)
    return (f"{backend} (no transport, the harness alone) is left off this axis: "
            f"{'%.0f' % min(values)}–{'%.0f' % max(values)} {unit}; --logy draws it")


def clauses(ctx, ss, f, key):
    """The plot clauses of facet F of SS: single runs, bars cut at the
    range's edge, the means, and a triangle where a bar was cut. KEY:
    "titled" names the lines in the key; "none" no key; "keyonly" draws
    no data, only the key of every line (the shared key of panels)."""
    out, total = [], len(ss.lines)
    step = "%.4f" % (1 + min(0.16 / total, 0.03))
    for ln in ss.lines:
        if key == "keyonly" or (f, ln.id) not in ss.dat:
            continue
        color, dt, pt = plot_style.series_style(ln.backend, ln.k, ctx.registry)
        x = f"($1*{step}**({ln.id}-({total}-1)/2.0))"
        dat = gnuplot_str(ss.path(f, ln.id, "dat"))
        named = f"title {gnuplot_str(ln.title)}" if key == "titled" else "notitle"
        out.append(f"  {dat} using {x}:2:(lo($2,$3)):(hi($2,$3)) with yerrorbars pt 7 ps 0 lw 1.2 lc rgb '#40{color}' notitle")
        if (f, ln.id) in ss.runs:  # single runs on top of the bar, pale
            out.append(f"  {gnuplot_str(ss.path(f, ln.id, 'runs'))} using {x}:2 with points pt 7 ps 0.7 lc rgb '#60{color}' notitle")
        out.append(f"  {dat} using {x}:2 with linespoints lw 2 dt {dt} pt {pt} ps 1.2 lc rgb '#{color}' {named}")
        out.append(f"  {dat} using {x}:($2+$3 > YMAX ? YMAX : NaN) with points pt 9 ps 1.4 lc rgb '#{color}' notitle")
        out.append(f"  {dat} using {x}:($3 > 0 && $2-$3 < YMIN ? YMIN : NaN) with points pt 11 ps 1.4 lc rgb '#{color}' notitle")
    if key == "keyonly":
        for ln in ss.lines:
            color, dt, pt = plot_style.series_style(ln.backend, ln.k, ctx.registry)
            out.append(f"  NaN with linespoints lw 2 dt {dt} pt {pt} ps 1.2 lc rgb '#{color}' title {gnuplot_str(ln.title)}")
    if key == "none":
        return gnuplot.CLAUSE_SEP.join(out + ["  NaN notitle"]) + "\n"
    if ss.runs:
        out.append("  NaN with points pt 7 ps 0.7 lc rgb '#60404040' title 'single runs'")
    if ss.bars_title and key == "keyonly":  # a chart of one panel says it in a footnote
        out.append(f"  NaN with yerrorbars pt 7 ps 0 lw 1.2 lc rgb '#404040' title {gnuplot_str(ss.bars_title)}")
    out.append("  NaN with points pt 9 ps 1.4 lc rgb '#808080' title (NCUT > 0 ? 'bar cut at the edge' : '')")
    return gnuplot.CLAUSE_SEP.join(out) + "\n"


def y_range(ss, nonneg, log):
    """The y range of SS's chart (all its panels): gnuplot.y_range."""
    values = [gnuplot.number(v) for v in ss.values()]
    bars = [(gnuplot.number(m), gnuplot.number(ci)) for m, ci in ss.bars()]
    return gnuplot.y_range(values, bars, nonneg, log)


def plot_one(ctx, name, ss, title, ylabel, nonneg, log, extra=""):
    """NAME.{png,svg}: SS against clients, titled TITLE, the y axis
    YLABEL; one panel per value of the --by knob when SS has several."""
    ss.write()
    if len(ss.facets) > 1:
        return plot_facets(ctx, name, ss, title, ylabel, nonneg, log, extra)
    body = (gnuplot.frame(ctx.xtics) + f"set title {gnuplot_str(title + chr(10) + ctx.title)}\n"
            + footnote(ss) + f"set ylabel {gnuplot_str(ylabel)}\n" + y_range(ss, nonneg, log) + extra + "\nplot \\\n"
            + clauses(ctx, ss, 0, "titled"))
    gnuplot.render(name, body, ctx.size, ctx.outdir, ctx.tmp)


def footnote(ss):
    """What the bars of a one-panel chart are, in a line below it."""
    if not ss.bars_title:
        return ""
    return f"set bmargin 5\nset label 99 {gnuplot_str(ss.bars_title)} at screen 0.01, 0.02 left font ',10'\n"


def mtu_words(ctx):
    """" (MTU 1500 and 65536, a line each)" where the rows of backends
    that cross a device vary the mtu knob; else meta.json's device's
    (" (lo MTU 65536)"), else ''."""
    if "mtu" in ctx.stats.header(ctx.inputs.summary):
        values = []
        for offload, mtu in ctx.stats.rows(ctx.inputs.summary, ["offload", "mtu"], quiet=True) or []:
            if offload != "n/a" and mtu not in ("n/a", "", "-") and mtu not in values:
                values.append(mtu)
        if len(values) > 1:
            return f" (MTU {', '.join(values[:-1])} and {values[-1]}, a line each)"
        if values:
            return f" (MTU {values[0]})"
    return plot_meta.mtu_note(ctx.dirs[0])


def facet_geometry(nf, ns, h):
    """Where NF panels go (up to 3 in a row) above the key of NS lines, in
    screen fractions of an image H pixels high: [(left, right, top,
    bottom, column)] per panel, and the top of the key below them."""
    cols = min(nf, 3)
    rows = (nf + cols - 1) // cols
    keyh = (((ns + 4) // 3) * 24 + 30) / h  # 3 entries a row, with single runs and cut bars
    top, bottom = 1 - 105 / h, keyh + 70 / h
    ph, pw = (top - bottom) / rows, 0.91 / cols
    panels = []
    for f in range(nf):
        r, c = f // cols, f % cols
        panels.append(tuple("%.4f" % v for v in (0.08 + c * pw, 0.08 + (c + 1) * pw - 0.035,
                                                 top - r * ph - (40 / h if r else 0), top - (r + 1) * ph + 50 / h)) + (c,))
    return panels, "%.4f" % (keyh + 10 / h)


def key_panel(ctx, ss, top):
    """The key of SS's lines below the panels of a multiplot, from the
    screen's bottom to TOP: an empty plot as wide as the image."""
    return ("unset title; unset xlabel; unset ylabel; unset border; unset tics; unset grid; unset logscale; unset xzeroaxis\n"
            f"set lmargin at screen 0.02; set rmargin at screen 0.98; set tmargin at screen {top}; set bmargin at screen 0\n"
            "set xrange [0:1]; set yrange [0:1]\n"
            "set key inside center top horizontal maxcols 3 box opaque spacing 1.2 width 1\n"
            "plot \\\n" + clauses(ctx, ss, 0, "keyonly"))


def panel_title(ctx, value):
    """The title of the panel of VALUE of the --by knob: with --by sweep
    the sweep's name and its meta.json's line."""
    value = "default" if value == "-" else value
    if ctx.by != "sweep":
        return f"set title {gnuplot_str(f'{ctx.by}={value}')}\n"
    text = value + "\n" + plot_meta.title_of(ctx.inputs.sweep_dirs[value])
    return f"set title {gnuplot_str(text.replace('; ', chr(10)))} font ',10'\n"


def plot_facets(ctx, name, ss, title, ylabel, nonneg, log, extra):
    """The panels of a faceted chart: the same y range in every panel, one
    key below them (the lines are the same combinations in every panel)."""
    nf, ns = len(ss.facets), len(ss.lines)
    cols = min(nf, 3)
    rows, keyrows = (nf + cols - 1) // cols, (ns + 4) // 3
    size = ctx.size if ctx.size_given else (max(cols * 560, 1280), rows * 500 + 100 + keyrows * 24)
    geometry, key_top = facet_geometry(nf, ns, size[1])
    # the panels in the order of the facets, those of n/a (backends the knob means nothing to) last
    panels = sorted(ss.facets.items(), key=lambda vf: (vf[0] == "n/a", vf[1]))
    body = (gnuplot.frame(ctx.xtics) + f"set multiplot title {gnuplot_str(f'{title}, one panel per {ctx.by}' + chr(10) + ctx.title)}\n"
            + y_range(ss, nonneg, log) + extra + "\nunset key\n")
    for (left, right, top, bottom, col), (value, f) in zip(geometry, panels):
        # the y label once a row: the panels share the range
        body += f"set ylabel {gnuplot_str(ylabel)}\n" if col == 0 else "unset ylabel\n"
        body += panel_title(ctx, value)
        body += (f"set lmargin at screen {left}\nset rmargin at screen {right}\n"
                 f"set tmargin at screen {top}\nset bmargin at screen {bottom}\nplot \\\n")
        body += clauses(ctx, ss, f, "none")
    body += key_panel(ctx, ss, key_top) + "unset multiplot\n"
    gnuplot.render(name, body, size, ctx.outdir, ctx.tmp)


SEGMENT_PANELS = (
    ("seg", "cost_segments_out", "TCP segments sent per operation", "segments per operation (TCP OutSegs)", "0.07", "0.32"),
    ("pkt", "cost_dev_tx_packets", "packets the device sent per operation", "device packets per operation", "0.405", "0.655"),
    ("bps", "cost_payload_bytes_per_segment", "payload bytes per TCP segment", "bytes per segment", "0.74", "0.99"),
)


def plot_segments(ctx):
    """segments.{png,svg}: what the kernel did with an operation's bytes,
    offload on against off: TCP segments and device packets per
    operation, payload bytes per segment. None when no run sent TCP
    segments. In panels of their own: no --by facets."""
    sets = [metric_series(ctx, metric, pre, net=True, by="", vary=ctx.vary_all, quiet=True)
            for pre, metric, *_ in SEGMENT_PANELS]
    if not all(sets):
        print(f"{ctx.prog}: no segments chart: no run of a backend that sends TCP segments has cost figures",
              file=sys.stderr)
        return
    title = ("What the kernel did with an operation's bytes: TCP segments and payload bytes per segment, "
             f"TSO/GSO on against off{mtu_words(ctx)}\n{ctx.title}")
    # the key below: two entries a row (single runs and bars among them), taller with more lines
    key_px = ((len(sets[0].lines) + 3) // 2) * 23 + 40
    size = ctx.size if ctx.size_given else (ctx.size[0], max(ctx.size[1], ctx.size[1] - 144 + key_px))
    key_top = min(key_px / size[1], 0.4)
    body = (gnuplot.frame(ctx.xtics) + f"set multiplot title {gnuplot_str(title)}\n"
            f"set tmargin at screen {'%.4f' % (1 - 106 / size[1])}\n"
            f"set bmargin at screen {'%.4f' % (key_top + 60 / size[1])}\nunset key\n")
    for ss, (_, _, panel, ylabel, left, right) in zip(sets, SEGMENT_PANELS):
        ss.write()
        body += (f"set title {gnuplot_str(panel)}\nset ylabel {gnuplot_str(ylabel)}\n"
                 f"set lmargin at screen {left}\nset rmargin at screen {right}\n"
                 + y_range(ss, True, "no") + "plot \\\n" + clauses(ctx, ss, 0, "none") + "unset logscale y\n")
    body += key_panel(ctx, sets[0], "%.4f" % key_top) + "unset multiplot\n"
    gnuplot.render("segments", body, size, ctx.outdir, ctx.tmp)
