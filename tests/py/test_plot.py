"""tbench-plot's modules: the geometry and data of its charts on small
made-up inputs, and a results directory of hostile strings plotted with
nothing run (PYTHONPATH=scripts; TBENCH_STATS names the build's)."""

import csv
import io
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from tbtools import (gnuplot, picked, plot_data, plot_layers, plot_lines, plot_meta, plot_paths, plot_series,
                     plot_style, text)

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts")
MODEL = plot_data.Model(
    "kind\tlower\tupper\tname\tlabel\n"
    "stack\t\tnop\tharness\tharness (nop)\n"
    "stack\tnop\tpipe\tcopy_wakeup\tcopy + wake-up (pipe − nop)\n"
    "stack\tunix\ttcp:off\ttcpip\tTCP/IP\n"
    "stack\ttcp:off\ttcp:on\toffload\tTSO/GSO on − off (tcp)\n"
    "sibling\ttcp\turing\turing-tcp\turing − tcp\n")


class Style(unittest.TestCase):
    def test_cksum_is_posix(self):
        # printf 'tcp\n' | cksum; printf '' | cksum
        self.assertEqual(plot_style.posix_cksum(b"tcp\n"), 1811007130)
        self.assertEqual(plot_style.posix_cksum(b""), 4294967295)

    def test_colour_by_registry_place_else_checksum(self):
        self.assertEqual(plot_style.color_of("b", ["a", "b"]), plot_style.PALETTE[1])
        self.assertIn(plot_style.color_of("zz", ["a"]), plot_style.OTHER)

    def test_shade_darker_and_lighter(self):
        self.assertEqual(plot_style.shade("ff8000", 0.5), "804000")
        self.assertEqual(plot_style.shade("000000", 1.5), "808080")
        self.assertEqual(plot_style.shade("1f77b4", 1), "1f77b4")

    def test_series_styles_apart(self):
        styles = {plot_style.series_style("x", k, ["x"]) for k in range(25)}
        self.assertEqual(len(styles), 25)

    def test_layer_colour(self):
        registry = ["tcp", "uring"]
        self.assertEqual(plot_style.layer_color("uring-tcp", 0, MODEL, registry), plot_style.PALETTE[1])
        self.assertEqual(plot_style.layer_color("copy_wakeup", 0, MODEL, registry), plot_style.LAYER_PALETTE[1])
        self.assertEqual(plot_style.layer_color("other", 7, MODEL, registry), plot_style.LAYER_PALETTE[2])


class Geometry(unittest.TestCase):
    def test_linear_from_zero(self):
        self.assertEqual(gnuplot.y_limits([10, 20, 30], [(20, 5)], True, "auto"), (False, 0, 30 * 1.12, 0))

    def test_log_when_span_over_20(self):
        log, ymin, ymax, _ = gnuplot.y_limits([1, 100], [], True, "auto")
        self.assertTrue(log)
        self.assertEqual((ymin, ymax), (0.5, 200))
        self.assertFalse(gnuplot.y_limits([1, 100], [], True, "no")[0])

    def test_negative_allowed_and_cut_bars(self):
        log, ymin, ymax, ncut = gnuplot.y_limits([-10, 5], [(-10, 5), (5, 100), (0, 0)], False, "auto")
        self.assertFalse(log)
        self.assertAlmostEqual(ymin, -11.5)
        self.assertAlmostEqual(ymax, 5.6)
        self.assertEqual(ncut, 2)

    def test_facets_in_rows_of_three(self):
        panels, key = plot_lines.facet_geometry(4, 2, 1000)
        self.assertEqual([p[4] for p in panels], [0, 1, 2, 0])
        self.assertEqual(panels[0][0], "0.0800")
        self.assertLess(float(panels[3][2]), float(panels[0][3]))  # the second row below the first
        self.assertEqual(key, "%.4f" % ((2 * 24 + 30) / 1000 + 10 / 1000))

    def test_number(self):
        self.assertIsNone(gnuplot.number(""))
        self.assertIsNone(gnuplot.number("nan"))
        self.assertEqual(gnuplot.number("1.5"), 1.5)


