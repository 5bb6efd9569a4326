"""tbench-plot's chart of different paths (paths.png): two backends that
do the same exchange by different kernel paths (tcp against unix, unix
against pipe: tbench-stats decompose --model's kind "paths") are no layer
of one another, so they are drawn side by side, not stacked: per pair
and client count each side's total with their difference written above,
and, from runs of tbench --trace, each side's clients' time per operation
stacked by part (tbench-stats decompose --parts). One sweep at a time."""

import os
import sys

from . import gnuplot, plot_layers, plot_style
from .plot_series import _part_colour, awk_number
from .text import gnuplot_str

PAIR_COLUMNS = ["clients", "layer", "label", "minuend", "subtrahend", "mean", "ci95", "bottom", "top", "kind"]
PART_COLUMNS = ["clients", "layer", "side", "column", "part", "minuend_mean", "subtrahend_mean"]
# a side's bar: its centre's offset in the slot, its half-width
SIDE_X = {"subtrahend": -0.2, "minuend": 0.2}
HALF = 0.17


class Pair:
    """A different-paths pair: NAME, LABEL, LOWER (subtrahend) and UPPER
    (minuend) levels; totals {x: (lower, upper, mean, ci)}; parts
    {x: {side: [(part, value)]}} in the order tbench-stats gives them."""

    def __init__(self, name, label, lower, upper):
        self.name, self.label, self.lower, self.upper = name, label, lower, upper
        self.totals, self.parts = {}, {}


def pairs_of(rows, xtics):
    """The Pairs of decompose's rows (PAIR_COLUMNS) of kind different-paths,
    in their order; a client count not in XTICS left out."""
    slot = {str(c): i for i, c in enumerate(xtics)}
    pairs = {}
    for r in rows:
        if r[9] != "different-paths" or r[0] not in slot:
            continue
        pair = pairs.setdefault(r[1], Pair(r[1], r[2], r[4], r[3]))
        pair.totals[slot[r[0]]] = tuple(gnuplot.number(v) for v in (r[7], r[8], r[5], r[6]))
    return list(pairs.values())


def add_parts(pairs, rows, xtics):
    """Each pair's clients' parts in µs per operation (--parts rows,
    PART_COLUMNS); counts (wake-ups) left out."""
    slot = {str(c): i for i, c in enumerate(xtics)}
    by_name = {p.name: p for p in pairs}
    for r in rows:
        pair = by_name.get(r[1])
        if pair is None or r[0] not in slot or r[2] != "clients" or not r[3].endswith("_us"):
            continue
        cell = pair.parts.setdefault(slot[r[0]], {"subtrahend": [], "minuend": []})
        for side, value in (("minuend", r[5]), ("subtrahend", r[6])):
            cell[side].append((r[4], gnuplot.number(value) or 0.0))


def part_names(pairs):
    """Every part any pair has, in the order they first come."""
    names = []
    for pair in pairs:
        for cell in pair.parts.values():
            for side in cell.values():
                names += [n for n, _ in side if n not in names]
    return names


def write_totals(prefix, pair):
    """PREFIX.tot: "x lower upper mean ci" per client count."""
    with open(prefix + ".tot", "w") as f:
        for x, (lo, up, mean, ci) in sorted(pair.totals.items()):
            if None not in (lo, up, mean):
                f.write(f"{x} {gnuplot.num(lo)} {gnuplot.num(up)} {gnuplot.num(mean)} {gnuplot.num(ci or 0)}\n")


def write_parts(prefix, pair, names):
    """PREFIX.K.dat per part K ("x bottom top") of both sides' stacks,
    PREFIX.names ('x top "level"'); returns the highest stack."""
    files = {n: [] for n in names}
    tops, labels = [0.0], []
    for x, cell in sorted(pair.parts.items()):
        for side, level in (("subtrahend", pair.lower), ("minuend", pair.upper)):
            bottom, at = 0.0, x + SIDE_X[side]
            for name, v in cell[side]:
                files[name].append(f"{awk_number(at)} {gnuplot.num(bottom)} {gnuplot.num(bottom + v)}\n")
                bottom += v
            tops.append(bottom)
            labels.append(f'{awk_number(at)} {gnuplot.num(bottom)} "{level.replace(chr(34), chr(39))}"\n')
    for k, name in enumerate(names):
        with open(f"{prefix}.{k}.dat", "w") as f:
            f.write("".join(files[name]))
    with open(prefix + ".names", "w") as f:
        f.write("".join(labels))
    return max(tops)


