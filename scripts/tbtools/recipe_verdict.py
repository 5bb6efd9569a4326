"""The verdicts of a recipe: each claim, point by point, as tbench-stats
compare's CSV judges it (its intervals, equivalence and minimum detectable
effect), put in words: agrees, disagrees or cannot tell, and why. Nothing
is estimated here; the numbers are tbench-stats's, only compared with the
claim's bounds and written out (verdict.csv, verdict.md)."""

import csv
import io
import re

from .programs import stats_number as num
from .recipe_file import VERDICTS

COLUMNS = ("recipe", "claim", "point", "figure", "test", "claim_text", "source_numbers",
           "a", "b", "n_a", "mean_a", "ci95_a", "n_b", "mean_b", "ci95_b",
           "change_pct", "change_lo_pct", "change_hi_pct", "mde_pct",
           "equivalence", "margin_pct", "margin_shown_pct", "runs_to_resolve", "measured", "verdict", "why")


def compare_rows(text, keys):
    """The point rows of tbench-stats compare --csv (its geomean row left
    out), each a dict by column, with 'point': the keys' values."""
    rows = list(csv.DictReader(io.StringIO(text)))
    points = [r for r in rows if r.get(keys[0]) != "geomean"]
    for r in points:
        r["point"] = " ".join(f"{k}={r.get(k, '')}" for k in keys)
    return points


def fmt(text, sign=False):
    """A number of tbench-stats's CSV, shortened for a reader; '-' for none."""
    x = num(text)
    if x is None:
        return "-"
    return f"{x:+.3g}" if sign else f"{x:.4g}"


def side(where):
    """A side of a comparison as the runs it selects: 'offload=off'."""
    return " ".join(f"{k}={v}" for k, v in where.items())


def _size_note(claim, lo, hi):
    """How the source's change (expected_pct) sits against the measured interval."""
    exp = claim.get("expected_pct")
    if not exp or lo is None:
        return ""
    elo, ehi = min(exp), max(exp)
    said = f"{elo:+g}%" if elo == ehi else f"{elo:+g} to {ehi:+g}%"
    if ehi < lo:
        return f"; the source's {said} is below this interval (here the change is larger)"
    if elo > hi:
        return f"; the source's {said} is above this interval (here the change is smaller)"
    return f"; the source's {said} lies in or overlaps this interval"


def judge_equivalent(claim, r):
    eq, m = r.get("equivalence", ""), claim["margin_pct"]
    lo90, hi90 = fmt(r.get("equiv_lo_pct"), True), fmt(r.get("equiv_hi_pct"), True)
    if eq == "equivalent":
        return "agrees", f"the 90% interval of the change, [{lo90}%, {hi90}%], lies within ±{m:g}% (two one-sided tests at 5%)"
    if eq == "different":
        return "disagrees", (f"a significant change (p {fmt(r.get('p'))}): 95% interval "
                             f"[{fmt(r.get('change_lo_pct'), True)}%, {fmt(r.get('change_hi_pct'), True)}%], "
                             f"not within ±{m:g}%")
    if eq == "cannot tell":
        return "cannot tell", (f"the 90% interval [{lo90}%, {hi90}%] reaches beyond ±{m:g}%: this noise and "
                               f"number of runs could show equivalence only within ±{fmt(r.get('margin_shown_pct'))}% "
                               "(more reps narrow it)")
    return "cannot tell", _too_few(r)


def _too_few(r):
    return f"too few ok runs for an interval ({r.get('n_a') or 0} and {r.get('n_b') or 0}; disturbed runs do not count)"


def judge_direction(claim, r):
    """test greater (B above A) or less (B below A)."""
    lo, hi = num(r.get("change_lo_pct")), num(r.get("change_hi_pct"))
    if lo is None or hi is None:
        return "cannot tell", _too_few(r)
    up = claim["test"] == "greater"
    interval = f"95% interval of the change [{lo:+.3g}%, {hi:+.3g}%]"
    note = _size_note(claim, lo, hi)
    if (lo > 0) if up else (hi < 0):
        return "agrees", f"the {interval} lies wholly {'above' if up else 'below'} 0" + note
    if (hi < 0) if up else (lo > 0):
        return "disagrees", f"the {interval} lies wholly on the other side of 0" + note
    if r.get("equivalence") == "equivalent":
        return "disagrees", (f"no change beyond ±{claim['margin_pct']:g}%: the 90% interval "
                             f"[{fmt(r.get('equiv_lo_pct'), True)}%, {fmt(r.get('equiv_hi_pct'), True)}%] lies within it") + note
    return "cannot tell", f"the {interval} covers 0 (least detectable change here: {fmt(r.get('mde_pct'))}%)" + note


def judge_noise(claim, r):
    """test noise: can two sweeps like this one resolve a change of
    resolve_pct? r is the sweep compared with itself (Welch), so its
    mde_pct is the least change two such sweeps would detect."""
    mde, want = num(r.get("mde_pct")), claim["resolve_pct"]
    if mde is None:
        return "cannot tell", _too_few(r)
    more = _runs_needed(r, want)
    if mde <= want:
        return "agrees", (f"two sweeps of {r.get('n_a')} runs each detect a change of {mde:.3g}% or more "
                          f"(95% confidence, 80% power): {want:g}% is resolved here" + more)
    return "disagrees", (f"two sweeps of {r.get('n_a')} runs each detect only changes of {mde:.3g}% or more "
                         f"(95% confidence, 80% power): {want:g}% is not resolved with these runs" + more)


