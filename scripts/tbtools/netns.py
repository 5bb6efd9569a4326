"""tbench-sweep's network side for --veth and --dev: private namespaces,
the veth pair and its tbench_srv, offloads set and read back with ethtool,
the device knobs (mtu, rate) and the clean-up that leaves the host as it
was; and the removal of what a sweep killed with -9 left behind. The
default (loopback) mode needs none of it: each run is tbench --netns.

A device is a Device(ns, name): ns "" is the host's namespace, NEW_NS a
new namespace for one command (as each run of tbench --netns has), and
"@HOST" a device of another host, reached through remote.Remote."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from typing import NamedTuple

from .errors import RunError
from .store import atomic_write, process_start

NS_PREFIX = "tbsweep-"          # tbsweep-PID, tbsweep-PID-srv, tbsweep-PID-cli
NS_NAME = re.compile(r"^tbsweep-([0-9]+)(-srv|-cli)?$")
NETNS_DIR = "/run/netns"
NEW_NS = "/new"                 # not a name ip netns allows
VETH_SRV, VETH_CLI = "veth-srv", "veth-cli"
ADDR_SRV, ADDR_CLI = "10.199.0.1", "10.199.0.2"
ADDR6_SRV, ADDR6_CLI = "fd00:7462:6e63::1", "fd00:7462:6e63::2"   # unique local, private to the pair
# MPTCP's second path (Net.mptcp_paths): a second veth pair.
VETH2_SRV, VETH2_CLI = "veth-srv2", "veth-cli2"
ADDR2_SRV, ADDR2_CLI = "10.199.1.1", "10.199.1.2"
SRV_PORT = 7003
MODES = ("lo", "veth", "dev", "remote")
# What a sweep writes of itself (its processes; --dev's device as it was),
# for the next sweep to clean up after one killed with -9.
STATE_DIR = "/run/tbench-sweep"


class NetError(RunError):
    """The network side could not do what was asked; the message says why
    (what the bash put in NET_SRV_ERROR or died with)."""


class Device(NamedTuple):
    ns: str      # "" host, NEW_NS, "@HOST", or a namespace's name
    name: str

    def where(self):
        """ns:dev as the messages say it ("host" for the host's namespace)."""
        return f"{self.ns or 'host'}:{self.name}"

    def __str__(self):
        return f"{self.ns}:{self.name}"


class Route(NamedTuple):
    """Where a backend's clients run (ns: "" = here, else a namespace), the
    server address they use ("" = their own), and the devices the traffic
    crosses (empty: none, or tbench --netns sets them itself)."""
    ns: str
    server: str
    devs: tuple


class Offloads(NamedTuple):
    """What ethtool -k read back: one value where the devices agree, "mixed"
    where not, "unknown" where ethtool did not say."""
    dev: str
    tso: str
    gso: str
    gro: str


def names(owner):
    """The sweep's namespaces for OWNER (a PID): (main, server, client)."""
    base = f"{NS_PREFIX}{owner}"
    return base, base + "-srv", base + "-cli"


def run(argv, **kw):
    """ARGV (a list, never a shell line) as subprocess.run, output as text;
    a program that is not there is status 127 with the reason in stderr."""
    kw.setdefault("stdin", subprocess.DEVNULL)
    kw.setdefault("capture_output", True)
    try:
        return subprocess.run(argv, text=True, **kw)
    except OSError as e:
        return subprocess.CompletedProcess(argv, 127, "", f"{argv[0]}: {e.strerror}")


def kill_wait(proc, grace_s=2.0):
    """Stops the Popen PROC: SIGTERM, then SIGKILL after GRACE_S."""
    if proc is None or proc.poll() is not None:
        return
    try:
        proc.terminate()
        proc.wait(grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    except ProcessLookupError:
        pass


def stop_pids(pids, grace_s=2.0):
    """Stops PIDS (not our children): SIGTERM to all, then SIGKILL to
    those still running after GRACE_S."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            pass
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and any(pid_alive(p) for p in pids):
        time.sleep(0.1)
    for pid in pids:
        if pid_alive(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def pid_alive(pid):
    """True when PID runs (a zombie does not: it will never clean up)."""
    return process_start(pid) is not None


def ns_pids(ns):
    """The PIDs running in the named namespace (ip netns pids)."""
    return [int(p) for p in run(["ip", "netns", "pids", ns]).stdout.split() if p.isdigit()]


# ---- reading devices ------------------------------------------------------------


def parse_features(ethtool_k):
    """ethtool -k's output as {feature: value} ("on", "off [fixed]", ...)."""
    flags = {}
    for line in ethtool_k.splitlines()[1:]:
        name, sep, value = line.partition(": ")
        if sep and value:
            flags[name.strip()] = value.strip()
    return flags


def offloads_of(flags):
    """(tso, gso, gro) of FLAGS, "unknown" where ethtool did not say."""
    def first_word(name):
        return (flags.get(name) or "unknown").split()[0]
    return (first_word("tcp-segmentation-offload"), first_word("generic-segmentation-offload"),
            first_word("generic-receive-offload"))


def parse_mtu(ip_link):
    """The MTU in `ip -o link show`'s output, "" if none."""
    m = re.search(r" mtu ([0-9]+) ", ip_link)
    return m.group(1) if m else ""


def rate_bytes(rate):
    """A tc rate (100mbit) in bytes per second, as tc -j reports it."""
    m = re.fullmatch(r"([0-9]+)([a-z]*)", rate)
    if not m:
        raise ValueError(f"not a rate: {rate!r}")
    mult = {"kbit": 10**3, "mbit": 10**6, "gbit": 10**9, "tbit": 10**12}.get(m.group(2), 1)
    return int(m.group(1)) * mult // 8


# ---- stale sweeps (kill -9) ------------------------------------------------------


def net_ns_id():
    """This process's network namespace (its inode): the host's devices a
    state file names are only this namespace's."""
    try:
        return os.stat("/proc/self/ns/net").st_ino
    except OSError:
        return None


def state_path(base, state_dir=STATE_DIR):
    return os.path.join(state_dir, base + ".json")


def read_state(base, state_dir=STATE_DIR):
    """What the sweep of namespace BASE wrote of itself ({} if nothing)."""
    try:
        with open(state_path(base, state_dir)) as f:
            state = json.load(f)
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}


def owners_alive(owner, state):
    """True while the sweep that made tbsweep-OWNER runs: its owner (the
    PID the user knows) or a process it recorded (its worker, which may
    still clean up after an owner killed with -9), each the same process
    it recorded (its start time), not a later one with its PID."""
    procs = state.get("processes") or [[owner, None]]
    for pid, start in procs:
        now = process_start(pid)   # None: gone, or a zombie
        if now is not None and (start is None or now == start):
            return True
    return False


def stale_sweeps(netns_dir=NETNS_DIR, state_dir=STATE_DIR):
    """The namespaces of sweeps that no longer run: [(name, owner PID)].
    A sweep's namespaces carry its PID (tbsweep-PID[-srv|-cli]); the veth
    pairs live inside them and go with them."""
    try:
        entries = sorted(os.listdir(netns_dir))
    except OSError:
        return []
    stale = []
    for name in entries:
        m = NS_NAME.match(name)
        if m and not owners_alive(int(m.group(1)), read_state(NS_PREFIX + m.group(1), state_dir)):
            stale.append((name, int(m.group(1))))
    return stale


def remove_namespace(name):
    """Kills what runs in namespace NAME (left by us) and removes it; the
    devices in it (a veth end) go with it. Returns ip's complaint, "" if none."""
    for pid in ns_pids(name):
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    # A killed process leaves the namespace a moment after the signal.
    for _ in range(50):
        if not ns_pids(name):
            break
        time.sleep(0.1)
    p = run(["ip", "netns", "del", name])
    return "" if p.returncode == 0 else (p.stderr.strip() or f"ip netns del {name} failed")


def restore_left_device(prog, owner, state, log):
    """The host device a dead sweep (--dev) changed, as its state file
    says it was: offloads and MTU, and the kernel's root qdisc back."""
    dev = state.get("dev")
    if not dev:
        return
    saved = state.get("dev_saved") or []
    if saved and run(["ethtool", "-K", dev] + saved).returncode == 0:
        words = " ".join(f"{k}={v}" for k, v in zip(saved[::2], saved[1::2]))
        print(f"{prog}: restored {dev}'s offloads {words}, left by sweep {owner} (not running)", file=log)
    if state.get("mtu") and run(["ip", "link", "set", "dev", dev, "mtu", str(state["mtu"])]).returncode == 0:
        print(f"{prog}: restored {dev}'s MTU {state['mtu']}, left by sweep {owner}", file=log)
    if state.get("qdisc") and run(["tc", "qdisc", "del", "dev", dev, "root"]).returncode == 0:
        print(f"{prog}: restored {dev}'s root qdisc (the kernel's default), left by sweep {owner}", file=log)


def dead_state_owners(state_dir=STATE_DIR):
    """The owners of state files whose sweeps no longer run (one killed
    before it made a namespace, or after it removed them)."""
    try:
        names = os.listdir(state_dir)
    except OSError:
        return []
    owners = []
    for name in names:
        m = re.fullmatch(NS_PREFIX + r"([0-9]+)\.json", name)
        if m and not owners_alive(int(m.group(1)), read_state(name[:-5], state_dir)):
            owners.append(int(m.group(1)))
    return owners


def remove_stale(prog, netns_dir=NETNS_DIR, log=None, state_dir=STATE_DIR):
    """Removes every namespace (and so veth pair) that a sweep no longer
    running left, and sets back the host device it changed (--dev), saying
    so on stderr; returns the namespaces removed."""
    log = log or sys.stderr
    removed, owners = [], set(dead_state_owners(state_dir))
    for name, owner in stale_sweeps(netns_dir, state_dir):
        owners.add(owner)
        err = remove_namespace(name)
        if err:
            print(f"{prog}: WARNING: could not remove namespace {name} left by sweep {owner}: {err}", file=log)
        else:
            print(f"{prog}: removed namespace {name} left by sweep {owner} (not running)", file=log)
            removed.append(name)
    for owner in sorted(owners):
        base = NS_PREFIX + str(owner)
        state = read_state(base, state_dir)
        if state.get("net_ns", net_ns_id()) != net_ns_id():
            continue   # a sweep of another network namespace: its device is not here
        restore_left_device(prog, owner, state, log)
        try:
            os.unlink(state_path(base, state_dir))
        except OSError:
            pass
    return removed


# ---- the sweep's network ----------------------------------------------------------


class Net:
    """The network side of one sweep. Use as a context manager, or call
    cleanup() in a finally: it undoes everything, and may be called at any
    point, more than once.

    MODE is lo, veth, dev or remote (a server on another host: REMOTE, a
    remote.Remote, runs the commands on "@HOST" devices). BACKENDS is a
    programs.Backends (what crosses the wire is a backend's capability).
    OWNER names the namespaces (the PID the user knows)."""

    def __init__(self, prog, mode, backends=None, dev="", remote=None, owner=None, log=None):
        if mode not in MODES:
            raise ValueError(f"mode {mode!r}")
        self.prog, self.mode, self.backends, self.dev, self.remote = prog, mode, backends, dev, remote
        self.log = log or sys.stderr
        self.owner = owner or os.getpid()
        self.ns, self.ns_srv, self.ns_cli = names(self.owner)
        self.state = None         # what the state file says (None: none written)
        self.namespaces = []      # made by us, removed by cleanup
        self.server = None        # the Popen of --veth's tbench_srv
        self.server_args = None   # its extra arguments
        self.srv_bin = self.srv_log = None
        self.dev_saved = []       # ["tso", "on", ...]: --dev's offloads before the sweep
        self.mtu_saved = {}       # Device -> MTU before a knob set one
        self.qdisc_set = set()    # Devices where a knob put a tbf

    def __enter__(self):
        return self

    def _save_state(self, **changes):
        """The state file, for a next sweep to clean up after this one if
        it is killed with -9 (remove_stale). Best effort: a sweep that
        cannot write it still runs."""
        if self.state is None:
            pids = sorted({self.owner, os.getpid()})
            self.state = {"processes": [[p, process_start(p)] for p in pids], "net_ns": net_ns_id()}
        self.state.update(changes)
        try:
            os.makedirs(STATE_DIR, exist_ok=True)
            atomic_write(state_path(self.ns), json.dumps(self.state) + "\n")
        except (OSError, RunError):
            pass

    def _drop_state(self):
        if self.state is not None:
            try:
                os.unlink(state_path(self.ns))
            except OSError:
                pass
            self.state = None

    def __exit__(self, *exc):
        self.cleanup()
        return False

    # ---- commands in a namespace

    def argv(self, ns, argv):
        """ARGV to run in namespace NS ("" here, NEW_NS a new one, "@HOST" there)."""
        argv = list(argv)
        if ns == "":
            return argv
        if ns.startswith("@"):
            if self.remote is None:
                raise NetError(f"device of {ns[1:]} with no remote host set up")
            return self.remote.checked_argv(ns[1:], argv)
        if ns == NEW_NS:
            user = [] if os.geteuid() == 0 else ["--user", "--map-root-user"]
            return ["unshare"] + user + ["--net"] + argv
        return ["ip", "netns", "exec", ns] + argv

    def run_in(self, ns, argv, **kw):
        return run(self.argv(ns, argv), **kw)

    def features(self, d):
        """ethtool -k of Device D as {feature: value} ({} if it cannot say)."""
        return parse_features(self.run_in(d.ns, ["ethtool", "-k", d.name]).stdout)

    def read_offloads(self, d):
        """(tso, gso, gro) of Device D as ethtool -k reads them back."""
        return offloads_of(self.features(d))

    def mtu_of(self, d):
        """Device D's MTU as a string, "" if ip cannot say."""
        return parse_mtu(self.run_in(d.ns, ["ip", "-o", "link", "show", "dev", d.name]).stdout)

    # ---- setting up

    def setup(self, mtu, srv_log=None, tbench_srv=None, srv_args=()):
        """net_setup: nothing for lo; the sweep's namespace, and with veth
        the pair and its tbench_srv (SRV_LOG its log, TBENCH_SRV the
        program); with dev, DEV's offloads saved. NetError if it cannot."""
        if self.mode == "lo":
            return
        self._save_state()
        self._new_ns(self.ns)
        if self.mode == "veth":
            self.start_veth(mtu, srv_log, tbench_srv, srv_args)
        elif self.mode == "dev":
            self._save_dev()

    def _new_ns(self, name):
        p = run(["ip", "netns", "add", name])
        if p.returncode != 0:
            raise NetError(f"cannot create network namespace {name}: {p.stderr.strip()}")
        self.namespaces.append(name)
        run(["ip", "-n", name, "link", "set", "lo", "up"])

    def _ip(self, *args):
        """ip ARGS; NetError with ip's words when it fails."""
        p = run(["ip"] + list(args))
        if p.returncode != 0:
            raise NetError(f"ip {' '.join(args)}: {p.stderr.strip() or 'failed'}")

    def start_veth(self, mtu, srv_log, tbench_srv, srv_args=()):
        """net_start_veth: the two namespaces, the pair between them (made
        inside them: the host never sees it) and the server."""
        self._new_ns(self.ns_srv)
        self._new_ns(self.ns_cli)
        mtu = str(mtu)
        self._ip("link", "add", VETH_SRV, "netns", self.ns_srv, "mtu", mtu, "type", "veth",
                 "peer", "name", VETH_CLI, "netns", self.ns_cli, "mtu", mtu)
        self._ip("-n", self.ns_srv, "addr", "add", f"{ADDR_SRV}/30", "dev", VETH_SRV)
        self._ip("-n", self.ns_cli, "addr", "add", f"{ADDR_CLI}/30", "dev", VETH_CLI)
        # IPv6 too (for the knob family), without duplicate address detection's wait.
        run(["ip", "-n", self.ns_srv, "addr", "add", f"{ADDR6_SRV}/64", "dev", VETH_SRV, "nodad"])
        run(["ip", "-n", self.ns_cli, "addr", "add", f"{ADDR6_CLI}/64", "dev", VETH_CLI, "nodad"])
        self._ip("-n", self.ns_srv, "link", "set", VETH_SRV, "up")
        self._ip("-n", self.ns_cli, "link", "set", VETH_CLI, "up")
        self.srv_log, self.srv_bin = srv_log, tbench_srv
        self.start_server(srv_args)

    def mptcp_paths(self, mtu):
        """net_mptcp_paths (--veth, for multipath backends): a second veth
        pair, and an MPTCP endpoint on the client's end of it that opens a
        second subflow of every MPTCP connection (ip mptcp limits let both
        sides open and accept it). A rule routes what leaves from that
        address over the second pair to the server's usual address: plain
        TCP never takes it. NetError saying why when ip or the kernel cannot."""
        mtu = str(mtu)
        net_srv = ADDR_SRV.rsplit(".", 1)[0] + ".0/30"
        steps = [
            ["link", "add", VETH2_SRV, "netns", self.ns_srv, "mtu", mtu, "type", "veth",
             "peer", "name", VETH2_CLI, "netns", self.ns_cli, "mtu", mtu],
            ["-n", self.ns_srv, "addr", "add", f"{ADDR2_SRV}/30", "dev", VETH2_SRV],
            ["-n", self.ns_cli, "addr", "add", f"{ADDR2_CLI}/30", "dev", VETH2_CLI],
            ["-n", self.ns_srv, "link", "set", VETH2_SRV, "up"],
            ["-n", self.ns_cli, "link", "set", VETH2_CLI, "up"],
            ["-n", self.ns_cli, "rule", "add", "from", ADDR2_CLI, "table", str(SRV_PORT)],
            ["-n", self.ns_cli, "route", "add", net_srv, "dev", VETH2_CLI, "table", str(SRV_PORT)],
            ["-n", self.ns_srv, "mptcp", "limits", "set", "subflows", "2", "add_addr_accepted", "2"],
            ["-n", self.ns_cli, "mptcp", "limits", "set", "subflows", "2", "add_addr_accepted", "2"],
            ["-n", self.ns_cli, "mptcp", "endpoint", "add", ADDR2_CLI, "dev", VETH2_CLI, "subflow"],
        ]
        for step in steps:
            p = run(["ip"] + step)
            if p.returncode != 0:
                raise NetError("MPTCP's second path over a second veth pair: "
                               + ((p.stderr + p.stdout).strip() or "failed"))

    def start_server(self, srv_args=()):
        """net_start_server: makes --veth's tbench_srv the one with these
        extra arguments, restarting it when they differ (its socket options
        and CPUs are set when it starts). It listens on every address of its
        namespace. NetError saying why when it does not start."""
        srv_args = list(srv_args)
        if self.server is not None and self.server.poll() is None and srv_args == self.server_args:
            return
        kill_wait(self.server)
        self.server, self.server_args = None, srv_args
        with open(self.srv_log, "a") as log:
            print(" ".join(["+ tbench_srv --port", str(SRV_PORT), "-q"] + srv_args), file=log, flush=True)
            self.server = subprocess.Popen(
                ["ip", "netns", "exec", self.ns_srv, self.srv_bin, "--port", str(SRV_PORT), "-q"] + srv_args,
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        words = " ".join(srv_args)
        # A minute at most: a loaded machine (an ASan build, make check -j)
        # can be slow to start it; a server that dies ends the wait at once.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.run_in(self.ns_srv, ["ss", "-Hltn", f"sport = :{SRV_PORT}"]).stdout.strip():
                return
            if self.server.poll() is not None:
                self.server = None
                raise NetError(f"tbench_srv {words} did not start: {last_line(self.srv_log)}")
            time.sleep(0.1)
        raise NetError(f"tbench_srv {words} is not listening on port {SRV_PORT} after 60 s")

    @property
    def server_pid(self):
        """The PID of --veth's tbench_srv (ip netns exec execs it), or None."""
        return self.server.pid if self.server is not None and self.server.poll() is None else None

    def _save_dev(self):
        """--dev: DEV's offloads, restored by cleanup."""
        if run(["ip", "link", "show", self.dev]).returncode != 0:
            raise NetError(f"--dev: no device {self.dev}")
        for name, value in zip(("tso", "gso", "gro"), self.read_offloads(Device("", self.dev))):
            if value != "unknown":
                self.dev_saved += [name, value]
        self._save_state(dev=self.dev, dev_saved=self.dev_saved)
        print(f"{self.prog}: {self.dev} offloads now {self._saved_words()}: restored on exit", file=self.log)

    def _saved_words(self):
        return " ".join(f"{k}={v}" for k, v in zip(self.dev_saved[::2], self.dev_saved[1::2]))

    # ---- each run

    def route(self, net, backend, server=""):
        """net_route: where BACKEND's clients run and which devices its
        traffic crosses. NET false: a backend run with offload n/a. SERVER:
        --dev's --server, or the remote server's address."""
        if self.mode == "lo":
            return Route("", "", ())
        cli = self.ns_cli if self.mode == "veth" else self.ns
        if not net:
            return Route(cli, "", ())
        has = self.backends.has if self.backends else (lambda b, c: False)
        if self.mode == "remote" and has(backend, "server"):
            devs = tuple(self.remote.devices()) if self.remote else ()
            return Route("", server, devs)
        veth = (Device(self.ns_cli, VETH_CLI), Device(self.ns_srv, VETH_SRV))
        if self.mode == "veth" and has(backend, "multipath"):
            return Route(self.ns_cli, ADDR_SRV, veth + (Device(self.ns_cli, VETH2_CLI), Device(self.ns_srv, VETH2_SRV)))
        if self.mode == "veth" and has(backend, "wire"):
            return Route(self.ns_cli, ADDR_SRV, veth)
        if self.mode == "dev" and has(backend, "wire"):
            return Route("", server, (Device("", self.dev),))
        return Route(cli, "", (Device(cli, "lo"),))

    def server_address(self, family=None):
        """--veth's server address for a run of FAMILY (ipv4, ipv6)."""
        return ADDR6_SRV if family == "ipv6" else ADDR_SRV

    def apply_offloads(self, devs, tso="", gso="", gro="", log=None):
        """net_apply_offloads: sets TSO/GSO/GRO ("" = left alone) on every
        Device of DEVS and returns what they read back (Offloads). What was
        read, and ethtool's complaints, go to LOG: the read-back is what counts."""
        log = log or self.log
        wanted = [w for k, v in (("tso", tso), ("gso", gso), ("gro", gro)) if v for w in (k, v)]
        seen = None
        for d in devs:
            if wanted:
                p = self.run_in(d.ns, ["ethtool", "-K", d.name] + wanted)
                if p.stderr or p.stdout:
                    log.write(p.stdout + p.stderr)
            rb = self.read_offloads(d)
            print(f"offloads of {d.where()}: tso {rb[0]} gso {rb[1]} gro {rb[2]}", file=log, flush=True)
            if seen is None:
                seen = [d.name] + list(rb)
            else:
                seen[1:] = [a if a == b else "mixed" for a, b in zip(seen[1:], rb)]
        if seen is None:
            return Offloads("", "", "", "")
        if seen[0] == VETH_CLI:
            seen[0] = "veth"
        return Offloads(*seen)

    def set_knob(self, kind, devs, value, log=None):
        """A device knob (kind mtu or rate) set on DEVS: the reasons the run
        cannot go ahead, one a device that did not take it ([] when all did)."""
        if kind == "mtu":
            return self.set_mtu(devs, value, log)
        if kind == "rate":
            return self.set_rate(devs, value, log)
        raise ValueError(f"device knob {kind!r}")

    def set_mtu(self, devs, mtu, log=None):
        """net_set_mtu: MTU on every Device of DEVS, read back; the reasons
        of those that did not take it. restore_devices undoes it."""
        log = log or self.log
        why = []
        for d in devs:
            if d not in self.mtu_saved:
                self.mtu_saved[d] = self.mtu_of(d)
                if d == Device("", self.dev) and self.mtu_saved[d]:
                    self._save_state(mtu=self.mtu_saved[d])
            p = self.run_in(d.ns, ["ip", "link", "set", "dev", d.name, "mtu", str(mtu)])
            now = self.mtu_of(d)
            print(f"mtu of {d.where()}: {now or 'unknown'}", file=log, flush=True)
            if now != str(mtu):
                err = f" (ip: {p.stderr.strip()})" if p.stderr.strip() else ""
                why.append(f"mtu={mtu}: {d.where()} reads back MTU {now or 'unknown'}{err}")
        return why

    def _root_qdisc(self, d):
        """The root qdisc of Device D as tc -j says it ({} if none)."""
        try:
            q = json.loads(self.run_in(d.ns, ["tc", "-j", "qdisc", "show", "dev", d.name, "root"]).stdout or "[]")
        except json.JSONDecodeError:
            return {}
        return q[0] if q and isinstance(q[0], dict) else {}

    def set_rate(self, devs, rate, log=None):
        """net_set_rate: a tbf of RATE (100mbit) as the root qdisc of every
        Device of DEVS, read back within 1 %; the reasons of those that did
        not take it. A device whose root qdisc someone set up is refused:
        restoring is deleting ours, which brings back the kernel's default."""
        log = log or self.log
        want = rate_bytes(rate)
        burst = max(want // 100, 131072)   # 10 ms at the rate, at least two 64 KB GSO packets
        why = []
        for d in devs:
            if d not in self.qdisc_set:
                root = self._root_qdisc(d).get("handle", "")
                if root != "0:":
                    why.append(f"rate={rate}: {d.where()} has a root qdisc of its own (handle {root or 'unknown'}),"
                               " which the sweep could not restore")
                    continue
                self.qdisc_set.add(d)
                if d == Device("", self.dev):
                    self._save_state(qdisc=True)
            p = self.run_in(d.ns, ["tc", "qdisc", "replace", "dev", d.name, "root", "tbf", "rate", rate,
                                   "burst", str(burst), "latency", "50ms"])
            q = self._root_qdisc(d)
            got = q.get("options", {}).get("rate") if q.get("kind") == "tbf" else None
            print(f"rate of {d.where()}: tbf {got if got is not None else 'none'} bytes/s", file=log, flush=True)
            if not isinstance(got, int) or abs(got - want) * 100 > want:
                err = f" (tc: {p.stderr.strip()})" if p.stderr.strip() else ""
                why.append(f"rate={rate}: {d.where()} reads back tbf rate {got if got is not None else 'none'}"
                           f" bytes/s, not {want}{err}")
        return why

    def _guarded(self, d):
        """True for a device of another host whose guard has ended: it
        restored the device, and no command reaches that host any more."""
        return d.ns.startswith("@") and self.remote is not None and not self.remote.guarding(d.ns[1:])

    def restore_devices(self, say=False):
        """net_restore_devices: every MTU and qdisc the knobs changed back as
        it was (after each run, and on exit); SAY: says so for the host's
        devices (--dev), as on exit."""
        for d, mtu in self.mtu_saved.items():
            if self._guarded(d):
                continue
            if say and d.ns == "":
                print(f"{self.prog}: restoring {d.name}: mtu {mtu}", file=self.log)
            if not mtu or self.run_in(d.ns, ["ip", "link", "set", "dev", d.name, "mtu", mtu]).returncode != 0:
                print(f"{self.prog}: WARNING: could not restore {d.where()}'s MTU {mtu}", file=self.log)
        for d in self.qdisc_set:
            if self._guarded(d):
                continue
            if say and d.ns == "":
                print(f"{self.prog}: restoring {d.name}: the kernel's default root qdisc", file=self.log)
            self.run_in(d.ns, ["tc", "qdisc", "del", "dev", d.name, "root"])
        self.mtu_saved, self.qdisc_set = {}, set()
        if self.state and (self.state.get("mtu") or self.state.get("qdisc")):
            self._save_state(mtu=None, qdisc=False)

    # ---- meta.json

    def devices_json(self):
        """net_devices_json: every device a run may use, with all its
        ethtool -k flags, for meta.json's devices; in the loopback mode the
        lo of a new namespace, as each run starts with it."""
        devs = [Device(self.ns, "lo")]
        if self.mode == "lo":
            devs = [Device(NEW_NS, "lo")]
        elif self.mode == "veth":
            devs = [Device(self.ns_cli, "lo"), Device(self.ns_cli, VETH_CLI), Device(self.ns_srv, VETH_SRV)]
        elif self.mode == "dev":
            devs.append(Device("", self.dev))
        out = []
        for d in devs:
            mtu = self.mtu_of(d)
            info = self.run_in(d.ns, ["ethtool", "-i", d.name]).stdout
            driver = next((l[len("driver: "):] for l in info.splitlines() if l.startswith("driver: ")), "")
            out.append({"namespace": "each run's own (tbench --netns)" if d.ns == NEW_NS else d.ns or "host",
                        "device": d.name, "driver": driver, "mtu": int(mtu) if mtu else None,
                        "offload_flags_at_start": self.features(d)})
        return out

    # ---- the end

    def cleanup(self):
        """net_cleanup: undoes what setup made -- the server and whatever
        else runs in our namespaces, the device knobs, --dev's offloads,
        the namespaces. Safe at any point, more than once."""
        kill_wait(self.server)
        self.server = None
        # Whatever else still runs in our namespaces was started by us.
        stop_pids([pid for ns in self.namespaces for pid in ns_pids(ns)])
        self.restore_devices(say=True)
        if self.dev_saved:
            print(f"{self.prog}: restoring {self.dev}: {self._saved_words()}", file=self.log)
            if run(["ethtool", "-K", self.dev] + self.dev_saved).returncode != 0:
                print(f"{self.prog}: WARNING: could not restore {self.dev}'s offloads ({self._saved_words()})",
                      file=self.log)
            self.dev_saved = []
        for ns in self.namespaces:
            if run(["ip", "netns", "del", ns]).returncode != 0:
                print(f"{self.prog}: WARNING: could not remove namespace {ns}", file=self.log)
        self.namespaces = []
        self._drop_state()


def last_line(path):
    """The last line of the file PATH ("" if none)."""
    try:
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return ""
    return lines[-1] if lines else ""


# ---- a command line, for tests that need the --veth set-up alone -------------


def main(argv):
    """python3 -m tbtools.netns COMMAND --owner PID ...: the --veth set-up
    of a sweep whose namespaces PID names (a test's shell), left in place
    when this ends: names (NET_NS_CLI tbsweep-PID-cli ... one a line), veth
    (the pair and tbench_srv; -- then its arguments), mptcp-paths, down
    (kills what runs in PID's namespaces and removes them), remove-stale."""
    from .errors import Parser
    p = Parser(prog="tbtools.netns", description=main.__doc__)
    p.add_argument("command", choices=("names", "veth", "mptcp-paths", "down", "remove-stale"))
    p.add_argument("--owner", type=int, default=os.getppid())
    p.add_argument("--mtu", default="1500")
    p.add_argument("--srv-log", default=os.devnull)
    p.add_argument("--tbench-srv", default="tbench_srv")
    srv_args = argv[argv.index("--") + 1:] if "--" in argv else []
    a = p.parse_args(argv[:len(argv) - len(srv_args) - (1 if "--" in argv else 0)])
    net = Net("tbtools.netns", "veth", owner=a.owner)
    if a.command == "names":
        for k, v in (("NET_NS", net.ns), ("NET_NS_SRV", net.ns_srv), ("NET_NS_CLI", net.ns_cli),
                     ("NET_VETH_SRV", VETH_SRV), ("NET_VETH_CLI", VETH_CLI), ("NET_ADDR_SRV", ADDR_SRV),
                     ("NET_ADDR_CLI", ADDR_CLI), ("NET_VETH2_SRV", VETH2_SRV), ("NET_VETH2_CLI", VETH2_CLI),
                     ("NET_SRV_PORT", SRV_PORT)):
            print(k, v)
    elif a.command == "veth":
        try:
            net.start_veth(a.mtu, a.srv_log, a.tbench_srv, srv_args)
        except BaseException:
            net.cleanup()
            raise
    elif a.command == "mptcp-paths":
        net.mptcp_paths(a.mtu)
    elif a.command == "down":
        for ns in (net.ns_cli, net.ns_srv, net.ns):
            if os.path.exists(os.path.join(NETNS_DIR, ns)):
                err = remove_namespace(ns)
                if err:
                    raise NetError(f"namespace {ns}: {err}")
    else:
        remove_stale("tbtools.netns")
    return 0


if __name__ == "__main__":
    from .errors import run_main
    sys.exit(run_main("tbtools.netns", main, sys.argv[1:]))
