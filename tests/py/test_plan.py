"""tbtools.plan: client counts, offload settings, points, the order of
the runs (interleaved reps, shuffled blocks by seed), what is left to do,
run names and the time estimate."""

import unittest

from tbtools import plan
from tbtools.errors import UsageError


class NoKnobs:
    """knobs.Knobs as plan.points sees it, with nothing varied."""

    @staticmethod
    def combos(backend):
        return [()]


def points(backends=("pipe", "tcp"), clients=(1, 2, 4)):
    return plan.points(list(backends), list(clients), plan.settings({}), ["tcp"], NoKnobs())


class ClientsAndSettings(unittest.TestCase):
    def test_clients_lists_and_ranges(self):
        self.assertEqual(plan.clients("1..8,12"), [1, 2, 4, 8, 12])
        self.assertEqual(plan.clients("3..20"), [3, 6, 12])
        for bad in ("1,x", "8..2", "0", "", "1,,2"):
            with self.assertRaises(UsageError, msg=bad):
                plan.clients(bad)

    def test_settings_cross_product_separate_wins(self):
        got = plan.settings({"offload": ["on"], "tso": ["on", "off"], "gso": ["off"]})
        self.assertEqual(got, [("on:tso=on:gso=off", "on", "off", ""), ("on:tso=off:gso=off", "off", "off", "")])
        self.assertEqual([s[0] for s in plan.settings({})], ["on", "off"])
        self.assertEqual(plan.settings({"gro": ["on"]}), [("gro=on", "", "", "on")])
        with self.assertRaises(UsageError):
            plan.settings({"offload": ["maybe"]})

    def test_points_offload_only_where_bytes_cross_a_device(self):
        labels = [(p.backend, p.clients, p.label) for p in points(clients=(1,))]
        self.assertEqual(labels, [("pipe", 1, "n/a"), ("tcp", 1, "on"), ("tcp", 1, "off")])


class Order(unittest.TestCase):
    def test_reps_interleaved_and_blocks_by_client_count(self):
        runs = plan.runs(points(), 2, seed=7)
        self.assertEqual(len(runs), 18)
        self.assertEqual([r.rep for r in runs], [1] * 9 + [2] * 9)
        self.assertEqual([r.point.clients for r in runs], [1, 1, 1, 2, 2, 2, 4, 4, 4] * 2)

    def test_same_seed_same_order_other_seeds_other_orders(self):
        pts = points(("pipe", "tcp", "nop"), (1, 2))
        order = {s: [(r.rep, plan.describe(r.point)) for r in plan.runs(pts, 3, s)] for s in (1, 2, 3, 4)}
        self.assertEqual(order[1], [(r.rep, plan.describe(r.point)) for r in plan.runs(pts, 3, 1)])
        self.assertEqual(len({tuple(o) for o in order.values()}), 4)
        self.assertEqual({tuple(sorted(o)) for o in order.values()}.__len__(), 1, "the same runs, whatever the seed")

    def test_each_rep_drawn_anew(self):
        runs = plan.runs(points(("pipe", "tcp", "nop", "unix"), (1,)), 6, seed=3)
        blocks = {tuple(plan.describe(r.point) for r in runs if r.rep == rep) for rep in range(1, 7)}
        self.assertGreater(len(blocks), 1)

    def test_seeds(self):
        self.assertTrue(plan.is_seed("2147483647"))
        self.assertFalse(plan.is_seed("2147483648"))
        self.assertFalse(plan.is_seed("abc"))
        self.assertTrue(plan.is_seed(plan.new_seed()))


class Todo(unittest.TestCase):
    def test_runs_done_are_left_out(self):
        runs = plan.runs(points(("pipe",), (1, 2)), 2, seed=1)
        done = [["pipe", "1", "n/a", "1"], ["pipe", "2", "n/a", "2"]]
        left = [(r.point.clients, r.rep) for r in plan.todo(runs, done, [])]
        self.assertEqual(sorted(left), [(1, 2), (2, 1)])

    def test_knob_columns_take_part_in_the_key(self):
        p = plan.Point("tcp", 1, "on", "on", "on", "", True, (("mtu", "1500"),))
        self.assertEqual(plan.point_key(p, ["mtu", "cc"]), ("tcp", "1", "on", "1500", "-"))


class NamesAndTime(unittest.TestCase):
    def test_run_id(self):
        p = plan.Point("tcp", 16, "off:tso=on", "on", "off", "", True, (("mtu", "1500"), ("cc", "a/b")))
        self.assertEqual(plan.run_id(plan.Run(2, p)), "tcp_c16_off_tso-on_mtu-1500_cc-ab_r2")
        p = plan.Point("pipe", 4, "n/a", "", "", "", False, ())
        self.assertEqual(plan.run_id(plan.Run(1, p)), "pipe_c4_na_r1")

    def test_estimate(self):
        # 18 x (2.5 + 1 + 0.5 s) + 0.04 s x 42 clients = 73.68 s
        self.assertEqual(plan.estimate_s(18, "2.5", "1", 42), 73)
        self.assertEqual([plan.fmt_secs(s) for s in (42, 185, 3720)], ["42s", "3m05s", "1h02m"])
        self.assertEqual(plan.secs_to_ms("2.5"), 2500)
        self.assertFalse(plan.is_secs("-1"))


if __name__ == "__main__":
    unittest.main()
