"""The knobs a sweep can vary (--vary NAME=V1,V2,...): which there are,
the values each takes, the backends it means something to, how a run
applies it and how it is read back.

Which knobs there are is tbench-stats's to say (`tbench-stats row
--knobs`: a knob's name is its column of runs.csv); the client model is
the sweep's own dimension (a column of every run). What each one does to
a run is this module's: BEHAVIOUR below. A run carries its knobs as a
tuple of (name, value) pairs, in the order of Knobs.names.
"""

import os
import re
from collections import namedtuple

from .errors import UsageError

# scope:    which backends a knob means something to: net (whose bytes
#           cross a network device, --net-backends), sock (sockopts in
#           tbench -b list), wire (wire in tbench -b list), replies
#           (copy-replies in tbench -b list), all.
# kind:     the values it takes (VALUE_CHECKS).
# apply:    offloads (tbench --netns --offload..., ethtool -K), opt:OPTION
#           (tbench OPTION VALUE; mtu only when tbench makes the namespace),
#           flag:OPTION (tbench OPTION when on, nothing when off),
#           sockopt:NAME (tbench -T NAME=VALUE, and tbench_srv's), placement
#           (tbench --cpus, --server-cpus), model (--threads), - (not tbench).
# device:   what the sweep sets itself on the devices a run crosses (--veth,
#           --dev, a server host), restored after it; - none.
# readback: json:PATH (the run's --json says it), tbench (tbench fails the
#           run unless it reads back as asked), device (the sweep reads it).
Behaviour = namedtuple("Behaviour", "scope kind apply device readback")
BEHAVIOUR = {
    "offload": Behaviour("net", "onoff", "offloads", "offloads", "tbench"),
    "tso": Behaviour("net", "onoff", "offloads", "offloads", "tbench"),
    "gso": Behaviour("net", "onoff", "offloads", "offloads", "tbench"),
    "gro": Behaviour("net", "onoff", "offloads", "offloads", "tbench"),
    "mtu": Behaviour("net", "mtu", "opt:--mtu", "mtu", "json:netns.mtu"),
    "cc": Behaviour("sock", "ccname", "sockopt:TCP_CONGESTION", "-", "json:socket.cc"),
    "nodelay": Behaviour("sock", "onoff", "sockopt:TCP_NODELAY", "-", "json:socket.nodelay"),
    "sndbuf": Behaviour("sock", "bytes", "sockopt:SO_SNDBUF", "-", "json:socket.sndbuf"),
    "rcvbuf": Behaviour("sock", "bytes", "sockopt:SO_RCVBUF", "-", "json:socket.rcvbuf"),
    "family": Behaviour("sock", "family", "opt:--family", "-", "json:settings.family"),
    "placement": Behaviour("all", "placement", "placement", "-", "json:settings.cpus"),
    "model": Behaviour("all", "model", "model", "-", "json:settings.model"),
    "rate": Behaviour("wire", "rate", "-", "rate", "device"),
    "inject_ns": Behaviour("all", "nanoseconds", "opt:--inject-ns", "-", "json:settings.inject_ns"),
    "copy_replies": Behaviour("replies", "onoff", "flag:--copy-replies", "-", "json:settings.copy_replies"),
    # Varied as sysctl:NAME=V1,V2 (a dimension per NAME); runs.csv's one
    # sysctl column holds them all, "NAME=V;NAME=V", in the order varied.
    "sysctl": Behaviour("all", "sysctl", "sysctl", "-", "tbench"),
}
SYSCTL_PREFIX = "sysctl:"
# The knobs that make up one offload setting, named by the offload column.
OFFLOADS = ("offload", "tso", "gso", "gro")
# The order knobs are listed in: by the backends they apply to.
SCOPE_ORDER = ("net", "sock", "replies", "all", "wire")

