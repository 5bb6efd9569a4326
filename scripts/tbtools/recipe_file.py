"""A recipe of tbench-recipe: one experiment of the seeds (experiments/
NAME.json), read as data and checked field by field. A recipe holds the
claim, its source's numbers, the sweep's arguments (argument lists, never
a command line) and the verdict rule; it never holds code."""

import os
import re

from . import store
from .errors import UsageError

# The tests a claim can set, and the verdict words they give.
TESTS = ("equivalent", "greater", "less", "noise")
VERDICTS = ("agrees", "disagrees", "cannot tell")
VARIANTS = ("full", "quick")

# Options of tbench-sweep that the recipe program sets itself, or that a
# recipe may not give: they would write elsewhere, continue another sweep,
# name a program or a command to run (--ssh), reach another host or change
# a real device.
RESERVED = ("--out", "--resume", "--retry-failed", "--label", "--plan", "-n", "--dry-run",
            "--tbench", "--tbench-srv", "--tbench-stats", "-h", "--help", "--version",
            "--ssh", "--server-host", "--server-dev", "--server-addr", "--client-hosts",
            "--push", "--dev", "--server")
# Options of tbench that name a file: the loadfile is the field 'loadfile',
# the --json the sweep's.
TBENCH_RESERVED = ("--loadfile", "--json", "--unix", "--directory")
TBENCH_RESERVED_SHORT = ("-c", "-D")

_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,62}")
_COLUMN = re.compile(r"[a-z][a-z0-9_.]{0,62}")
_VALUE = re.compile(r"[A-Za-z0-9_.:=+-]{1,64}")

# Where the suite's data lives, beside this package: the top of the source
# tree (scripts/tbtools -> .), or $(pkgdatadir) once installed
# (share/tbench/python/tbtools -> share/tbench).
DATA_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))


def experiments_dir():
    """The directory of the recipes: $TBENCH_EXPERIMENTS, else
    experiments/ of the tree or of the installed suite."""
    return os.environ.get("TBENCH_EXPERIMENTS") or os.path.join(DATA_DIR, "experiments")


def names():
    """The recipes there are, by name, sorted."""
    try:
        files = os.listdir(experiments_dir())
    except OSError:
        return []
    return sorted(f[:-5] for f in files if f.endswith(".json") and _NAME.fullmatch(f[:-5]))


def path_of(name):
    """The file of recipe NAME (a name of `names()` or a path to a .json)."""
    if name.endswith(".json") or "/" in name:
        return name
    if not _NAME.fullmatch(name):
        raise UsageError(f"'{name}' is not a recipe name (tbench-recipe list names them)")
    path = os.path.join(experiments_dir(), name + ".json")
    if not os.path.isfile(path):
        raise UsageError(f"no recipe '{name}' in {experiments_dir()} (tbench-recipe list names them)")
    return path


def loadfile_path(name):
    """The suite's loadfile NAME: loadfiles/NAME in the tree, NAME in
    $(pkgdatadir) installed. Never a path a recipe chose."""
    for p in (os.path.join(DATA_DIR, "loadfiles", name), os.path.join(DATA_DIR, name)):
        if os.path.isfile(p):
            return p
    raise UsageError(f"loadfile '{name}' is not beside the suite ({DATA_DIR}/loadfiles or {DATA_DIR}): reinstall")


class Checker:
    """Field checks that name the file and the field (a.b[2].c)."""

    def __init__(self, path):
        self.path = path

    def fail(self, field, what):
        raise UsageError(f"{self.path}: field '{field}' {what}")

    def get(self, doc, field, kind, where="", required=True):
        name = f"{where}.{field}" if where else field
        if not isinstance(doc, dict):
            self.fail(where or "(top)", "must be an object")
        if field not in doc:
            if required:
                self.fail(name, "is missing")
            return None
        return self.kind(doc[field], kind, name)

    def kind(self, value, kind, name):
        checks = {
            "text": (lambda v: isinstance(v, str) and v.strip() != "", "must be a non-empty string"),
            "args": (lambda v: isinstance(v, list) and all(isinstance(a, str) for a in v),
                     "must be an array of strings (the arguments, one an element)"),
            "object": (lambda v: isinstance(v, dict), "must be an object"),
            "number": (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool), "must be a number"),
            "bool": (lambda v: isinstance(v, bool), "must be true or false"),
            "list": (lambda v: isinstance(v, list) and v != [], "must be a non-empty array"),
        }
        ok, what = checks[kind]
        if not ok(value):
            self.fail(name, what)
        return value


