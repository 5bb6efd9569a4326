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
from .netns import Device, parse_features
from .programs import run_stats
from .store import atomic_write

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

    def guarding(self, host):
        """True while HOST's guard runs (it restores HOST when it ends)."""
        return host in self.guards and self.guards[host].poll() is None

    # ---- running things there

    def ssh_argv(self, host, words):
        """The local argv that runs WORDS on HOST as they are (no guard check)."""
        return self.opts.ssh + [host, cmdline(words)]

    def checked_argv(self, host, words):
        """The local argv that runs WORDS on HOST if its guard still runs
        (else exit 97, saying so): for everything after the set-up."""
        return self.ssh_argv(host, ["sh", "-c", remote_sh.CHECKED, "tbench-checked",
                                    self.dirs.get(host, "/nonexistent")] + list(words))

    def run(self, host, words, **kw):
        """WORDS on HOST, checked, as subprocess.run (text, output captured,
        no input unless given)."""
        if "input" not in kw:
            kw.setdefault("stdin", subprocess.DEVNULL)
        kw.setdefault("capture_output", "stdout" not in kw)
        try:
            return subprocess.run(self.checked_argv(host, words), text=True, **kw)
        except OSError as e:
            return subprocess.CompletedProcess(words, 127, "", f"{self.opts.ssh[0]}: {e.strerror}")

    # ---- the heartbeat

    def _beat_to(self, host, pipe):
        """Writes the heartbeat to PIPE (an ssh's stdin) from now on."""
        os.set_blocking(pipe.fileno(), False)   # an ssh that stopped reading stalls no other host's
        with self._beat_lock:
            self._beats.append((host, pipe))
        if self._beat_thread is None:
            self._beat_thread = threading.Thread(target=self._heartbeat, name="heartbeat", daemon=True)
            self._beat_thread.start()

    def _stop_beat(self, pipe):
        """Ends PIPE's heartbeat and its input: the other end reads its end."""
        with self._beat_lock:
            self._beats = [(h, p) for h, p in self._beats if p is not pipe]
            try:
                pipe.close()
            except OSError:
                pass

    def _heartbeat(self):
        """A line every few seconds to every guard and client host, for as
        long as this process lives: its pipes close with it, however it ends."""
        while True:
            with self._beat_lock:
                for host, pipe in list(self._beats):
                    try:
                        os.write(pipe.fileno(), b"alive\n")
                    except BlockingIOError:
                        pass   # not reading now: the guard's timeout decides
                    except (OSError, ValueError):
                        self._beats.remove((host, pipe))
                        if host:
                            print(f"{self.prog}: {host}: {time.strftime('%H:%M:%S')}: the heartbeat cannot "
                                  "reach its guard (its ssh ended or stopped reading)", file=self.log)
            time.sleep(HEARTBEAT_S)

    # ---- setting up

    def _guard_said(self, host, skip=("saved ", "dir ", "ready")):
        """The guard's last words in its log, on one line."""
        try:
            with open(self.guard_logs[host], errors="replace") as f:
                lines = [l for l in f.read().splitlines() if not l.startswith(skip)]
        except (OSError, KeyError):
            return ""
        return " ".join(lines[-3:])

    def _fail(self, host, why):
        """RemoteError with WHY, or with the guard's own words when HOST's
        guard has ended: then that, not WHY, is what went wrong."""
        said = self._guard_said(host)
        try:
            with open(self.guard_logs[host], errors="replace") as f:
                ended = re.search(r": restoring$|^restored", f.read(), re.M)
        except (OSError, KeyError):
            ended = None
        if ended:
            raise RemoteError(f"{host}: its guard ended during the sweep's set-up: {said}")
        raise RemoteError(f"{host}: {why}")

    def start_guard(self, host, dev):
        """remote_start_guard: starts HOST's guard (DEV: the device it saves
        and restores, may be empty) and waits until it is ready."""
        log_path = os.path.join(self.out, "runs", f"guard-{host}.log")
        self.guard_logs[host] = log_path
        with open(log_path, "w") as log:
            try:
                guard = subprocess.Popen(
                    self.ssh_argv(host, ["bash", "-c", remote_sh.GUARD, "tbench-guard", dev, self.guard_timeout]),
                    stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT)
            except OSError as e:
                raise RemoteError(f"{host}: cannot run '{self.opts.ssh_cmd}': {e.strerror}") from None
        self.guards[host] = guard
        self._beat_to(host, guard.stdin)
        deadline = time.monotonic() + 60   # ssh is slow on a loaded machine; ends when ssh does
        while time.monotonic() < deadline:
            text = read_text(log_path)
            if re.search(r"^ready$", text, re.M):
                self.dirs[host] = re.search(r"^dir (.*)$", text, re.M).group(1)
                saved = re.search(r"^saved (.*)$", text, re.M)
                print(f"{self.prog}: {host}: guard ready ({saved.group(1) if saved else ''}; "
                      "restored when the sweep ends)", file=self.log)
                return
            if guard.poll() is not None:
                break
            time.sleep(0.1)
        ssh = " ".join(self.opts.ssh)
        raise RemoteError(f"{host}: its guard did not start over '{ssh}': "
                          f"{self._guard_said(host, ('saved ', 'dir '))} "
                          f"(can '{ssh} {host} true' log in without a password, and does {host} have bash?)")

    def program(self, host, name, local):
        """remote_program: the program NAME of this suite on HOST: copied
        there from LOCAL with --push, else found on its PATH."""
        if self.opts.push:
            path = f"{self.dirs[host]}/{name}"
            with open(local, "rb") as f:
                p = subprocess.run(self.checked_argv(host, ["sh", "-c", 'cat >"$1" && chmod 755 "$1"',
                                                            "tbench-push", path]),
                                   stdin=f, capture_output=True)
            if p.returncode != 0:
                self._fail(host, f"could not copy {local} to {path} (--push)")
        else:
            p = self.run(host, ["sh", "-c", 'command -v "$1"', "tbench-which", name])
            path = p.stdout.strip()
            if p.returncode != 0 or not path:
                self._fail(host, f"no {name} on its PATH: install it there, or copy this one with --push")
        p = self.run(host, [path, "--version"], stderr=subprocess.STDOUT, stdout=subprocess.PIPE)
        version = (p.stdout or "").split("\n", 1)[0]
        if "tbench suite" not in version:
            self._fail(host, f"{path} is not the {name} of this suite (its --version says '{version}'): "
                             "install it there, or copy this one with --push")
        print(f"{self.prog}: {host}: using {path} ({version})", file=self.log)
        return path

    def server_address(self):
        """--server-addr, else the host name ssh uses for the server host
        (ssh -G: an alias of an ssh config resolves)."""
        if self.opts.server_addr:
            return self.opts.server_addr
        host = self.opts.server_host
        try:
            out = subprocess.run(self.opts.ssh + ["-G", host], stdin=subprocess.DEVNULL,
                                 capture_output=True, text=True).stdout
        except OSError:
            out = ""
        for line in out.splitlines():
            words = line.split()
            if len(words) >= 2 and words[0] == "hostname":
                return words[1]
        return host.split("@")[-1]

    def host_meta(self, host, role, dev=""):
        """remote_host_meta: HOST's facts as a dict (kernel, CPU, memory, the
        program used, DEV's MTU, driver and flags before the sweep)."""
        facts = self.run(host, ["sh", "-c", remote_sh.FACTS]).stdout.split("\n")
        facts += [""] * (7 - len(facts))
        device = None
        if dev:
            info = self.run(host, ["ethtool", "-i", dev]).stdout
            device = {"device": dev, "mtu": to_int(self.run(host, ["cat", f"/sys/class/net/{dev}/mtu"]).stdout),
                      "driver": next((l[8:] for l in info.splitlines() if l.startswith("driver: ")), ""),
                      "offload_flags_at_start": parse_features(self.run(host, ["ethtool", "-k", dev]).stdout)}
        return {"role": role, "ssh_host": host, "name": facts[0], "kernel": facts[1],
                "kernel_version": facts[2], "machine": facts[3], "cpu_model": facts[4],
                "cores_online": to_int(facts[5]), "memory_kb": to_int(facts[6]),
                "program": self.bins.get(host, ""), "device": device}

    def server_start(self, args=()):
        """remote_server_start: the server host's tbench_srv (re)started with
        ARGS unless it runs with them already. RemoteError (HOST: why) when
        it does not start."""
        h, args = self.opts.server_host, list(args)
        if args == self.server_args:
            return
        self.server_args = args
        p = self.run(h, ["bash", "-c", remote_sh.SERVER, "tbench-server", self.dirs.get(h, "/nonexistent"),
                         self.bins.get(h, "tbench_srv"), str(PORT)] + args,
                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if p.returncode != 0:
            self.server_args = None
            raise RemoteError(f"{h}: {p.stdout.strip() or 'tbench_srv did not start'}")

    def setup(self, tbench, tbench_srv):
        """remote_setup: guards, programs, the server, the hosts' facts
        (self.meta), before the first run. Returns the address the clients
        connect to (also self.server). RemoteError naming the host when
        anything fails."""
        h = self.opts.server_host
        if not h:
            return ""
        self.start_guard(h, self.opts.server_dev)
        self.bins[h] = self.program(h, "tbench_srv", tbench_srv)
        try:
            self.server_start(["--threads"] if self.threads else [])
        except RemoteError as e:
            self._fail(h, str(e)[len(h) + 2:])
        self.server = self.server_address()
        print(f"{self.prog}: tbench_srv on {h}, port {PORT}; clients connect to {self.server}", file=self.log)
        self.meta = [self.host_meta(h, "server", self.opts.server_dev)]
        for c in self.opts.client_hosts:
            self.start_guard(c, "")
            self.bins[c] = self.program(c, "tbench", tbench)
            if "--start-at" not in self.run(c, [self.bins[c], "--help"], stdout=subprocess.PIPE,
                                            stderr=subprocess.STDOUT).stdout:
                raise RemoteError(f"{c}: {self.bins[c]} has no --start-at, which starts the client hosts "
                                  "together: use this suite's newer tbench (--push copies it)")
            self.meta.append(self.host_meta(c, "client"))
        return self.server

    # ---- the clients on several hosts

    def clients_for(self, server):
        """remote_clients_for: True when the runs to SERVER go from the client hosts."""
        return bool(self.opts.client_hosts) and bool(server)

    def client_command(self, host, start, cmd):
        """The tbench command CMD for HOST: its tbench, --start-at START, and
        its own --json file."""
        words = [self.bins[host], "--start-at", str(start)]
        rest = iter(cmd[1:])
        for w in rest:
            if w == "--json":
                next(rest, None)
                words += ["--json", f"{self.dirs[host]}/run.json"]
            else:
                words.append(w)
        return words

    def clients_run(self, json_part, log_path, cmd, run_s):
        """remote_clients_run: the tbench command CMD (its first word the
        local tbench, with --json JSON_PART) on every client host at once,
        from a common instant; their JSON merged into JSON_PART (each host's
        beside it, runs/ID.HOST.json, and a row in hosts.csv); their output
        appended to LOG_PATH. RUN_S: warm-up + time in seconds (a host that
        has not ended TBENCH_HOST_SLACK s after that is stopped).
        Returns 0 when every host's run was ok, else 1 with why (clients_why)
        naming the hosts. Interrupted (KeyboardInterrupt, any exception), it
        stops the hosts' runs before it lets the exception go on."""
        base = json_part[:-len(".json.part")] if json_part.endswith(".json.part") else json_part
        hosts = self.opts.client_hosts
        self.why = ""
        start = int(time.time()) + int(float(self.opts.start_lead)) + 1
        deadline = start + int(run_s) + self.deadline_slack
        with open(log_path, "a") as log:
            print(f"client hosts {' '.join(hosts)}: start at {start} ({iso(start)}, deadline {iso(deadline)})",
                  file=log, flush=True)
            try:
                for h in hosts:
                    words = self.client_command(h, start, cmd)
                    print(f"+ {h}: {' '.join(words)}", file=log, flush=True)
                    with open(f"{base}.{h}.log", "w") as out:
                        p = subprocess.Popen(self.checked_argv(h, ["bash", "-c", remote_sh.CLIENT, "tbench-client"]
                                                               + words),
                                             stdin=subprocess.PIPE, stdout=out, stderr=subprocess.STDOUT)
                    self._clients.append(p)
                    self._beat_to("", p.stdin)
                while time.time() <= deadline and any(p.poll() is None for p in self._clients):
                    time.sleep(0.2)
                failures = [f for h, p in zip(hosts, self._clients) for f in self._client_ended(h, p, base, log)]
            finally:
                self._stop_clients()
            failures += self._merge(json_part, base, log)
        self.why = "; ".join(failures)
        return 1 if failures else 0

    def _client_ended(self, host, proc, base, log):
        """After the deadline: HOST's run (PROC) stopped if it lags, its
        output into LOG, its JSON fetched. [why it failed] or []."""
        reason = ""
        if proc.poll() is None:
            self._stop_beat(proc.stdin)
            proc.terminate()
            reason = f"no result {self.deadline_slack} s after the run's end (lagging): stopped"
        rc = proc.wait()
        rc = 128 - rc if rc < 0 else rc   # as a shell says a signal
        host_log = f"{base}.{host}.log"
        said = read_text(host_log)
        if rc != 0 and not reason:
            reason = failure(rc, said)
        log.write(f"--- {host} (exit {rc}):\n{said}")
        log.flush()
        try:
            os.unlink(host_log)
        except OSError:
            pass
        if self._fetch_json(host, f"{base}.{host}.json", log):
            self._host_row(base, host, rc, log)
        elif not reason:
            reason = "it left no JSON"
        return [f"client host {host}: {reason}"] if reason else []

    def _fetch_json(self, host, local, log):
        """Copies HOST's run.json to LOCAL; False when it left none."""
        remote = f"{self.dirs[host]}/run.json"
        with open(local, "w") as f:
            p = self.run(host, ["cat", remote], stdout=f, stderr=subprocess.PIPE)
        log.write(p.stderr or "")
        if p.returncode == 0 and os.path.getsize(local) > 0:
            log.write(self.run(host, ["rm", "-f", remote]).stderr)
            return True
        os.unlink(local)
        return False

    def _host_row(self, base, host, rc, log):
        """The row of HOST's own run appended to the sweep's hosts.csv: the
        run's ID, the host, then the columns of runs.csv as far as that JSON
        gives them."""
        csv_path = os.path.join(self.out, "hosts.csv")
        try:
            row = run_stats(self.stats, ["row", "--set", f"exit_code={rc}", f"{base}.{host}.json"])
            old = read_text(csv_path) or "run,host," + run_stats(self.stats, ["row", "--header"])
            atomic_write(csv_path, old + f"{os.path.basename(base)},{host},{row}")
        except (RunError, UsageError) as e:
            print(f"hosts.csv: {e}", file=log)

    def _merge(self, json_part, base, log):
        """The hosts' JSON (those that left one) merged into JSON_PART;
        [why not] or []."""
        names = [h for h in self.opts.client_hosts if os.path.exists(f"{base}.{h}.json")]
        if not names:
            return []
        with open(json_part, "w") as out:
            p = subprocess.run([self.stats, "merge", "--names", ",".join(names)]
                               + [f"{base}.{h}.json" for h in names], stdout=out, stderr=subprocess.PIPE, text=True)
        log.write(p.stderr)
        if p.returncode == 0:
            return []
        os.unlink(json_part)
        last = p.stderr.strip().split("\n")[-1] if p.stderr.strip() else f"exit {p.returncode}"
        return [f"the client hosts' JSON could not be merged: {last}"]

    def _stop_clients(self):
        """The client hosts' runs stopped: their input ends (the host stops
        its tbench), their ssh ended."""
        for p in self._clients:
            self._stop_beat(p.stdin)
            if p.poll() is None:
                p.terminate()
        for p in self._clients:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self._clients = []

    def clients_why(self):
        """remote_clients_why: why the last clients_run failed, one line ("" if it did not)."""
        return self.why

    # ---- the end

    def cleanup(self):
        """remote_cleanup: stops the clients, ends the heartbeats (each guard
        reads the end of its input and restores) and waits, 15 s at most,
        for every guard to say it restored its host. Safe at any point,
        more than once."""
        self._stop_clients()
        for host, guard in self.guards.items():
            self._stop_beat(guard.stdin)
        for host, guard in self.guards.items():
            try:
                guard.wait(15)
            except subprocess.TimeoutExpired:
                guard.terminate()
                print(f"{self.prog}: WARNING: {host}'s guard did not end within 15 s; it restores {host} "
                      "when its ssh session ends", file=self.log)
                continue
            restored = [l for l in read_text(self.guard_logs[host]).splitlines() if l.startswith("restored")]
            if restored:
                print(f"{self.prog}: {host}: {restored[-1]}", file=self.log)
            else:
                print(f"{self.prog}: WARNING: {host}'s guard ended without saying it restored {host} "
                      f"(see {self.guard_logs[host]})", file=self.log)
        self.guards = {}


def failure(rc, said):
    """Why a client host's run ended with status RC, from its output SAID."""
    lines = [l for l in said.splitlines() if re.search(r"error|fail|late|refused|guard", l, re.I)]
    why = f": {lines[-1]}" if lines else ""
    if rc == 255:
        return f"ssh failed (exit 255){why}"
    if 129 <= rc <= 159:
        return f"exit {rc}: its tbench was killed by signal {rc - 128}{why}"
    return f"exit {rc}: {lines[-1] if lines else 'no reason given'}"


def read_text(path):
    """The text of PATH, "" if it cannot be read."""
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def to_int(text):
    """TEXT as a whole number, None if it is not one."""
    text = (text or "").strip()
    return int(text) if text.isdigit() else None


def iso(epoch):
    """An epoch second as date -Iseconds says it."""
    text = time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(epoch))
    return text[:-2] + ":" + text[-2:]
