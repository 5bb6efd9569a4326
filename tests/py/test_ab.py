"""tbtools.ab_plan, ab_verdict, ab_baseline: the order of a block, the two
sides from the command line, tbench-stats compare's line turned into the
verdict and its exit status, and an earlier sitting's directory checked."""

import json
import os
import subprocess
import tempfile
import unittest

from tbtools import ab, ab_baseline, ab_plan, ab_runs, ab_verdict
from tbtools.errors import UsageError

STATS = os.environ.get("TBENCH_STATS", "tbench-stats")
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")


def opts(*argv):
    return ab.parser().parse_args(list(argv))


class Order(unittest.TestCase):
    def test_a_seed_gives_the_same_blocks_and_both_orders(self):
        first = [ab_plan.block_order(7, n) for n in range(1, 41)]
        self.assertEqual(first, [ab_plan.block_order(7, n) for n in range(1, 41)])
        self.assertEqual(set(first), {"abba", "baab"})
        self.assertNotEqual(first, [ab_plan.block_order(8, n) for n in range(1, 41)])

    def test_without_a_seed_blocks_alternate(self):
        self.assertEqual([ab_plan.block_order(None, n) for n in (1, 2, 3)], ["abba", "baab", "abba"])

    def test_each_block_pairs_its_first_and_second_runs_of_a_side(self):
        self.assertEqual(ab_plan.pair_reps(1, "abba"), [("a", 1), ("b", 1), ("b", 2), ("a", 2)])
        self.assertEqual(ab_plan.pair_reps(3, "baab"), [("b", 5), ("a", 5), ("a", 6), ("b", 6)])


class Sides(unittest.TestCase):
    def test_both_sides_and_the_common_arguments(self):
        o = opts("--a-args", "--cpus 0 -T 'TCP_NODELAY'", "--b-tbench", "/x/tbench",
                 "--b-sysctl", "net.ipv4.tcp_autocorking=0", "--", "-b", "pipe", "2")
        a, b = ab_plan.side_of(o, "a"), ab_plan.side_of(o, "b")
        self.assertEqual(a.args, ["--cpus", "0", "-T", "TCP_NODELAY"])
        self.assertEqual((a.tbench, a.sysctls), (None, []))
        self.assertEqual((b.tbench, b.sysctls), ("/x/tbench", ["net.ipv4.tcp_autocorking=0"]))
        common = ab_plan.common_args(o.common)
        self.assertEqual(common, ["-b", "pipe", "2"])
        cmd = ab_plan.command(b, "/x/tbench", common, "r.json")
        self.assertEqual(cmd, ["/x/tbench", "--json", "r.json", "-q", "--netns", "--sysctl",
                               "net.ipv4.tcp_autocorking=0", "-b", "pipe", "2"])

    def test_no_common_arguments_is_the_default(self):
        self.assertEqual(ab_plan.common_args(opts().common), ab_plan.DEFAULT_COMMON)

    def test_bad_sides_are_usage_errors(self):
        for argv in (["--a-sysctl", "kernel.sched_x=1"], ["--b-sysctl", "net.core.x"],
                     ["--a-args", "'unclosed"], ["--b-args", "--json x"],
                     ["--a-sysctl", "net.ipv4.x=1", "--a-srv", "/bin/true"]):
            o = opts(*argv)
            with self.assertRaises(UsageError, msg=argv):
                ab_plan.side_of(o, argv[0][2])

    def test_counts_are_checked(self):
        for argv in (["--min-blocks", "1"], ["--target", "0"], ["--target", "x"], ["--budget", "-1"],
                     ["--max-blocks", "2", "--min-blocks", "3"], ["--seed", "-3"]):
            with self.assertRaises(UsageError, msg=argv):
                ab_plan.check_counts(opts(*argv))
        self.assertEqual(ab_plan.check_counts(opts("--target", "0.5%"))[3:5], (0.5, 2.0))


