"""tbtools.knobs: the knobs offered (tbench-stats row --knobs, and model),
--vary parsing and its errors, the combinations a backend runs, the
arguments a run's knobs give tbench, and the read-backs of its JSON."""

import os
import subprocess
import unittest

from tbtools import knobs
from tbtools.errors import UsageError

STATS_KNOBS = "offload tso gso gro mtu cc nodelay sndbuf rcvbuf family placement rate".split()
HEADER = "backend,clients,offload,tso,gso,gro,mtu,cc,nodelay,sndbuf,rcvbuf,family,placement,rate,rep,model,tso_read".split(",")


class FakeBackends:
    caps = {"tcp": {"sockopts", "wire", "offloads"}, "pipe": set(), "unix": {"sockopts"}}

    def has(self, backend, cap):
        return cap in self.caps.get(backend, ())


def sweep_knobs(*vary):
    names = knobs.offered(STATS_KNOBS)
    return knobs.Knobs(knobs.parse_vary([("--vary", v) for v in vary], names), FakeBackends(), ["tcp"],
                       HEADER, STATS_KNOBS)


class Offered(unittest.TestCase):
    def test_order_by_the_backends_they_apply_to(self):
        self.assertEqual(" ".join(knobs.offered(STATS_KNOBS)),
                         "offload tso gso gro mtu cc nodelay sndbuf rcvbuf family placement model rate")

    def test_only_what_tbench_stats_names(self):
        self.assertNotIn("rate", knobs.offered([k for k in STATS_KNOBS if k != "rate"]))
        self.assertNotIn("nosuch", knobs.offered(STATS_KNOBS + ["nosuch"]))

    @unittest.skipUnless(os.environ.get("TBENCH_STATS"), "TBENCH_STATS names the build's tbench-stats")
    def test_every_knob_of_this_tbench_stats_has_a_behaviour(self):
        listed = subprocess.run([os.environ["TBENCH_STATS"], "row", "--knobs"], capture_output=True,
                                text=True, check=True).stdout.split()
        self.assertEqual([k for k in listed if k not in knobs.BEHAVIOUR], [])


class Vary(unittest.TestCase):
    def parse(self, *entries):
        return knobs.parse_vary(list(entries), knobs.offered(STATS_KNOBS))

    def test_values_in_order(self):
        self.assertEqual(self.parse(("--vary", "mtu=9000,1500"), ("--offload", "offload=on")),
                         {"mtu": ["9000", "1500"], "offload": ["on"]})

    def test_errors_name_the_option_and_what_a_value_is(self):
        cases = [((("--vary", "nosuch=1"),), "unknown knob 'nosuch'"),
                 ((("--vary", "mtu"),), "give NAME=V1,V2"),
                 ((("--vary", "mtu=1500,"),), "an empty value"),
                 ((("--mtu", "mtu=12"),), "--mtu mtu=12: '12' is not an MTU"),
                 ((("--vary", "mtu=1500"), ("--mtu", "mtu=9000")), "--mtu: mtu is given twice"),
                 ((("--vary", "nodelay=on,on"),), "'on' given twice"),
                 ((("--vary", "sndbuf=0"),), "'0' is not a size in bytes"),
                 ((("--vary", "rate=fast"),), "'fast' is not a tc rate")]
        for entries, said in cases:
            with self.assertRaises(UsageError, msg=entries) as e:
                self.parse(*entries)
            self.assertIn(said, str(e.exception))


class Runs(unittest.TestCase):
    def test_combos_na_where_a_knob_means_nothing(self):
        k = sweep_knobs("mtu=1500,9000", "placement=same,free")
        self.assertEqual(k.combos("pipe"), [(("mtu", "n/a"), ("placement", "same")), (("mtu", "n/a"), ("placement", "free"))])
        self.assertEqual(len(k.combos("tcp")), 4)

    def test_tbench_args(self):
        k = sweep_knobs("nodelay=off", "sndbuf=65536", "cc=cubic", "mtu=1500", "placement=split")
        run = (("mtu", "1500"), ("cc", "cubic"), ("nodelay", "off"), ("sndbuf", "65536"), ("placement", "split"))
        self.assertEqual(k.tbench_args(run, True, True),
                         ["--mtu", "1500", "--cpus", k.cpu0, "--server-cpus", k.cpu1,
                          "-T", "TCP_NODELAY=0,TCP_CONGESTION=cubic,SO_SNDBUF=65536"])
        # the sweep's own namespace and server: no --mtu, no --server-cpus
        self.assertEqual(k.tbench_args(run, False, False)[:2], ["--cpus", k.cpu0])
        self.assertEqual(k.server_args(run), ["-T", "TCP_NODELAY=0,TCP_CONGESTION=cubic,SO_SNDBUF=65536",
                                              "--cpus", k.cpu1])

    def test_nodelay_kept_when_not_varied(self):
        k = sweep_knobs("rcvbuf=131072")
        self.assertEqual(k.sockopts((("rcvbuf", "131072"),)), "TCP_NODELAY,SO_RCVBUF=131072")
        self.assertIsNone(k.sockopts((("rcvbuf", "n/a"),)))

    def test_columns_and_set_args(self):
        k = sweep_knobs("mtu=1500", "model=threads")
        self.assertIn("model", k.columns)
        self.assertNotIn("model", sweep_knobs("mtu=1500").columns, "model: a knob column only where varied")
        args = k.set_args((("mtu", "1500"), ("model", "threads")), "off:gro=on", True)
        self.assertIn("gro=on", args)
        self.assertIn("tso=-", args)
        self.assertIn("mtu=1500", args)
        self.assertNotIn("model=threads", args)

    def test_read_back(self):
        k = sweep_knobs("mtu=1500", "sndbuf=1000", "placement=free")
        doc = {"netns": {"mtu": 1500}, "socket": {"sndbuf": 1000}, "settings": {"cpus": None}}
        wrong, notes = k.check_json(doc, (("mtu", "1500"), ("sndbuf", "1000"), ("placement", "free")), True, True)
        self.assertEqual(wrong, ["sndbuf=1000 read back as socket.sndbuf = 1000, not 2000"])
        self.assertEqual(notes, ["placement=free: not read back (this tbench's --json has no settings.server_cpus)"])


