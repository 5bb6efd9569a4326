"""Which of the suite's programs to use (tbench, tbench_srv, tbench-stats),
what version they say, and the backends tbench lists."""

import os
import shutil
import subprocess
import sys

from .errors import RunError, UsageError

SCRIPT_DIR = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))


def version_of(program):
    """(first line of PROGRAM --version, True when it is of this suite).
    dbench's tbench says "dbench version 4.00"."""
    try:
        out = subprocess.run([program, "--version"], stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             timeout=30).stdout.decode(errors="replace")
    except (OSError, subprocess.TimeoutExpired) as e:
        return (str(e), False)
    return (out.split("\n", 1)[0], "tbench suite" in out)


def _candidates(name, script_dir):
    """Where to look for NAME, best first: beside the script (an install),
    the top of its tree, its build/ (where scripts/quickstart builds), the
    current directory, then PATH."""
    for d in (script_dir, os.path.join(script_dir, ".."),
              os.path.join(script_dir, "..", "build"), os.getcwd()):
        p = os.path.join(d, name)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            yield os.path.realpath(d) + "/" + name
    for d in os.environ.get("PATH", "").split(os.pathsep):
        p = os.path.join(d or ".", name)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            yield p


def find(prog, name, how, explicit=None, prefer_dir=None, script_dir=SCRIPT_DIR):
    """The path of the program NAME of this suite: EXPLICIT (an option or
    an environment variable) if given, else the first candidate (PREFER_DIR's
    first, e.g. the directory of the tbench in use) whose --version says
    "tbench suite". Says on stderr which one. HOW tells the user how to name
    one ("--tbench PATH or TBENCH=PATH")."""
    if explicit:
        if not (os.path.isfile(explicit) and os.access(explicit, os.X_OK)):
            raise UsageError(f"{explicit}: not an executable file (the {name} to use, from {how})")
        path = os.path.abspath(explicit)
        version, ours = version_of(path)
        if not ours:
            raise UsageError(f"{explicit} is not the {name} of this suite: its --version says '{version}'")
        print(f"{prog}: using {path} ({version})", file=sys.stderr)
        return path
    seen = set()
    first = [os.path.join(prefer_dir, name)] if prefer_dir and os.access(os.path.join(prefer_dir, name), os.X_OK) else []
    for c in first + list(_candidates(name, script_dir)):
        real = os.path.realpath(c)
        if real in seen:
            continue
        seen.add(real)
        version, ours = version_of(c)
        if ours:
            print(f"{prog}: using {c} ({version})", file=sys.stderr)
            return c
        print(f"{prog}: not using {c}: its --version says '{version}', not 'tbench suite'", file=sys.stderr)
    raise RunError(f"no {name} of this suite beside {script_dir}, in build/, here or in PATH: "
                   f"build it (scripts/quickstart builds in build/) or name it ({how})")


def script_version(prog, explicit_tbench=None):
    """--version of a script: the suite's version as the tbench it would use says."""
    try:
        import contextlib
        import io
        with contextlib.redirect_stderr(io.StringIO()):
            tb = find(prog, "tbench", "", explicit_tbench)
        version, ours = version_of(tb)
    except (UsageError, RunError):
        ours = False
    if ours:
        return f"{prog} (tbench suite) {version.split('tbench suite) ', 1)[-1]} (as {tb} says)"
    return f"{prog} (tbench suite): no tbench of this suite found to say the version (build it: scripts/quickstart)"


class Backends:
    """The backends as `tbench -b list` says: the one place the scripts learn
    which there are and what each can do (its capabilities)."""

    def __init__(self, tbench):
        try:
            out = subprocess.run([tbench, "-b", "list"], stdin=subprocess.DEVNULL,
                                 capture_output=True, text=True, timeout=30).stdout
        except (OSError, subprocess.TimeoutExpired):
            out = ""
        self.caps = {}
        for line in out.splitlines():
            words = line.split()
            if words:
                self.caps[words[0]] = set() if len(words) < 2 or words[1] == "-" else set(words[1].split(","))
        if not self.caps:
            raise RunError(f"'{tbench} -b list' lists no backends: use a tbench of this suite")

    def names(self):
        return list(self.caps)

    def with_caps(self, *caps):
        """The backends that have every one of CAPS, in tbench's order."""
        return [b for b, have in self.caps.items() if set(caps) <= have]

    def has(self, backend, cap):
        return cap in self.caps.get(backend, ())


def stats_number(cell):
    """A cell of tbench-stats's CSV as a float; None when empty or not a number."""
    try:
        return float(cell)
    except (TypeError, ValueError):
        return None


def run_stats(stats, args, input_text=None):
    """tbench-stats ARGS: its stdout; RunError with its stderr if it failed.
    (returncode 2, bad input, is raised as UsageError.)"""
    try:
        p = subprocess.run([stats] + list(args), input=input_text, capture_output=True, text=True)
    except OSError as e:
        raise RunError(f"{stats}: {e.strerror}") from None
    if p.returncode != 0:
        msg = p.stderr.strip() or f"tbench-stats {args[0]} exited {p.returncode}"
        raise (UsageError if p.returncode == 2 else RunError)(msg)
    return p.stdout


def which(cmd):
    return shutil.which(cmd)


def find_stats(prog, explicit=None):
    """The tbench-stats to use: EXPLICIT (--tbench-stats), else
    $TBENCH_STATS, else the first of this suite beside $TBENCH, then as
    find() looks."""
    tbench = os.environ.get("TBENCH") or "/nonexistent/tbench"
    return find(prog, "tbench-stats", "--tbench-stats PATH or TBENCH_STATS=PATH",
                explicit or os.environ.get("TBENCH_STATS"), os.path.dirname(tbench))