class Series(unittest.TestCase):
    def test_lines_titled_by_varied_dims(self):
        ss = plot_series.SeriesSet("/x/tp", ["mtu", "placement"], False)
        ss.add([["on", "tcp", "tcp", "1500", "same", "1", "10", "1"],
                ["on", "tcp", "tcp", "-", "split", "1", "12", ""],
                ["n/a", "pipe", "pipe", "n/a", "same", "1", "30", "2"],
                ["n/a", "pipe", "pipe", "n/a", "same", "2", "", "2"]], net=False)
        self.assertEqual([ln.title for ln in ss.lines],
                         ["tcp mtu=1500 placement=same", "tcp mtu=default placement=split", "pipe placement=same"])
        self.assertEqual([ln.k for ln in ss.lines], [0, 1, 0])
        self.assertEqual(ss.dat[(0, 1)], [("1", "12", "0")])
        self.assertEqual(len(ss.dat[(0, 2)]), 1)  # no value, no point

    def test_runs_only_of_known_lines_and_net(self):
        ss = plot_series.SeriesSet("/x/tp", [], True)
        ss.add([["on", "a", "tcp", "1", "10", "1"], ["n/a", "a", "pipe", "1", "9", "1"]], net=True)
        ss.add([["on", "a", "tcp", "1", "11"], ["on", "b", "tcp", "1", "12"], ["on", "a", "unix", "1", "3"]],
               net=True, runs=True)
        self.assertEqual([ln.backend for ln in ss.lines], ["tcp"])
        self.assertEqual(ss.runs, {(0, 0): [("1", "11", "0")]})

    def test_drop_backend_keeps_ids(self):
        ss = plot_series.SeriesSet("/x/tp", [], False)
        ss.add([["-", "", "nop", "1", "4000", "1"], ["-", "", "tcp", "1", "300", "1"]], net=False)
        ss.drop_backend("nop")
        self.assertEqual([(ln.id, ln.backend) for ln in ss.lines], [(1, "tcp")])
        self.assertEqual(ss.values(), ["300"])

    def test_layers_slots_and_cpus(self):
        rows = [["1", "harness", "h", "0", "2", "2", "0.1"], ["4", "harness", "h", "0", "3", "3", ""],
                ["1", "copy", "c", "2", "5", "3", "0.2"]]
        layers = plot_series.Layers("/x/l", rows, [1, 2, 4], max_clients=2)
        self.assertEqual([ly.name for ly in layers.layers], ["harness", "copy"])
        self.assertEqual(layers.dat[0], [("0", "0", "2", "2", "0.1")])
        self.assertEqual(layers.total, {0: "5"})

    def test_trace_bars_stack_order_and_parts(self):
        parts = [("u", "user"), ("s", "syscalls"), ("b", "blocked")]
        rows = [["tcp", "1", "10", "1", "0", "5"], ["nop", "1", "4", "1", "0", "2"], ["x", "1", "9", "", "", ""]]
        bars = plot_series.TraceBars("/x/t", rows, [1], parts, [], ["nop", "tcp"])
        self.assertEqual([p[1] for p in bars.parts], ["user", "blocked"])  # syscalls 0 everywhere
        self.assertEqual(sorted((round(b[0], 2), b[1], b[3]) for b in bars.bars), [(-0.21, 3.0, "nop"), (0.21, 6.0, "tcp")])
        self.assertEqual(bars.half_width(), "%.4f" % (0.42 * 0.42))

    def test_awk_number(self):
        self.assertEqual(plot_series.awk_number(3.0), "3")
        self.assertEqual(plot_series.awk_number(1 / 3), "0.333333")


class FakeCtx:
    def __init__(self, swept, chosen=None):
        self.model, self.swept, self.vary_all = MODEL, lambda b, o="": (b, o) in swept, ["offload", "mtu"]
        self.picked = chosen or {}