HEADER = ("status,n_a,mean_a,ci95_a,n_b,mean_b,ci95_b,change_pct,t,df,p,significant,diff,diff_ci95,"
          "change_lo_pct,change_hi_pct,mde,mde_pct,method,pairs,equivalence,margin_pct,equiv_lo_pct,"
          "equiv_hi_pct,margin_shown_pct,level,half_width_pct")


def line(change, lo, hi, significant, equivalence, mde=1.5, margin=2, method="paired-ratio"):
    """compare --csv as tbench-stats writes it: half_width_pct its own
    column, which tbench-ab reads rather than works out."""
    half = (hi - lo) / 2 if isinstance(lo, (int, float)) else ""
    row = (f"ok,8,100,1,8,{100 + change},1,{change},3,7,0.01,{significant},{change},1,{lo},{hi},1.5,{mde},"
           f"{method},8,{equivalence},{margin},{lo},{hi},1.8,run,{half}")
    return HEADER + "\n" + row + "\ngeomean,1,,,1,,,1,,,,0 significant,,,,,,,,,0 equivalent,,,,,,\n"


class Verdicts(unittest.TestCase):
    def verdict(self, text, figure="mb_per_sec"):
        return ab_verdict.parse_compare(text, figure)

    def test_a_fall_of_mb_per_sec_is_slower_and_bad(self):
        v = self.verdict(line(-5, -6.5, -3.5, "yes", "different"))
        self.assertEqual(v.kind, "slower")
        self.assertTrue(ab_verdict.sentence(v, "mb_per_sec", 3, "").startswith(
            "B slower than A by 5.00% [-6.50%, -3.50%] (mb_per_sec, paired ratio, 95% interval)"))
        self.assertEqual((ab_verdict.exit_status(v, False), ab_verdict.exit_status(v, True)), (0, 1))

    def test_a_rise_of_a_cost_is_slower_and_a_fall_faster(self):
        self.assertEqual(self.verdict(line(4, 3, 5, "yes", "different"), "cost_cpu_us").kind, "slower")
        v = self.verdict(line(-4, -5, -3, "yes", "different"), "cost_cpu_us")
        self.assertEqual((v.kind, ab_verdict.exit_status(v, True)), ("faster", 0))

    def test_slower_within_the_margin_is_good_for_bisect(self):
        v = self.verdict(line(-1, -1.8, -0.2, "yes", "cannot tell", margin=2))
        self.assertEqual((v.kind, ab_verdict.exit_status(v, True)), ("slower", 0))

    def test_equivalent_and_cannot_tell(self):
        v = self.verdict(line(0.1, -0.5, 0.7, "no", "equivalent"))
        self.assertEqual((v.kind, ab_verdict.exit_status(v, False), ab_verdict.exit_status(v, True)),
                         ("equivalent", 0, 0))
        self.assertTrue(ab_verdict.sentence(v, "mb_per_sec", 3, "").startswith("equivalent within ±2%"))
        v = self.verdict(line(0.5, -3, 4, "no", "cannot tell"))
        self.assertEqual((v.kind, ab_verdict.exit_status(v, False), ab_verdict.exit_status(v, True)),
                         ("cannot tell", 3, 125))
        self.assertEqual(ab_verdict.sentence(v, "mb_per_sec", 9, "budget spent: --max-blocks 9"),
                         "cannot tell: [-3.00%, +4.00%] (paired ratio, 95% interval) after 9 blocks "
                         "(budget spent: --max-blocks 9)")
        self.assertEqual(ab_verdict.half_width(v), 3.5)

    def test_the_half_width_is_compare_s_column(self):
        text = line(1, -2, 4, "no", "cannot tell").replace(",run,3.0\n", ",run,2.75\n")
        self.assertEqual(ab_verdict.half_width(self.verdict(text)), 2.75)

    def test_the_sentence_says_what_the_interval_is_of(self):
        v = self.verdict(line(-5, -6.5, -3.5, "yes", "different", method="paired"))
        self.assertIn("(mb_per_sec, paired difference, 95% interval)", ab_verdict.sentence(v, "mb_per_sec", 3, ""))
        v = self.verdict(line(0.1, -0.5, 0.7, "no", "equivalent", method="unpaired"))
        self.assertIn("(mb_per_sec, unpaired, 95% interval)", ab_verdict.sentence(v, "mb_per_sec", 3, ""))

    def test_detail_says_the_mde(self):
        v = self.verdict(line(-5, -6.5, -3.5, "yes", "different", mde=1.25))
        self.assertIn("minimum detectable effect at this noise: 1.25%", ab_verdict.detail(v, 3, 12, 60)[0])

    def test_no_point_or_a_word_for_a_number_fails(self):
        from tbtools.errors import RunError
        with self.assertRaises(RunError):
            self.verdict(HEADER + "\n")
        with self.assertRaises(RunError):
            self.verdict(line(-5, "x", -3.5, "yes", "different"))