def _check_args(c, args, name, reserved=RESERVED, short=()):
    for i, a in enumerate(args):
        if re.search(r"[\x00-\x1f]", a):
            c.fail(f"{name}[{i}]", "holds a control character")
        if a.split("=", 1)[0] in reserved or a == "--" or (a[:2] in short and not a.startswith("--")):
            c.fail(f"{name}[{i}]", f"is '{a[:40]}': not for a recipe (tbench-recipe sets the results "
                   "directory and programs; a loadfile goes in field 'loadfile', tbench's arguments "
                   "in 'tbench'; no hosts, commands or real devices)")


def _check_where(c, where, name):
    c.kind(where, "object", name)
    for col, value in where.items():
        if not _COLUMN.fullmatch(col):
            c.fail(f"{name}.{col}", "is not a column name of runs.csv")
        if not isinstance(value, str) or not _VALUE.fullmatch(value):
            c.fail(f"{name}.{col}", "must be a value as runs.csv writes it (letters, digits, _.:=+-)")


def _check_claim(c, claim, name):
    c.kind(claim, "object", name)
    cid = c.get(claim, "id", "text", name)
    if not _NAME.fullmatch(cid):
        c.fail(f"{name}.id", "must be a short name: lower-case letters, digits and '-'")
    for field in ("claim", "source_numbers", "why"):
        c.get(claim, field, "text", name)
    if not _COLUMN.fullmatch(c.get(claim, "figure", "text", name)):
        c.fail(f"{name}.figure", "is not a figure of runs.csv (tbench-stats row --figures)")
    test = c.get(claim, "test", "text", name)
    if test not in TESTS:
        c.fail(f"{name}.test", f"must be one of {', '.join(TESTS)}, not '{test}'")
    keys = c.get(claim, "keys", "list", name)
    for i, k in enumerate(keys):
        if not isinstance(k, str) or not _COLUMN.fullmatch(k):
            c.fail(f"{name}.keys[{i}]", "is not a column name of runs.csv")
    if test == "noise":
        pct = c.get(claim, "resolve_pct", "number", name)
    else:
        _check_where(c, c.get(claim, "a", "object", name), f"{name}.a")
        _check_where(c, c.get(claim, "b", "object", name), f"{name}.b")
        pct = c.get(claim, "margin_pct", "number", name, required=(test == "equivalent"))
        expected = c.get(claim, "expected_pct", "list", name, required=False)
        if expected is not None:
            if len(expected) != 2 or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in expected):
                c.fail(f"{name}.expected_pct", "must be [low, high]: the source's change in %")
    if pct is not None and not 0 < pct <= 100:
        c.fail(f"{name}.{'resolve_pct' if test == 'noise' else 'margin_pct'}", "must be above 0 and at most 100")


def load(path):
    """The recipe in PATH, checked; UsageError naming file and field."""
    doc = store.read_json(path)
    c = Checker(path)
    c.kind(doc, "object", "(top)")
    for field in ("title", "summary", "reading"):
        c.get(doc, field, "text")
    source = c.get(doc, "source", "object")
    for field in ("who", "where", "numbers"):
        c.get(source, field, "text", "source")
    c.get(doc, "needs_root", "bool", required=False)
    loadfile = c.get(doc, "loadfile", "text", required=False)
    if loadfile is not None and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*\.txt", loadfile):
        c.fail("loadfile", "must name one of the suite's loadfiles (e.g. bulk-write.txt), not a path")
    sweep = c.get(doc, "sweep", "object")
    for v in VARIANTS:
        _check_args(c, c.get(sweep, v, "args", "sweep"), f"sweep.{v}")
    tbench = c.get(doc, "tbench", "args", required=False) or []
    _check_args(c, tbench, "tbench", TBENCH_RESERVED, TBENCH_RESERVED_SHORT)
    claims = c.get(doc, "claims", "list")
    seen = set()
    for i, claim in enumerate(claims):
        _check_claim(c, claim, f"claims[{i}]")
        if claim["id"] in seen:
            c.fail(f"claims[{i}].id", f"'{claim['id']}' names two claims")
        seen.add(claim["id"])
    return doc


def sweep_argv(recipe, variant):
    """tbench-sweep's arguments for VARIANT, the loadfile resolved, the
    tbench arguments after '--'; the results directory is the caller's."""
    tail = list(recipe.get("tbench", []))
    if recipe.get("loadfile"):
        tail = ["-c", loadfile_path(recipe["loadfile"])] + tail
    return list(recipe["sweep"][variant]) + (["--"] + tail if tail else [])
