"""tbench-sweep's plan: which runs, in which order, their names and how
long they take. Errors in what the user asked for are UsageErrors."""

import random
import re
from collections import namedtuple

from .errors import UsageError

# What a run takes besides its warm-up and execute phase: starting tbench
# and its servers, setting offloads, writing the results; and per client,
# forking and connecting it and its server and the warm-up's wait for its
# first bytes (results/sweep-overhead.md measured both).
RUN_OVERHEAD_MS = 500
CLIENT_OVERHEAD_MS = 40
SEED_MAX = 2147483647

# label: the offload column ("on", "off:gro=on", "n/a"); tso, gso, gro:
# what to set ("" = left alone); net: whether its bytes cross a device;
# knobs: ((name, value), ...) of the other knobs varied.
Point = namedtuple("Point", "backend clients label tso gso gro net knobs")
Run = namedtuple("Run", "rep point")


def is_secs(text):
    return re.fullmatch(r"[0-9]{1,7}(\.[0-9]+)?", text) is not None


def secs_to_ms(text):
    """'5' or '2.5' seconds (checked with is_secs) in whole milliseconds."""
    whole, _, frac = text.partition(".")
    return int(whole) * 1000 + int((frac + "000")[:3])


def fmt_secs(s):
    """Whole seconds as 1h02m, 3m05s or 42s."""
    s = int(s)
    if s >= 3600:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    if s >= 60:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s}s"


def clients(text):
    """Client counts "1,2,4" or "A..B" doubling, mixable ("1..8,12")."""
    out = []
    for item in text.split(","):
        m = re.fullmatch(r"([0-9]{1,6})\.\.([0-9]{1,6})", item)
        if m:
            a, b = int(m.group(1)), int(m.group(2))
            if a < 1 or a > b:
                raise UsageError(f"--clients: bad range '{item}'")
            while a <= b:
                out.append(a)
                a *= 2
        elif re.fullmatch(r"[0-9]{1,6}", item) and int(item) >= 1:
            out.append(int(item))
        else:
            raise UsageError(f"--clients: '{item}' is not a client count or A..B")
    return out


def _onoff(option, values):
    for v in values:
        if v not in ("on", "off"):
            raise UsageError(f"{option}: '{v}' is neither on nor off")
    return values


def settings(vary):
    """Offload settings (label, tso, gso, gro) from --vary's offload, tso,
    gso, gro ("" = left alone): offload sets TSO and GSO together, the
    others each one; a cross product, the separate one winning. None
    given: on and off."""
    lists = {k: _onoff(f"--{k}", vary[k]) if k in vary else [""] for k in ("offload", "tso", "gso", "gro")}
    if not any(k in vary for k in lists):
        lists["offload"] = ["on", "off"]
    out = []
    for o in lists["offload"]:
        for a in lists["tso"]:
            for b in lists["gso"]:
                for c in lists["gro"]:
                    label = o
                    for name, v in (("tso", a), ("gso", b), ("gro", c)):
                        if v:
                            label = f"{label}:{name}={v}" if label else f"{name}={v}"
                    out.append((label, a or o, b or o, c))
    return out


def points(backends, client_counts, offload_settings, net, knobs):
    """Every point: a backend whose bytes cross a device (NET: the list,
    or "all") once per offload setting, the others once with offload n/a;
    each once per combination of the knobs that mean something to it."""
    out = []
    for b in backends:
        combos = knobs.combos(b)
        for c in client_counts:
            for k in combos:
                if net == "all" or b in net:
                    out += [Point(b, c, s[0], s[1], s[2], s[3], True, k) for s in offload_settings]
                else:
                    out.append(Point(b, c, "n/a", "", "", "", False, k))
    return out


def runs(pts, reps, seed, first_rep=1):
    """Rep 1 of every point, then rep 2, ...: drift of the machine spreads
    over all points instead of landing on some. Within a rep, the points of
    a client count run back to back in an order shuffled anew each time:
    two levels of a layer run close together, so the differences of a rep
    pair up (tbench-stats decompose), and no level is always first."""
    rng = random.Random(seed)
    counts = list(dict.fromkeys(p.clients for p in pts))
    out = []
    for rep in range(first_rep, first_rep + reps):
        for c in counts:
            group = [p for p in pts if p.clients == c]
            rng.shuffle(group)
            out += [Run(rep, p) for p in group]
    return out


def new_seed():
    return random.SystemRandom().randrange(SEED_MAX + 1)


def is_seed(text):
    return re.fullmatch(r"[0-9]{1,10}", str(text)) is not None and int(text) <= SEED_MAX


def point_key(point, knob_columns):
    """A point as runs.csv and summary.csv name it: backend, clients,
    offload and the value of each knob column."""
    knobs = dict(point.knobs)
    return (point.backend, str(point.clients), point.label) + tuple(knobs.get(k, "-") for k in knob_columns)


def todo(all_runs, done_rows, knob_columns):
    """The runs not done yet. DONE_ROWS: lists of backend, clients, offload,
    the knob columns and rep (tbench-stats select --tsv of runs.csv)."""
    done = {tuple(r) for r in done_rows}
    return [r for r in all_runs if point_key(r.point, knob_columns) + (str(r.rep),) not in done]


def _name_part(text, allowed):
    text = re.sub(f"[^{allowed}]", "_", text.replace("/", ""))
    return text.replace("=", "-")


def run_id(run):
    """A run's file name: pipe_c4_na_r1, tcp_c16_tso-off_r2, tcp_c1_on_mtu-1500_r1."""
    p = run.point
    label = _name_part(p.label, "A-Za-z0-9=_-") or "na"
    knobs = _name_part(knob_words(p.knobs), "A-Za-z0-9=_.-")
    return f"{p.backend}_c{p.clients}_{label}{'_' + knobs if knobs else ''}_r{run.rep}"


def knob_words(knobs):
    return " ".join(f"{k}={v}" for k, v in knobs)


def describe(point):
    """"tcp clients=4 offload=on mtu=1500"."""
    words = knob_words(point.knobs)
    return f"{point.backend} clients={point.clients} offload={point.label}{' ' + words if words else ''}"


def describe_run(run, reps):
    return f"{describe(run.point)} rep {run.rep}/{reps}"


def estimate_s(nruns, time, warmup, nclients):
    """Whole seconds NRUNS runs take; NCLIENTS: their client counts summed."""
    ms = nruns * (secs_to_ms(time) + secs_to_ms(warmup) + RUN_OVERHEAD_MS) + nclients * CLIENT_OVERHEAD_MS
    return ms // 1000
