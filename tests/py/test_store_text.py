"""tbtools.store and tbtools.text: writes that keep what was there, and
strings from a results directory that never run."""

import os
import subprocess
import tempfile
import unittest

from tbtools import store, text
from tbtools.errors import RunError, UsageError


class AtomicWrite(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "runs.csv")

    def tearDown(self):
        self.dir.cleanup()

    def test_writes_and_leaves_no_temporary(self):
        store.atomic_write(self.path, "a,b\n1,2\n")
        store.atomic_write(self.path, "a,b\n3,4\n")
        self.assertEqual(store.read_text(self.path), "a,b\n3,4\n")
        self.assertEqual(os.listdir(self.dir.name), ["runs.csv"])

    def test_failed_write_keeps_the_old_file(self):
        store.atomic_write(self.path, "old\n")
        os.chmod(self.dir.name, 0o500)   # no new file can be made there
        try:
            if os.access(self.dir.name, os.W_OK):   # root: the mode does not stop it
                self.skipTest("root writes through a read-only mode; the full-disk test covers it")
            with self.assertRaises(RunError) as cm:
                store.atomic_write(self.path, "new\n")
            self.assertIn("runs.csv", str(cm.exception))
        finally:
            os.chmod(self.dir.name, 0o700)
        self.assertEqual(store.read_text(self.path), "old\n")

    def test_mode_as_a_file_created_here(self):
        old = os.umask(0o027)
        try:
            store.atomic_write(self.path, "x\n")
        finally:
            os.umask(old)
        self.assertEqual(os.stat(self.path).st_mode & 0o777, 0o640)

    def test_no_space_keeps_the_old_file(self):
        store.atomic_write(self.path, "old\n")
        real_fsync = os.fsync

        def full(fd):
            raise OSError(28, os.strerror(28))
        os.fsync = full
        try:
            with self.assertRaises(RunError) as cm:
                store.atomic_write(self.path, "new\n")
        finally:
            os.fsync = real_fsync
        self.assertEqual(str(cm.exception), f"{self.path}: No space left on device")
        self.assertEqual(store.read_text(self.path), "old\n")
        self.assertEqual(os.listdir(self.dir.name), ["runs.csv"])


class Meta(unittest.TestCase):
    def meta(self, body):
        d = tempfile.mkdtemp()
        self.addCleanup(lambda: subprocess.run(["rm", "-rf", d]))
        p = os.path.join(d, "meta.json")
        with open(p, "w") as f:
            f.write(body)
        return p

    def test_invalid_json_names_file_line_column(self):
        p = self.meta('{"argv": [1,\n')
        with self.assertRaises(UsageError) as cm:
            store.read_meta(p)
        self.assertRegex(str(cm.exception), r"meta\.json:\d+:\d+: not valid JSON")

    def test_field_kinds(self):
        p = self.meta('{"argv": ["--clients", 2], "seed": "x"}')
        m = store.read_meta(p)
        with self.assertRaises(UsageError) as cm:
            store.meta_field(m, p, "argv", "strings")
        self.assertIn("'argv' must be an array of strings", str(cm.exception))
        with self.assertRaises(UsageError):
            store.meta_field(m, p, "seed", int)
        with self.assertRaises(UsageError) as cm:
            store.meta_field(m, p, "clients", "strings")
        self.assertIn("'clients' is missing", str(cm.exception))
        self.assertIsNone(store.meta_field(m, p, "clients", "strings", required=False))


class Gnuplot(unittest.TestCase):
    HOSTILE = "a `touch {m}` $(touch {m}) @x \"q\" it's\nline2 \\ <script>"

    def test_gnuplot_runs_nothing_and_prints_it_literally(self):
        gp = subprocess.run(["which", "gnuplot"], capture_output=True).returncode == 0
        if not gp:
            self.skipTest("gnuplot not installed")
        with tempfile.TemporaryDirectory() as d:
            marker = os.path.join(d, "marker")
            s = self.HOSTILE.format(m=marker)
            script = f"x = 'y'\nprint {text.gnuplot_str(s)}\n"
            out = subprocess.run(["gnuplot"], input=script, capture_output=True, text=True)
            self.assertFalse(os.path.exists(marker), "gnuplot ran a command from a string")
            self.assertEqual(out.stderr.rstrip("\n"), s)


class Label(unittest.TestCase):
    def test_one_path_component(self):
        self.assertIsNone(text.check_label("after-patch_2"))
        for bad in ("a/b", "..", ".", "../x", "x\ny", "tab\t"):
            self.assertIsNotNone(text.check_label(bad), bad)

    def test_html_escapes_everything(self):
        self.assertEqual(text.html_text("<script>\"'&"), "&lt;script&gt;&quot;&#x27;&amp;")


if __name__ == "__main__":
    unittest.main()