VALUE_CHECKS = {
    "onoff": (r"on|off", None, "on or off"),
    "mtu": (r"[0-9]{2,5}", (68, 65536), "an MTU: a whole number from 68 to 65536"),
    "ccname": (r"[A-Za-z0-9_-]{1,15}", None,
               "a congestion control name (see /proc/sys/net/ipv4/tcp_available_congestion_control)"),
    "bytes": (r"[1-9][0-9]{0,9}", (1, 1073741823), "a size in bytes, from 1 to 1073741823"),
    "family": (r"ipv[46]", None, "ipv4 or ipv6"),
    "placement": (r"same|split|free", None,
                  "same (clients and servers on one CPU), split (on two) or free (not pinned)"),
    "model": (r"processes|threads", None, "processes or threads"),
    "rate": (r"[1-9][0-9]{0,5}(bit|kbit|mbit|gbit|tbit)", None,
             "a tc rate: a number and bit, kbit, mbit, gbit or tbit (e.g. 100mbit)"),
    "nanoseconds": (r"[0-9]{1,10}", (0, 1000000000), "nanoseconds, a whole number from 0 to 1000000000"),
    "sysctl": (r"[^,;=\x00-\x1f\x7f]{1,64}", None,
               "a sysctl's value: printable, without ',', ';' or '=' (e.g. 0, or 4096 131072 6291456)"),
}
SYSCTL_NAME = re.compile(r"net(\.[A-Za-z0-9_-]+)+")


def behaviour(name):
    """BEHAVIOUR of a knob of a sweep: sysctl:NAME is a sysctl."""
    return BEHAVIOUR["sysctl" if name.startswith(SYSCTL_PREFIX) else name]


def bad_value(kind, value):
    """None when VALUE is one of KIND, else what a value of KIND is."""
    pattern, bounds, what = VALUE_CHECKS[kind]
    if not re.fullmatch(pattern, value):
        return what
    if bounds and not bounds[0] <= int(value) <= bounds[1]:
        return what
    return None


def offered(stats_knobs):
    """The knobs a sweep can vary: those of tbench-stats row --knobs that
    this module knows how to apply, and the client model; by scope."""
    names = [k for k in stats_knobs if k in BEHAVIOUR and k != "model"] + ["model"]
    return sorted(names, key=lambda k: SCOPE_ORDER.index(BEHAVIOUR[k].scope))


def parse_vary(entries, names):
    """--vary NAME=LIST entries [(option as typed, "NAME=LIST")] checked:
    {name: [values]} in the order given; UsageError naming the option."""
    vary = {}
    listed = " ".join(SYSCTL_PREFIX + "NAME" if n == "sysctl" else n for n in names)
    for opt, text in entries:
        if "=" not in text:
            raise UsageError(f"{opt} '{text}': give NAME=V1,V2,... (knobs: {listed})")
        name, values = text.split("=", 1)
        if name == "sysctl" and "sysctl" in names:
            raise UsageError(f"{opt} {text}: name the sysctl: sysctl:NAME=V1,V2 "
                             "(e.g. sysctl:net.ipv4.tcp_autocorking=0,1)")
        if name.startswith(SYSCTL_PREFIX) and "sysctl" in names:
            if not SYSCTL_NAME.fullmatch(name[len(SYSCTL_PREFIX):]):
                raise UsageError(f"{opt} {name}: a sysctl of the run's network namespace: "
                                 "net.NAME, dot-separated (e.g. sysctl:net.ipv4.tcp_autocorking)")
        elif name not in names:
            raise UsageError(f"{opt}: unknown knob '{name}' (knobs: {listed})")
        if name in vary:
            raise UsageError(f"{opt}: {name} is given twice (give all its values at once)")
        vals = values.split(",")
        if "" in vals:
            raise UsageError(f"{opt} {text}: an empty value")
        for i, v in enumerate(vals):
            bad = bad_value(behaviour(name).kind, v)
            if bad:
                raise UsageError(f"{opt} {name}={values}: '{v}' is not {bad}")
            if v in vals[:i]:
                raise UsageError(f"{opt} {name}={values}: '{v}' given twice")
        vary[name] = vals
    return vary


