"""tbench-recipe: the seeds' experiments, each one command. A recipe
(experiments/NAME.json, recipe_file) names a sweep and the claims to judge
on it; this runs tbench-sweep into the results directory, splits the runs
into the two sides of each claim (tbench-stats select), compares them
(tbench-stats compare), and writes the verdicts (recipe_verdict) and a
reading."""

import argparse
import csv
import datetime
import os
import shlex
import socket
import subprocess
import sys
import time

from . import programs, recipe_chart, recipe_file, recipe_verdict, store
from .errors import Parser, RunError, UsageError

PROG = "tbench-recipe"

HELP = """Run one of the seeds' experiments and judge its claims: each recipe
(experiments/NAME.json: the claim, its source's numbers, the sweep, the
verdict rule) runs tbench-sweep into DIR/sweep, then, claim by claim, splits
the runs into the claim's two sides (tbench-stats select), compares them
(tbench-stats compare --paired, with --equivalent for a claim of no change)
and writes into DIR:
  verdict.csv   a row per claim and point: the claim, the source's numbers,
                what was measured with its 95% interval, the verdict
                (agrees, disagrees, cannot tell) and why
  verdict.md    the same as a table for a reader
  chart.png     each claim's two sides point by point, with their 95%
                intervals and the change (and chart.svg)
  README.md     the reading: what the recipe checks, its command, the
                machine, the table
  recipe.json   the recipe as run; sides/ and compare-CLAIM.csv: the
                data the verdicts come from; sweep/: the sweep's results
NAME: a recipe of 'tbench-recipe list' or a path to a recipe file; all:
every recipe in turn, each into DIR/NAME. Recipes are data: their
arguments go to tbench-sweep as an argument list, never through a shell.
A recipe that needs root (a veth pair) is skipped when not root, its
claims written as 'cannot tell' with the reason."""

USAGE_TAIL = """
Exit status: 0 judged (whatever the verdicts); 1 the work failed (a sweep
stopped, a write failed; with all: any recipe); 2 usage error or a bad
recipe (naming the file and field). man tbench-recipe says more."""


def parser():
    p = Parser(prog=PROG, usage=f"{PROG} [--quick] [--plan] [--out DIR] NAME|FILE.json|all\n"
                                f"       {PROG} list\n       {PROG} chart DIR",
               description=HELP, epilog=USAGE_TAIL)
    p.add_argument("name", nargs="?", metavar="NAME")
    p.add_argument("chart_dir", nargs="?", metavar="DIR", help=argparse.SUPPRESS)
    p.add_argument("--quick", action="store_true",
                   help="the recipe's quick variant: runs of seconds, for tests; its verdicts say little")
    p.add_argument("--plan", "-n", "--dry-run", dest="plan", action="store_true",
                   help="print each sweep's plan (tbench-sweep --plan: its runs and estimated time) and exit")
    p.add_argument("--out", metavar="DIR", help="results directory, new or empty (default "
                   "./tbench-results/recipe-NAME-<date>-<host>[-quick])")
    p.add_argument("--tbench-sweep", metavar="P", dest="sweep",
                   help="tbench-sweep program (default: $TBENCH_SWEEP, else the one beside this script, else PATH)")
    p.add_argument("--tbench-stats", metavar="P", dest="stats",
                   help="tbench-stats program (default: $TBENCH_STATS, else as tbench-sweep finds it); "
                        "tbench and tbench_srv: $TBENCH, $TBENCH_SRV, passed on to the sweep")
    p.add_argument("-h", "--help", action="help", help="this text")
    p.add_argument("--version", action="store_true",
                   help="the suite's version, as the tbench it would use says")
    return p


def find_sweep(explicit):
    """tbench-sweep: EXPLICIT, $TBENCH_SWEEP, beside the program, on PATH."""
    here = os.path.dirname(os.path.realpath(sys.argv[0]))
    for p in (explicit, os.environ.get("TBENCH_SWEEP"), os.path.join(here, "tbench-sweep"),
              programs.which("tbench-sweep")):
        if p and os.path.isfile(p) and os.access(p, os.X_OK):
            return os.path.abspath(p)
        if p and p == explicit:
            raise UsageError(f"--tbench-sweep {p}: not an executable file")
    raise RunError(f"no tbench-sweep beside {here} or on PATH: name it (--tbench-sweep PATH)")


