"""tbench-compare: sweep B (and C, ...) against a first one, point by
point. The statistics are tbench-stats compare's; this finds it, passes
the options on and, with several Bs, runs it once for each."""

import csv
import io
import os
import subprocess
import sys

from . import fingerprint, programs, store, yardstick
from .errors import Parser, RunError, UsageError

PROG = "tbench-compare"

USAGE_TAIL = """
Exit status: 0 compared, 1 error, 2 usage error or no point in common
(with several Bs, the first that was not 0); with --verdict (one B) 0 good,
1 bad, 125 cannot tell, 2 usage error. man tbench-compare says what each
column means."""


def parser():
    p = Parser(
        prog=PROG, usage=f"{PROG} [OPTIONS] A B [C ...]",
        description=HELP, epilog=USAGE_TAIL)
    p.add_argument("files", nargs="*", metavar="A B [C ...]")
    p.add_argument("--figure", "--metric", dest="figure", metavar="F",
                   help="what to compare (default mb_per_sec): a column of runs.csv "
                        "(tbench-stats row --figures) or the --json path it comes from")
    p.add_argument("--keys", metavar="K,..", help="columns that name a point (default: "
                   "backend, clients, model and the knob columns)")
    p.add_argument("--alpha", metavar="A", help="significance level (default 0.05)")
    p.add_argument("--paired", action="store_true",
                   help="A and B ran interleaved: runs of the same rep pair up")
    p.add_argument("--csv", action="store_true", help="machine-readable CSV instead of the table")
    p.add_argument("--relative-to-yardstick", dest="relative", action="store_true",
                   help="each sweep's figures over its own sitting's yardstick figure (the reference "
                        "point, pipe at 2 clients): compares (B/A) / (yB/yA); assumes the sittings' "
                        "difference scales the whole figure (man tbench-compare)")
    p.add_argument("--equivalent", metavar="MARGIN[%]",
                   help="also test each point for equivalence within +-MARGIN (two one-sided "
                        "tests at the 95%% level): 'equivalent', 'different' or 'cannot tell', "
                        "with the least margin this noise could have shown; with %% in percent "
                        "of A's mean")
    p.add_argument("--verdict", metavar="'FIGURE<T%'",
                   help="for git bisect run: 'mb_per_sec<-3%%' exits 1 (bad) when the 95%% "
                        "interval of the change lies wholly below -3%%, 0 (good) when wholly "
                        "above, else 125 (cannot tell); '>' for a rise")
    p.add_argument("--tbench-stats", metavar="P", dest="stats",
                   help="tbench-stats program (default: $TBENCH_STATS, else the first of this "
                        "suite beside $TBENCH, beside this script, in build/, here, then PATH)")
    p.add_argument("-h", "--help", action="help", help="this text")
    p.add_argument("--version", action="store_true",
                   help="the suite's version, as the tbench it would use says")
    return p


HELP = """Compare sweep B against sweep A (e.g. A = before a patch, B = after). A and B
are tbench-sweep results directories (their runs.csv is used, else their
summary.csv), or runs.csv / summary.csv files. With more than one B (C, ...),
each is compared against A in turn: a block each, headed "== B against A",
or with --csv one table whose first column, sweep, names the B of the row.

A point is named by backend, clients, model and every knob column
(tbench-stats row --knobs); a knob one side lacks is "-" there. For every
point: the mean of A and of B with their 95% intervals and runs, the change
in percent, Welch's p-value, whether it is significant, the 95% interval of
the change and the minimum detectable effect (mde). Then the geometric mean
of B/A. When no point is in both, it names the dimensions whose values
differ and exits 2: give --keys without them to compare across them."""


def stats_args(opts):
    args = []
    for flag, value in (("--figure", opts.figure), ("--keys", opts.keys),
                        ("--alpha", opts.alpha), ("--verdict", opts.verdict),
                        ("--equivalent", opts.equivalent)):
        if value is not None:
            args += [flag, value]
    if opts.paired:
        args.append("--paired")
    if opts.csv:
        args.append("--csv")
    return args


def sitting_of(path):
    """The fingerprint in a results directory's meta.json, None where there
    is none (a CSV given, an older sweep, a meta.json not readable)."""
    meta_path = os.path.join(path, "meta.json")
    if not os.path.isfile(meta_path):
        return None
    try:
        sitting = store.read_meta(meta_path).get("sitting")
    except UsageError:
        return None
    return sitting if isinstance(sitting, dict) else None


def say_sittings(a, b, out):
    """Which fields of the sitting (fingerprint.FIELDS) differ between the
    sweeps A and B: a change between them may be theirs, not the patch's."""
    sa, sb = sitting_of(a), sitting_of(b)
    if sa is None or sb is None:
        return
    diff = fingerprint.differences(sa, sb)
    if not diff:
        print(f"sittings: {a} and {b} share every field of their fingerprint", file=out)
        return
    print(f"sittings: {a} and {b} differ in {len(diff)} field(s) of their fingerprint "
          "(a change below may be theirs):", file=out)
    for _, what, va, vb in diff:
        print(f"  {what}: {va} -> {vb}", file=out)


def yardstick_of(path, side):
    """(the yardstick in a results directory's meta.json, None; or None and
    why there is none: "no yardstick in A (...)"). A CSV file given: (None, None)."""
    meta_path = os.path.join(path, "meta.json")
    if not os.path.isdir(path):
        return None, None
    if not os.path.isfile(meta_path):
        return None, f"no yardstick in {side} (no meta.json)"
    meta = store.read_meta(meta_path)
    y = yardstick.read(meta, meta_path)
    if y is None:
        return None, f"no yardstick in {side} ({yardstick.why_none(meta)})"
    return y, None


