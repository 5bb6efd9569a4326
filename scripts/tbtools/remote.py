"""tbench-sweep's other hosts: a tbench_srv on another host (--server-host),
the clients of every run on several hosts at once (--client-hosts), all
reached with ssh (--ssh CMD, split into words as rsync's -e).

Each host runs a guard for as long as the sweep lives (remote_sh.GUARD): a
shell started over ssh that saves what the sweep may change there (the
offloads, MTU and root qdisc of --server-dev), keeps a temporary directory
(the server's pid and log, the clients' JSON, what --push copied) and
reads a heartbeat line from its ssh session, which this process writes
every few seconds. When the heartbeat stops -- the sweep ended in any way,
Ctrl-C and kill -9 included (the pipe closes with the process), or the
connection dropped -- the guard stops the server, restores the device,
removes its directory and ends. Every command run on a host afterwards
first checks that its guard still runs (remote_sh.CHECKED), so nothing is
changed on a host that nobody will restore.

A remote command is a list of words, each quoted for the remote shell
(quote()): a host name, a path or an option value never becomes shell code
on either side."""

import os
import re
import subprocess
import sys
import threading
import time

from . import remote_sh
from .errors import RunError, UsageError
from .netns import Device

PORT = 7003
HEARTBEAT_S = 2


class RemoteError(RunError):
    """A host could not do what was asked; the message names the host and
    says why (what the bash put in REMOTE_ERROR or died with)."""


def quote(word):
    """WORD as one word of a POSIX shell (ssh hands the command to one):
    always single-quoted, so that the command line says what each word is."""
    return "'" + str(word).replace("'", "'\\''") + "'"


def cmdline(words):
    """WORDS as a remote shell's command line, each quoted."""
    return " ".join(quote(w) for w in words)


HOST_RE = re.compile(r"^([A-Za-z0-9._-]+@)?[A-Za-z0-9._:-]+$")
IFACE_RE = re.compile(r"^[A-Za-z0-9._@-]+$")
SECS_RE = re.compile(r"^[0-9]+(\.[0-9]+)?$")


def add_options(parser):
    """The remote options (man tbench-sweep, hosts) on an argparse parser."""
    g = parser.add_argument_group("other hosts (docs/hosts.md)")
    g.add_argument("--server-host", metavar="[USER@]HOST", default="",
                   help="run tbench_srv on HOST (over ssh); the tcp runs go there")
    g.add_argument("--server-dev", metavar="IFACE", default="",
                   help="HOST's device whose offloads and device knobs each run sets")
    g.add_argument("--server-addr", metavar="ADDR", default="",
                   help="the address the clients connect to (default: HOST as ssh resolves it)")
    g.add_argument("--client-hosts", metavar="H1,H2,..", default="",
                   help="run each tcp run's clients on these hosts at once, merged into one point")
    g.add_argument("--push", action="store_true",
                   help="copy this tbench and tbench_srv to the hosts (else: theirs, on their PATH)")
    g.add_argument("--start-lead", metavar="S", default="5",
                   help="seconds from launching the client hosts' runs to their common start (default 5)")
    g.add_argument("--ssh", metavar="CMD", default="ssh",
                   help="the ssh command, split into words (as rsync's -e): \"ssh -F cluster.conf\"")


class Options:
    """The remote options, checked (check_options)."""

    def __init__(self, server_host="", server_dev="", server_addr="", client_hosts=(),
                 push=False, start_lead="5", ssh="ssh"):
        self.server_host, self.server_dev, self.server_addr = server_host, server_dev, server_addr
        self.client_hosts = [h for h in client_hosts if h] if not isinstance(client_hosts, str) \
            else [h for h in client_hosts.split(",") if h]
        self.push, self.start_lead, self.ssh_cmd = push, str(start_lead), ssh
        self.ssh = ssh.split()

    @classmethod
    def from_args(cls, args):
        """From add_options' attributes of an argparse namespace."""
        return cls(args.server_host, args.server_dev, args.server_addr, args.client_hosts,
                   args.push, args.start_lead, args.ssh)

    @property
    def devs(self):
        """The server's device as Net.route gives it (REMOTE_DEVS)."""
        return (Device("@" + self.server_host, self.server_dev),) if self.server_dev else ()


