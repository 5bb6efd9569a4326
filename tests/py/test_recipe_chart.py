"""tbtools.recipe_chart: a recipe's chart from its verdict.csv, drawn by
gnuplot without running anything verdict.csv holds."""

import os
import shutil
import tempfile
import unittest

from tbtools import recipe_chart, recipe_verdict


def row(**cells):
    base = {"recipe": "r", "claim": "gain", "point": "backend=tcp clients=2 mtu=1500", "figure": "mb_per_sec",
            "claim_text": "raises throughput", "source_numbers": "+16.7%", "a": "offload=off",
            "b": "offload=on", "n_a": "8", "mean_a": "100", "ci95_a": "5", "n_b": "8", "mean_b": "120",
            "ci95_b": "6", "change_pct": "20", "change_lo_pct": "15", "change_hi_pct": "25",
            "verdict": "agrees"}
    base.update(cells)
    return base


@unittest.skipUnless(shutil.which("gnuplot"), "needs gnuplot")
class Draw(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)

    def write(self, rows):
        with open(os.path.join(self.dir, "verdict.csv"), "w") as f:
            f.write(recipe_verdict.csv_text(rows))

    def test_draws_each_claim(self):
        self.write([row(), row(point="backend=tcp clients=2 mtu=16436"), row(claim="cpu", figure="cpu_us")])
        self.assertTrue(recipe_chart.draw(self.dir, "title"))
        for ext in ("png", "svg"):
            self.assertGreater(os.path.getsize(os.path.join(self.dir, "chart." + ext)), 1000)

    def test_nothing_to_draw_without_two_sides(self):
        self.write([row(mean_b=""), row(claim="noise", test="noise")])
        self.assertFalse(recipe_chart.draw(self.dir, "title"))
        self.assertFalse(os.path.exists(os.path.join(self.dir, "chart.png")))

    def test_hostile_cells_are_text(self):
        marker = os.path.join(self.dir, "ran")
        evil = f"`touch {marker}` ' \" system('touch {marker}') @x\n!touch {marker}"
        self.write([row(point=f"mtu={evil}", claim_text=evil, a=evil, b=evil, source_numbers=evil,
                        figure=evil, verdict=evil)])
        self.assertTrue(recipe_chart.draw(self.dir, evil))
        self.assertFalse(os.path.exists(marker))
        with open(os.path.join(self.dir, "chart.svg"), errors="replace") as f:
            self.assertIn("touch", f.read())   # shown as text

    def test_tic_labels_keep_only_what_differs(self):
        common, labels = recipe_chart.split_point(["backend=tcp mtu=1500", "backend=tcp mtu=16436"])
        self.assertEqual(common, "backend=tcp")
        self.assertEqual(labels, ["mtu=1500", "mtu=16436"])


if __name__ == "__main__":
    unittest.main()
