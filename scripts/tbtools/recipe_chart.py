"""A recipe's chart (chart.png, chart.svg): each claim a panel, each of its
points a pair of bars, side A and side B, with the 95% interval of each
mean, and above the pair the change with its interval and the verdict. The
figures are verdict.csv's (tbench-stats's); every text from it reaches
gnuplot as a gnuplot_str."""

import csv
import os
import tempfile

from . import gnuplot
from .errors import RunError
from .programs import stats_number as num
from .text import gnuplot_str

COLOR_A, COLOR_B = "#9e9e9e", "#1f77b4"
VERDICT_COLOR = {"agrees": "#2e7d32", "disagrees": "#c62828"}


def read_rows(path):
    """verdict.csv's rows, as dicts; RunError naming the file when unreadable."""
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except OSError as e:
        raise RunError(f"{path}: {e.strerror}") from None


def claims_of(rows):
    """The rows grouped by claim, in order, keeping those with two sides
    measured (a claim on the noise compares a sweep with itself: no sides)."""
    groups = {}
    for r in rows:
        if r.get("test") != "noise" and num(r.get("mean_a")) is not None and num(r.get("mean_b")) is not None:
            groups.setdefault(r.get("claim", ""), []).append(r)
    return list(groups.values())


def split_point(points):
    """(common, labels): the key=value words every point shares, and each
    point's own words (its tic label)."""
    words = [p.split() for p in points]
    common = [w for w in words[0] if all(w in ws for ws in words)] if words else []
    return " ".join(common), [" ".join(w for w in ws if w not in common) or "all" for ws in words]


def change_text(r):
    change, lo, hi = (num(r.get(k)) for k in ("change_pct", "change_lo_pct", "change_hi_pct"))
    if change is None:
        return r.get("verdict", "")
    interval = f" [{lo:+.3g}, {hi:+.3g}]" if lo is not None and hi is not None else ""
    return f"{change:+.3g}%{interval}\n{r.get('verdict', '')}"


def panel(rows, data_path, index):
    """The gnuplot commands of one claim's panel; its data into DATA_PATH."""
    first = rows[0]
    common, labels = split_point([r.get("point", "") for r in rows])
    top = max(num(r["mean_" + s]) + (num(r.get("ci95_" + s)) or 0) for r in rows for s in "ab")
    with open(data_path, "w") as f:
        for i, r in enumerate(rows):
            f.write(" ".join(gnuplot.num(num(r.get(k)) or 0) for k in
                             ("mean_a", "ci95_a", "mean_b", "ci95_b")).join((f"{i} ", "\n")))
    tics = ", ".join(f"{gnuplot_str(lbl)} {i}" for i, lbl in enumerate(labels))
    title = f"{first.get('claim_text', '')}\n{common}   source: {first.get('source_numbers', '')}"
    marks = "".join(
        f"set label {index * 100 + i + 1} {gnuplot_str(change_text(r))} at {i}, {gnuplot.num(top * 1.13)} "
        f"center front tc rgb '{VERDICT_COLOR.get(r.get('verdict'), '#555555')}'\n"
        for i, r in enumerate(rows))
    return (f"unset label\nset title {gnuplot_str(title)}\nset xtics ({tics})\n"
            f"set xrange [-0.6:{len(rows) - 0.4}]\nset yrange [0:{gnuplot.num(top * 1.25)}]\n"
            f"set ylabel {gnuplot_str(first.get('figure', ''))}\n{marks}"
            f"plot {gnuplot_str(data_path)} using ($1-0.18):2:3 with boxerrorbars lc rgb '{COLOR_A}' "
            f"title {gnuplot_str('A: ' + first.get('a', ''))}, \\\n"
            f"     '' using ($1+0.18):4:5 with boxerrorbars lc rgb '{COLOR_B}' "
            f"title {gnuplot_str('B: ' + first.get('b', ''))}\n")


def draw(out, title):
    """OUT/chart.{png,svg} from OUT/verdict.csv; False when no claim has
    two measured sides (nothing drawn)."""
    groups = claims_of(read_rows(os.path.join(out, "verdict.csv")))
    if not groups:
        return False
    with tempfile.TemporaryDirectory(prefix="tbench-recipe-chart.") as tmp:
        note = ("bars: the 95% interval of each mean; above each pair: the change of B against A, "
                "its 95% interval and the verdict")
        body = (f"set multiplot layout {len(groups)},1 title {gnuplot_str(title + chr(10) + note)}\n"
                "set style fill solid 0.85 border lc rgb '#333333'\nset boxwidth 0.34\nset bars 2\n"
                "set grid ytics lc rgb '#dddddd'\nset key below horizontal\nset tmargin 5\n")
        for i, rows in enumerate(groups):
            body += panel(rows, os.path.join(tmp, f"claim{i}.dat"), i)
        body += "unset multiplot\n"
        gnuplot.render("chart", body, (1000, 360 + 360 * len(groups)), out, tmp)
    return True