def _runs_needed(r, want):
    """What tbench-stats's runs_to_resolve says, and how long that is at
    the sweep's pace (seconds_per_run: its wall time over its runs)."""
    n = r.get("runs_to_resolve")
    if not n:
        return f"; resolving {want:g}% would take more than 100000 runs a side at this noise"
    pace = num(r.get("seconds_per_run"))
    took = f", about {int(n) * pace / 60:.3g} min a side at this sweep's {pace:.3g} s a run" if pace else ""
    return f"; {n} runs a side would resolve {want:g}%{took}"


JUDGES = {"equivalent": judge_equivalent, "greater": judge_direction,
          "less": judge_direction, "noise": judge_noise}


def measured(claim, r):
    """What was measured, for a reader: the two sides with their 95%
    intervals and runs, and the change with its interval."""
    if claim["test"] == "noise" and num(r.get("ci95_a")) is None:
        return f"{claim['figure']}: {r.get('n_a') or 0} counted runs, no interval"
    if claim["test"] == "noise":
        half = num(r.get("ci95_a")), num(r.get("mean_a"))
        pct = f" (±{100 * half[0] / half[1]:.3g}% of the mean)" if None not in half and half[1] else ""
        return (f"{claim['figure']} {fmt(r.get('mean_a'))} ± {fmt(r.get('ci95_a'))}{pct}, "
                f"{r.get('n_a') or 0} runs; least detectable change {fmt(r.get('mde_pct'))}%")
    a, b = side(claim["a"]), side(claim["b"])
    if not num(r.get("mean_a")) or not num(r.get("mean_b")):
        return f"{claim['figure']}: {a} {r.get('n_a') or 0} ok runs, {b} {r.get('n_b') or 0}: no mean on a side"
    return (f"{claim['figure']}: {a} {fmt(r.get('mean_a'))} ± {fmt(r.get('ci95_a'))} ({r.get('n_a') or 0}), "
            f"{b} {fmt(r.get('mean_b'))} ± {fmt(r.get('ci95_b'))} ({r.get('n_b') or 0}): "
            f"{fmt(r.get('change_pct'), True)}% [{fmt(r.get('change_lo_pct'), True)}%, {fmt(r.get('change_hi_pct'), True)}%]")


def verdict_rows(recipe_name, claim, compare_csv, seconds_per_run=None):
    """A verdict row (dict of COLUMNS) per point of the claim's comparison;
    one row saying why when there is no point. SECONDS_PER_RUN: the sweep's
    pace, to say how long resolving a change would take."""
    keys = claim["keys"]
    rows = compare_rows(compare_csv, keys)
    out = []
    for r in rows:
        r["seconds_per_run"] = seconds_per_run
        verdict, why = JUDGES[claim["test"]](claim, r)
        assert verdict in VERDICTS
        out.append(_row(recipe_name, claim, r, verdict, why))
    if not out:
        out.append(_row(recipe_name, claim, {"point": "-"}, "cannot tell", "no point was measured on both sides"))
    return out


def not_run(recipe_name, claim, why):
    """The row of a claim whose runs were not made (e.g. no root)."""
    return _row(recipe_name, claim, {"point": "-"}, "cannot tell", why)


def _row(recipe_name, claim, r, verdict, why):
    row = {c: r.get(c, "") for c in COLUMNS}
    row.update(recipe=recipe_name, claim=claim["id"], point=r.get("point", "-"), figure=claim["figure"],
               test=claim["test"], claim_text=claim["claim"], source_numbers=claim["source_numbers"],
               a=side(claim.get("a", {})), b=side(claim.get("b", {})),
               margin_pct=str(claim.get("margin_pct", claim.get("resolve_pct", ""))),
               verdict=verdict, why=why, measured=measured(claim, r) if "n_a" in r else "not measured")
    return row


def csv_text(rows):
    out = io.StringIO()
    w = csv.DictWriter(out, COLUMNS, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return out.getvalue()


def md_cell(text):
    """TEXT as one cell of a Markdown table: no line break, '|' escaped."""
    return re.sub(r"[\x00-\x1f\x7f]+", " ", str(text)).replace("\\", "\\\\").replace("|", "\\|")


def md_table(rows, with_recipe=False):
    """The verdicts for a reader; WITH_RECIPE: a first column naming it."""
    first = ("| recipe ", "|:--") if with_recipe else ("", "")
    lines = [first[0] + "| claim | point | source's numbers | measured (95% interval) | verdict | why |",
             first[1] + "|:--|:--|:--|:--|:--|:--|"]
    for r in rows:
        cells = (r["claim_text"], r["point"], r["source_numbers"], r["measured"], f"**{r['verdict']}**", r["why"])
        lines.append("| " + " | ".join(md_cell(c) for c in ((r["recipe"],) if with_recipe else ()) + cells) + " |")
    return "\n".join(lines) + "\n"