def list_recipes():
    names = recipe_file.names()
    if not names:
        raise RunError(f"no recipes in {recipe_file.experiments_dir()}: reinstall the suite")
    for name in names:
        r = recipe_file.load(recipe_file.path_of(name))
        root = " (root)" if r.get("needs_root") else ""
        print(f"{name}\t{r['summary']}{root}")
    return 0


def default_out(name, quick):
    stamp = datetime.datetime.now().strftime("%Y-%m-%d-%H%M")
    return os.path.join("tbench-results", f"recipe-{name}-{stamp}-{socket.gethostname()}" + ("-quick" if quick else ""))


def fresh_dir(out):
    """OUT made, or refused when it holds something: a recipe never mixes
    its runs with another's."""
    if os.path.exists(out) and (not os.path.isdir(out) or os.listdir(out)):
        raise UsageError(f"--out {out}: exists and is not an empty directory: give a new one")
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as e:
        raise RunError(f"{out}: {e.strerror}") from None


def run_sweep(sweep, argv, out):
    """tbench-sweep ARGV --out OUT/sweep, its progress on our stderr; its
    status (0 all ok, 3 some runs failed)."""
    cmd = [sweep] + sweep_options(argv, "--out", os.path.join(out, "sweep"))
    print(f"{PROG}: {shlex.join(cmd)}", file=sys.stderr, flush=True)
    try:
        rc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=sys.stderr).returncode
    except OSError as e:
        raise RunError(f"{sweep}: {e.strerror}") from None
    if rc == 2:
        raise UsageError("tbench-sweep refused the recipe's arguments (said above): fix the recipe's field 'sweep'")
    if rc not in (0, 3):
        raise RunError(f"tbench-sweep stopped (exit {rc}): the runs made are in {out}/sweep")
    return rc


def sweep_options(argv, *more):
    """ARGV with the options MORE before its '--' (the tbench arguments)."""
    i = argv.index("--") if "--" in argv else len(argv)
    return argv[:i] + list(more) + argv[i:]


def variant_argv(recipe, variant):
    """tbench-sweep's arguments of a recipe's variant: the quick one's
    without the sitting's yardstick (runs of a second, for tests: the
    yardstick would take longer than the recipe), the full one's with it."""
    argv = recipe_file.sweep_argv(recipe, variant)
    return sweep_options(argv, "--no-yardstick") if variant == "quick" else argv


def judge_claim(stats, name, claim, out):
    """The verdict rows of CLAIM on the sweep in OUT/sweep."""
    runs = os.path.join(out, "sweep", "runs.csv")
    args = ["compare", "--csv", "--keys", ",".join(claim["keys"]), "--figure", claim["figure"]]
    if claim["test"] == "noise":
        a = b = runs   # the sweep against itself: its mde is the noise's
    else:
        args.append("--paired")
        if "margin_pct" in claim:
            args += ["--equivalent", f"{claim['margin_pct']:g}%"]
        a, b = (os.path.join(out, "sides", f"{claim['id']}-{s}.csv") for s in "ab")
        for s, path in (("a", a), ("b", b)):
            where = [w for k, v in claim[s].items() for w in ("--where", f"{k}={v}")]
            store.atomic_write(path, programs.run_stats(stats, ["select"] + where + [runs]))
    resolve = ["--resolve", f"{claim['resolve_pct']:g}%"] if claim["test"] == "noise" else []
    compared = programs.run_stats(stats, args + resolve + [a, b])
    store.atomic_write(os.path.join(out, f"compare-{claim['id']}.csv"), compared)
    return recipe_verdict.verdict_rows(name, claim, compared, seconds_per_run(out, runs))


def seconds_per_run(out, runs):
    """The sweep's pace: its wall time (meta.json's start and end) over
    the runs it made; None when it cannot be told."""
    meta = store.read_meta(os.path.join(out, "sweep", "meta.json"))
    try:
        took = (datetime.datetime.fromisoformat(meta["end"]) -
                datetime.datetime.fromisoformat(meta["start"])).total_seconds()
        with open(runs) as f:
            made = sum(1 for _ in f) - 1
    except (KeyError, TypeError, ValueError, OSError):
        return None
    return took / made if made > 0 and took > 0 else None


def show_plan(sweep, argv):
    """tbench-sweep --plan of ARGV, on our stdout; nothing is run or written."""
    sys.stdout.flush()
    rc = subprocess.run([sweep] + sweep_options(argv, "--plan"), stdin=subprocess.DEVNULL).returncode
    if rc != 0:
        raise (UsageError if rc == 2 else RunError)(f"tbench-sweep --plan exited {rc} (said above)")


