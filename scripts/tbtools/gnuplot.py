"""Writing and running gnuplot scripts: the frame every line chart shares,
the y range worked out from the data, and the rendering of a chart's body
as PNG and SVG. gnuplot gets a script file as its argument, never a shell
command line; every text in a script from outside it is a gnuplot_str."""

import os
import shutil
import subprocess

from .errors import RunError
from .text import gnuplot_str

# between the clauses of a plot command, a clause a line
CLAUSE_SEP = ", \\\n"


def number(text):
    """TEXT as a float, None when it is no finite number (gnuplot leaves
    such a value out)."""
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return v if v == v and abs(v) != float("inf") else None


def num(v):
    """A float written into a script exactly."""
    return repr(float(v))


def frame(xtics):
    """The settings every line chart shares; XTICS: the client counts."""
    return f"""set datafile missing ""
set style line 100 lt 1 lc rgb '#d4d4d4' lw 1
set style line 101 lt 1 lc rgb '#ececec' lw 1
set grid xtics ytics mytics ls 100, ls 101
set logscale x 2
set xtics ({",".join(str(c) for c in xtics)})
set xrange [{xtics[0]} / 1.3 : {xtics[-1]} * 1.3]
set xlabel "clients (tbench NCLIENTS, log2 scale)"
set key outside right top box opaque spacing 1.3
set border lw 1.2
set bars small
"""


def y_limits(values, bars, nonneg, log):
    """(log, ymin, ymax, ncut) of an axis of VALUES (means and single
    runs): from 0 (or the lowest value, if below 0 and allowed), or on a
    log scale from a factor 2 below the lowest. NCUT: how many of BARS
    (mean, half-width) leave the range. LOG: "yes", "no" or "auto" (log
    when nonnegative and the values span more than a factor 20)."""
    vals = [v for v in values if v is not None]
    vmin, vmax = (min(vals), max(vals)) if vals else (0.0, 0.0)
    positive = [v for v in vals if v > 0]
    pmin = min(positive) if vmax > 0 else 0
    is_log = log == "yes" or (log == "auto" and nonneg and pmin > 0 and vmax / pmin > 20)
    if is_log:
        ymin, ymax = pmin / 2, vmax * 2
    else:
        ymin = 0 if (nonneg or vmin >= 0) else vmin * 1.15
        ymax = vmax * 1.12 if vmax > 0 else 1
    ncut = sum(1 for m, ci in bars if m is not None and ci is not None
               and (m + ci > ymax or (ci > 0 and m - ci < ymin)))
    return is_log, ymin, ymax, ncut


def y_range(values, bars, nonneg, log):
    """The y range of a line chart as gnuplot settings, and cut(), lo()
    and hi() that keep an error bar inside it."""
    is_log, ymin, ymax, ncut = y_limits(values, bars, nonneg, log)
    text = f"set autoscale y\nYMIN = {num(ymin)}; YMAX = {num(ymax)}\nNCUT = {ncut}\n"
    if is_log:
        text += "set logscale y 10; set format y '%g'\n"
    return text + """set yrange [YMIN:YMAX]
cut(v) = v < YMIN ? YMIN : v > YMAX ? YMAX : v
lo(m, ci) = cut(m - ci)
hi(m, ci) = cut(m + ci)
"""


def render(name, body, size, outdir, tmp):
    """NAME.png and NAME.svg in OUTDIR from BODY (gnuplot commands), drawn
    once per terminal (not replot: a multiplot cannot be replotted). The
    script is TMP/NAME.gp; when gnuplot fails it is kept beside the images.
    Prints the images' paths."""
    width, height = size
    png, svg = os.path.join(outdir, name + ".png"), os.path.join(outdir, name + ".svg")
    script = (f"set terminal pngcairo size {width},{height} noenhanced font 'DejaVu Sans,12' linewidth 1\n"
              f"set output {gnuplot_str(png + '.tmp')}\n{body}unset output\nreset\n"
              f"set terminal svg size {width},{height} noenhanced font 'DejaVu Sans,12' dynamic background rgb 'white'\n"
              f"set output {gnuplot_str(svg + '.tmp')}\n{body}unset output\n")
    gp = os.path.join(tmp, name + ".gp")
    with open(gp, "w") as f:
        f.write(script)
    try:
        p = subprocess.run(["gnuplot", gp], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True, errors="replace")
    except OSError as e:
        raise RunError(f"gnuplot: {e.strerror}") from None
    with open(os.path.join(tmp, name + ".err"), "w") as f:
        f.write(p.stderr)
    if p.returncode != 0:
        kept = os.path.join(outdir, name + ".gp")
        shutil.copyfile(gp, kept)
        first = "\n".join(p.stderr.splitlines()[:3])
        raise RunError(f"gnuplot failed on {name}: {first} (script kept as {kept})")
    os.replace(png + ".tmp", png)
    os.replace(svg + ".tmp", svg)
    print(png)
    print(svg, flush=True)