def first_two_cpus():
    """The CPUs of placement same and split: the first two this sweep may
    use (one CPU: the next number, and split fails its runs saying why)."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) >= 2:
        return str(cpus[0]), str(cpus[1])
    first = cpus[0] if cpus else 0
    return str(first), str(first + 1)


def given(value):
    """A value asked for: not "-" (not varied) nor n/a."""
    return value not in ("-", "n/a")


def value_of(knobs, name):
    """The value of NAME in a run's knobs: the one asked for, n/a, or "-"."""
    return dict(knobs).get(name, "-")


class Knobs:
    """The knobs of one sweep: those varied, the backends each applies to,
    the columns runs.csv has for them, and what each run's knobs make of
    tbench's and tbench_srv's arguments and of its row."""

    def __init__(self, vary, backends, net_backends, header, stats_knobs):
        """VARY: parse_vary's; BACKENDS: programs.Backends; NET_BACKENDS:
        the backends whose bytes cross a device, or "all"; HEADER and
        STATS_KNOBS: tbench-stats row --header and --knobs."""
        self.vary = vary
        self.backends = backends
        self.net = net_backends
        self.cpu0, self.cpu1 = first_two_cpus()
        order = offered(stats_knobs)
        self.varied = [k for k in order if k in vary and k not in OFFLOADS] + \
            [k for k in vary if k.startswith(SYSCTL_PREFIX)]
        # model is a column of every run: a knob column only where varied.
        self.columns = [k for k in order if k not in OFFLOADS and (
            k in stats_knobs or (k == "model" and k in vary and k in header))]
        self.unrecorded = [k for k in self.varied if k not in self.columns and not (
            k.startswith(SYSCTL_PREFIX) and "sysctl" in self.columns)]
        # tso_read...: the read-backs, beside the offloads asked for.
        self.read = "_read" if "tso_read" in header else ""

    def applies(self, name, backend):
        scope = behaviour(name).scope
        if scope == "all":
            return True
        if scope == "net":
            return self.net == "all" or backend in self.net
        return self.backends.has(backend, {"sock": "sockopts", "replies": "copy-replies"}.get(scope, scope))

    def combos(self, backend):
        """Every combination of the varied knobs for BACKEND, as tuples of
        (name, value); a knob that means nothing to it is n/a (run once)."""
        combos = [()]
        for k in self.varied:
            vals = self.vary[k] if self.applies(k, backend) else ["n/a"]
            combos = [c + ((k, v),) for c in combos for v in vals]
        return combos

    def varies_sockopts(self):
        return any(behaviour(k).apply.startswith("sockopt:") for k in self.varied)

    def placement_cpus(self, value):
        """(client CPUs, server CPUs) of a placement; None for not pinned."""
        return {"same": (self.cpu0, self.cpu0), "split": (self.cpu0, self.cpu1)}.get(value, (None, None))

    def sockopts(self, knobs):
        """tbench -T of a run: TCP_NODELAY (dbench's default) unless nodelay
        is varied, and every socket option knob given; None when none is."""
        nodelay, opts, any_given = "TCP_NODELAY", "", False
        for k, v in knobs:
            apply = behaviour(k).apply
            if not apply.startswith("sockopt:") or not given(v):
                continue
            any_given = True
            v = {"on": "1", "off": "0"}.get(v, v)
            if k == "nodelay":
                nodelay = f"TCP_NODELAY={v}"
            else:
                opts += f",{apply[len('sockopt:'):]}={v}"
        return nodelay + opts if any_given else None

    def tbench_args(self, knobs, tbench_ns, own_server):
        """tbench's arguments for a run's knobs. TBENCH_NS: tbench makes the
        run's namespace (--netns) and sets the device knobs itself;
        OWN_SERVER: False when it talks to a tbench_srv the sweep started,
        which gets the server side."""
        args = []
        for k, v in knobs:
            if not given(v):
                continue
            apply = behaviour(k).apply
            if apply == "sysctl":   # needs --netns: the sweep allows it in the loopback mode only
                args += ["--sysctl", f"{k[len(SYSCTL_PREFIX):]}={v}"]
            elif apply == "opt:--mtu":
                args += ["--mtu", v] if tbench_ns else []
            elif apply.startswith("opt:"):
                args += [apply[4:], v]
            elif apply.startswith("flag:"):
                args += [apply[5:]] if v == "on" else []
            elif apply == "placement":
                cpus, server_cpus = self.placement_cpus(v)
                args += ["--cpus", cpus] if cpus else []
                args += ["--server-cpus", server_cpus] if server_cpus and own_server else []
            elif apply == "model" and v == "threads":
                args.append("--threads")
        opts = self.sockopts(knobs)
        return args + (["-T", opts] if opts else [])

    def server_args(self, knobs):
        """tbench_srv's arguments for a run's knobs: its side of them."""
        args = ["--threads"] if value_of(knobs, "model") == "threads" else []
        opts = self.sockopts(knobs)
        args += ["-T", opts] if opts else []
        server_cpus = self.placement_cpus(value_of(knobs, "placement"))[1]
        return args + (["--cpus", server_cpus] if server_cpus else [])

    @staticmethod
    def device_settings(knobs):
        """[(kind, value)]: what the sweep sets on the devices a run crosses."""
        return [(behaviour(k).device, v) for k, v in knobs
                if behaviour(k).device not in ("-", "offloads") and given(v)]

    def set_args(self, knobs, label, net):
        """tbench-stats row --set arguments of a run's knobs: the parts of
        its offload label (when runs.csv has columns for what was asked
        apart from the read-backs) and every knob column but model."""
        args = []
        if self.read:
            parts = dict(p.split("=", 1) for p in label.split(":") if "=" in p)
            for k in ("tso", "gso", "gro"):
                args += ["--set", f"{k}={parts.get(k, '-') if net else 'n/a'}"]
        for k in self.columns:
            if k == "sysctl":
                args += ["--set", f"sysctl={sysctl_cell(knobs)}"]
            elif k != "model":
                args += ["--set", f"{k}={value_of(knobs, k)}"]
        return args

    @staticmethod
    def model(knobs, sweep_model):
        """A run's client model: --vary model's value, else the sweep's."""
        v = value_of(knobs, "model")
        return v if given(v) else sweep_model

    def check_json(self, doc, knobs, tbench_ns, own_server):
        """(reasons the run failed: a knob read back otherwise than asked,
        notes on knobs this tbench's --json does not report)."""
        wrong, notes = [], []
        for k, v in knobs:
            b = behaviour(k)
            if not given(v) or not b.readback.startswith("json:"):
                continue
            if b.device != "-" and not tbench_ns:
                continue   # the sweep read the device back itself
            if k == "placement":
                cpus, server_cpus = self.placement_cpus(v)
                checks = [("settings.cpus", cpus), ("settings.server_cpus", server_cpus if own_server else None)]
            else:
                checks = [(b.readback[5:], expected(b.kind, v))]
            for path, want in checks:
                found, got = json_at(doc, path)
                if not found:
                    notes.append(f"{k}={v}: not read back (this tbench's --json has no {path})")
                elif got != want:
                    wrong.append(f"{k}={v} read back as {path} = {json_text(got)}, not {json_text(want)}")
        return wrong, notes


def sysctl_cell(knobs):
    """runs.csv's sysctl cell of a run: NAME=VALUE of each sysctl given,
    joined by ';' in the order varied; "-" when none is."""
    parts = [f"{k[len(SYSCTL_PREFIX):]}={v}" for k, v in knobs if k.startswith(SYSCTL_PREFIX) and given(v)]
    return ";".join(parts) or "-"


def expected(kind, value):
    """What a run's JSON says for VALUE of a knob of KIND."""
    if kind == "nanoseconds":
        return int(value)
    if kind == "onoff":
        return value == "on"
    if kind in ("bytes", "mtu"):
        # the kernel doubles SO_SNDBUF/SO_RCVBUF for its overhead
        return int(value) * (2 if kind == "bytes" else 1)
    return value


def json_at(doc, path):
    """(found, value) at a dotted PATH of a JSON document."""
    node = doc
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return False, None
        node = node[part]
    return True, node


def json_text(value):
    """A JSON value as jq -r prints it: null, true, 1500, cubic."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
