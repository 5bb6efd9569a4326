"""tbench-stats' rows cut into what gnuplot draws: the lines of a chart
(a file per panel and line), the layers of a decomposition (a file per
layer) and the bars of the trace chart (a file per part). Every value is
written as tbench-stats wrote it; only places on the axis are computed."""

from collections import namedtuple

Line = namedtuple("Line", "id backend k title key")


def dims_title(backend, names, values):
    """"BACKEND name=value ...": a dimension n/a (or empty) left out, one
    not varied ("-") read "default"."""
    title = backend
    for name, v in zip(names, values):
        if v not in ("", "n/a"):
            title += f" {name}={'default' if v == '-' else v}"
    return title


def awk_number(v):
    """V as awk prints a number: whole ones as integers, others with 6
    significant digits (the files the bash tbench-plot wrote, kept)."""
    return "%d" % v if v == int(v) and abs(v) < 1e16 else "%.6g" % v


class SeriesSet:
    """The lines of a chart at PREFIX, from rows "filter facet backend
    dim... clients value [ci]" (a dim per name of VARY): lines and facets
    in the order they first appear. Files: PREFIX.list ("N backend K title
    key", K the line's place among its backend's), PREFIX.facets ("F
    value"), PREFIX.F.N.dat ("clients value ci"), PREFIX.F.N.runs."""

    def __init__(self, prefix, vary, faceted):
        self.prefix, self.vary, self.faceted = prefix, list(vary), faceted
        self.lines, self.facets = [], {}
        self.bars_title = ""  # the key's word of what the error bars are
        self.dat, self.runs = {}, {}
        self._ids, self._per_backend = {}, {}

    def add(self, rows, net, runs=False):
        """Rows of means (or with RUNS, single runs: only of lines and
        facets the means have). NET: rows whose filter (the offload) is
        n/a left out."""
        nv = len(self.vary)
        into = self.runs if runs else self.dat
        for row in rows:
            row = row + [""] * (nv + 6 - len(row))
            if (net and row[0] == "n/a") or row[nv + 4] == "":
                continue
            facet = row[1] if self.faceted else ""
            backend, dims = row[2], row[3:3 + nv]
            key = "|".join([backend] + dims)
            if key not in self._ids or facet not in self.facets:
                if runs:
                    continue
                self._new_line(key, backend, dims)
                self.facets.setdefault(facet, len(self.facets))
            point = (row[nv + 3], row[nv + 4], row[nv + 5] or "0")
            into.setdefault((self.facets[facet], self._ids[key]), []).append(point)

    def _new_line(self, key, backend, dims):
        if key in self._ids:
            return
        k = self._per_backend.get(backend, 0)
        self._per_backend[backend] = k + 1
        self._ids[key] = len(self._ids)
        self.lines.append(Line(self._ids[key], backend, k, dims_title(backend, self.vary, dims), key))

    def drop_backend(self, backend):
        """Leaves BACKEND's lines out (their ids stay those of the others)."""
        gone = {ln.id for ln in self.lines if ln.backend == backend}
        self.lines = [ln for ln in self.lines if ln.id not in gone]
        for table in (self.dat, self.runs):
            for fk in [fk for fk in table if fk[1] in gone]:
                del table[fk]

    def values(self, backend=None):
        """Every mean and single run (of BACKEND's lines only, if given)."""
        ids = {ln.id for ln in self.lines if backend is None or ln.backend == backend}
        return [p[1] for table in (self.dat, self.runs) for fk, pts in table.items() if fk[1] in ids for p in pts]

    def bars(self):
        """(mean, half-width) of every point, as text."""
        return [(p[1], p[2]) for pts in self.dat.values() for p in pts]

    def path(self, f, n, ext):
        return f"{self.prefix}.{f}.{n}.{ext}"

    def write(self):
        _write(self.prefix + ".list", "".join(f"{ln.id}\t{ln.backend}\t{ln.k}\t{ln.title}\t{ln.key}\n" for ln in self.lines))
        _write(self.prefix + ".facets", "".join(f"{f}\t{v}\n" for v, f in self.facets.items()))
        for ext, table in (("dat", self.dat), ("runs", self.runs)):
            for (f, n), pts in table.items():
                _write(self.path(f, n, ext), "".join(" ".join(p) + "\n" for p in pts))