class Calibration(unittest.TestCase):
    """inject_ns (tbench --inject-ns) and sysctl:NAME (tbench --netns --sysctl)."""
    ALL = STATS_KNOBS + ["inject_ns", "sysctl"]
    HEAD = HEADER[:14] + ["inject_ns", "sysctl"] + HEADER[14:]

    def knobs_of(self, *vary):
        return knobs.Knobs(knobs.parse_vary([("--vary", v) for v in vary], knobs.offered(self.ALL)),
                           FakeBackends(), ["tcp"], self.HEAD, self.ALL)

    def test_inject_ns_to_every_backend_and_read_back(self):
        k = self.knobs_of("inject_ns=0,2400")
        self.assertEqual(k.combos("pipe"), [(("inject_ns", "0"),), (("inject_ns", "2400"),)])
        self.assertEqual(k.tbench_args((("inject_ns", "2400"),), True, True), ["--inject-ns", "2400"])
        wrong, _ = k.check_json({"settings": {"inject_ns": 0}}, (("inject_ns", "2400"),), True, True)
        self.assertEqual(wrong, ["inject_ns=2400 read back as settings.inject_ns = 0, not 2400"])
        self.assertIn("inject_ns=2400", k.set_args((("inject_ns", "2400"),), "on", True))

    def test_sysctls_a_dimension_each_and_one_column(self):
        k = self.knobs_of("sysctl:net.ipv4.tcp_autocorking=0,1", "sysctl:net.ipv4.tcp_rmem=4096 131072 6291456")
        self.assertEqual(len(k.combos("tcp")), 2)
        self.assertEqual(k.unrecorded, [])
        run = (("sysctl:net.ipv4.tcp_autocorking", "0"), ("sysctl:net.ipv4.tcp_rmem", "4096 131072 6291456"))
        self.assertEqual(k.tbench_args(run, True, True),
                         ["--sysctl", "net.ipv4.tcp_autocorking=0", "--sysctl", "net.ipv4.tcp_rmem=4096 131072 6291456"])
        self.assertIn("sysctl=net.ipv4.tcp_autocorking=0;net.ipv4.tcp_rmem=4096 131072 6291456",
                      k.set_args(run, "on", True))
        self.assertIn("sysctl=-", self.knobs_of("mtu=1500").set_args((("mtu", "1500"),), "on", True))

    def test_sysctl_errors(self):
        for entry, said in (("sysctl=1", "name the sysctl: sysctl:NAME"),
                            ("sysctl:kernel.pid_max=1", "a sysctl of the run's network namespace"),
                            ("sysctl:net.ipv4.x=a;b", "'a;b' is not a sysctl's value"),
                            ("inject_ns=-1", "'-1' is not nanoseconds")):
            with self.assertRaises(UsageError, msg=entry) as e:
                self.knobs_of(entry)
            self.assertIn(said, str(e.exception))


class CopyReplies(unittest.TestCase):
    """copy_replies (tbench --copy-replies): a flag, for the backends that drop reply bodies."""
    ALL = STATS_KNOBS + ["copy_replies"]
    HEAD = HEADER[:14] + ["copy_replies"] + HEADER[14:]

    def test_a_flag_where_it_applies(self):
        backends = FakeBackends()
        backends.caps = dict(backends.caps, tcp=backends.caps["tcp"] | {"copy-replies"})
        k = knobs.Knobs(knobs.parse_vary([("--vary", "copy_replies=off,on")], knobs.offered(self.ALL)),
                        backends, ["tcp"], self.HEAD, self.ALL)
        self.assertEqual(k.combos("tcp"), [(("copy_replies", "off"),), (("copy_replies", "on"),)])
        self.assertEqual(k.combos("unix"), [(("copy_replies", "n/a"),)])
        self.assertEqual(k.tbench_args((("copy_replies", "on"),), True, True), ["--copy-replies"])
        self.assertEqual(k.tbench_args((("copy_replies", "off"),), True, True), [])
        wrong, _ = k.check_json({"settings": {"copy_replies": False}}, (("copy_replies", "on"),), True, True)
        self.assertEqual(wrong, ["copy_replies=on read back as settings.copy_replies = false, not true"])


if __name__ == "__main__":
    unittest.main()