def side_colour(ctx, level):
    return plot_style.color_of(level.split(":")[0], ctx.registry)


def totals_panel(ctx, prefix, pair, title, ylabel, box):
    """The two sides' totals at each client count, side by side, their
    difference (upper − lower, with its 95% interval) above them."""
    tops = [max(lo, up) for lo, up, _, _ in pair.totals.values() if lo is not None and up is not None] or [1.0]
    dat = gnuplot_str(prefix + ".tot")
    text = plot_layers.panel_frame(title, ylabel, ctx.xtics, *box[:2])
    text += (f"set tmargin at screen {box[2]}\nset bmargin at screen {box[3]}\n"
             f"set yrange [0 : {gnuplot.num(max(tops))} * 1.3]\nunset key\nplot \\\n")
    out = []
    for side, col, level in (("subtrahend", 2, pair.lower), ("minuend", 3, pair.upper)):
        dx = SIDE_X[side]
        out.append(f"  {dat} using ($1+{dx}):(${col}/2):($1+{dx}-{HALF}):($1+{dx}+{HALF}):(0):{col} with boxxyerror "
                   f"fs solid 0.85 noborder lc rgb '#{side_colour(ctx, level)}' title {gnuplot_str(level)}")
    out.append(f"  {dat} using 1:(max($2,$3)):(sprintf('%+.2f ± %.2f', $4, $5)) with labels offset 0,0.8 "
               "font ',10' notitle")
    return text + gnuplot.CLAUSE_SEP.join(out) + "\n"


def parts_panel(ctx, prefix, pair, names, top, title, box):
    """Each side's clients' time per operation stacked by part, side by side."""
    text = plot_layers.panel_frame(title, "clients' µs per operation (tbench --trace)", ctx.xtics, *box[:2])
    text += (f"set tmargin at screen {box[2]}\nset bmargin at screen {box[3]}\n"
             f"set yrange [0 : {gnuplot.num(top)} * 1.3]\nunset key\nplot \\\n")
    out = [f"  {gnuplot_str(f'{prefix}.{k}.dat')} using 1:(($2+$3)/2):($1-{HALF}):($1+{HALF}):2:3 with boxxyerror "
           f"fs solid 0.9 noborder lc rgb '#{_part_colour(k + 1, len(names))}' notitle" for k in range(len(names))]
    out.append(f"  {gnuplot_str(prefix + '.names')} using 1:2:3 with labels rotate by 90 left offset 0,0.4 "
               "font ',9' notitle")
    return text + gnuplot.CLAUSE_SEP.join(out) + "\n"


def parts_key(names, top):
    """The parts' colours in a key below the panels: an empty plot."""
    out = [f"  NaN with boxes fs solid 0.9 noborder lc rgb '#{_part_colour(k + 1, len(names))}' title {gnuplot_str(n)}"
           for k, n in enumerate(names)]
    return ("unset title; unset xlabel; unset ylabel; unset border; unset tics; unset grid\n"
            f"set lmargin at screen 0.02; set rmargin at screen 0.98; set tmargin at screen {top}; "
            "set bmargin at screen 0\nset xrange [0:1]; set yrange [0:1]\n"
            "set key inside center top horizontal maxcols 4 box opaque spacing 1.1 width 1 "
            "title 'parts of the clients’ time (tbench --trace), bottom to top'\nplot \\\n"
            + gnuplot.CLAUSE_SEP.join(out) + "\n")


PATHS_NOTE = (
    "Two backends whose kernel paths differ (tbench-stats decompose --model: paths) are no layer of one another: "
    "their difference is a difference of different paths, not a layer.\n"
    "Left: each side's total at each client count (the mean of its runs), the difference written above them "
    "(upper − lower, ± the half-width of its 95% interval: paired by repetition, else Welch's).\n"
    "Bars: each the mean of a side's runs, no interval drawn (the difference's is written above them).")