def yardstick_rows(stats, a, ya, b, yb, figure):
    """tbench-stats compare --csv of the two yardsticks' runs, point by
    point (backend, clients): its rows as dicts."""
    runs = [os.path.join(d, y["dir"], "runs.csv") for d, y in ((a, ya), (b, yb))]
    text = programs.run_stats(stats, ["compare", "--csv", "--keys", "backend,clients",
                                      "--figure", figure or "mb_per_sec"] + runs)
    return [r for r in csv.DictReader(io.StringIO(text)) if r.get("backend") != "geomean"]


def say_yardsticks(stats, a, b, figure, out, relative=False):
    """How much the sittings of A and B differ by their yardsticks (B
    against A, per point, with the 95% interval of the change), and
    tbench-stats compare's options for the comparison: --sittings-pct with
    the change of the reference point (yardstick.reference) when it is
    significant; with RELATIVE, --relative-to-sittings with it and its
    interval (UsageError when a side has no yardstick)."""
    (ya, why_a), (yb, why_b) = yardstick_of(a, "A"), yardstick_of(b, "B")
    if ya is None or yb is None:
        if relative:
            raise UsageError(f"--relative-to-yardstick: {why_a or why_b or 'a CSV file has no yardstick'}: "
                             "give two results directories of sweeps with their yardsticks")
        for why in (why_a, why_b):
            if why:
                print(f"yardstick: {why}", file=out)
        return []
    try:
        rows = yardstick_rows(stats, a, ya, b, yb, figure)
    except (RunError, UsageError) as e:
        if relative:
            raise UsageError(f"--relative-to-yardstick: the yardsticks could not be compared: {e}") from None
        print(f"yardstick: not compared: {e}", file=out)
        return []
    print(f"yardstick: {b} against {a}, the change of {figure or 'mb_per_sec'} with its 95% interval "
          f"({ya['dir']}/runs.csv of each):", file=out)
    for r in rows:
        print(f"  {r['backend']} {r['clients']}: {_pct(r['change_pct'])} "
              f"[{_pct(r['change_lo_pct'])}, {_pct(r['change_hi_pct'])}], significant: {r['significant']}",
              file=out)
    ref = ya.get("reference") if isinstance(ya.get("reference"), dict) else {}
    name = f"{ref.get('backend')} {ref.get('clients')}"
    row = next((r for r in rows if f"{r['backend']} {r['clients']}" == name), None)
    if relative:
        if row is None or not row.get("change_lo_pct"):
            raise UsageError(f"--relative-to-yardstick: the yardsticks have no interval at {name} clients")
        print(f"yardstick: each sweep's figures over its own yardstick's at {name} clients", file=out)
        return ["--relative-to-sittings", f"{row['change_pct']},{row['change_lo_pct']},{row['change_hi_pct']}"]
    if row is None or row.get("significant") != "yes":
        print(f"yardstick: the sittings do not differ significantly at {name} clients: "
              "no change is set against them", file=out)
        return []
    print(f"yardstick: the sittings differ by {_pct(row['change_pct'])} at {name} clients: a change "
          "whose 95% interval lies within that is 'sittings', within the sittings' difference "
          "(yardstick), not significant", file=out)
    return ["--sittings-pct", row["change_pct"]]


def _pct(cell):
    try:
        return f"{float(cell):+.2f}%"
    except ValueError:
        return "-"


def compare_each(stats, args_of, a, bs, csv_out):
    """Every B against A, a block each; with --csv one table whose first
    column names the B. ARGS_OF(B): tbench-stats compare's options for
    it. The first status that was not 0."""
    rc, header_done = 0, False
    out = sys.stdout
    for b in bs:
        args = args_of(b)
        if not csv_out:
            print(f"== {b} against {a}", flush=True)
            one = subprocess.run([stats, "compare"] + args + [a, b]).returncode
            print(flush=True)
        else:
            p = subprocess.run([stats, "compare"] + args + [a, b], stdout=subprocess.PIPE, text=True)
            one = p.returncode
            rows = list(csv.reader(io.StringIO(p.stdout)))
            w = csv.writer(out, lineterminator="\n")
            for i, row in enumerate(rows):
                if i == 0:
                    if not header_done:
                        w.writerow(["sweep"] + row)
                    continue
                w.writerow([b] + row)
            if one == 0:
                header_done = True
            out.flush()
        if rc == 0:
            rc = one
    return rc


def main(argv):
    opts = parser().parse_args(argv)
    if opts.version:
        print(programs.script_version(PROG, os.environ.get("TBENCH")))
        return 0
    if len(opts.files) < 2:
        raise UsageError("need two results or more: A B [C ...]")
    if opts.relative and (opts.verdict is not None or opts.equivalent is not None):
        raise UsageError("--relative-to-yardstick goes without --verdict and --equivalent")
    if len(opts.files) > 2 and opts.verdict is not None:
        raise UsageError("--verdict judges one candidate: give A and one B")
    for f in opts.files:
        if not os.path.exists(f):
            raise UsageError(f"{f}: no such file or directory")
    stats = programs.find_stats(PROG, opts.stats)
    args = stats_args(opts)
    a, bs = opts.files[0], opts.files[1:]
    by_yardstick = {}
    for b in bs:   # on stderr with --csv, so that the CSV stays one table
        said = sys.stderr if opts.csv else sys.stdout
        say_sittings(a, b, said)
        if opts.verdict is None:
            by_yardstick[b] = say_yardsticks(stats, a, b, opts.figure, said, opts.relative)
        said.flush()

    def args_of(b):
        return args + by_yardstick.get(b, [])
    sys.stdout.flush()
    if len(bs) == 1:
        return subprocess.run([stats, "compare"] + args_of(bs[0]) + [a, bs[0]]).returncode
    return compare_each(stats, args_of, a, bs, opts.csv)
