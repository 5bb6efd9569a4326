"""tbench-ab: is B faster or slower than A, by how much, or can this
noise not tell? Runs A and B interleaved in ABBA blocks until the 95%
interval of the change is narrow enough or the budget is spent, then says
the verdict. The statistics are tbench-stats compare's."""

import os
import sys
import tempfile
import time

from . import ab_baseline, ab_plan, ab_runs, ab_verdict, fingerprint, programs, results, store
from .errors import Parser, RunError, UsageError

PROG = "tbench-ab"
# Where the programs are looked for first: beside the script that was run
# (bin/ of an install), not beside this package (share/tbench/python).
SCRIPT_DIR = os.path.dirname(os.path.realpath(sys.argv[0]))
# A failed run or a usage error under --bisect: git bisect run stops on
# 128 and above, where 1 or 2 would call the commit bad.
BISECT_STOP = 128

HELP = """Run configuration A and configuration B of tbench interleaved, in blocks of
four runs (ABBA or BAAB), and say whether B is faster or slower than A and by
how much with a 95% interval, equivalent within a margin, or that this noise
cannot tell; always with the least effect it could have seen (mde). A side is
a tbench (--a-tbench), a tbench_srv it talks to (--a-srv), more tbench
arguments (--a-args) and net.* sysctls set in the run's own network namespace
(--a-sysctl); the host's settings are never changed. The tbench arguments
both sides share follow '--' (default: -b tcp 16 -t 5 --warmup 2).

With --baseline DIR (an earlier tbench-ab directory, another boot) only one
side runs now (--now, default b) and the sides are compared across sittings,
unpaired: one sitting a side cannot tell the patch from the boot (man
tbench-ab, docs/method.md "A/B across boots")."""

EPILOG = """
Exit status: 0 a verdict (faster, slower or equivalent), 3 cannot tell,
1 a run failed (no verdict), 2 usage error, 130 interrupted (a partial
verdict written). With --bisect, git bisect run's: 0 good (B faster,
equivalent, or slower by no more than the margin), 1 bad (B slower by more
than the margin), 125 cannot tell, and 128 for a failed run or a usage
error, so that git bisect stops instead of calling the commit bad."""


def parser():
    p = Parser(prog=PROG, usage=f"{PROG} [OPTIONS] [-- TBENCH-ARGS]", description=HELP, epilog=EPILOG)
    for s in ab_plan.SIDES:
        S = s.upper()
        p.add_argument(f"--{s}-tbench", metavar="PATH", help=f"the tbench of side {S} (default: this suite's)")
        p.add_argument(f"--{s}-srv", metavar="PATH", help=f"a tbench_srv side {S} starts and talks to over "
                       "loopback TCP (default: tbench's own server)")
        p.add_argument(f"--{s}-args", metavar="'ARGS'", help=f"more tbench arguments of side {S}, split as a shell would "
                       f"(one word that starts with -: --{s}-args=--threads)")
        p.add_argument(f"--{s}-sysctl", metavar="NAME=V", action="append",
                       help=f"a net.* sysctl of side {S}, set by tbench --netns --sysctl in the run's own "
                            "namespace (repeatable)")
    p.add_argument("--figure", default="mb_per_sec", metavar="F",
                   help="what to compare (default mb_per_sec): a column of tbench-stats row --figures")
    p.add_argument("--target", default="1%", metavar="PCT",
                   help="stop when the 95%% interval's half-width is within PCT of A (default 1%%)")
    p.add_argument("--equivalent", metavar="PCT",
                   help="the margin of equivalence, two one-sided tests (default: the target, at least 2%%)")
    p.add_argument("--min-blocks", default="3", metavar="N", help="at least N blocks (default 3)")
    p.add_argument("--max-blocks", metavar="N", help="at most N blocks (default 20 without --budget)")
    p.add_argument("--budget", metavar="MIN", help="start no block that would end after MIN minutes")
    p.add_argument("--seed", metavar="N", help="draw ABBA or BAAB per block from N (default: alternate)")
    p.add_argument("--out", metavar="DIR", help="results directory (default tbench-results/ab-DATE-TIME)")
    p.add_argument("--baseline", metavar="DIR", help="an earlier tbench-ab directory (another boot): "
                   "its runs are kept, only side --now runs in this sitting")
    p.add_argument("--now", choices=ab_plan.SIDES, help="run only this side in this sitting: with --baseline "
                   "(default b) to compare with it, without to start one (no verdict)")
    p.add_argument("--bisect", action="store_true", help="exit as git bisect run wants: 0 good, 1 bad, 125 skip")
    p.add_argument("--tbench-stats", dest="stats", metavar="PATH", help="the tbench-stats to use")
    p.add_argument("-h", "--help", action="help", help="this text")
    p.add_argument("--version", action="store_true", help="the suite's version")
    p.add_argument("common", nargs="*", metavar="-- TBENCH-ARGS")
    return p