PARTS_NOTE = ("\nRight: where each side's clients' time per operation went, as tbench --trace measured it "
              "(tbench-stats decompose --parts): a stack per side, its level written above it.")


def parts_rows(ctx, runs):
    """--parts rows (PART_COLUMNS) of RUNS; [] unless they carry --trace's figures."""
    if not runs or "trace_clients_user_us" not in ctx.stats.header(runs):
        return []
    path = os.path.join(ctx.tmp, "paths.parts.csv")
    text = ctx.stats.out(["decompose", "--parts", runs], quiet=True, check=False)
    if not text:
        return []
    with open(path, "w") as f:
        f.write(text)
    return ctx.stats.rows(path, PART_COLUMNS, quiet=True) or []


def geometry(npairs, with_parts):
    """(size, [(totals box, parts box)] per pair, key top, note y): boxes
    (left, right, top, bottom) in screen fractions; a row of panels a
    pair, below them the parts' key and the note (4 lines from NOTE_PX)."""
    note_px = 85
    key_top_px = note_px + 15 + (100 if with_parts else 0)
    bottom_px = key_top_px + 75
    height = bottom_px + 250 + 330 * (npairs - 1) + 140
    rows = []
    for k in range(npairs):
        top, bottom = "%.4f" % ((height - 140 - 330 * k) / height), "%.4f" % ((height - 390 - 330 * k) / height)
        rows.append((("0.07", "0.47" if with_parts else "0.97", top, bottom), ("0.56", "0.97", top, bottom)))
    return (1280, height), rows, "%.4f" % (key_top_px / height), "%.4f" % (note_px / height)


def pair_title(pair):
    """A pair's label, what follows its first clause on a line of its own,
    and which bar is which."""
    return (pair.label.replace("; ", "\n", 1) + f"\nleft: {pair.lower}, right: {pair.upper}; "
            f"above them: {pair.upper} − {pair.lower}")


def plot_paths(ctx):
    """paths.{png,svg}: the different-paths pairs of the sweep side by
    side, in CPU per operation and, with --trace, by part; none when the
    sweep has no such pair."""
    figure = "cost_cpu_us"
    csv_path = os.path.join(ctx.tmp, "paths.csv")
    if plot_layers.decomposed(ctx, figure, "", csv_path, kinds=("different-paths",)) is None:
        return
    pairs = pairs_of(ctx.stats.rows(csv_path, PAIR_COLUMNS, quiet=True) or [], ctx.xtics)
    if not pairs:
        return
    runs, _ = plot_layers.decomp_inputs(ctx)
    add_parts(pairs, parts_rows(ctx, runs), ctx.xtics)
    names = part_names(pairs)
    size, boxes, key_top, note_y = geometry(len(pairs), bool(names))
    if ctx.size_given:
        print(f"{ctx.prog}: paths.png is sized by its pairs; --size left aside there", file=sys.stderr)
    body = plot_layers._multiplot_head("Different paths, not layers: the two sides of each pair side by side",
                                       ctx, boxes[0][0][2], boxes[0][0][3])
    for k, (pair, (tbox, pbox)) in enumerate(zip(pairs, boxes)):
        prefix = os.path.join(ctx.tmp, f"paths.{k}")
        write_totals(prefix, pair)
        body += "set xlabel \"clients (tbench NCLIENTS)\"\n" if k == len(pairs) - 1 else "unset xlabel\n"
        body += totals_panel(ctx, prefix, pair, pair_title(pair), f"CPU µs per operation ({figure})", tbox)
        if names and pair.parts:
            top = write_parts(prefix, pair, names)
            body += parts_panel(ctx, prefix, pair, names, top, f"{pair.lower} (left) and {pair.upper} (right): "
                                "the clients' time per operation by part",
                                pbox)
    note = PATHS_NOTE + (PARTS_NOTE if names else "") + plot_layers.picked_note(ctx)
    body += f"set label 1 {gnuplot_str(note)} at screen 0.02, {note_y} left font ',10'\n"
    if names:
        body += parts_key(names, key_top)
    gnuplot.render("paths", body + "unset multiplot\n", size, ctx.outdir, ctx.tmp)
