"""tbtools.remote: words quoted for the remote shell so that none runs,
the options checked, and (root) a guard, a server, offloads set there and
a client host's run, with an "ssh" that runs its command in a namespace
of the test's own, the guard restoring the device when the sweep ends."""

import io
import json
import os
import subprocess
import tempfile
import unittest

from tbtools import netns, remote
from tbtools.errors import UsageError
from tbtools.programs import Backends

NASTY = ["plain", "two words", "it's", "$(touch {m})", "`touch {m}`", "; touch {m}", "a\nb", "*", "-n", ""]


class Quoting(unittest.TestCase):
    def test_words_come_back_as_they_were(self):
        with tempfile.TemporaryDirectory() as d:
            mark = os.path.join(d, "ran")
            words = [w.format(m=mark) for w in NASTY]
            line = remote.cmdline(["printf", "%s\\0"] + words)
            out = subprocess.run(["sh", "-c", line], capture_output=True, text=True, check=True).stdout
            self.assertEqual(out.split("\0")[:-1], words)
            self.assertFalse(os.path.exists(mark), "a word ran as shell code")

    def test_each_word_quoted(self):
        self.assertEqual(remote.cmdline(["tbench-guard", "eth0"]), "'tbench-guard' 'eth0'")
        self.assertEqual(remote.quote("it's"), "'it'\\''s'")

    def test_checked_command_passes_words_through(self):
        opts = remote.Options(server_host="h", server_dev="eth0", ssh="ssh -F my.conf")
        argv = remote.Remote("t", opts, "/tmp", "tbench-stats").checked_argv("h", ["ethtool", "-K", "eth0"])
        self.assertEqual(argv[:4], ["ssh", "-F", "my.conf", "h"])
        self.assertEqual(len(argv), 5, "the remote command is one word for ssh")
        self.assertTrue(argv[4].startswith("'sh' '-c' '"))
        self.assertTrue(argv[4].endswith(" 'tbench-checked' '/nonexistent' 'ethtool' '-K' 'eth0'"))


class Options(unittest.TestCase):
    def check(self, mode="lo", **kw):
        return remote.check_options(remote.Options(**kw), mode)

    def test_without_server_host(self):
        self.assertEqual(self.check(), "lo")
        self.assertEqual(self.check("veth"), "veth")
        for kw in ({"server_dev": "eth0"}, {"client_hosts": "a,b"}, {"push": True}):
            with self.assertRaisesRegex(UsageError, "need --server-host"):
                self.check(**kw)

    def test_server_host(self):
        self.assertEqual(self.check(server_host="root@srv", server_dev="eth0", client_hosts="c1,c2"), "remote")
        with self.assertRaisesRegex(UsageError, "needs --server-dev"):
            self.check(server_host="srv")
        with self.assertRaisesRegex(UsageError, "not with --veth"):
            self.check("veth", server_host="srv", server_dev="eth0")
        with self.assertRaisesRegex(UsageError, "bad host name ';reboot'"):
            self.check(server_host="srv", server_dev="eth0", client_hosts="c1,;reboot")
        with self.assertRaisesRegex(UsageError, "--server-dev: bad interface name"):
            self.check(server_host="srv", server_dev="eth0 x")
        with self.assertRaisesRegex(UsageError, "--start-lead"):
            self.check(server_host="srv", server_dev="eth0", start_lead="soon")
        with self.assertRaisesRegex(UsageError, "--ssh: an empty command"):
            self.check(ssh=" ")

    def test_client_command_gets_its_own_json(self):
        r = remote.Remote("t", remote.Options(server_host="s", server_dev="e", client_hosts="c1"), "/o", "st")
        r.bins["c1"], r.dirs["c1"] = "/d/tbench", "/d"
        self.assertEqual(r.client_command("c1", 100, ["./tbench", "--json", "x.json.part", "-b", "tcp", "2"]),
                         ["/d/tbench", "--start-at", "100", "--json", "/d/run.json", "-b", "tcp", "2"])

    def test_failure_words(self):
        self.assertEqual(remote.failure(255, "ssh: connect: Connection refused\n"),
                         "ssh failed (exit 255): ssh: connect: Connection refused")
        self.assertEqual(remote.failure(137, ""), "exit 137: its tbench was killed by signal 9")
        self.assertEqual(remote.failure(1, "tbench: error: late\n"), "exit 1: tbench: error: late")


def programs():
    progs = {k: os.path.abspath(os.environ.get(k, "")) for k in ("TBENCH", "TBENCH_SRV", "TBENCH_STATS")}
    return progs if all(os.access(p, os.X_OK) for p in progs.values()) else None