class Levels(unittest.TestCase):
    def test_offload_left_alone_is_one_level(self):
        self.assertEqual(plot_layers.stack_levels_swept(FakeCtx(set())), ["nop", "pipe", "tcp"])
        self.assertEqual(plot_layers.stack_levels_swept(FakeCtx({("tcp", "on")})),
                         ["nop", "pipe", "tcp:off", "tcp:on"])

    def test_words_and_notes(self):
        self.assertEqual(plot_layers.level_words("tcp:on"), "tcp, offload on")
        self.assertEqual(plot_layers.level_words("tcp:mtu=1500"), "tcp, mtu=1500")
        self.assertEqual(plot_layers.picked_note(FakeCtx(set())), "")
        ctx = FakeCtx(set(), {"mtu": "1500", "placement": "-"})
        self.assertIn("Decomposed at mtu=1500, placement=default:", plot_layers.picked_note(ctx))
        self.assertEqual(plot_layers.picked_title(ctx), " (decomposed at mtu=1500, placement=default)")
        self.assertEqual(plot_layers.axis_labels([1, 4]), "'1' 0, '4' 1")


class Picked(unittest.TestCase):
    """The point a decomposition is made at where knobs vary."""
    TABLE = ("backend,clients,mtu,placement\n"
             "nop,1,n/a,n/a\n"
             "tcp,1,65536,split\n"
             "tcp,1,1500,same\n"
             "tcp,2,65536,same\n")

    def test_first_value_of_each_not_na(self):
        rows = picked.dict_rows(self.TABLE)
        self.assertEqual(picked.first_values(rows, ["mtu", "placement", "rate"]), {"mtu": "65536", "placement": "split"})

    def test_rows_cut_to_the_point_with_the_na_ones(self):
        kept = picked.keep_point(self.TABLE, {"mtu": "65536", "placement": "split"})
        self.assertEqual(kept, "backend,clients,mtu,placement\nnop,1,n/a,n/a\ntcp,1,65536,split\n")
        self.assertEqual(picked.keep_point(self.TABLE, {}), self.TABLE)


def layers_of(rows, xtics=(1, 2, 8)):
    return plot_series.Layers("/x/l", [list(r) for r in rows], list(xtics))


class Labels(unittest.TestCase):
    """The numbers on the stacks: apart, the total above the stack."""

    def test_spread_keeps_a_gap(self):
        got = plot_series.spread([(10.0, "a"), (10.5, "b"), (3.0, "c"), (11.0, "d")], 2.0)
        self.assertEqual(got, [(3.0, "c"), (10.0, "a"), (12.0, "b"), (14.0, "d")])

    def test_total_and_a_layer_do_not_overlap(self):
        # at 8 clients: a thick layer, then a negative one that ends inside it
        layers = layers_of([["8", "base", "b", "0", "36", "36", "1"], ["8", "top", "t", "36", "33", "-3", "2"]])
        lo, hi = layers.y_limits()
        self.assertEqual((lo, hi), (0.0, 37.0))  # the base's interval
        gap = 1.5
        labels = layers.labels(gap, 1.5 * gap)
        ys = sorted(y for _, y, _, _ in labels)
        self.assertTrue(all(b - a >= gap - 1e-9 for a, b in zip(ys, ys[1:])), labels)
        total = [(y, text) for _, y, text, is_total in labels if is_total]
        self.assertEqual(total, [(37.5, "33.0")])   # above the stack's highest box (36), not at its top (33)
        self.assertIn(("2", 18.0, "36.00", False), labels)
        self.assertIn(("2", 34.5, "-3.00", False), labels)

    def test_a_thin_layer_has_no_number(self):
        layers = layers_of([["1", "base", "b", "0", "30", "30", ""], ["1", "thin", "t", "30", "30.5", "0.5", ""]])
        self.assertEqual([t for _, _, t, _ in layers.labels(1.0, 1.5)], ["30.00", "30.5"])

    def test_negative_layers_hide_nothing(self):
        class Ctx:
            model, registry, xtics, size = MODEL, [], [1, 2, 8], (1280, 760)
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        layers = plot_series.Layers(tmp + "/l", [["1", "harness", "h", "0", "36", "36", "1"],
                                                 ["1", "offload", "o", "36", "30", "-6", "2"]], [1, 2, 8])
        script = plot_layers.layer_panel(Ctx(), layers, "t", "y", "0.1", "0.5")
        negative = [c for c in script.split(gnuplot.CLAUSE_SEP) if "$3 < $2" in c]
        self.assertEqual(len(negative), 2)
        self.assertTrue(all("fs empty" in c and "solid" not in c and "pattern" not in c for c in negative), negative)
        with open(tmp + "/l.labels") as f, open(tmp + "/l.totals") as g:
            self.assertEqual((len(f.read().splitlines()), g.read().split()[2]), (2, '"30.0"'))


