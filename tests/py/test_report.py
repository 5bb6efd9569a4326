"""tbtools.report_html and tbtools.report: every string of the page
escaped, table cell by table cell (clients too), the page's parts in
order, and what the page says of meta.json (an interrupted sweep)."""

import html.parser
import itertools
import json
import os
import subprocess
import sys
import tempfile
import unittest

from tbtools import report, report_html
from tbtools.report_html import Markup, el, render

EVIL = "<script>alert(1)</script> `touch x` $(touch y) '\" & <b>"


class Page(html.parser.HTMLParser):
    """A page read back: its elements (tag, attributes) in order, the text
    of each, and whether every element opened was closed."""

    VOID = {"meta", "img"}

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.tags, self.texts, self.open = [], [], []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag not in self.VOID:
            self.open.append(tag)

    def handle_endtag(self, tag):
        assert self.open and self.open[-1] == tag, f"</{tag}> closes {self.open[-1:]}"
        self.open.pop()

    def handle_data(self, data):
        self.texts.append(data)

    def names(self):
        return [t for t, _ in self.tags]

    def text(self):
        return "".join(self.texts)


class Render(unittest.TestCase):
    def test_text_is_escaped_markup_is_not(self):
        self.assertEqual(render(["<a>", Markup("<b>"), None, ("&",)]), "&lt;a&gt;<b>&amp;")

    def test_attributes_are_escaped(self):
        self.assertEqual(el("p", "x", class_='a"b<'), '<p class="a&quot;b&lt;">x</p>')

    def test_markup_made_from_text_stays_escaped(self):
        self.assertEqual(el("td", EVIL).count("<"), 2)   # <td> and </td> only