def can_make_namespaces():
    if os.geteuid() != 0 or not programs():
        return False
    name = f"tbprobe-{os.getpid()}"
    if netns.run(["ip", "netns", "add", name]).returncode != 0:
        return False
    netns.run(["ip", "netns", "del", name])
    return True


@unittest.skipUnless(can_make_namespaces(), "needs root, ip netns and the built programs")
class OneHost(unittest.TestCase):
    """Hosts that are one namespace: their ssh is ip netns exec and sh."""

    def setUp(self):
        self.progs = programs()
        self.ns = f"tbremote-{os.getpid()}"
        self.dir = tempfile.TemporaryDirectory()
        os.makedirs(os.path.join(self.dir.name, "runs"))
        for argv in (["ip", "netns", "add", self.ns], ["ip", "-n", self.ns, "link", "set", "lo", "up"],
                     ["ip", "-n", self.ns, "link", "add", "eth0", "type", "veth", "peer", "name", "eth1"]):
            subprocess.run(argv, check=True)
        self.log = io.StringIO()

    def tearDown(self):
        for pid in netns.ns_pids(self.ns):
            netns.kill_pid(pid)
        netns.run(["ip", "netns", "del", self.ns])
        self.dir.cleanup()

    def tso(self):
        flags = netns.parse_features(netns.run(["ip", "netns", "exec", self.ns, "ethtool", "-k", "eth0"]).stdout)
        return netns.offloads_of(flags)[0]

    def test_guard_server_client_and_restore(self):
        opts = remote.Options(server_host="h1", server_dev="eth0", server_addr="127.0.0.1",
                              client_hosts="h2", push=True, ssh="")
        opts.ssh = ["ip", "netns", "exec", self.ns, "sh", "-c", 'exec sh -c "$2"', "fakessh"]
        self.assertEqual(remote.check_options(opts, "lo"), "remote")
        before = self.tso()
        want = "off" if before == "on" else "on"
        out = self.dir.name
        r = remote.Remote("t", opts, out, self.progs["TBENCH_STATS"], log=self.log)
        with r:
            self.assertEqual(r.setup(self.progs["TBENCH"], self.progs["TBENCH_SRV"]), "127.0.0.1")
            guard_dir = r.dirs["h1"]
            self.assertTrue(os.path.isfile(os.path.join(guard_dir, "tbench_srv")), "--push copied it")
            self.assertEqual([m["role"] for m in r.meta], ["server", "client"])
            self.assertIn("tcp-segmentation-offload", r.meta[0]["device"]["offload_flags_at_start"])
            net = netns.Net("t", "remote", backends=Backends(self.progs["TBENCH"]), remote=r, log=self.log)
            route = net.route(True, "tcp", r.server)
            self.assertEqual(route, netns.Route("", "127.0.0.1", (netns.Device("@h1", "eth0"),)))
            self.assertEqual(net.apply_offloads(route.devs, want, "", "").tso, want)
            self.assertEqual(self.tso(), want)
            r.server_start(["--threads"])
            self.assertTrue(r.clients_for(r.server))
            part = os.path.join(out, "runs", "tcp_c1.json.part")
            rc = r.clients_run(part, os.path.join(out, "runs", "tcp_c1.log.part"),
                               ["tbench", "--json", part, "-b", "tcp", "-t", "1", "--warmup", "0", "-q",
                                "-c", os.path.join(os.path.dirname(__file__), "..", "..", "loadfiles", "tiny.txt"),
                                "1", "127.0.0.1"], 1)
            self.assertEqual((rc, r.clients_why()), (0, ""))
            with open(part) as f:
                self.assertEqual([h["name"] for h in json.load(f)["hosts"]], ["h2"])
            with open(os.path.join(out, "hosts.csv")) as f:
                self.assertTrue(f.read().splitlines()[1].startswith("tcp_c1,h2,"))
        self.assertEqual(self.tso(), before, "the guard restored the offloads")
        self.assertFalse(os.path.exists(guard_dir), "the guard removed its directory")
        self.assertIn("h1: restored eth0", self.log.getvalue())
        with open(os.path.join(out, "runs", "guard-h1.log")) as f:
            self.assertIn("the sweep ended (heartbeat input closed): restoring", f.read())
        # after the guard, a command there is refused
        p = r.run("h1", ["true"])
        self.assertEqual(p.returncode, 97)

    def test_unreachable_host_named(self):
        opts = remote.Options(server_host="h9", server_dev="eth0", ssh="false")
        r = remote.Remote("t", opts, self.dir.name, self.progs["TBENCH_STATS"], log=self.log)
        with self.assertRaisesRegex(remote.RemoteError, "^h9: its guard did not start over 'false'"):
            with r:
                r.setup(self.progs["TBENCH"], self.progs["TBENCH_SRV"])


if __name__ == "__main__":
    unittest.main()
