"""tbench-ab's plan: the two sides (A and B) as the command line gives
them, each side's tbench command, and the order of the runs of a block
(ABBA or BAAB, chosen by the seed)."""

import random
import re
import shlex
from collections import namedtuple

from .errors import UsageError

# The common tbench arguments when none follow "--": 16 clients over TCP,
# the figure kernel developers quote, short enough for a block a minute.
DEFAULT_COMMON = ["-b", "tcp", "16", "-t", "5", "--warmup", "2"]
SIDES = ("a", "b")
SYSCTL_NAME = re.compile(r"net\.[A-Za-z0-9_.-]+")

# name: "a" or "b"; tbench, srv: paths or None (the defaults); args: extra
# tbench arguments; sysctls: "NAME=VALUE" set by tbench --netns --sysctl.
Side = namedtuple("Side", "name tbench srv args sysctls")


def parse_sysctl(flag, text):
    """A --a-sysctl / --b-sysctl value: NAME=VALUE with NAME under net."""
    name, eq, value = text.partition("=")
    if not eq or not SYSCTL_NAME.fullmatch(name) or not value or any(c.isspace() for c in value):
        raise UsageError(f"{flag}: '{text}' is not NAME=VALUE with a net.* NAME "
                         "(e.g. net.ipv4.tcp_autocorking=0)")
    return f"{name}={value}"


def split_args(flag, text):
    """--a-args / --b-args: the words of TEXT as a shell would split them."""
    if text is None:
        return []
    try:
        words = shlex.split(text)
    except ValueError as e:
        raise UsageError(f"{flag}: '{text}': {e} (quote as in a shell)") from None
    for w in words:
        if w == "--json" or w.startswith("--json="):
            raise UsageError(f"{flag}: --json is tbench-ab's own (each run's JSON goes to DIR/runs/)")
    return words


def side_of(opts, name):
    """Side NAME ("a" or "b") from the options --NAME-tbench, --NAME-srv,
    --NAME-args and --NAME-sysctl."""
    get = lambda what: getattr(opts, f"{name}_{what}")  # noqa: E731
    sysctls = [parse_sysctl(f"--{name}-sysctl", s) for s in get("sysctl") or []]
    if sysctls and get("srv"):
        raise UsageError(f"--{name}-sysctl and --{name}-srv: a sysctl is set in the run's own namespace, "
                         "where a server started outside it cannot be reached; give one of them")
    return Side(name, get("tbench"), get("srv"), split_args(f"--{name}-args", get("args")), sysctls)


def common_args(extra):
    """The tbench arguments after "--", else DEFAULT_COMMON."""
    words = list(extra)
    if words and words[0] == "--":
        words = words[1:]
    for w in words:
        if w == "--json" or w.startswith("--json="):
            raise UsageError("--json after '--': tbench-ab gives each run its own (DIR/runs/)")
    return words or list(DEFAULT_COMMON)


def command(side, tbench, common, json_path, server_port=None):
    """The tbench command of one run of SIDE: its sysctls in a namespace
    of its own, its server when it has one, its arguments, then COMMON."""
    cmd = [tbench, "--json", json_path, "-q"]
    if side.sysctls:
        cmd.append("--netns")
        for s in side.sysctls:
            cmd += ["--sysctl", s]
    if server_port is not None:
        cmd += ["--server", "127.0.0.1", "--port", str(server_port)]
    return cmd + side.args + common


def block_order(seed, block):
    """The sides of block BLOCK (1, 2, ...) in the order they run: "abba"
    or "baab". Without a seed (None) ABBA, BAAB, ABBA, ...; with one, each
    block drawn from it, the same for the same seed and block."""
    if seed is None:
        return "abba" if block % 2 == 1 else "baab"
    return random.Random(seed * 100003 + block).choice(("abba", "baab"))


def pair_reps(block, order):
    """Each run of a block with the rep tbench-stats pairs it by: the
    block's first A and first B share rep 2*block-1, its second ones rep
    2*block. [(side, rep), ...] in ORDER."""
    seen = {"a": 0, "b": 0}
    out = []
    for side in order:
        seen[side] += 1
        out.append((side, 2 * block - 2 + seen[side]))
    return out


def check_counts(opts):
    """--min-blocks, --max-blocks, --budget, --target, --seed as numbers."""
    def whole(flag, text, low):
        if not re.fullmatch(r"[0-9]{1,6}", text or "") or int(text) < low:
            raise UsageError(f"{flag}: '{text}' is not a whole number of at least {low}")
        return int(text)
    def pct(flag, text):
        if not re.fullmatch(r"[0-9]{1,3}(\.[0-9]+)?%?", text or "") or not 0 < float(text.rstrip("%")) <= 100:
            raise UsageError(f"{flag}: '{text}' is not a percentage above 0 and at most 100 (e.g. {flag} 1%)")
        return float(text.rstrip("%"))
    min_blocks = whole("--min-blocks", opts.min_blocks, 2)
    max_blocks = whole("--max-blocks", opts.max_blocks, min_blocks) if opts.max_blocks else None
    budget = None
    if opts.budget is not None:
        if not re.fullmatch(r"[0-9]{1,5}(\.[0-9]+)?", opts.budget) or float(opts.budget) <= 0:
            raise UsageError(f"--budget: '{opts.budget}' is not a positive number of minutes")
        budget = float(opts.budget) * 60
    target = pct("--target", opts.target)
    margin = pct("--equivalent", opts.equivalent) if opts.equivalent else max(target, 2.0)
    seed = whole("--seed", opts.seed, 0) if opts.seed is not None else None
    if max_blocks is None and budget is None:
        max_blocks = max(min_blocks, 20)
    return min_blocks, max_blocks, budget, target, margin, seed