class Paths(unittest.TestCase):
    ROWS = [["1", "unix-pipe", "unix − pipe: different paths, not a layer", "unix", "pipe", "14.3", "1.7", "26.3",
             "40.6", "different-paths"],
            ["1", "copy", "copy", "pipe", "nop", "26", "1", "0.1", "26.3", "layer"],
            ["3", "unix-pipe", "x", "unix", "pipe", "1", "1", "1", "2", "different-paths"]]

    def test_only_different_paths_pairs(self):
        pairs = plot_paths.pairs_of(self.ROWS, [1, 2])
        self.assertEqual([(p.name, p.lower, p.upper) for p in pairs], [("unix-pipe", "pipe", "unix")])
        self.assertEqual(pairs[0].totals, {0: (26.3, 40.6, 14.3, 1.7)})

    def test_parts_side_by_side(self):
        pairs = plot_paths.pairs_of(self.ROWS, [1, 2])
        plot_paths.add_parts(pairs, [["1", "unix-pipe", "clients", "trace_clients_user_us", "user", "3.5", "3.4"],
                                     ["1", "unix-pipe", "servers", "trace_servers_user_us", "user", "9", "9"],
                                     ["1", "unix-pipe", "clients", "trace_clients_wakeups", "wakeups", "1", "1"],
                                     ["1", "unix-pipe", "clients", "trace_clients_blocked_us", "blocked", "14", "12"]],
                             [1, 2])
        self.assertEqual(pairs[0].parts, {0: {"minuend": [("user", 3.5), ("blocked", 14.0)],
                                              "subtrahend": [("user", 3.4), ("blocked", 12.0)]}})
        self.assertEqual(plot_paths.part_names(pairs), ["user", "blocked"])
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        self.assertEqual(plot_paths.write_parts(tmp + "/p", pairs[0], ["user", "blocked"]), 17.5)
        with open(tmp + "/p.1.dat") as f:   # blocked: on user, left the lower level's, right the upper's
            self.assertEqual(f.read(), "-0.2 3.4 15.4\n0.2 3.5 17.5\n")


class Meta(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)

    def write(self, doc):
        with open(os.path.join(self.dir, "meta.json"), "w") as f:
            json.dump(doc, f)

    def test_title_as_jq_wrote_it(self):
        self.write({"host": {"name": "h", "kernel": "6.1", "cores_online": 2}, "start": "2026-12-01T10:00",
                    "sweep": {"time_s": 10.0, "reps": 3, "client_model": "threads", "mode": "veth", "veth_mtu": 9000}})
        self.assertEqual(plot_meta.title_of(self.dir),
                         "h, Linux 6.1, 2 CPUs, 2026-12-01; 10 s runs, 3 reps, clients as threads, veth MTU 9000")
        self.write({"host": {"name": "h"}})
        self.assertEqual(plot_meta.title_of(self.dir), "h, Linux null, null CPUs, null; null s runs, null reps, loopback")

    def test_cpus_and_mtu(self):
        self.write({"host": {"cores_online": 3}, "devices": [{"device": "lo", "mtu": 65536}]})
        self.assertEqual(plot_meta.cpus_of(self.dir), 3)
        self.assertEqual(plot_meta.mtu_note(self.dir), " (lo MTU 65536)")
        self.write({"host": {"cores_online": "x"}})
        self.assertEqual(plot_meta.cpus_of(self.dir), len(os.sched_getaffinity(0)))
        self.assertEqual(plot_meta.mtu_note(self.dir), "")

    def test_no_meta_is_the_directory_name(self):
        self.assertEqual(plot_meta.title_of(self.dir), os.path.basename(self.dir))

    def test_sweep_labels_unique_and_csv_safe(self):
        a, b = os.path.join(self.dir, 'x,"y\nz'), os.path.join(self.dir, "s")
        os.makedirs(a)
        os.makedirs(os.path.join(b, "s"))
        labels = plot_data.sweep_labels([a, b, os.path.join(b, "s")])
        self.assertEqual(list(labels), ["x__y_z", "s", "s#2"])