def run_one(name, opts, out, sweep, stats):
    """One recipe into OUT: sweep, verdicts, reading. The verdict rows."""
    path = recipe_file.path_of(name)
    recipe = recipe_file.load(path)
    name = os.path.basename(path)[:-5] if path.endswith(".json") else name
    variant = "quick" if opts.quick else "full"
    argv = variant_argv(recipe, variant)
    if opts.plan:
        print(f"== {name} ({variant})", flush=True)
        show_plan(sweep, argv)
        return []
    fresh_dir(out)
    fresh_dir(os.path.join(out, "sides"))
    store.atomic_write(os.path.join(out, "recipe.json"), store.json_text(recipe))
    started = time.monotonic()
    if recipe.get("needs_root") and os.geteuid() != 0:
        why = "not run: needs root (a veth pair between two namespaces, tbench-sweep --veth)"
        print(f"{PROG}: {name}: skipped: {why}", file=sys.stderr)
        rows, sweep_rc = [recipe_verdict.not_run(name, c, why) for c in recipe["claims"]], None
    else:
        sweep_rc = run_sweep(sweep, argv, out)
        rows = [row for c in recipe["claims"] for row in judge_claim(stats, name, c, out)]
    table = recipe_verdict.md_table(rows)
    store.atomic_write(os.path.join(out, "verdict.csv"), recipe_verdict.csv_text(rows))
    store.atomic_write(os.path.join(out, "verdict.md"), f"# {recipe['title']}: verdicts\n\n" + table)
    recipe_chart.draw(out, recipe["title"] + (" (quick variant)" if opts.quick else ""))
    store.atomic_write(os.path.join(out, "README.md"),
                       reading(name, recipe, variant, [sweep] + argv, out, sweep_rc, table,
                               time.monotonic() - started))
    print(f"== {name} ({variant}): {out}\n{table}", flush=True)
    return rows


def machine(out):
    """The machine as the sweep's meta.json says, for the reading."""
    meta_path = os.path.join(out, "sweep", "meta.json")
    if not os.path.isfile(meta_path):
        return "(no sweep ran)"
    host = store.read_meta(meta_path).get("host")
    if not isinstance(host, dict):
        return "(meta.json names no host)"
    return recipe_verdict.md_cell(" ".join(str(host.get(k, "?")) for k in ("name", "kernel", "cpu_model"))
                          + f", {host.get('cores_online', '?')} CPUs online")


def loadfile_read(out):
    """The loadfile the sweep's runs read, as the first run's --json says
    (settings.loadfile: tbench's default is dbench's client.txt when
    installed, else its own); '?' when no run says."""
    sweep_dir = os.path.join(out, "sweep")
    try:
        with open(os.path.join(sweep_dir, "runs.csv"), newline="") as f:
            for row in csv.DictReader(f):
                rel = row.get("json") or ""
                if rel and ".." not in rel.split("/") and not rel.startswith("/"):
                    settings = store.read_json(os.path.join(sweep_dir, rel)).get("settings", {})
                    return recipe_verdict.md_cell(settings.get("loadfile", "?"))
    except (OSError, UsageError, AttributeError):
        pass
    return "?"


def reading(name, recipe, variant, cmd, out, sweep_rc, table, seconds):
    src = recipe["source"]
    quick = ("\n**Quick variant**: runs of a second, for tests. Its verdicts are mostly "
             "'cannot tell': the full recipe (without --quick) is the measurement.\n" if variant == "quick" else "")
    failed = {None: "not run", 0: "every run ok", 3: "some runs failed (sweep/runs.csv says why)"}[sweep_rc]
    return (f"# {recipe['title']}\n\n{recipe['reading']}\n\n"
            f"**Source**: {src['who']}, {src['where']}: {src['numbers']}\n{quick}\n"
            f"Recipe `{name}` ({variant}), {round(seconds)} s; sweep: {failed}; machine: {machine(out)}; "
            f"loadfile read: {loadfile_read(out)}.\n\n"
            f"Command (an argument list, shown quoted):\n\n    {shlex.join(cmd)}\n\n"
            "## The claims and their rules\n\n" + rules(recipe) + disturbed_note() +
            "\n## Verdicts\n\n" + table + chart_line(out) +
            "\nmeasured: mean ± half-width of its 95% interval (runs), the change of B against A in % "
            "with its 95% interval (paired by rep where the runs pair up); tbench-stats compare's "
            "figures, in compare-CLAIM.csv. A verdict with 'cannot tell' says what would tell.\n")


