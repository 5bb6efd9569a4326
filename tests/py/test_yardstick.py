"""tbtools.yardstick: the yardstick's plan, meta.json's "yardstick" read
and checked, its summary line; and what tbench-compare (compare.py) says of
two yardsticks made up with known answers, and of directories without one."""

import argparse
import io
import json
import os
import tempfile
import unittest
from collections import Counter
from unittest import mock

from tbtools import compare, yardstick
from tbtools.errors import UsageError


def point(backend, clients, mb=100.0, ci=2.0, n=3):
    return {"backend": backend, "clients": clients, "n": n, "n_failed": 0,
            "mb_per_sec": {"mean": mb, "ci95": ci}, "cost_cpu_us": {"mean": 5.0, "ci95": None}}


GOOD = {"dir": "yardstick", "backends": ["pipe", "nop"], "clients": [1, 2], "reps": 3, "time_s": 2.0,
        "warmup_s": 0.5, "runs": 12, "failed": 0, "duration_s": 36.2,
        "reference": {"backend": "pipe", "clients": 2},
        "points": [point(b, c) for b in ("pipe", "nop") for c in (1, 2)]}


class Plan(unittest.TestCase):
    def test_every_point_three_times_interleaved(self):
        runs = yardstick.runs(["pipe", "nop"], 7)
        self.assertEqual(len(runs), 12)
        self.assertEqual(Counter((r.point.backend, r.point.clients) for r in runs),
                         {(b, c): 3 for b in ("pipe", "nop") for c in (1, 2)})
        # rep 1 of every point, then rep 2, ...; in a rep 1 client before 2
        self.assertEqual([r.rep for r in runs], [1] * 4 + [2] * 4 + [3] * 4)
        self.assertEqual([r.point.clients for r in runs[:4]], [1, 1, 2, 2])
        self.assertTrue(all(not r.point.net and r.point.label == "n/a" and r.point.knobs == () for r in runs))
        self.assertEqual(runs, yardstick.runs(["pipe", "nop"], 7))

    def test_warmup_is_a_quarter(self):
        self.assertEqual(yardstick.warmup_of("2"), "0.5")
        self.assertEqual(yardstick.warmup_of("0.2"), "0.05")
        self.assertEqual(yardstick.warmup_of(yardstick.DEFAULT_SECONDS), "0.5")

    def test_reference_is_the_first_backend_at_the_most_clients(self):
        self.assertEqual(yardstick.reference(["pipe", "nop"]), {"backend": "pipe", "clients": 2})

    def test_skipped_by_option_or_environment(self):
        with mock.patch.dict(os.environ, {}, clear=False):
            os.environ.pop(yardstick.SKIP_ENV, None)
            self.assertIsNone(yardstick.skipped_why(argparse.Namespace(no_yardstick=False)))
            self.assertEqual(yardstick.skipped_why(argparse.Namespace(no_yardstick=True)), "--no-yardstick")
            os.environ[yardstick.SKIP_ENV] = "1"
            self.assertEqual(yardstick.skipped_why(argparse.Namespace(no_yardstick=False)), "TBENCH_NO_YARDSTICK=1")


class Read(unittest.TestCase):
    def test_none_skipped_and_good(self):
        self.assertIsNone(yardstick.read({}, "m.json"))
        self.assertIsNone(yardstick.read({"yardstick": None}, "m.json"))
        self.assertIsNone(yardstick.read({"yardstick": {"skipped": "--no-yardstick"}}, "m.json"))
        self.assertEqual(yardstick.read({"yardstick": GOOD}, "m.json"), GOOD)
        self.assertEqual(yardstick.why_none({}), "none recorded")
        self.assertEqual(yardstick.why_none({"yardstick": {"skipped": "--no-yardstick"}}), "skipped (--no-yardstick)")

    def test_bad_fields_are_named(self):
        bad_point = dict(point("pipe", 1), mb_per_sec={"mean": "fast", "ci95": 1.0})
        for value, field in ((3, "'yardstick'"), (dict(GOOD, points="all"), "'points'"),
                             (dict(GOOD, points=[point("pipe", 1, n="3")]), "'n'"),
                             (dict(GOOD, points=[bad_point]), "'mean'"),
                             (dict(GOOD, points=["x"]), "'yardstick.points[0]'"),
                             (dict(GOOD, dir="../elsewhere"), "'yardstick.dir'"),
                             (dict(GOOD, dir="/etc"), "'yardstick.dir'")):
            with self.assertRaises(UsageError, msg=field) as e:
                yardstick.read({"yardstick": value}, "m.json")
            self.assertIn("m.json: field " + field, str(e.exception))

    def test_summary_line(self):
        text = yardstick.line(GOOD)
        self.assertTrue(text.startswith("yardstick (36.2 s): pipe 1: 100 ±2 MB/s, 5 CPU us/op (n=3); "), text)
        self.assertEqual(text.count("(n=3)"), 4)



