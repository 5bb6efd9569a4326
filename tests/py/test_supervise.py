"""tbtools.supervise: a signal's request seen between steps and in a
run's wait, a run's child stopped, and the temporary directories of
sweeps that no longer run removed (and only those)."""

import os
import signal
import subprocess
import tempfile
import unittest

from tbtools import supervise


def dead_pid():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return pid


class Requests(unittest.TestCase):
    def tearDown(self):
        supervise._asked = None

    def test_nothing_asked(self):
        self.assertIsNone(supervise.asked())
        supervise.check()

    def test_a_signal_is_a_request_seen_between_steps(self):
        supervise._on_signal(signal.SIGTERM, None)
        self.assertEqual(supervise.asked(), 143)
        with self.assertRaises(supervise.Interrupted) as e:
            supervise.check()
        self.assertEqual(e.exception.status, 143)

    def test_wait_stops_the_child_when_asked(self):
        proc = subprocess.Popen(["sleep", "30"])
        supervise._asked = 130
        with self.assertRaises(supervise.Interrupted):
            supervise.wait(proc)
        self.assertIsNotNone(proc.poll(), "the child was stopped")

    def test_stop_ends_a_child_that_ignores_sigint(self):
        proc = subprocess.Popen(["sh", "-c", "trap '' INT; echo ready; exec sleep 30"], stdout=subprocess.PIPE)
        self.assertEqual(proc.stdout.readline(), b"ready\n")   # SIGINT ignored from here on
        supervise.stop(proc, grace_s=0.5)
        proc.stdout.close()
        self.assertEqual(proc.returncode, -signal.SIGTERM, "ended by netns.kill_wait's SIGTERM")
        self.assertIsNotNone(proc.poll())


class StaleTmp(unittest.TestCase):
    def setUp(self):
        self.base = tempfile.mkdtemp(prefix="test-supervise.")
        self.saved, tempfile.tempdir = tempfile.tempdir, self.base

    def tearDown(self):
        tempfile.tempdir = self.saved

    def test_only_those_of_sweeps_gone(self):
        gone = dead_pid()
        dead = os.path.join(self.base, f"{supervise.TMP_PREFIX}{gone}-{gone}.abc")
        live = supervise.make_tmp(os.getpid())
        half = os.path.join(self.base, f"{supervise.TMP_PREFIX}{gone}-{os.getpid()}.def")   # its worker runs
        other = os.path.join(self.base, f"{supervise.TMP_PREFIX}x.ghi")
        for d in (dead, half, other):
            os.mkdir(d)
        self.assertEqual(supervise.remove_stale_tmp("test"), [dead])
        self.assertTrue(all(os.path.isdir(d) for d in (live, half, other)))
        self.assertTrue(os.path.basename(live).startswith(f"{supervise.TMP_PREFIX}{os.getpid()}-{os.getpid()}."))


if __name__ == "__main__":
    unittest.main()
