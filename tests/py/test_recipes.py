"""tbtools.recipe_file, recipe_verdict and recipes: loading and checking a
recipe, and the verdicts drawn from made-up tbench-stats compare CSV."""

import copy
import json
import os
import tempfile
import unittest

from tbtools import recipe_file, recipe_verdict, recipes
from tbtools.errors import UsageError

EXPERIMENTS = os.path.join(recipe_file.DATA_DIR, "experiments")

GOOD = {
    "title": "T", "summary": "S", "reading": "R",
    "source": {"who": "W", "where": "there", "numbers": "1 -> 2"},
    "loadfile": "bulk-write.txt",
    "tbench": ["--reconnect", "1"],
    "sweep": {"full": ["--backends", "tcp"], "quick": ["--backends", "tcp", "-t", "1"]},
    "claims": [{"id": "c1", "claim": "no change", "source_numbers": "77 either way",
                "figure": "mb_per_sec", "keys": ["backend", "clients", "mtu"],
                "a": {"offload": "off"}, "b": {"offload": "on"},
                "test": "equivalent", "margin_pct": 5, "why": "because"}],
}

HEAD = ("backend,clients,mtu,n_a,mean_a,ci95_a,n_b,mean_b,ci95_b,change_pct,t,df,p,significant,"
        "diff,diff_ci95,change_lo_pct,change_hi_pct,mde,mde_pct,method,pairs,"
        "equivalence,margin_pct,equiv_lo_pct,equiv_hi_pct,margin_shown_pct\n")


def compare_csv(*rows):
    return HEAD + "".join(r + "\n" for r in rows) + "geomean,,,2,,,2,,,1,,,,0 significant,,,,,,,,,0 equivalent,,,,\n"


