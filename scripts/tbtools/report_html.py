"""The HTML of tbench-report's page, built as a tree of parts from plain
values. Text is escaped where it joins the tree (render): only Markup, the
tags made here, goes in as it is, so nothing read from a results directory
can become markup."""

import base64
from collections import namedtuple

from .text import html_text

STYLE = """<style>
body { font-family: "DejaVu Sans", sans-serif; margin: 1.5em auto; max-width: 1320px; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
pre { background: #f4f4f4; padding: 0.6em; white-space: pre-wrap; }
figure { margin: 1em 0; border: 1px solid #ddd; padding: 4px; }
figure img { max-width: 100%; height: auto; display: block; }
table { border-collapse: collapse; font-size: 0.9em; }
th { background: #e8eef7; text-align: left; }
th, td { border: 1px solid #ccc; padding: 2px 8px; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
p.clear { color: #111; } p.covers { color: #777; }
</style>"""


class Markup(str):
    """HTML already: made by el() and the constants of this module only."""


def render(node):
    """The HTML of a part: Markup as it is, any other text escaped, a list
    or tuple part after part, None nothing."""
    if node is None:
        return ""
    if isinstance(node, Markup):
        return node
    if isinstance(node, (list, tuple)):
        return "".join(render(n) for n in node)
    return html_text(node)


def el(tag, *children, **attrs):
    """<TAG ATTRS>CHILDREN</TAG>; an attribute class_ is written class."""
    names = "".join(f' {k.rstrip("_")}="{html_text(v)}"' for k, v in attrs.items())
    return Markup(f"<{tag}{names}>{render(children)}</{tag}>")


def line(*parts):
    """Parts on a line of their own (the page is read with grep too)."""
    return Markup(render(parts) + "\n")


def head(name):
    return line(Markup('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'),
                el("title", f"tbench sweep {name}"), Markup("\n" + STYLE + "</head><body>"))


def context(name, facts, n_left, n_all):
    """The sweep: its command and FACTS, (heading, text) pairs: when it ran,
    the machine, the noise at its start; then how many runs were left out."""
    rows = [line(el("tr", el("th", th), el("td", td))) for th, td in facts.get("rows", ())]
    rows.append(line(el("tr", el("th", "runs left out"), el(
        "td", f"{n_left} of {n_all} (failed, or disturbed by other work: ",
        el("a", "below", href="#left-out"), ")"))))
    return [line(el("h1", f"tbench sweep {name}")),
            line(el("h2", "The sweep", id="context")),
            line(el("pre", facts.get("command", ""))),
            line(Markup("<table>")), rows, line(Markup("</table>"))]


def charts(pngs):
    """Every chart, (name, PNG bytes) pairs, inside the page as data."""
    parts = [line(el("h2", "Charts", id="charts"))]
    for name, png in pngs:
        src = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
        parts.append(line(el("figure", Markup(f'<img alt="{html_text(name)}" src="{html_text(src)}">'),
                             el("figcaption", f"{name}.png"), id=f"chart-{name}")))
    if not pngs:
        parts.append(line(el("p", "No charts: tbench-plot drew none.")))
    return parts


def mean_pm(mean, ci95):
    """'MEAN ± CI95' to 2 places; '' without a mean, MEAN alone without an
    interval; text that is no number as it is."""
    if mean == "":
        return ""
    try:
        text = f"{float(mean):.2f}"
    except ValueError:
        return mean
    if ci95 == "":
        return text
    try:
        return f"{text} ± {float(ci95):.2f}"
    except ValueError:
        return f"{text} ± {ci95}"


SUMMARY_FIGURES = ("mb_per_sec", "cost_cpu_us", "wall_us_per_op")


def summary_table(dims, points):
    """A row per point: POINTS are dicts of summary.csv's columns (backend,
    clients, the DIMS that vary, n, each figure's _mean and _ci95)."""
    header = el("tr", el("th", "backend"), el("th", "clients"), [el("th", d) for d in dims],
                el("th", "runs"), el("th", "MB/sec"), el("th", "CPU µs per operation"),
                el("th", "wall µs per operation, per client"))
    rows = []
    for p in points:
        rows.append(line(el(
            "tr", el("td", p.get("backend", "")), el("td", p.get("clients", ""), class_="n"),
            [el("td", p.get(d, "")) for d in dims], el("td", p.get("n", ""), class_="n"),
            [el("td", mean_pm(p.get(f + "_mean", ""), p.get(f + "_ci95", "")), class_="n")
             for f in SUMMARY_FIGURES])))
    return [line(el("h2", "Summary: mean ± half-width of the 95% interval", id="summary")),
            line(Markup('<table id="summary-table">')), line(header), rows, line(Markup("</table>"))]