class Cells(html.parser.HTMLParser):
    """The text of every td and th of a page, in order."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.cells, self.inside = [], None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        if tag in ("td", "th"):
            self.inside = []

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.cells.append("".join(self.inside))
            self.inside = None

    def handle_data(self, data):
        if self.inside is not None:
            self.inside.append(data)


def cells(parts):
    return Cells(render(parts)).cells


class Tables(unittest.TestCase):
    def test_summary_every_cell_escaped(self):
        point = {"backend": EVIL + "b", "clients": EVIL + "c", "placement": EVIL + "p",
                 "n": EVIL + "n", "mb_per_sec_mean": EVIL + "m", "mb_per_sec_ci95": "1",
                 "cost_cpu_us_mean": "2.345", "cost_cpu_us_ci95": EVIL + "ci",
                 "wall_us_per_op_mean": "", "wall_us_per_op_ci95": ""}
        parts = report_html.summary_table([EVIL + "dim", "placement"], [point])
        got = cells(parts)
        want_head = ["backend", "clients", EVIL + "dim", "placement", "runs", "MB/sec",
                     "CPU µs per operation", "wall µs per operation, per client"]
        self.assertEqual(got[:8], want_head)
        self.assertEqual(got[8:], [EVIL + "b", EVIL + "c", "", EVIL + "p", EVIL + "n",
                                   EVIL + "m", "2.35 ± " + EVIL + "ci", ""])
        self.assertNotIn("<script", render(parts))
        # the clients cell, right-aligned, with its text escaped
        self.assertIn('<td class="n">&lt;script&gt;alert(1)&lt;/script&gt;', render(parts))

    def test_summary_means_and_intervals(self):
        self.assertEqual(report_html.mean_pm("146.454", "7.0449"), "146.45 ± 7.04")
        self.assertEqual(report_html.mean_pm("3", ""), "3.00")
        self.assertEqual(report_html.mean_pm("", "1"), "")

    def test_left_out_every_cell_escaped(self):
        run = {c: EVIL + c for c in report_html.LEFT_OUT_COLUMNS}
        got = cells(report_html.left_out([run]))
        self.assertEqual(got, list(report_html.LEFT_OUT_COLUMNS) + [EVIL + c for c in report_html.LEFT_OUT_COLUMNS])

    def test_left_out_has_the_varied_knobs(self):
        run = {"rep": "1", "backend": "tcp", "offload": "on", "mtu": "1500", "placement": EVIL, "status": "failed"}
        got = cells(report_html.left_out([run], ["offload", "mtu", "placement"]))
        self.assertEqual(got[:9], ["rep", "backend", "clients", "offload", "mtu", "placement", "status", "disturbed",
                                   "error"])
        self.assertEqual(got[9:15], ["1", "tcp", "", "on", "1500", EVIL])

    def test_left_out_none(self):
        self.assertIn("None: every run finished", render(report_html.left_out([])))

    def test_context_every_cell_escaped(self):
        facts = {"command": EVIL + "cmd", "rows": [(EVIL + "h", EVIL + "v")]}
        parts = report_html.context(EVIL + "name", facts, 1, 3)
        page = Page(render(parts))
        self.assertEqual(cells(parts), [EVIL + "h", EVIL + "v", "runs left out",
                                        "1 of 3 (failed, or disturbed by other work: below)"])
        self.assertIn("tbench sweep " + EVIL + "name", page.text())
        self.assertIn(EVIL + "cmd", page.text())
        self.assertEqual(page.names(), ["h1", "h2", "pre", "table", "tr", "th", "td", "tr", "th", "td", "a"])


class Decomposition(unittest.TestCase):
    def layer(self, **kw):
        layer = {"clients": "1", "label": "copy + wake-up (pipe − nop)", "mean": "25.18",
                 "ci95": "3.05", "method": "paired", "pairs": "3"}
        layer.update(kw)
        return render(report_html.layer_sentence(layer))

    def test_a_clear_layer(self):
        self.assertEqual(self.layer(), '<p class="clear">At 1 client, <b>copy + wake-up (pipe − nop)</b> adds '
                         "25.18 µs per operation (95% interval 22.13 to 28.23, paired over 3 reps): "
                         "larger than its error bar.</p>\n")

    def test_a_layer_that_covers_0(self):
        s = self.layer(clients="8", mean="-0.54", ci95="1.14", method="welch")
        self.assertTrue(s.startswith('<p class="covers">At 8 clients, '))
        self.assertIn("saves 0.54 µs per operation (95% interval -1.68 to 0.60, welch): its interval covers 0", s)

    def test_no_interval_is_not_clear(self):
        self.assertIn('class="covers"', self.layer(ci95="", method=""))

    def test_label_and_clients_escaped(self):
        p = Page(self.layer(label=EVIL, clients=EVIL, method=EVIL, pairs=EVIL))
        self.assertEqual(p.names(), ["p", "b"])
        self.assertIn(EVIL, p.text())

    def test_none(self):
        self.assertIn("No decomposition", render(report_html.decomposition(report_html.Decomposition(None, [], ""))))

    def test_different_paths_are_no_layer(self):
        s = self.layer(label="unix − pipe: different paths, not a layer", kind="different-paths", minuend="unix",
                       subtrahend="pipe", mean="14.31", ci95="1.74", pairs="5")
        self.assertEqual(s, '<p class="clear">At 1 client, <b>unix − pipe: different paths, not a layer</b>: unix '
                         "costs 14.31 µs per operation more than pipe (95% interval 12.57 to 16.05, paired over 5 reps),"
                         " a difference of two paths: larger than its error bar.</p>\n")
        self.assertNotIn("adds", s)
        self.assertIn("costs 4.75 µs per operation less than unix",
                      self.layer(kind="different-paths", minuend="tcp:on", subtrahend="unix", mean="-4.75"))

    def test_a_total_is_a_whole_cost(self):
        s = self.layer(label="tcp:off", kind="total", mean="21.28", ci95="2.37", method="")
        self.assertIn("<b>tcp:off</b> (its whole cost: no level below it was swept) is 21.28 µs per operation", s)
        self.assertNotIn("adds", s)

    def test_the_knob_values_decomposed_at(self):
        dec = report_html.Decomposition("cost_cpu_us", [], EVIL)
        page = Page(render(report_html.decomposition(dec)))
        self.assertIn("Decomposed at " + EVIL + ": the first value swept", page.text())
        self.assertEqual(page.names(), ["h2", "p", "p", "b"])
        self.assertNotIn("Decomposed at", render(report_html.decomposition(report_html.Decomposition("c", [], ""))))


class WholePage(unittest.TestCase):
    def test_parts_in_order_and_closed(self):
        point = {"backend": "pipe", "clients": "1", "n": "3"}
        layer = {"clients": "1", "label": EVIL, "mean": "1", "ci95": "0.5", "method": "", "pairs": ""}
        parts = report_html.page(EVIL, {"command": EVIL, "rows": [("ran", EVIL)]},
                                 [("throughput", b"\x89PNG")], [], [point],
                                 report_html.Decomposition("cost_cpu_us", [layer], ""), [{"status": EVIL}], 5)
        text = render(parts)
        page = Page(text)
        ids = [a["id"] for t, a in page.tags if t == "h2"]
        self.assertEqual(ids, ["context", "charts", "summary", "decomposition", "left-out"])
        self.assertEqual(page.open, [])
        self.assertNotIn("script", page.names())
        img = [a for t, a in page.tags if t == "img"]
        self.assertEqual(img, [{"alt": "throughput", "src": "data:image/png;base64,iVBORw=="}])
        self.assertEqual(text.count("<tr><td>pipe</td>"), 1)   # a row per point, a line each
        self.assertTrue(text.startswith("<!DOCTYPE html>\n") and text.endswith("</body></html>\n"))

    def test_no_charts(self):
        self.assertIn("No charts: tbench-plot drew none.", render(report_html.charts([])))


class Meta(unittest.TestCase):
    META = {"status": "complete", "start": "S", "end": "E", "command": "tbench-sweep --x",
            "host": {"name": "vm", "kernel": "6.1", "cpu_model": "EPYC", "cores_online": 2, "memory_kb": 24683628},
            "tbench": {"version": "tbench 0.1"},
            "sweep": {"time_s": 3, "warmup_s": 1, "reps": 3, "client_model": "processes", "mode": "lo",
                      "precision": {"pct": 3, "figure": "cost_cpu_us", "min_reps": 3, "max_reps": 12}},
            "context": {"start": {"loadavg": [2.78, 1.75, 3.0], "psi_cpu": {"some": {"avg10": 5.06, "avg60": 7.97}}}}}

    def rows(self, meta):
        return dict(report.facts(meta)["rows"])

    def test_sentences(self):
        rows = self.rows(self.META)
        self.assertEqual(rows["ran"], "S to E (complete)")
        self.assertEqual(rows["machine"], "vm, Linux 6.1, EPYC, 2 CPUs online, 23 GiB")
        self.assertEqual(rows["runs"], "3 s each after 1 s warm-up, 3 to 12 reps (until cost_cpu_us was "
                         "known to 3%), clients as processes, lo")
        self.assertEqual(rows["noise at the start"], "load average 2.78, 1.75, 3; CPU pressure (some) "
                         "5.06% over 10 s, 7.97% over 60 s")

    def test_fields_of_the_wrong_kind_leave_their_sentence_out(self):
        meta = dict(self.META, host="vm", tbench=[1], sweep=None, context={"start": {"loadavg": "1"}})
        rows = self.rows(meta)
        self.assertEqual([rows[k] for k in ("machine", "tbench", "runs", "noise at the start")], ["", "", "", ""])
        self.assertEqual(self.rows({})["ran"], " to  ()")

    def test_the_yardstick_row(self):
        point = {"backend": EVIL, "clients": 2, "n": 3, "mb_per_sec": {"mean": 1554.0, "ci95": 47.7},
                 "cost_cpu_us": {"mean": 6.7, "ci95": None}}
        y = {"dir": "yardstick", "duration_s": 36.2, "points": [point]}
        row = self.rows(dict(self.META, yardstick=y))["yardstick"]
        self.assertEqual(row, f"yardstick (36.2 s): {EVIL} 2: 1554 ±47.7 MB/s, 6.7 CPU us/op (n=3)")
        parts = report_html.context("x", report.facts(dict(self.META, yardstick=y)), 0, 3)
        self.assertIn(row, cells(parts))   # through the page's cells: escaped (test_context_every_cell_escaped)
        self.assertEqual(self.rows(self.META)["yardstick"], "none recorded")
        self.assertEqual(self.rows(dict(self.META, yardstick={"skipped": "--no-yardstick"}))["yardstick"],
                         "skipped (--no-yardstick)")
        self.assertTrue(self.rows(dict(self.META, yardstick=[1]))["yardstick"].startswith(
            "not readable: meta.json: field 'yardstick' must be an object or null"))

    def test_a_running_sweep_whose_process_is_gone_was_interrupted(self):
        gone = subprocess.Popen([sys.executable, "-c", "pass"])
        gone.wait()
        here = {"name": os.uname().nodename}
        self.assertEqual(report.status({"status": "running", "pid": gone.pid, "host": here}), "interrupted")
        self.assertEqual(report.status({"status": "running", "pid": os.getpid(), "host": here}), "running")
        self.assertEqual(report.status({"status": "running"}), "running")
        self.assertEqual(report.status({"status": "running", "pid": "12"}), "running")
        self.assertEqual(report.status({"status": "running", "pid": 0, "host": here}), "running")
        self.assertEqual(report.status({"status": "running", "pid": gone.pid, "host": {"name": "elsewhere"}}),
                         "running")
        self.assertEqual(report.status({"status": "complete", "pid": gone.pid}), "complete")

    def test_runs_left_out(self):
        runs = [{"status": "ok", "disturbed": ""}, {"status": "ok", "disturbed": "no"},
                {"status": "ok", "disturbed": "steal 5%"}, {"status": "failed", "disturbed": ""}]
        self.assertEqual(report.left_out(runs), runs[2:])


@unittest.skipUnless(os.environ.get("TBENCH_STATS"), "TBENCH_STATS names no tbench-stats")
class Program(unittest.TestCase):
    """tbench-report --no-plot on a sweep made here."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = os.path.join(self.tmp.name, "sweep <i>")
        os.mkdir(self.dir)
        stats = os.environ["TBENCH_STATS"]
        data = os.path.join(os.path.dirname(__file__), "..", "data", "run-cost.json")
        rows = [subprocess.run([stats, "row", "--header"], capture_output=True, text=True, check=True).stdout]
        # a knob's value carries the markup (tbench-stats refuses clients that are no number)
        for backend, c, placement, rep in itertools.product(("nop", "pipe"), ("1", "2"), ("same", "x<b>"), ("1", "2")):
            rows.append(subprocess.run([stats, "row", "--set", "backend=" + backend, "--set", "clients=" + c,
                                        "--set", "rep=" + rep, "--set", "placement=" + placement, data],
                                       capture_output=True, text=True, check=True).stdout)
        with open(os.path.join(self.dir, "runs.csv"), "w") as f:
            f.write("".join(rows))
        gone = subprocess.Popen([sys.executable, "-c", "pass"])
        gone.wait()
        with open(os.path.join(self.dir, "meta.json"), "w") as f:
            json.dump({"status": "running", "pid": gone.pid}, f)

    def tearDown(self):
        self.tmp.cleanup()

    def run_report(self, *args):
        entry = os.path.join(os.path.dirname(report.__file__), "..", "tbench-report")
        return subprocess.run([sys.executable, entry] + list(args), capture_output=True, text=True)

    def test_page(self):
        out = os.path.join(self.tmp.name, "page", "index.html")
        p = self.run_report("--no-plot", "--out", out, self.dir)
        self.assertEqual((p.returncode, p.stdout), (0, out + "\n"), p.stderr)
        with open(out) as f:
            text = f.read()
        self.assertIn("<title>tbench sweep sweep &lt;i&gt;</title>", text)
        self.assertIn('<tr><td>pipe</td><td class="n">2</td><td>x&lt;b&gt;</td>', text)
        self.assertIn("(interrupted)</td>", text)
        self.assertIn("0 of 16 (failed", text)
        self.assertIn('Decomposed at <b>placement=same</b>', text)
        self.assertEqual(os.listdir(os.path.dirname(out)), ["index.html"])

    def test_clients_that_are_text_are_bad_input(self):
        """tbench-stats refuses them, naming file, line and column: no page."""
        runs = os.path.join(self.dir, "runs.csv")
        with open(runs) as f:
            lines = f.read().splitlines(True)
        lines[-1] = lines[-1].replace(",2,", ",2<b>,", 1)
        with open(runs, "w") as f:
            f.write("".join(lines))
        out = os.path.join(self.tmp.name, "page", "index.html")
        p = self.run_report("--no-plot", "--out", out, self.dir)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(f"runs.csv:{len(lines)}: column 2 (clients): '2<b>' is not a number of clients", p.stderr)
        self.assertFalse(os.path.exists(out))

    def test_usage(self):
        for args, says in ((["--no-plot"], "missing DIR"), ([self.dir, self.dir], "one DIR only"),
                           ([self.tmp.name], "has no runs.csv"), (["--out"], "--out needs a value"),
                           (["--no-plto", self.dir], "did you mean '--no-plot'")):
            p = self.run_report(*args)
            self.assertEqual(p.returncode, 2, args)
            self.assertIn(says, p.stderr)


if __name__ == "__main__":
    unittest.main()