RUNS_HEAD = "backend,clients,rep,status,mb_per_sec\n"


def results_dir(root, name, yard, pipe2=(100, 101, 99)):
    """A results directory; YARD: meta.json's yardstick (None: none), with
    a yardstick/runs.csv whose pipe 2 runs are PIPE2 and nop 2 runs 50, 51, 49."""
    d = os.path.join(root, name)
    os.makedirs(os.path.join(d, "yardstick"))
    meta = {"status": "complete"}
    if yard is not None:
        meta["yardstick"] = yard
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f)
    rows = [f"pipe,2,{i + 1},ok,{v}" for i, v in enumerate(pipe2)]
    rows += [f"nop,2,{i + 1},ok,{v}" for i, v in enumerate((50, 51, 49))]
    with open(os.path.join(d, "yardstick", "runs.csv"), "w") as f:
        f.write(RUNS_HEAD + "\n".join(rows) + "\n")
    return d


class CompareYardsticks(unittest.TestCase):
    def setUp(self):
        self.stats = os.environ.get("TBENCH_STATS")
        if not self.stats:
            self.skipTest("TBENCH_STATS names no tbench-stats (tests/py-units.sh sets it)")
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def said(self, a, b, relative=False):
        out = io.StringIO()
        args = compare.say_yardsticks(self.stats, a, b, None, out, relative)
        return args, out.getvalue()

    def test_sittings_ten_percent_apart(self):
        a = results_dir(self.tmp.name, "a", GOOD)
        b = results_dir(self.tmp.name, "b", GOOD, pipe2=(110, 111, 109))
        args, text = self.said(a, b)
        self.assertEqual(args[0], "--sittings-pct")
        self.assertAlmostEqual(float(args[1]), 10.0, places=6)
        self.assertIn("  pipe 2: +10.00% [", text)
        self.assertIn("  nop 2: +0.00% [", text)
        self.assertIn("the sittings differ by +10.00% at pipe 2 clients", text)

    def test_sittings_not_apart_set_nothing(self):
        a = results_dir(self.tmp.name, "a", GOOD)
        b = results_dir(self.tmp.name, "b", GOOD, pipe2=(101, 100, 99))
        args, text = self.said(a, b)
        self.assertEqual(args, [])
        self.assertIn("do not differ significantly at pipe 2 clients", text)

    def test_without_a_yardstick_it_says_which(self):
        a = results_dir(self.tmp.name, "a", None)
        b = results_dir(self.tmp.name, "b", {"skipped": "--no-yardstick"})
        args, text = self.said(a, b)
        self.assertEqual(args, [])
        self.assertIn("yardstick: no yardstick in A (none recorded)", text)
        self.assertIn("yardstick: no yardstick in B (skipped (--no-yardstick))", text)
        self.assertEqual(self.said(os.path.join(a, "yardstick", "runs.csv"), b)[1].count("in A"), 0)
        with self.assertRaises(UsageError) as e:
            self.said(a, b, relative=True)
        self.assertIn("--relative-to-yardstick: no yardstick in A (none recorded)", str(e.exception))

    def test_relative_passes_the_change_and_its_interval(self):
        a = results_dir(self.tmp.name, "a", GOOD)
        b = results_dir(self.tmp.name, "b", GOOD, pipe2=(110, 111, 109))
        args, text = self.said(a, b, relative=True)
        self.assertEqual(args[0], "--relative-to-sittings")
        pct, lo, hi = (float(x) for x in args[1].split(","))
        self.assertAlmostEqual(pct, 10.0, places=6)
        self.assertTrue(lo < pct < hi)
        self.assertAlmostEqual(hi - pct, pct - lo, places=3)
        self.assertIn("over its own yardstick's at pipe 2 clients", text)


if __name__ == "__main__":
    unittest.main()
