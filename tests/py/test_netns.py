"""tbtools.netns: what ethtool, ip and tc say, read; the --veth set-up made
and removed (root); namespaces of a sweep that no longer runs found and
removed, and those of a running one left alone."""

import io
import json
import os
import subprocess
import tempfile
import unittest

from tbtools import netns, store

ETHTOOL_K = """Features for veth-cli:
rx-checksumming: on
tcp-segmentation-offload: off
\ttx-tcp-segmentation: off
generic-segmentation-offload: on
generic-receive-offload: off [fixed]
"""


def dead_pid():
    """The PID of a process that has ended."""
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def can_make_namespaces():
    if os.geteuid() != 0:
        return False
    name = f"tbprobe-{os.getpid()}"
    if netns.run(["ip", "netns", "add", name]).returncode != 0:
        return False
    netns.run(["ip", "netns", "del", name])
    return True


class Parsing(unittest.TestCase):
    def test_features_and_offloads(self):
        flags = netns.parse_features(ETHTOOL_K)
        self.assertEqual(flags["tx-tcp-segmentation"], "off")
        self.assertEqual(flags["generic-receive-offload"], "off [fixed]")
        self.assertNotIn("Features for veth-cli", flags)
        self.assertEqual(netns.offloads_of(flags), ("off", "on", "off"))
        self.assertEqual(netns.offloads_of({}), ("unknown",) * 3)

    def test_mtu(self):
        line = "5: veth-cli@if4: <BROADCAST,UP> mtu 9000 qdisc noqueue state UP\\    link/ether"
        self.assertEqual(netns.parse_mtu(line), "9000")
        self.assertEqual(netns.parse_mtu(""), "")

    def test_rate(self):
        self.assertEqual(netns.rate_bytes("100mbit"), 12500000)
        self.assertEqual(netns.rate_bytes("1gbit"), 125000000)
        self.assertEqual(netns.rate_bytes("8000"), 1000)
        with self.assertRaises(ValueError):
            netns.rate_bytes("fast")

    def test_names_carry_the_owner(self):
        self.assertEqual(netns.names(1234), ("tbsweep-1234", "tbsweep-1234-srv", "tbsweep-1234-cli"))
        for n in netns.names(1234):
            self.assertEqual(netns.NS_NAME.match(n).group(1), "1234")


class Stale(unittest.TestCase):
    """stale_sweeps over a directory standing in for /run/netns."""

    def test_only_dead_owners(self):
        with tempfile.TemporaryDirectory() as d:
            dead, alive = dead_pid(), os.getpid()
            for name in (f"tbsweep-{dead}", f"tbsweep-{dead}-srv", f"tbsweep-{alive}-cli",
                         "tbcl99-ctl", f"tbsweep-{dead}-other", "tbsweep-x"):
                open(os.path.join(d, name), "w").close()
            self.assertEqual(netns.stale_sweeps(d, d), [(f"tbsweep-{dead}", dead), (f"tbsweep-{dead}-srv", dead)])

    def test_state_file_names_the_processes(self):
        with tempfile.TemporaryDirectory() as d:
            dead, alive = dead_pid(), os.getpid()
            for owner in (dead, alive):
                open(os.path.join(d, f"tbsweep-{owner}"), "w").close()

            def state(owner, procs):
                with open(os.path.join(d, f"tbsweep-{owner}.json"), "w") as f:
                    json.dump({"processes": procs}, f)
            # the owner killed with -9, its worker still cleaning up: not stale
            state(dead, [[dead, None], [alive, store.process_start(alive)]])
            # a live PID that is another process than the one recorded: stale
            state(alive, [[alive, store.process_start(alive) + 1]])
            self.assertEqual(netns.stale_sweeps(d, d), [(f"tbsweep-{alive}", alive)])
            self.assertEqual(netns.dead_state_owners(d), [alive])

    def test_no_directory(self):
        self.assertEqual(netns.stale_sweeps("/nonexistent/netns"), [])