def chart_line(out):
    """The chart under the table, where one was drawn."""
    return "\n![each claim's two sides, with intervals](chart.png)\n" \
        if os.path.isfile(os.path.join(out, "chart.png")) else ""


def rules(recipe):
    """Each claim: its test on which figure, sides and margin, and why."""
    lines = []
    for c in recipe["claims"]:
        sides = "" if c["test"] == "noise" else \
            f", A {recipe_verdict.side(c['a'])} against B {recipe_verdict.side(c['b'])}"
        lines.append(f"- `{c['id']}`: {c['claim']}: test {c['test']} on {c['figure']}{sides}, "
                     f"per {', '.join(c['keys'])}; {c['why']}")
    return "".join(recipe_verdict.md_cell(line) + "\n" for line in lines)


def disturbed_note():
    if os.environ.get("TBENCH_KEEP_DISTURBED") == "1":
        return "\nDisturbed runs counted as ok (TBENCH_KEEP_DISTURBED=1): the verdicts are of a busy machine.\n"
    return ("\nRuns that tbench marked disturbed (other tasks took the CPU, man tbench NOISE) do not count; "
            "a side left with fewer than two runs cannot be judged.\n")


def run_all(opts, sweep, stats):
    """Every recipe in turn, each into OUT/NAME, and the verdicts of all in
    OUT; every recipe checked first (a bad one: exit 2, nothing run), and
    one that fails does not stop the others."""
    out = opts.out or default_out("all", opts.quick)
    for name in recipe_file.names():
        recipe_file.load(recipe_file.path_of(name))
    if opts.plan:
        for name in recipe_file.names():
            run_one(name, opts, None, sweep, stats)
        return 0
    fresh_dir(out)
    failed, rows = [], []
    for name in recipe_file.names():
        try:
            rows += run_one(name, opts, os.path.join(out, name), sweep, stats)
        except (RunError, UsageError) as e:
            print(f"{PROG}: {name}: {e}", file=sys.stderr)
            failed.append(name)
    store.atomic_write(os.path.join(out, "verdict.csv"), recipe_verdict.csv_text(rows))
    store.atomic_write(os.path.join(out, "verdict.md"), "# The seeds' experiments: verdicts\n\n" +
                       recipe_verdict.md_table(rows, with_recipe=True))
    if failed:
        raise RunError(f"recipes failed: {', '.join(failed)} (the others' verdicts are in {out})")
    return 0


def redraw(out):
    """chart.png of a recipe's results directory OUT, drawn again from its
    verdict.csv and recipe.json (after a change to the chart, or for a
    directory of an older version)."""
    if not out:
        raise UsageError("chart: name a recipe's results directory (one with verdict.csv)")
    if not os.path.isfile(os.path.join(out, "verdict.csv")):
        raise UsageError(f"{out}: no verdict.csv: not a recipe's results directory")
    recipe = store.read_json(os.path.join(out, "recipe.json"))
    title = recipe.get("title") if isinstance(recipe, dict) else None
    if not isinstance(title, str):
        raise UsageError(f"{out}/recipe.json: no field 'title' (a string)")
    if not recipe_chart.draw(out, title):
        raise RunError(f"{out}/verdict.csv: no claim with two measured sides: nothing to draw")
    return 0


def main(argv):
    opts = parser().parse_args(argv)
    if opts.version:
        print(programs.script_version(PROG, os.environ.get("TBENCH")))
        return 0
    if not opts.name:
        raise UsageError("name a recipe (tbench-recipe list), or all")
    if opts.name == "list":
        return list_recipes()
    if opts.name == "chart":
        return redraw(opts.chart_dir)
    if opts.chart_dir:
        raise UsageError(f"'{opts.chart_dir}': one recipe at a time (or all), as NAME")
    if opts.name != "all":
        recipe_file.load(recipe_file.path_of(opts.name))   # a bad recipe: exit 2 before any program is looked for
    sweep = find_sweep(opts.sweep)
    stats = programs.find_stats(PROG, opts.stats)
    if opts.name == "all":
        return run_all(opts, sweep, stats)
    label = os.path.basename(opts.name)[:-5] if opts.name.endswith(".json") else opts.name
    run_one(opts.name, opts, opts.out or default_out(label, opts.quick), sweep, stats)
    return 0
