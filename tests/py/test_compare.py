"""tbtools.compare: what it says of two sweeps' sittings before the figures."""

import io
import json
import os
import tempfile
import unittest

from tbtools import compare, fingerprint


def sweep_dir(root, name, sitting):
    d = os.path.join(root, name)
    os.mkdir(d)
    meta = {"status": "done"}
    if sitting is not None:
        meta["sitting"] = sitting
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f)
    return d


class Sittings(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.base = fingerprint.sitting("tbench (tbench suite) 0.1.0, git a")

    def said(self, a, b):
        out = io.StringIO()
        compare.say_sittings(a, b, out)
        return out.getvalue()

    def test_a_changed_kernel_build_and_boot_are_named(self):
        a = sweep_dir(self.tmp.name, "a", self.base)
        b = sweep_dir(self.tmp.name, "b", dict(self.base, kernel_build="#7 new", boot_id="other-boot"))
        text = self.said(a, b)
        self.assertIn("differ in 2 field(s)", text)
        self.assertIn("kernel build (uname -v): " + str(self.base["kernel_build"]) + " -> #7 new", text)
        self.assertIn("boot (/proc/sys/kernel/random/boot_id)", text)

    def test_one_sitting_says_so(self):
        a = sweep_dir(self.tmp.name, "a", self.base)
        b = sweep_dir(self.tmp.name, "b", dict(self.base))
        self.assertIn("share every field", self.said(a, b))

    def test_nothing_said_without_a_fingerprint(self):
        a = sweep_dir(self.tmp.name, "a", None)
        b = sweep_dir(self.tmp.name, "b", self.base)
        self.assertEqual(self.said(a, b), "")
        self.assertEqual(self.said(os.path.join(a, "runs.csv"), b), "")

    def test_a_hostile_meta_is_only_read(self):
        a = sweep_dir(self.tmp.name, "a", dict(self.base, kernel_build="$(touch x)`y`"))
        b = sweep_dir(self.tmp.name, "b", "not a dict")
        self.assertEqual(self.said(a, b), "")


if __name__ == "__main__":
    unittest.main()