def _number(text):
    """awk's TEXT + 0: the number it starts with, else 0."""
    try:
        return float(text)
    except ValueError:
        return 0.0


def _interval(layer, m, ci):
    """"(95% interval LO to HI, HOW)" of a row, and whether it is clear of 0."""
    ci_text, method = layer.get("ci95", ""), layer.get("method", "")
    clear = ci_text != "" and (m - ci > 0 or m + ci < 0)
    how = (f", paired over {layer.get('pairs', '')} reps" if method == "paired"
           else "" if method == "" else ", " + method)
    return f"(95% interval {m - ci:.2f} to {m + ci:.2f}{how})", clear


def layer_sentence(layer):
    """A row of tbench-stats decompose (clients, label, mean, ci95, method,
    pairs, kind, minuend, subtrahend) in words, and whether its interval
    is clear of 0: a layer (or a setting) adds or saves; two different
    paths are set side by side, not as a layer; a total is a whole cost."""
    clients, label, kind = layer.get("clients", ""), layer.get("label", ""), layer.get("kind", "layer")
    m, ci = _number(layer.get("mean", "")), _number(layer.get("ci95", ""))
    interval, clear = _interval(layer, m, ci)
    one = _number(clients) == 1 and clients.strip() != ""
    verdict = ("larger than its error bar." if clear
               else "its interval covers 0: not resolved at this noise.")
    if kind == "different-paths":
        upper, lower = layer.get("minuend", ""), layer.get("subtrahend", "")
        what = (f": {upper} costs {abs(m):.2f} µs per operation {'less' if m < 0 else 'more'} than {lower} "
                f"{interval}, a difference of two paths: ")
    elif kind == "total":
        what = f" (its whole cost: no level below it was swept) is {m:.2f} µs per operation {interval}: "
        verdict = "clear of 0." if clear else "its interval covers 0."
    else:
        what = f" {'saves' if m < 0 else 'adds'} {abs(m):.2f} µs per operation {interval}: "
    return line(el("p", f"At {clients} client{'' if one else 's'}, ", el("b", label), what + verdict,
                   class_="clear" if clear else "covers"))


Decomposition = namedtuple("Decomposition", "figure layers at")


def decomposition(dec):
    """The decomposition (a Decomposition: FIGURE, its rows, AT the knob
    values it was made at, '' for none) in words, a sentence per row and
    client count; FIGURE None: there is none."""
    parts = [line(el("h2", "The decomposition in words", id="decomposition"))]
    if dec.figure is None:
        parts.append(line(el("p", "No decomposition: the sweep has no cost figures, or not two "
                                  "levels of the stack (tbench-stats decompose --model).")))
        return parts
    parts.append(line(el("p", f"Each layer is the difference of two levels' mean {dec.figure} (CPU µs "
                              "per operation, clients and servers) at the same client count; its "
                              "interval is that of the difference (paired by repetition where both "
                              "levels ran the same ones). Two backends whose paths differ are no layer "
                              "of one another: their difference is said as such (different paths, not a layer).")))
    if dec.at:
        parts.append(line(el("p", "Decomposed at ", el("b", dec.at), ": the first value swept of each knob "
                                  "that varies (tbench-stats decompose --levels BACKEND:NAME=VALUE:... "
                                  "picks others).", id="decomposed-at")))
    parts += [layer_sentence(layer) for layer in dec.layers]
    return parts


LEFT_OUT_COLUMNS = ("rep", "backend", "clients", "offload", "status", "disturbed", "error")


def left_out_columns(dims):
    """LEFT_OUT_COLUMNS with the varied DIMS after offload (each once)."""
    extra = [d for d in dims if d not in LEFT_OUT_COLUMNS]
    i = LEFT_OUT_COLUMNS.index("offload") + 1
    return LEFT_OUT_COLUMNS[:i] + tuple(extra) + LEFT_OUT_COLUMNS[i:]


def left_out(runs, dims=()):
    """The runs no mean counts, dicts of runs.csv's columns: LEFT_OUT_COLUMNS
    and the DIMS the sweep varies."""
    parts = [line(el("h2", "Runs left out of the means", id="left-out"))]
    if not runs:
        parts.append(line(el("p", "None: every run finished and none was judged disturbed.")))
        return parts
    columns = left_out_columns(dims)
    parts.append(line(Markup("<table>"), el("tr", [el("th", c) for c in columns])))
    parts += [line(el("tr", [el("td", r.get(c, "")) for c in columns])) for r in runs]
    parts.append(line(Markup("</table>")))
    return parts


def page(name, facts, pngs, dims, points, dec, left, n_all):
    """The whole page, as parts for render(); DEC a Decomposition."""
    return [head(name), context(name, facts, len(left), n_all), charts(pngs),
            summary_table(dims, points), decomposition(dec), left_out(left, dims),
            line(Markup("</body></html>"))]