@unittest.skipUnless(shutil.which("gnuplot"), "needs gnuplot")
class Quotes(unittest.TestCase):
    def test_runs_of_quotes_read_back(self):
        # gnuplot 5.4 misreads '' at a literal's start or beside another
        s = "''x'' ''''y' it's\n'"
        p = subprocess.run(["gnuplot"], input=f"print {text.gnuplot_str(s)}\n", capture_output=True, text=True)
        self.assertEqual(p.stderr, s + "\n")


# A command a results directory must never get run; it would leave MARK.
HOSTILE = "`touch {m}1` $(touch {m}2) '\"\n<script>touch {m}3</script> ''; system('touch {m}4')"


@unittest.skipUnless(os.environ.get("TBENCH_STATS") and shutil.which("gnuplot"), "needs TBENCH_STATS and gnuplot")
class HostileResults(unittest.TestCase):
    """Strings of a results directory reach the charts as text: its
    meta.json's host name and label, its directory's name, a knob value."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)
        self.stats = os.path.abspath(os.environ["TBENCH_STATS"])
        self.mark = os.path.join(self.tmp, "MARK")

    def sweep(self, name, host):
        d = os.path.join(self.tmp, name)
        os.makedirs(d)
        header = subprocess.run([self.stats, "row", "--header"], capture_output=True, text=True,
                                check=True).stdout.strip().split(",")
        knobs = subprocess.run([self.stats, "row", "--knobs"], capture_output=True, text=True,
                               check=True).stdout.split()
        out = io.StringIO()
        w = csv.DictWriter(out, header, restval="", lineterminator="\n")
        w.writeheader()
        for backend, mb in (("nop", 4000), ("pipe", 800)):
            for placement in ("same", "x`touch MARK5`$(touch MARK6)'q"):
                for clients in (1, 2):
                    for rep in (1, 2):
                        row = dict.fromkeys(knobs, "-")
                        row.update(backend=backend, clients=clients, rep=rep, model="processes", status="ok",
                                   offload="n/a", placement=placement, mb_per_sec=mb * clients + rep,
                                   ops_per_sec=(mb * clients + rep) * 200, cpu_us_per_mb=1e6 / mb)
                        w.writerow(row)
        with open(os.path.join(d, "runs.csv"), "w") as f:
            f.write(out.getvalue())
        with open(os.path.join(d, "meta.json"), "w") as f:
            json.dump({"status": "running", "pid": 999999999, "label": host,
                       "host": {"name": host, "kernel": host, "cores_online": 2}, "start": "2026-12-01T10:00",
                       "sweep": {"time_s": 1, "reps": 2, "label": host}}, f)
        return d

    def plot(self, *args):
        env = dict(os.environ, TBENCH_STATS=self.stats)
        return subprocess.run([os.path.join(SCRIPTS, "tbench-plot")] + list(args), cwd=self.tmp, env=env,
                              capture_output=True, text=True)

    def assert_nothing_ran(self):
        left = [f for f in os.listdir(self.tmp) if f.startswith("MARK")]
        self.assertEqual(left, [], "a string of the results directory was run")

    def test_one_sweep(self):
        host = HOSTILE.format(m=self.mark)
        d = self.sweep("hostile", host)
        p = self.plot("--keep-data", os.path.join(self.tmp, "keep"), d)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assert_nothing_ran()
        self.assertGreater(os.path.getsize(os.path.join(d, "throughput.png")), 0)
        with open(os.path.join(d, "throughput.svg")) as f:
            svg = f.read()
        self.assertIn(f"$(touch {self.mark}2)", svg)  # drawn as it is
        self.assertIn("placement=x`touch MARK5`", svg)

    def test_two_sweeps_of_hostile_names(self):
        name = "b`touch MARK7`$(touch MARK8)'\"\n<script>"
        a, b = self.sweep("a", "h"), self.sweep(name, HOSTILE.format(m=self.mark))
        out = os.path.join(self.tmp, "out")
        p = self.plot("--out-dir", out, a, b)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assert_nothing_ran()
        self.assertGreater(os.path.getsize(os.path.join(out, "throughput.png")), 0)
        with open(os.path.join(out, "throughput.svg")) as f:
            self.assertIn("b`touch MARK7`$(touch MARK8)'_", f.read())


RESULTS = os.path.join(SCRIPTS, "..", "results")


class Samples(unittest.TestCase):
    """The committed sample sweeps plotted into a temporary directory: one
    of tbench --trace runs (different paths), one that varies mtu."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        cls.keep = {}
        for name in ("2026-12-03-2340-vm-trace", "2026-12-01-0645-placement-mtu"):
            src = os.path.join(RESULTS, name)
            if not os.path.isfile(os.path.join(src, "runs.csv")):
                raise unittest.SkipTest(f"no sample {src}")
            keep = cls.keep[name] = os.path.join(cls.tmp, name + ".keep")
            p = subprocess.run([os.path.join(SCRIPTS, "tbench-plot"), "--keep-data", keep,
                                "--out-dir", os.path.join(cls.tmp, name), src], capture_output=True, text=True)
            if p.returncode != 0:
                raise AssertionError(p.stderr)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def script(self, sample, chart):
        with open(os.path.join(self.keep[sample], chart + ".gp")) as f:
            return f.read()

    def test_every_chart_says_what_its_bars_are(self):
        for sample, keep in self.keep.items():
            for gp in sorted(f for f in os.listdir(keep) if f.endswith(".gp")):
                said = re.search(r"bars: (95% (confidence )?interval|each the mean|right)", self.script(sample, gp[:-3]),
                                 re.IGNORECASE)
                self.assertTrue(said, f"{sample}: {gp} does not say what its bars are")
        self.assertIn("'bars: 95% interval of the mean, 4–5 reps'", self.script("2026-12-03-2340-vm-trace", "cpu"))

    def test_segments_titled_from_the_data(self):
        gp = self.script("2026-12-01-0645-placement-mtu", "segments")
        self.assertIn("(MTU 1500 and 65536, a line each)", gp)
        self.assertNotIn("lo MTU", gp)

    def test_the_knob_values_decomposed_at_are_named(self):
        gp = self.script("2026-12-01-0645-placement-mtu", "decomposition")
        self.assertIn("(decomposed at mtu=1500, placement=same)", gp)
        self.assertIn("Decomposed at mtu=1500, placement=same:", gp)
        self.assertNotIn("decomposed at", self.script("2026-12-03-2340-vm-trace", "decomposition"))

    def test_only_layers_are_stacked(self):
        keep = self.keep["2026-12-03-2340-vm-trace"]
        with open(os.path.join(keep, "lcpu.list")) as f:
            names = [ln.split("\t")[1] for ln in f.read().splitlines()]
        self.assertEqual(names, ["harness", "tcpip", "offload"])
        with open(os.path.join(self.keep["2026-12-01-0645-placement-mtu"], "lcpu.list")) as f:
            self.assertIn("tcp:off: its whole cost", f.read())

    def test_different_paths_side_by_side_by_part(self):
        gp = self.script("2026-12-03-2340-vm-trace", "paths")
        self.assertIn("unix − pipe: different paths, not a layer", gp)
        self.assertIn("tcp − unix: different paths, not a layer", gp)
        keep = self.keep["2026-12-03-2340-vm-trace"]
        with open(os.path.join(keep, "paths.1.names")) as f:
            self.assertEqual([ln.split()[2] for ln in f.read().splitlines()][:2], ['"pipe"', '"unix"'])
        self.assertTrue(os.path.isfile(os.path.join(keep, "paths.1.0.dat")))
        self.assertGreater(os.path.getsize(os.path.join(self.tmp, "2026-12-03-2340-vm-trace", "paths.png")), 0)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "2026-12-01-0645-placement-mtu", "paths.png")))


if __name__ == "__main__":
    unittest.main()