def check_options(opts, mode):
    """remote_check_options: UsageError for a bad combination or value;
    returns the sweep's mode ("remote" with a server host, else MODE)."""
    if not opts.ssh:
        raise UsageError("--ssh: an empty command")
    if not opts.server_host:
        if opts.server_dev or opts.server_addr or opts.client_hosts or opts.push:
            raise UsageError("--server-dev, --server-addr, --push and --client-hosts need --server-host")
        return mode
    if mode != "lo":
        raise UsageError(f"--server-host: not with --veth or --dev (the server is on {opts.server_host})")
    if not opts.server_dev:
        raise UsageError(f"--server-host needs --server-dev IFACE: the device of {opts.server_host} "
                         "whose offloads each run sets")
    for h in [opts.server_host] + opts.client_hosts:
        if not HOST_RE.match(h):
            raise UsageError(f"bad host name '{h}' ([USER@]HOST)")
    if not IFACE_RE.match(opts.server_dev):
        raise UsageError(f"--server-dev: bad interface name '{opts.server_dev}'")
    if not SECS_RE.match(opts.start_lead):
        raise UsageError(f"--start-lead: '{opts.start_lead}' is not a number of seconds")
    return "remote"


class Remote:
    """The other hosts of one sweep. Use as a context manager, or call
    cleanup() in a finally: it stops what runs there and lets every guard
    restore its host; safe at any point, more than once.

    OUT: the results directory (its runs/ holds guard-HOST.log); STATS:
    tbench-stats (merge, row); THREADS: --threads (the server's model)."""

    def __init__(self, prog, opts, out, stats, threads=False, log=None):
        self.prog, self.opts, self.out, self.stats, self.threads = prog, opts, out, stats, threads
        self.log = log or sys.stderr
        self.guard_timeout = os.environ.get("TBENCH_GUARD_TIMEOUT", "20")
        self.deadline_slack = int(os.environ.get("TBENCH_HOST_SLACK", "30"))
        self.dirs = {}            # host -> its guard's directory
        self.bins = {}            # host -> the program used there
        self.guards = {}          # host -> the Popen of its guard's ssh
        self.guard_logs = {}      # host -> runs/guard-HOST.log
        self.server_args = None   # the arguments of the tbench_srv running there now
        self.meta = []            # every other host's facts, for meta.json's remote_hosts
        self.server = ""          # the address the clients connect to
        self.why = ""             # why the last clients_run failed
        self._beats = []          # pipes the heartbeat writes to
        self._beat_lock = threading.Lock()
        self._beat_thread = None
        self._clients = []        # the Popens of the clients running now

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.cleanup()
        return False

    def active(self):
        """True with a server host (the sweep's mode is remote)."""
        return bool(self.opts.server_host)

    def devices(self):
        """The server's device, as Net.route gives it."""
        return self.opts.devs

    # ---- running things there

    def ssh_argv(self, host, words):
        """The local argv that runs WORDS on HOST as they are (no guard check)."""
        raise NotImplementedError

    def checked_argv(self, host, words):
        """The local argv that runs WORDS on HOST if its guard still runs
        (else exit 97, saying so): for everything after the set-up."""
        raise NotImplementedError

    def run(self, host, words, **kw):
        """WORDS on HOST, checked, as subprocess.run (text, output captured)."""
        raise NotImplementedError

    # ---- setting up

    def setup(self, tbench, tbench_srv):
        """remote_setup: guards, programs, the server, the hosts' facts
        (self.meta), before the first run. Returns the address the clients
        connect to. RemoteError naming the host when anything fails."""
        raise NotImplementedError

    def server_start(self, args=()):
        """remote_server_start: the server host's tbench_srv (re)started with
        ARGS unless it runs with them already. RemoteError (HOST: why) when
        it does not start."""
        raise NotImplementedError

    def host_meta(self, host, role, dev=""):
        """remote_host_meta: HOST's facts as a dict (kernel, CPU, memory, the
        program used, DEV's MTU, driver and flags before the sweep)."""
        raise NotImplementedError

    # ---- the clients on several hosts

    def clients_for(self, server):
        """remote_clients_for: True when the runs to SERVER go from the client hosts."""
        return bool(self.opts.client_hosts) and bool(server)

    def clients_run(self, json_part, log_path, cmd, run_s):
        """remote_clients_run: the tbench command CMD (its first word the
        local tbench, with --json JSON_PART) on every client host at once,
        from a common instant; their JSON merged into JSON_PART (each host's
        beside it, runs/ID.HOST.json, and a row in hosts.csv); their output
        appended to LOG_PATH. RUN_S: warm-up + time in seconds (a host that
        has not ended TBENCH_HOST_SLACK s after that is stopped).
        Returns 0 when every host's run was ok, else 1 with self.why naming
        the hosts. Interrupted (KeyboardInterrupt, an exception), it stops
        the hosts' runs before it lets the exception go on."""
        raise NotImplementedError

    def clients_why(self):
        """remote_clients_why: why the last clients_run failed, one line ("" if it did not)."""
        why, self.why = self.why, ""
        return why

    # ---- the end

    def cleanup(self):
        """remote_cleanup: stops the clients, ends the heartbeats and waits
        (15 s at most) for every guard to say it restored its host."""
        raise NotImplementedError
