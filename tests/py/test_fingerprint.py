"""tbtools.fingerprint: a sitting's fingerprint and what differs between two."""

import json
import unittest

from tbtools import fingerprint


class Sitting(unittest.TestCase):
    def test_every_field_there_and_json(self):
        f = fingerprint.sitting("tbench (tbench suite) 0.1.0, git x")
        self.assertEqual(set(f), set(fingerprint.FIELDS))
        json.dumps(f)   # meta.json takes it as it is
        self.assertTrue(f["kernel_release"])
        self.assertGreaterEqual(f["cpus_online"], 1)
        self.assertEqual(f["tbench"], "tbench (tbench suite) 0.1.0, git x")

    def test_same_sitting_no_difference(self):
        self.assertEqual(fingerprint.differences(fingerprint.sitting(), fingerprint.sitting()), [])

    def test_a_changed_field_is_named(self):
        a = fingerprint.sitting()
        b = dict(a, kernel_build="#2 SMP PREEMPT_DYNAMIC new", boot_id="other")
        diff = fingerprint.differences(a, b)
        self.assertEqual([d[0] for d in diff], ["kernel_build", "boot_id"])
        self.assertEqual(diff[0][3], "#2 SMP PREEMPT_DYNAMIC new")

    def test_a_field_missing_on_one_side_differs(self):
        a = fingerprint.sitting()
        b = {k: v for k, v in a.items() if k != "clocksource"}
        if a["clocksource"] is None:
            self.skipTest("no clock source here")
        self.assertEqual([d[0] for d in fingerprint.differences(a, b)], ["clocksource"])


if __name__ == "__main__":
    unittest.main()