def _write(path, text):
    with open(path, "w") as f:
        f.write(text)


Layer = namedtuple("Layer", "id name label")


class Layers:
    """The layers of a decomposition at PREFIX from rows "clients layer
    label bottom top mean ci": PREFIX.N.dat per layer ("x bottom top mean
    ci", x the client count's place among XTICS), PREFIX.list ("N layer
    label"), PREFIX.total ("x top-of-stack"); with MAX_CLIENTS, only the
    client counts up to it."""

    def __init__(self, prefix, rows, xtics, max_clients=None):
        self.prefix, self.layers, self.dat, self.total = prefix, [], {}, {}
        slot = {c: i for i, c in enumerate(xtics)}
        ids = {}
        for row in rows:
            row = row + [""] * (7 - len(row))
            try:
                clients = int(row[0])
            except ValueError:
                continue
            if clients not in slot or (max_clients is not None and clients > max_clients):
                continue
            if row[1] not in ids:
                ids[row[1]] = len(ids)
                self.layers.append(Layer(ids[row[1]], row[1], row[2]))
            x = slot[clients]
            self.dat.setdefault(ids[row[1]], []).append((str(x), row[3], row[4], row[5], row[6] or "0"))
            self.total[x] = row[4]

    def rows(self):
        return [r for rows in self.dat.values() for r in rows]

    def y_limits(self):
        """(ymin, ymax) of the boxes and their intervals, 0 included."""
        lo, hi = 0.0, 0.0
        for r in self.rows():
            b, t, ci = _awk_value(r[1]), _awk_value(r[2]), _awk_value(r[4])
            lo, hi = min(lo, b, t, t - ci), max(hi, b, t, t + ci)
        return lo, hi if hi > lo else lo + 1

    def labels(self, gap, fits):
        """The numbers written on the stacks: per client count a layer's
        height at its box's middle where the box is taller than FITS, and
        the stack's total above its highest box or interval; moved up so
        that two are GAP apart at least (they share a column). Returns
        [(x, y, text, is_total)]."""
        wanted = {}
        for r in self.rows():
            x, b, t = r[0], _awk_value(r[1]), _awk_value(r[2])
            slot = wanted.setdefault(x, {"top": 0.0, "items": []})
            slot["top"] = max(slot["top"], b, t)  # the intervals are right of the labels' column
            if abs(t - b) > fits:
                slot["items"].append(((b + t) / 2, "%.2f" % _awk_value(r[3]), False))
        out = []
        for x, slot in sorted(wanted.items(), key=lambda kv: int(kv[0])):
            items = slot["items"]
            if x in {str(k) for k in self.total}:
                items = items + [(slot["top"] + gap, "%.1f" % _awk_value(self.total[int(x)]), True)]
            out += [(x, y, text, is_total) for y, text, is_total in spread(items, gap)]
        return out

    def write(self):
        _write(self.prefix + ".list", "".join(f"{ly.id}\t{ly.name}\t{ly.label}\n" for ly in self.layers))
        for n, rows in self.dat.items():
            _write(f"{self.prefix}.{n}.dat", "".join(" ".join(r) + "\n" for r in rows))
        _write(self.prefix + ".total", "".join(f"{x} {top}\n" for x, top in sorted(self.total.items())))


def spread(items, gap):
    """ITEMS (y, ...) in order of y, each moved up as little as keeps it
    GAP above the one below: labels in one column that do not overlap."""
    out, floor = [], None
    for item in sorted(items, key=lambda it: it[0]):
        y = item[0] if floor is None else max(item[0], floor + gap)
        out.append((y,) + tuple(item[1:]))
        floor = y
    return out


# The colours of the trace's parts: user grey, the groups of system calls
# cool, softirq red, run-queue wait orange, blocked pale.
_COOL = ("1f77b4", "2ca02c", "17becf", "9467bd", "8c564b", "bcbd22")