class Load(unittest.TestCase):
    def write(self, doc):
        fd, path = tempfile.mkstemp(suffix=".json")
        with os.fdopen(fd, "w") as f:
            f.write(doc if isinstance(doc, str) else json.dumps(doc))
        self.addCleanup(os.unlink, path)
        return path

    def refused(self, doc, field):
        path = self.write(doc)
        with self.assertRaises(UsageError) as e:
            recipe_file.load(path)
        self.assertIn(path, str(e.exception))
        self.assertIn(f"field '{field}'", str(e.exception))

    def test_shipped_recipes_load(self):
        names = sorted(f[:-5] for f in os.listdir(EXPERIMENTS) if f.endswith(".json"))
        self.assertEqual(len(names), 6)
        for name in names:
            r = recipe_file.load(os.path.join(EXPERIMENTS, name + ".json"))
            self.assertTrue(r["claims"])

    def test_good_loads(self):
        self.assertEqual(recipe_file.load(self.write(GOOD))["claims"][0]["id"], "c1")

    def test_bad_fields_named(self):
        cases = [
            (("claims", 0, "test"), "roughly", "claims[0].test"),
            (("claims", 0, "margin_pct"), "5%", "claims[0].margin_pct"),
            (("claims", 0, "margin_pct"), 0, "claims[0].margin_pct"),
            (("claims", 0, "keys"), [], "claims[0].keys"),
            (("claims", 0, "a"), {"offload": "$(x)"}, "claims[0].a.offload"),
            (("claims", 0, "figure"), "mb per sec", "claims[0].figure"),
            (("source", "who"), "", "source.who"),
            (("sweep", "quick"), "--backends tcp", "sweep.quick"),
            (("sweep", "full"), ["--backends", 3], "sweep.full"),
            (("sweep", "full"), ["--out", "/tmp/x"], "sweep.full[0]"),
            (("sweep", "quick"), ["-t", "1", "--"], "sweep.quick[2]"),
            (("tbench",), ["--unix=/tmp/s"], "tbench[0]"),
            (("tbench",), ["--reconnect", "1", "-c/etc/passwd"], "tbench[2]"),
            (("tbench",), ["--json=/tmp/x"], "tbench[0]"),
            (("sweep", "full"), ["--server-host", "h", "--ssh", "touch /tmp/M"], "sweep.full[0]"),
            (("sweep", "quick"), ["-t", "1", "--ssh=touch /tmp/M"], "sweep.quick[2]"),
            (("sweep", "quick"), ["--dev", "eth0"], "sweep.quick[0]"),
            (("loadfile",), "../../etc/passwd", "loadfile"),
            (("needs_root",), "yes", "needs_root"),
        ]
        for path, value, field in cases:
            with self.subTest(field=field, value=value):
                doc = copy.deepcopy(GOOD)
                node = doc
                for step in path[:-1]:
                    node = node[step]
                node[path[-1]] = value
                self.refused(doc, field)

    def test_missing_and_duplicate(self):
        doc = copy.deepcopy(GOOD)
        del doc["claims"][0]["why"]
        self.refused(doc, "claims[0].why")
        doc = copy.deepcopy(GOOD)
        doc["claims"].append(copy.deepcopy(doc["claims"][0]))
        self.refused(doc, "claims[1].id")
        doc = copy.deepcopy(GOOD)
        doc["claims"][0]["test"] = "noise"
        self.refused(doc, "claims[0].resolve_pct")

    def test_not_json(self):
        path = self.write("{ not json")
        with self.assertRaises(UsageError) as e:
            recipe_file.load(path)
        self.assertIn(path, str(e.exception))

    def test_sweep_argv(self):
        argv = recipe_file.sweep_argv(GOOD, "quick")
        self.assertEqual(argv[:4], ["--backends", "tcp", "-t", "1"])
        self.assertEqual(argv[4:6], ["--", "-c"])
        self.assertTrue(argv[6].endswith("bulk-write.txt") and os.path.isfile(argv[6]))
        self.assertEqual(argv[7:], ["--reconnect", "1"])
        self.assertEqual(recipes.sweep_options(argv, "--out", "D")[:6], ["--backends", "tcp", "-t", "1", "--out", "D"])
        self.assertEqual(recipes.sweep_options(["-q"], "--plan"), ["-q", "--plan"])

    def test_quick_variant_skips_the_yardstick(self):
        quick, full = recipes.variant_argv(GOOD, "quick"), recipes.variant_argv(GOOD, "full")
        self.assertEqual(quick[:5], ["--backends", "tcp", "-t", "1", "--no-yardstick"])
        self.assertEqual(quick[5], "--")
        self.assertNotIn("--no-yardstick", full)

    def test_path_of(self):
        with self.assertRaises(UsageError):
            recipe_file.path_of("Bad Name")
        with self.assertRaises(UsageError):
            recipe_file.path_of("no-such-recipe")