FAKE_STATS = """#!/bin/sh
# A tbench-stats that refuses --ratio as a figure of 0 would, and echoes
# its arguments otherwise.
for a in "$@"; do [ "$a" = --ratio ] && { echo "compare: x.csv:3: cost_retransmits 0" >&2; exit 2; }; done
echo "$@"
"""


class Ratio(unittest.TestCase):
    def session(self, stats_text):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        stats = os.path.join(tmp.name, "tbench-stats")
        with open(stats, "w") as f:
            f.write(stats_text)
        os.chmod(stats, 0o755)
        s = ab.Session(opts("--figure", "cost_retransmits"), [])
        s.stats = stats
        return s

    def test_paired_is_of_the_ratio_unpaired_not(self):
        s = self.session("#!/bin/sh\necho \"$@\"\n")
        self.assertIn("--paired --ratio a b", s.compare(["compare", "--paired"], ["a", "b"]))
        self.assertNotIn("--ratio", s.compare(["compare"], ["a", "b"]))
        self.assertEqual(s.notes(), [])

    def test_a_figure_with_no_ratio_falls_back_to_the_difference_and_says_so(self):
        s = self.session(FAKE_STATS)
        self.assertEqual(s.compare(["compare", "--paired"], ["a", "b"]).split(), ["compare", "--paired", "a", "b"])
        self.assertEqual(s.compare(["compare", "--paired"], ["a", "b"]).split(), ["compare", "--paired", "a", "b"])
        self.assertEqual(len(s.notes()), 1)
        self.assertIn("paired difference B - A", s.notes()[0])