def _part_colour(p, np):
    """The colour of part P (1-based) of NP."""
    if p == 1:
        return "8c8c8c"
    return {np: "d4d4d4", np - 1: "ff7f0e", np - 2: "d62728"}.get(p) or _COOL[(p - 2) % len(_COOL)]


class TraceBars:
    """The stacked bars of the trace chart at PREFIX from rows "backend
    dim... clients wall part..." (the dims of VARY, the parts of PARTS
    (column, label) in order); rows of runs without --trace left out. A
    slot per client count of XTICS, in it a bar per series (backend and
    dims): the stack's backends (STACK_BACKENDS) in its order, then the
    others as they first appear, a backend's series by their titles.
    Files: PREFIX.K.dat per part ("x bottom top value"), PREFIX.parts ("K
    label colour") of the parts not 0 everywhere, PREFIX.bars ('x top wall
    "series"'), PREFIX.width (a bar's)."""

    def __init__(self, prefix, rows, xtics, parts, vary, stack_backends):
        self.prefix = prefix
        nd, np = len(vary), len(parts)
        slot = {str(c): i for i, c in enumerate(xtics)}
        level = {b: i + 1 for i, b in enumerate(stack_backends)}
        series, rank, sid, cells, used = [], [], {}, {}, set()
        for row in rows:
            row = row + [""] * (nd + 3 + np - len(row))
            if row[nd + 3] == "" or row[nd + 1] not in slot:
                continue
            title = dims_title(row[0], vary, row[1:1 + nd])
            if title not in sid:
                sid[title] = len(series)
                rank.append(level.get(row[0], len(stack_backends) + 1 + len(series)))
                series.append(title)
            values = [_awk_value(v) for v in row[nd + 2 + 1:nd + 3 + np]]
            used |= {p for p, v in enumerate(values) if v > 0}
            cells[(slot[row[nd + 1]], sid[title])] = (row[nd + 2], values)
        ns = len(series)
        pos = [sum(1 for j in range(ns) if (rank[j], series[j]) < (rank[i], series[i])) for i in range(ns)]
        self.width = 0.84 / (ns or 1)
        self.parts = [(p, label, _part_colour(p + 1, np)) for p, (_, label) in enumerate(parts) if p in used]
        self.dat, self.bars = {p: [] for p, _, _ in self.parts}, []
        for (x_slot, s), (wall, values) in cells.items():
            x, bottom = x_slot - 0.42 + (pos[s] + 0.5) * self.width, 0
            for p, v in enumerate(values):
                if p in self.dat:
                    self.dat[p].append((x, bottom, bottom + v, v))
                bottom += v
            self.bars.append((x, bottom, wall, series[s]))

    def write(self):
        """The files; the parts numbered 1.. in their order."""
        _write(self.prefix + ".parts", "".join(f"{k}\t{label}\t{colour}\n"
                                               for k, (_, label, colour) in enumerate(self.parts, 1)))
        for k, (p, _, _) in enumerate(self.parts, 1):
            _write(f"{self.prefix}.{k}.dat", "".join(" ".join(awk_number(v) for v in r) + "\n" for r in self.dat[p]))
        # the series as one quoted column of gnuplot's: no quote inside
        _write(self.prefix + ".bars", "".join(f'{awk_number(x)}\t{awk_number(top)}\t{wall}\t"{title.replace(chr(34), chr(39))}"\n'
                                              for x, top, wall, title in self.bars))
        _write(self.prefix + ".width", awk_number(self.width) + "\n")

    def half_width(self):
        """Half a bar's width, as the chart's script writes it."""
        return "%.4f" % (float(awk_number(self.width)) * 0.42)

    def top(self):
        """The highest of the bars' tops and wall times."""
        return max(max(b[1], _awk_value(b[2])) for b in self.bars)


def _awk_value(text):
    """TEXT as awk's +0 reads a number: its leading number, else 0."""
    try:
        return float(text)
    except ValueError:
        return 0.0
