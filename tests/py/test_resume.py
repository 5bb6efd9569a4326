"""tbtools.resume: command lines split with the parser's own table of
options, compared as parsed values; meta.json's argv checked (missing, a
string, not strings, a session's option such as --tbench: errors naming
the file and field); the options kept round-trip."""

import json
import os
import tempfile
import unittest

from tbtools import resume, sweep
from tbtools.errors import UsageError


def sweep_dir(argv):
    """A results directory whose meta.json keeps ARGV (any JSON value)."""
    d = tempfile.mkdtemp(prefix="test-resume.")
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump({"argv": argv, "sweep": {"order_seed": 5}}, f)
    return d


class Split(unittest.TestCase):
    def setUp(self):
        self.p = sweep.parser()

    def test_values_starting_with_a_dash_stay_the_options(self):
        groups, tail = resume.split(self.p, ["--label", "-rc1", "-t", "2", "--veth", "--", "-c", "x.txt"])
        self.assertEqual(groups, [["--label", "-rc1"], ["-t", "2"], ["--veth"]])
        self.assertEqual(tail, ["-c", "x.txt"])
        opts = resume.parse(self.p, ["--label", "-rc1", "--", "-T", "TCP_NODELAY"])
        self.assertEqual((opts.label, opts.extra), ("-rc1", ["-T", "TCP_NODELAY"]))

    def test_spellings_parse_alike(self):
        a = resume.config(resume.parse(self.p, ["-t", "2", "--vary", "mtu=1500", "--vary=nodelay=on,off"]))
        b = resume.config(resume.parse(self.p, ["--time=2", "--mtu", "1500", "--vary", "nodelay=on,off"]))
        self.assertEqual(a, b)

    def test_a_missing_value_is_a_usage_error(self):
        with self.assertRaises(UsageError) as e:
            resume.parse(self.p, ["--tso"])
        self.assertIn("--tso needs a value", str(e.exception))


class Merge(unittest.TestCase):
    def setUp(self):
        self.p = sweep.parser()

    def test_the_sweeps_options_retyped_are_accepted(self):
        d = sweep_dir(["--backends", "pipe", "-t", "2", "--vary", "nodelay=on,off", "--label", "-rc1"])
        argv, stored = resume.merge(self.p, ["--resume", "--out", d, "--time", "2", "--label", "-rc1",
                                             "--vary=nodelay=on,off", "-q", "--max-reps", "4"], d)
        opts = resume.parse(self.p, argv)
        self.assertEqual((opts.backends, opts.time, opts.label, opts.quiet, opts.max_reps, opts.out),
                         ("pipe", "2", "-rc1", True, "4", d))
        self.assertEqual(stored[0], "--backends")

    def test_another_value_is_refused_naming_the_sweeps(self):
        d = sweep_dir(["--backends", "pipe", "-t", "2", "--clients", "1,2"])
        with self.assertRaises(UsageError) as e:
            resume.merge(self.p, ["--resume", "--out", d, "--time", "3", "--clients", "1,2", "--threads"], d)
        said = str(e.exception)
        self.assertIn("--time 3 (the sweep's: -t 2)", said)
        self.assertIn("--threads (the sweep's: not given)", said)
        self.assertNotIn("--clients 1,2 (", said)

    def test_programs_never_come_from_meta_json(self):
        for opt in ("--tbench", "--tbench-stats", "--tbench-srv", "--out", "--help"):
            d = sweep_dir(["--backends", "pipe", opt, "/tmp/evil.sh"] if opt != "--help" else [opt])
            with self.assertRaises(UsageError, msg=opt) as e:
                resume.merge(self.p, ["--resume", "--out", d], d)
            self.assertIn(f"{d}/meta.json: field 'argv' holds {opt}", str(e.exception))

    def test_argv_must_be_strings(self):
        for bad in ("--backends pipe", ["--backends", 1], [None], {"a": 1}):
            d = sweep_dir(bad)
            with self.assertRaises(UsageError, msg=bad) as e:
                resume.merge(self.p, ["--resume", "--out", d], d)
            self.assertIn(f"{d}/meta.json: field 'argv' must be an array of strings", str(e.exception))
        d = sweep_dir([])
        os.unlink(os.path.join(d, "meta.json"))
        with open(os.path.join(d, "meta.json"), "w") as f:
            f.write('{"sweep": {}}')
        with self.assertRaises(UsageError) as e:
            resume.merge(self.p, ["--resume", "--out", d], d)
        self.assertIn("field 'argv' is missing", str(e.exception))

    def test_no_meta_json_the_typed_options(self):
        d = tempfile.mkdtemp(prefix="test-resume.")
        self.assertEqual(resume.merge(self.p, ["--resume", "--out", d], d), (["--resume", "--out", d], None))


class Keep(unittest.TestCase):
    def test_round_trip(self):
        p = sweep.parser()
        typed = ["--backends", "pipe,tcp", "-t", "1", "--out", "/x", "--max-reps", "4", "--vary", "mtu=1500",
                 "--max-reps", "6", "--tbench", "/bin/tb", "-q", "--label", "-a", "--", "--timeout", "30"]
        kept = resume.argv_to_keep(p, typed)
        self.assertEqual(kept, ["--backends", "pipe,tcp", "-t", "1", "--vary", "mtu=1500", "--max-reps", "6",
                                "--label", "-a", "--", "--timeout", "30"])
        self.assertEqual(resume.config(resume.parse(p, kept)), resume.config(resume.parse(p, typed)))


if __name__ == "__main__":
    unittest.main()


class Status(unittest.TestCase):
    """store.sweep_status: "running" with its process gone reads as interrupted."""

    def test_running_only_while_its_process_is(self):
        from tbtools import store
        me = os.getpid()
        self.assertEqual(store.sweep_status({"status": "running", "pid": me, "pid_start": store.process_start(me)}),
                         "running")
        self.assertEqual(store.sweep_status({"status": "running", "pid": me, "pid_start": 1}), "interrupted",
                         "another process with the sweep's pid")
        gone = os.fork()
        if gone == 0:
            os._exit(0)
        os.waitpid(gone, 0)
        self.assertEqual(store.sweep_status({"status": "running", "pid": gone}), "interrupted")
        self.assertEqual(store.sweep_status({"status": "complete", "pid": gone}), "complete")
        self.assertEqual(store.sweep_status({"status": "running", "pid": gone, "host": {"name": "elsewhere."}}),
                         "running")