class Verdicts(unittest.TestCase):
    claim = GOOD["claims"][0]

    def one(self, claim, row):
        rows = recipe_verdict.verdict_rows("r", claim, compare_csv(row))
        self.assertEqual(len(rows), 1)
        self.assertIn(rows[0]["verdict"], recipe_file.VERDICTS)
        return rows[0]

    def test_equivalent(self):
        base = "tcp,2,1500,6,100,2,6,101,2,1,,,0.4,no,1,2,-1,3,3,3,paired,6,"
        self.assertEqual(self.one(self.claim, base + "equivalent,5,-0.5,2.5,2.5")["verdict"], "agrees")
        self.assertEqual(self.one(self.claim, base + "different,5,6,9,9")["verdict"], "disagrees")
        r = self.one(self.claim, base + "cannot tell,5,-4,8,8")
        self.assertEqual(r["verdict"], "cannot tell")
        self.assertIn("±8", r["why"])
        self.assertEqual(r["point"], "backend=tcp clients=2 mtu=1500")
        self.assertIn("offload=off 100 ± 2 (6)", r["measured"])

    def test_too_few_runs(self):
        r = self.one(self.claim, "tcp,2,1500,1,100,,0,,,,,,,n/a,,,,,,,unpaired,0,n/a,5,,,")
        self.assertEqual(r["verdict"], "cannot tell")
        self.assertIn("too few", r["why"])

    def test_greater_and_less(self):
        up = dict(self.claim, test="greater", expected_pct=[34, 43], margin_pct=3)
        row = "tcp,1,-,6,100,2,6,120,2,20,,,0.01,yes,20,4,{lo},{hi},3,3,paired,6,{eq},3,,,"
        r = self.one(up, row.format(lo=15, hi=25, eq="different"))
        self.assertEqual(r["verdict"], "agrees")
        self.assertIn("above this interval", r["why"])   # the source's +34-43% is above [15, 25]
        self.assertEqual(self.one(up, row.format(lo=-9, hi=-1, eq="different"))["verdict"], "disagrees")
        self.assertEqual(self.one(up, row.format(lo=-2, hi=2, eq="equivalent"))["verdict"], "disagrees")
        self.assertEqual(self.one(up, row.format(lo=-2, hi=9, eq="cannot tell"))["verdict"], "cannot tell")
        down = dict(up, test="less")
        self.assertEqual(self.one(down, row.format(lo=-9, hi=-1, eq="different"))["verdict"], "agrees")
        self.assertEqual(self.one(down, row.format(lo=1, hi=9, eq="different"))["verdict"], "disagrees")

    def test_noise(self):
        claim = {"id": "n", "claim": "resolves 2.4%", "source_numbers": "+2.4%", "figure": "mb_per_sec",
                 "keys": ["backend", "clients"], "test": "noise", "resolve_pct": 2.4, "why": "w"}
        head = "backend,clients,n_a,mean_a,ci95_a,n_b,mean_b,ci95_b,mde_pct\n"
        rows = recipe_verdict.verdict_rows("r", claim, head + "tcp,16,10,3000,30,10,3000,30,2.0\n")
        self.assertEqual(rows[0]["verdict"], "agrees")
        self.assertIn("±1% of the mean", rows[0]["measured"])
        rows = recipe_verdict.verdict_rows("r", claim, head + "tcp,16,3,3000,300,3,3000,300,12\n")
        self.assertEqual(rows[0]["verdict"], "disagrees")
        self.assertIn("more than 100000 runs", rows[0]["why"])
        head = head.rstrip("\n") + ",runs_to_resolve\n"
        rows = recipe_verdict.verdict_rows("r", claim, head + "tcp,16,3,3000,300,3,3000,300,12,70\n", 12)
        self.assertIn("70 runs a side would resolve 2.4%, about 14 min a side", rows[0]["why"])
        self.assertEqual(rows[0]["runs_to_resolve"], "70")

    def test_no_point(self):
        rows = recipe_verdict.verdict_rows("r", self.claim, HEAD)
        self.assertEqual([r["verdict"] for r in rows], ["cannot tell"])

    def test_tables(self):
        claim = dict(self.claim, claim="a | b\nc")
        rows = recipe_verdict.verdict_rows("r", claim, compare_csv(
            "tcp,2,1500,6,100,2,6,101,2,1,,,0.4,no,1,2,-1,3,3,3,paired,6,equivalent,5,-0.5,2.5,2.5"))
        md = recipe_verdict.md_table(rows)
        self.assertIn("a \\| b c", md)
        self.assertEqual(len(md.splitlines()), 3)
        self.assertTrue(recipe_verdict.md_table(rows, with_recipe=True).splitlines()[2].startswith("| r | a \\| b c |"))
        csv_text = recipe_verdict.csv_text(rows)
        self.assertTrue(csv_text.startswith("recipe,claim,point,"))
        self.assertEqual(len(csv_text.splitlines()), 3)   # header, and the claim's text holds a newline quoted


if __name__ == "__main__":
    unittest.main()