@unittest.skipUnless(can_make_namespaces(), "needs root and ip netns")
class Veth(unittest.TestCase):
    """The --veth set-up for real, in namespaces of a made-up owner."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.log = io.StringIO()
        self.srv = os.path.abspath(os.environ.get("TBENCH_SRV", "tbench_srv"))
        # an owner of our own that is alive while the test runs, not our PID
        self.owner = subprocess.Popen(["sleep", "600"])

    def tearDown(self):
        self.owner.kill()
        self.owner.wait()
        for ns in netns.names(self.owner.pid):
            netns.run(["ip", "netns", "del", ns])
        self.dir.cleanup()

    def namespaces(self):
        return [n for n in os.listdir(netns.NETNS_DIR) if n.startswith(f"tbsweep-{self.owner.pid}")]

    @unittest.skipUnless(os.access(os.environ.get("TBENCH_SRV", ""), os.X_OK), "TBENCH_SRV not built")
    def test_made_then_gone(self):
        net = netns.Net("test", "veth", owner=self.owner.pid, log=self.log)
        try:
            net.setup(1500, os.path.join(self.dir.name, "srv.log"), self.srv)
            self.assertEqual(sorted(self.namespaces()), sorted(netns.names(self.owner.pid)))
            self.assertIsNotNone(net.server_pid)
            route = net.route(True, "tcp")   # no backends given: no wire, the client's lo
            self.assertEqual(route.devs, (netns.Device(net.ns_cli, "lo"),))
            veth = (netns.Device(net.ns_cli, netns.VETH_CLI), netns.Device(net.ns_srv, netns.VETH_SRV))
            rb = net.apply_offloads(veth, "off", "off", "")
            self.assertEqual((rb.dev, rb.tso, rb.gso), ("veth", "off", "off"))
            self.assertEqual(net.set_mtu(veth, 9000), [])
            self.assertEqual(net.mtu_of(veth[1]), "9000")
            refused = net.set_mtu(veth, 70000)
            self.assertEqual(len(refused), 2)
            self.assertIn("reads back MTU 9000", refused[0])
            net.restore_devices()
            self.assertEqual(net.mtu_of(veth[0]), "1500")
            first = net.server_pid
            net.start_server([])
            self.assertEqual(net.server_pid, first, "same arguments: the same server")
            net.start_server(["--threads"])
            self.assertNotEqual(net.server_pid, first)
            devices = net.devices_json()
            self.assertEqual([d["device"] for d in devices], ["lo", netns.VETH_CLI, netns.VETH_SRV])
            self.assertEqual(devices[1]["mtu"], 1500)
        finally:
            net.cleanup()
        self.assertEqual(self.namespaces(), [])
        net.cleanup()   # twice is fine

    def test_server_that_does_not_start(self):
        net = netns.Net("test", "veth", owner=self.owner.pid, log=self.log)
        with self.assertRaises(netns.NetError) as e:
            with net:
                net.setup(1500, os.path.join(self.dir.name, "srv.log"), "/bin/false")
        self.assertIn("did not start", str(e.exception))
        self.assertEqual(self.namespaces(), [])


@unittest.skipUnless(can_make_namespaces(), "needs root and ip netns")
class RemoveStale(unittest.TestCase):
    def test_dead_sweeps_namespace_and_its_process_removed(self):
        dead = dead_pid()
        name = f"tbsweep-{dead}-srv"
        self.assertEqual(netns.run(["ip", "netns", "add", name]).returncode, 0)
        netns.run(["ip", "-n", name, "link", "add", "veth-srv", "type", "veth", "peer", "name", "veth-cli"])
        left = subprocess.Popen(["ip", "netns", "exec", name, "sleep", "600"])
        try:
            for _ in range(50):
                if netns.ns_pids(name):
                    break
                netns.time.sleep(0.1)
            log = io.StringIO()
            self.assertIn(name, netns.remove_stale("tbench-sweep", log=log))
            self.assertIn(f"tbench-sweep: removed namespace {name} left by sweep {dead} (not running)",
                          log.getvalue())
            self.assertFalse(os.path.exists(os.path.join(netns.NETNS_DIR, name)))
            self.assertIsNotNone(left.wait(10), "what ran in it was stopped")
        finally:
            left.kill()
            left.wait()
            netns.run(["ip", "netns", "del", name])


# In a network and mount namespace of its own (its own /run/netns): a --dev
# sweep on dv0 killed with -9 after it changed dv0, then remove_stale.
DEV_CRASH = r"""
import os, subprocess, sys
from tbtools import netns
subprocess.run(["mount", "-t", "tmpfs", "none", netns.NETNS_DIR], check=True)
subprocess.run(["ip", "link", "add", "dv0", "type", "veth", "peer", "name", "dv1"], check=True)
dv0 = netns.Device("", "dv0")
before = (netns.Net("t", "dev", dev="dv0").read_offloads(dv0), netns.Net("t", "dev").mtu_of(dv0))
pid = os.fork()
if pid == 0:
    net = netns.Net("t", "dev", dev="dv0")
    net.setup(1500)
    net.apply_offloads([dv0], "off" if before[0][0] == "on" else "on", "", "")
    net.set_mtu([dv0], 9000)
    net.set_rate([dv0], "1gbit")
    os.kill(os.getpid(), 9)
os.waitpid(pid, 0)
net = netns.Net("t", "dev")
changed = (net.read_offloads(dv0), net.mtu_of(dv0))
removed = netns.remove_stale("t")
after = (net.read_offloads(dv0), net.mtu_of(dv0))
print("changed" if changed != before else "unchanged", "restored" if after == before else f"not restored {after}",
      removed == [f"tbsweep-{pid}"], os.path.exists(netns.state_path(f"tbsweep-{pid}")),
      net._root_qdisc(dv0).get("kind"))
"""


@unittest.skipUnless(can_make_namespaces(), "needs root and ip netns")
class DevCrash(unittest.TestCase):
    def test_device_set_back_after_kill_9(self):
        p = subprocess.run(["unshare", "--net", "--mount", "--propagation", "private", "python3", "-c", DEV_CRASH],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.stdout.split()[:4], ["changed", "restored", "True", "False"], p.stdout + p.stderr)
        self.assertNotEqual(p.stdout.split()[4:], ["tbf"], "the sweep's tbf is gone")
        self.assertIn("restored dv0's offloads", p.stderr)
        self.assertIn("restored dv0's MTU 1500", p.stderr)


if __name__ == "__main__":
    unittest.main()
