"""tbtools.precision: --precision's rule and its errors, what the plan
says of it, the runs of a later rep, and the final report."""

import argparse
import unittest

from tbtools import plan, precision
from tbtools.errors import UsageError


def opts(**kw):
    base = dict(precision=None, reps=None, max_reps=None, budget=None)
    base.update(kw)
    return argparse.Namespace(**base)


class Rule(unittest.TestCase):
    def test_defaults(self):
        self.assertEqual(precision.rule_of(opts(precision="5")), precision.Rule("5", "cost_cpu_us", 3, 10, None))
        self.assertEqual(precision.rule_of(opts(precision="1,wall_us_per_op", reps="12")).max_reps, 12)
        self.assertIsNone(precision.rule_of(opts()))

    def test_errors_name_their_flag(self):
        for kw, flag in ((dict(precision="abc"), "--precision"), (dict(precision="0"), "--precision"),
                         (dict(precision="5,nosuch"), "--precision: unknown figure"),
                         (dict(precision="5", reps="4", max_reps="3"), "--max-reps"),
                         (dict(precision="5", reps="1"), "--reps"), (dict(precision="5", budget="0"), "--budget"),
                         (dict(max_reps="5"), "--max-reps needs --precision"),
                         (dict(budget="60"), "--budget needs --precision")):
            with self.assertRaises(UsageError, msg=kw) as e:
                precision.rule_of(opts(**kw))
            self.assertTrue(str(e.exception).startswith(flag), str(e.exception))

    def test_meta_json_form(self):
        self.assertEqual(precision.rule_json(precision.Rule("50", "cost_cpu_us", 2, 6, None)),
                         {"pct": 50, "figure": "cost_cpu_us", "min_reps": 2, "max_reps": 6, "budget_s": None})
        self.assertEqual(precision.rule_json(precision.Rule("2.5", "mb_per_sec", 3, 10, 90))["pct"], 2.5)


class Said(unittest.TestCase):
    def test_plan_lines(self):
        lines = precision.plan_lines(precision.Rule("5", "cost_cpu_us", 2, 4, 90), 2, 2, "1", "0")
        self.assertEqual(lines[1], "  4 to 8 runs, 6s to 12s; no rep beyond the minimum starts that would end "
                                   "after --budget 1m30s")

    def test_rep_runs_are_of_that_rep_and_seeded(self):
        pts = [plan.Point(b, 1, "n/a", "", "", "", False, ()) for b in ("pipe", "nop", "unix")]
        runs = precision.rep_runs(pts, 4, 9)
        self.assertEqual({r.rep for r in runs}, {4})
        self.assertEqual(runs, precision.rep_runs(pts, 4, 9))

    def test_report(self):
        pts = [plan.Point(b, 1, "n/a", "", "", "", False, ()) for b in ("pipe", "nop")]
        status = {("pipe", "1", "n/a"): precision.Status(3, 3, "1.500", True)}
        lines = precision.report("tbench-sweep", pts, status, "--max-reps 3", "2", "cost_cpu_us", [])
        self.assertEqual(lines[1], "  pipe clients=1 offload=n/a: 3 reps, 3 counted, half-width 1.500%: met")
        self.assertEqual(lines[2], "  nop clients=1 offload=n/a: 0 reps, 0 counted, half-width n/a "
                                   "(fewer than 2 runs counted): not met (--max-reps 3)")
        self.assertEqual(lines[3], "tbench-sweep: precision: 1 of 2 points met the target")


if __name__ == "__main__":
    unittest.main()