class Baseline(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.header = ab_runs.header(STATS)

    def make(self, meta, rows, header=None):
        d = tempfile.mkdtemp(dir=self.tmp.name)
        with open(os.path.join(d, "meta.json"), "w") as f:
            f.write(meta if isinstance(meta, str) else json.dumps(meta))
        with open(os.path.join(d, "runs.csv"), "w") as f:
            f.write((header or self.header) + "\n" + "".join(r + "\n" for r in rows))
        return d

    def row(self, variant, sitting="s1", status="ok"):
        """A run's row as tbench-ab writes it: run-ok.json's, or with
        status failed one of no JSON."""
        json_doc = [os.path.join(DATA, "run-ok.json")] if status == "ok" else []
        out = subprocess.run([STATS, "row", "--set", "rep=1", "--set", f"sitting={sitting}"] + json_doc,
                             capture_output=True, text=True, check=True).stdout
        return out.strip() + "," + variant

    def test_a_good_directory_loads(self):
        d = self.make({"tool": "tbench-ab"}, [self.row("a"), self.row("a", "s2"), self.row("b")])
        b = ab_baseline.load(d, STATS, self.header)
        self.assertEqual(b.sides, {"a": 2, "b": 1})
        self.assertEqual(b.sittings["a"], ["s1", "s2"])
        self.assertEqual(b.rows.count("\n"), 3)
        ab_baseline.check_side(b, "b")
        self.assertIsNotNone(ab_baseline.boot_warning(b.sittings))

    def test_malformed_or_hostile_directories_are_refused(self):
        cases = {
            "not json": self.make("{", [self.row("a")]),
            "another tool": self.make({"tool": "tbench-sweep"}, [self.row("a")]),
            "other columns": self.make({"tool": "tbench-ab"}, ["x,a"], header="backend,variant"),
            "a third side": self.make({"tool": "tbench-ab"}, [self.row("c")]),
            "a failed run": self.make({"tool": "tbench-ab"}, [self.row("a", status="failed")]),
            "no sitting": self.make({"tool": "tbench-ab"}, [self.row("a", sitting="")]),
        }
        link = tempfile.mkdtemp(dir=self.tmp.name)
        os.symlink("/etc/passwd", os.path.join(link, "runs.csv"))
        with open(os.path.join(link, "meta.json"), "w") as f:
            json.dump({"tool": "tbench-ab"}, f)
        cases["runs.csv a link"] = link
        cases["no directory"] = os.path.join(self.tmp.name, "none")
        for what, d in cases.items():
            with self.assertRaises(UsageError, msg=what):
                ab_baseline.load(d, STATS, self.header)

    def test_the_side_not_run_now_must_be_there(self):
        b = ab_baseline.load(self.make({"tool": "tbench-ab"}, [self.row("b")]), STATS, self.header)
        with self.assertRaises(UsageError):
            ab_baseline.check_side(b, "b")
        ab_baseline.check_side(b, "a")


if __name__ == "__main__":
    unittest.main()


FAKE_TBENCH = """#!/usr/bin/env python3
# A tbench that writes run-ok.json to --json, disturbed the first time
# (a file beside it counts the calls), or fails when asked to.
import json, os, sys
here = os.path.dirname(os.path.abspath(__file__))
calls = os.path.join(here, "calls")
n = int(open(calls).read()) if os.path.exists(calls) else 0
open(calls, "w").write(str(n + 1))
if "--fail" in sys.argv:
    print("fake tbench: asked to fail", file=sys.stderr)
    sys.exit(1)
doc = json.load(open(os.environ["RUN_OK_JSON"]))
doc["noise"] = {"disturbed": n == 0, "reasons": ["steal 9%"] if n == 0 else []}
json.dump(doc, open(sys.argv[sys.argv.index("--json") + 1], "w"))
"""


class Runs(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        d = self.tmp.name
        self.fake = os.path.join(d, "tbench")
        with open(self.fake, "w") as f:
            f.write(FAKE_TBENCH)
        os.chmod(self.fake, 0o755)
        os.environ["RUN_OK_JSON"] = os.path.join(DATA, "run-ok.json")
        os.makedirs(os.path.join(d, "out", "runs"))
        from tbtools import results, store
        self.results = results.Results(os.path.join(d, "out"), STATS)
        store.atomic_write(self.results.runs_csv, ab_runs.header(STATS) + "\n")
        self.runs = ab_runs.Runs(os.path.join(d, "out"), STATS, {"a": self.fake, "b": self.fake}, ["1"], {},
                                 "s1", self.results)

    def test_a_disturbed_run_runs_once_more_and_is_noted(self):
        side = ab_plan.Side("b", None, None, [], [])
        self.runs.run(side, 1, 1, 2)
        self.assertEqual(len(self.runs.notes), 1)
        self.assertIn("steal 9%", self.runs.notes[0])
        rows = self.results.select(["variant", "rep", "sitting", "json"])
        self.assertEqual(rows, [["b", "1", "s1", "runs/block001-2-b-again.json"]])

    def test_a_failed_run_names_its_side_and_says_why(self):
        from tbtools.errors import RunError
        side = ab_plan.Side("a", None, None, ["--fail"], [])
        with self.assertRaises(RunError) as e:
            self.runs.run(side, 2, 3, 1)
        self.assertIn("side A failed in block 2 run 1", str(e.exception))
        self.assertIn("asked to fail", str(e.exception))
        self.assertEqual(self.results.select(["variant"]), [])