class Session:
    """One tbench-ab: its options checked, the programs found, the blocks
    run, the verdict said and written."""

    def __init__(self, opts, argv):
        self.o, self.argv = opts, argv
        (self.min_blocks, self.max_blocks, self.budget, self.target, self.margin,
         self.seed) = ab_plan.check_counts(opts)
        self.sides = {s: ab_plan.side_of(opts, s) for s in ab_plan.SIDES}
        self.common = ab_plan.common_args(opts.common)
        self.now = opts.now or ("b" if opts.baseline else None)
        if opts.bisect and self.now and not opts.baseline:
            raise UsageError("--bisect with --now and no --baseline: one side alone gives no verdict to bisect by")
        self.blocks = self.runs = 0
        self.t0 = time.monotonic()
        self.servers = {}
        self.verdict = self.status = self.runner = None
        # Paired, the ratio B/A (noise on a loaded machine is a factor); the
        # difference B - A once a run of the figure is not above 0.
        self.ratio, self.ratio_note = True, None

    def find_programs(self):
        o = self.o
        default = programs.find(PROG, "tbench", "--a-tbench PATH or TBENCH=PATH", os.environ.get("TBENCH"),
                                script_dir=SCRIPT_DIR)
        self.tbench = {s: (programs.find(PROG, "tbench", f"--{s}-tbench", getattr(o, f"{s}_tbench"))
                           if getattr(o, f"{s}_tbench") else default) for s in ab_plan.SIDES}
        self.versions = {s: programs.version_of(p)[0] for s, p in self.tbench.items()}
        self.stats = programs.find(PROG, "tbench-stats", "--tbench-stats PATH or TBENCH_STATS=PATH",
                                   o.stats or os.environ.get("TBENCH_STATS"), os.path.dirname(default), SCRIPT_DIR)
        figures = programs.run_stats(self.stats, ["row", "--figures"]).split()
        if o.figure not in figures:
            raise UsageError(f"--figure: '{o.figure}' is not a figure of tbench-stats row --figures "
                             f"(e.g. mb_per_sec, cost_cpu_us, wall_us_per_op)")
        self.header = ab_runs.header(self.stats)

    def make_out(self):
        self.out = os.path.abspath(self.o.out or f"tbench-results/ab-{time.strftime('%Y-%m-%d-%H%M%S')}")
        if os.path.exists(os.path.join(self.out, "runs.csv")):
            raise UsageError(f"--out {self.out}: already holds an A/B (runs.csv): give another directory")
        try:
            os.makedirs(os.path.join(self.out, "runs"), exist_ok=True)
        except OSError as e:
            raise UsageError(f"--out {self.out}: {e.strerror} (give a directory you can write)") from None
        self.results = results.Results(self.out, self.stats)
        self.start_iso = results.now_iso()
        self.sitting = f"{(fingerprint.sitting()['boot_id'] or 'boot')[:8]}@{self.start_iso}"

    def load_baseline(self):
        self.baseline = None
        if self.o.baseline:
            self.baseline = ab_baseline.load(self.o.baseline, self.stats, self.header)
            ab_baseline.check_side(self.baseline, self.now)
        carried = self.baseline.rows if self.baseline else ""
        store.atomic_write(self.results.runs_csv, self.header + "\n" + carried)

    def start_servers(self):
        for s, side in self.sides.items():
            if side.srv and self.now in (None, s):
                server = ab_runs.Server(programs.find(PROG, "tbench_srv", f"--{s}-srv", side.srv),
                                        os.path.join(self.out, "runs", f"tbench_srv-{s}.log"))
                self.servers[s] = server
                server.start()

    # ---- the blocks

    def block(self, n, runner):
        """Block N: ABBA or BAAB, or with --now four runs of that side."""
        if self.now:
            order = [(self.now, self.first_rep + 4 * (n - 1) + k) for k in range(4)]
        else:
            order = ab_plan.pair_reps(n, ab_plan.block_order(self.seed, n))
        print(f"{PROG}: block {n}: {''.join(s.upper() for s, _ in order)}", flush=True)
        for k, (side, rep) in enumerate(order, 1):
            runner.run(self.sides[side], n, rep, k)
            self.runs += 1
        self.blocks = n

    def judge(self):
        """tbench-stats compare of A's runs against B's: the Verdict, or
        None while a side has fewer than 2 runs."""
        with tempfile.TemporaryDirectory(prefix="tbench-ab.") as tmp:
            files = []
            for s in ab_plan.SIDES:
                path = os.path.join(tmp, f"{s}.csv")
                text = programs.run_stats(self.stats, ["select", "--where", f"variant={s}", self.results.runs_csv])
                if text.count("\n") < 3:
                    return None
                store.atomic_write(path, text)
                files.append(path)
            args = ["compare", "--csv", "--keys", "status", "--metric", self.o.figure,
                    "--equivalent", f"{self.margin:g}%"]
            args += [] if self.now else ["--paired", "--block-reps", "2"]
            return ab_verdict.parse_compare(self.compare(args, files), self.o.figure)

    def compare(self, args, files):
        """tbench-stats compare's CSV: paired, of the ratio while it can be."""
        if "--paired" in args and self.ratio:
            try:
                return programs.run_stats(self.stats, args + ["--ratio"] + files)
            except UsageError as e:
                self.ratio = False
                self.ratio_note = (f"--figure {self.o.figure}: B/A has no ratio ({e}); "
                                   "the interval is of the paired difference B - A")
        return programs.run_stats(self.stats, args + files)

    def why_stop(self):
        """Why no more block starts, "" while one may."""
        if self.blocks < self.min_blocks:
            return ""
        if self.now and not self.baseline:
            return f"--min-blocks {self.min_blocks}"
        v = self.verdict
        half = ab_verdict.half_width(v) if v else None
        if half is not None and half <= self.target and v.kind != "cannot tell":
            return f"half-width {half:.2f}% within --target {self.target:g}%"
        if self.max_blocks and self.blocks >= self.max_blocks:
            return f"budget spent: --max-blocks {self.max_blocks}"
        per_block = (time.monotonic() - self.t0) / self.blocks
        if self.budget and time.monotonic() - self.t0 + per_block > self.budget:
            return f"budget spent: --budget {self.budget / 60:g} min"
        return ""

    def run_blocks(self):
        runner = self.runner = ab_runs.Runs(self.out, self.stats, self.tbench, self.common,
                                            {s: srv.port for s, srv in self.servers.items()}, self.sitting,
                                            self.results)
        self.first_rep = 1 + max((int(r[0]) for r in self.results.select(["rep"]) if r[0].isdigit()), default=0)
        n, why = 0, ""
        while not why:
            n += 1
            self.block(n, runner)
            if not (self.now and not self.baseline):
                self.verdict = self.judge()
            why = self.why_stop()
            if self.verdict and not why:
                print(f"{PROG}: after {n} blocks: {ab_verdict.progress(self.verdict)}", flush=True)
        return why

    # ---- the verdict and meta.json

    def verdict_lines(self, why):
        seconds = time.monotonic() - self.t0
        if self.now and not self.baseline:
            return [f"no verdict: side {self.now.upper()} alone ran ({self.runs} runs in {seconds / 60:.1f} min); "
                    f"compare with it after the next boot: {PROG} --baseline {self.out}"]
        if self.verdict is None:
            return [f"no verdict: too few runs ({self.runs}) for an interval ({why})"]
        v = self.verdict
        lines = [ab_verdict.sentence(v, self.o.figure, self.blocks, why)]
        lines += ab_verdict.detail(v, self.blocks, self.runs, seconds)
        if self.baseline:
            warn = ab_baseline.boot_warning(self.sittings())
            lines += [warn] if warn else []
        return lines + [f"stopped: {why}"] + [f"note: {n}" for n in self.notes()]

    def notes(self):
        return (list(self.runner.notes) if self.runner else []) + ([self.ratio_note] if self.ratio_note else [])

    def sittings(self):
        got = {"a": [], "b": []}
        for variant, sitting in self.results.select(["variant", "sitting"]):
            if sitting not in got.get(variant, [sitting]):
                got[variant].append(sitting)
        return got

    def write(self, lines, rc):
        store.atomic_write(os.path.join(self.out, "verdict.txt"), "\n".join(lines) + "\n")
        v = self.verdict
        doc = {
            "tool": "tbench-ab", "status": self.status, "start": self.start_iso, "end": results.now_iso(),
            "command": results.shell_words([PROG] + list(self.argv)), "argv": list(self.argv), "cwd": os.getcwd(),
            "host": results.host_facts(), "sitting": fingerprint.sitting(self.versions[self.now or "a"]),
            "sides": {s: {"tbench": self.tbench[s], "version": self.versions[s], "srv": side.srv,
                          "args": side.args, "sysctls": side.sysctls} for s, side in self.sides.items()},
            "common_args": self.common, "now": self.now,
            "baseline": {"path": os.path.abspath(self.baseline.path), "sittings": self.baseline.sittings}
            if self.baseline else None,
            "rule": {"figure": self.o.figure, "target_pct": self.target, "margin_pct": self.margin,
                     "min_blocks": self.min_blocks, "max_blocks": self.max_blocks, "budget_s": self.budget,
                     "seed": self.seed},
            "blocks": self.blocks, "runs": self.runs, "seconds": round(time.monotonic() - self.t0, 1),
            "notes": self.notes(),
            "verdict": {"kind": v.kind, "text": lines[0], "change_pct": v.change, "lo_pct": v.lo, "hi_pct": v.hi,
                        "mde_pct": v.mde, "margin_shown_pct": v.margin_shown, "method": v.method,
                        "pairs": v.pairs, "level": v.level, "exit_status": rc} if v else None,
            "tbench_stats": self.stats, "git_revision": results.git_revision(SCRIPT_DIR),
        }
        results.write_meta(os.path.join(self.out, "meta.json"), doc)

    def exit_status(self):
        if self.verdict is None:
            return 0 if self.now and not self.baseline else (ab_verdict.BISECT_SKIP if self.o.bisect
                                                              else ab_verdict.EXIT_CANNOT_TELL)
        return ab_verdict.exit_status(self.verdict, self.o.bisect)

    def main(self):
        self.find_programs()
        self.make_out()
        self.load_baseline()
        self.status = "running"
        try:
            self.start_servers()
            why = self.run_blocks()
            self.status, rc = "complete", None
        except KeyboardInterrupt:
            self.status, why, rc = "interrupted", "interrupted", 130
            try:
                self.verdict = self.judge()
            except (RunError, UsageError):
                self.verdict = None
        except RunError:
            self.status = "failed"
            self.verdict = None
            self.write([f"no verdict: a run failed (see {PROG}'s message and runs/)"], 1)
            raise
        finally:
            for server in self.servers.values():
                server.stop()
        rc = self.exit_status() if rc is None else rc
        lines = self.verdict_lines(why)
        self.write(lines, rc)
        print("\n".join(lines), flush=True)
        print(f"{PROG}: results in {self.out}", file=sys.stderr)
        return rc


def main(argv):
    words = argv[:argv.index("--")] if "--" in argv else argv
    if "--version" in words:
        print(programs.script_version(PROG, os.environ.get("TBENCH")))
        return 0
    try:
        return Session(parser().parse_args(argv), argv).main()
    except (UsageError, RunError) as e:
        if "--bisect" not in words:
            raise
        print(f"{PROG}: {e}", file=sys.stderr)
        print(f"{PROG}: --bisect: exit {BISECT_STOP}, so that git bisect stops instead of calling "
              "the commit bad", file=sys.stderr)
        return BISECT_STOP
