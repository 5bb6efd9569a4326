"""The point of a sweep that varies knobs (mtu, placement, ...) that its
decomposition is made at: one value of each varied knob, the first the
table has, and the table's rows cut down to it. A decomposition of all
points would take, per level, whichever came first; picking the values
here lets every chart and the page say which they are."""

import csv
import io

# a row that has no value of a knob (a backend it means nothing to)
NO_VALUE = ("n/a", "")


def first_values(rows, dims):
    """{dim: value} of DIMS: for each, the first value in ROWS (dicts, in
    the table's order) that is not n/a or empty; a dim without one left out."""
    chosen = {}
    for dim in dims:
        for row in rows:
            value = row.get(dim)
            if value is not None and value not in NO_VALUE:
                chosen[dim] = value
                break
    return chosen


def keep_point(text, chosen):
    """The CSV TEXT with only the rows at CHOSEN ({dim: value}), or with no
    value of a dim (n/a, empty); the header as it is."""
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        return text
    header = rows[0]
    cols = [(header.index(d), v) for d, v in chosen.items() if d in header]
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(header)
    for row in rows[1:]:
        if row and all(i < len(row) and (row[i] == v or row[i] in NO_VALUE) for i, v in cols):
            w.writerow(row)
    return out.getvalue()


def words(chosen):
    """"mtu=1500, placement=same" ('-' read default); '' for none."""
    return ", ".join(f"{d}={'default' if v == '-' else v}" for d, v in chosen.items())


def dict_rows(text):
    """The rows of CSV TEXT as dicts of its header's columns."""
    return list(csv.DictReader(io.StringIO(text)))
