"""tbench-ab's verdict: tbench-stats compare's CSV line of A against B
turned into one sentence and an exit status. The numbers are
tbench-stats's; this only reads them and picks the words."""

import csv
import io
from collections import namedtuple

from .errors import RunError

# Figures where more is faster (rates); for every other figure (a time or
# a cost per operation) more is slower.
FASTER_WHEN_HIGHER = ("mb_per_sec", "ops_per_sec")

# Exit statuses: without --bisect any verdict is 0 and "cannot tell" 3;
# with --bisect, git bisect run's: 0 good, 1 bad, 125 skip.
EXIT_CANNOT_TELL = 3
BISECT_GOOD, BISECT_BAD, BISECT_SKIP = 0, 1, 125

# kind: faster, slower, equivalent, cannot tell; the rest: compare's
# columns as numbers (None where empty).
Verdict = namedtuple("Verdict", "kind change lo hi half mde margin margin_shown pairs method level n_a n_b")

COLUMNS = ("change_pct", "change_lo_pct", "change_hi_pct", "half_width_pct", "mde_pct", "margin_pct",
           "margin_shown_pct")

# What the interval is of, by compare's method.
INTERVAL_OF = {"paired-ratio": "paired ratio", "paired": "paired difference", "unpaired": "unpaired"}


def _number(row, name):
    text = row.get(name, "")
    try:
        return float(text) if text not in ("", "-") else None
    except ValueError:
        raise RunError(f"tbench-stats compare: column {name} is '{text}', not a number") from None


def parse_compare(text, figure):
    """The one point of tbench-stats compare --csv --equivalent (the line
    before geomean) as a Verdict."""
    rows = [r for r in csv.DictReader(io.StringIO(text)) if r.get("status") != "geomean"]
    if len(rows) != 1:
        raise RunError(f"tbench-stats compare gave {len(rows)} points where tbench-ab expects one")
    r = rows[0]
    change, lo, hi, half, mde, margin, shown = (_number(r, c) for c in COLUMNS)
    if r.get("equivalence") == "equivalent":
        kind = "equivalent"
    elif r.get("significant") == "yes" and change is not None:
        kind = "faster" if (change > 0) == (figure in FASTER_WHEN_HIGHER) else "slower"
    else:
        kind = "cannot tell"
    return Verdict(kind, change, lo, hi, half, mde, margin, shown, int(_number(r, "pairs") or 0),
                   r.get("method", ""), r.get("level", ""), int(_number(r, "n_a") or 0), int(_number(r, "n_b") or 0))


def half_width(v):
    """Half the width of the 95% interval of the change, in % of A
    (compare's half_width_pct), or None when there is none yet."""
    return v.half


def _pct(x):
    return "-" if x is None else f"{x:+.2f}%"


def progress(v):
    """The line after a block: the verdict so far."""
    half = half_width(v)
    return f"{v.kind} so far, change {_pct(v.change)} ± {'-' if half is None else f'{half:.2f}%'}"


def interval_of(v):
    """"paired ratio, 95% interval": what the interval is of."""
    return f"{INTERVAL_OF.get(v.method, v.method or '-')}, 95% interval"


def sentence(v, figure, blocks, why_stopped):
    """The verdict line, as printed and written to verdict.txt."""
    interval = f"[{_pct(v.lo)}, {_pct(v.hi)}]"
    if v.kind in ("faster", "slower"):
        return f"B {v.kind} than A by {abs(v.change):.2f}% {interval} ({figure}, {interval_of(v)})"
    if v.kind == "equivalent":
        return f"equivalent within ±{v.margin:g}%: change {_pct(v.change)} {interval} ({figure}, {interval_of(v)})"
    return f"cannot tell: {interval} ({interval_of(v)}) after {blocks} blocks ({why_stopped})"


def detail(v, blocks, runs, seconds):
    """The lines after the verdict: what this noise could have seen, and
    what it took."""
    mde = "-" if v.mde is None else f"{v.mde:.2f}%"
    shown = "-" if v.margin_shown is None else f"±{v.margin_shown:.2f}%"
    return [f"minimum detectable effect at this noise: {mde} (95% confidence, 80% power); "
            f"least margin it could show equivalent: {shown}",
            f"{blocks} blocks, {runs} runs, {seconds / 60:.1f} min; interval: {v.method or '-'} "
            f"({v.pairs} pairs), variance at the level of the {v.level or 'runs'}"]


def exit_status(v, bisect):
    """0 any verdict, 3 cannot tell; with BISECT: 0 good (faster,
    equivalent, or slower by no more than the margin), 1 bad (slower by
    more than the margin), 125 cannot tell."""
    if not bisect:
        return EXIT_CANNOT_TELL if v.kind == "cannot tell" else 0
    if v.kind == "cannot tell":
        return BISECT_SKIP
    if v.kind == "slower" and abs(v.change) > (v.margin or 0):
        return BISECT_BAD
    return BISECT_GOOD
