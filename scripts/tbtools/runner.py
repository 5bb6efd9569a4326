"""tbench-sweep's one run: its knobs applied, tbench (and a server)
started, its JSON turned into a row of runs.csv by tbench-stats row, or
the reason it failed recorded in that row."""

import json
import os
import re
import subprocess
import sys

from . import plan, programs, supervise
from .errors import RunError, UsageError
from .results import now_iso


class Runner:
    """Runs the runs of one sweep. SWEEP holds what every run shares: the
    options (opts), the programs (tbench, stats), knobs (knobs.Knobs),
    results (results.Results), net (netns.Net), remote (remote.Remote or
    None), tmp (a directory of its own) and log (a print for progress)."""

    def __init__(self, sweep):
        self.s = sweep
        self.parts = []       # the files of the run in progress, removed if it stops

    # ---- its command

    def netns_args(self, point):
        """tbench --netns and the run's offloads (the loopback mode):
        --offload when TSO and GSO go together, else each apart."""
        args = ["--netns"]
        if point.net:
            if point.tso and point.tso == point.gso:
                args += ["--offload", point.tso]
            else:
                args += ["--tso", point.tso] if point.tso else []
                args += ["--gso", point.gso] if point.gso else []
            args += ["--gro", point.gro] if point.gro else []
        return args

    def command(self, run, server=""):
        """The tbench command of RUN, without its --json. SERVER: the
        tbench_srv it talks to, when not its own."""
        s, p = self.s, run.point
        lo = s.mode == "lo"
        cmd = [s.tbench] + (self.netns_args(p) if lo else [])
        cmd += ["-b", p.backend, "-t", s.opts.time, "--warmup", s.opts.warmup, "-q"]
        cmd += ["--threads"] if s.opts.threads else []
        cmd += s.knobs.tbench_args(p.knobs, lo, not server)
        return cmd + s.opts.extra + [str(p.clients)] + ([server] if server else [])

    # ---- one run

    def run(self, run):
        """Runs RUN, appends its row to runs.csv and rewrites summary.csv;
        says how it went. True if the run was ok."""
        s, p = self.s, run.point
        rid = plan.run_id(run)
        json_path = os.path.join(s.out, "runs", rid + ".json")
        log_path = os.path.join(s.out, "runs", rid + ".log")
        self.parts = [json_path + ".part", log_path + ".part"]
        for part in self.parts:
            remove(part)
        with open(log_path + ".part", "w") as log:
            sets, why, server, ns = self._prepare(run, log)
            rc = None
            cmd = self.command(run, server)
            cmd = [cmd[0], "--json", json_path + ".part"] + cmd[1:]
            print("+ " + " ".join(cmd), file=log, flush=True)
            if why:
                print("not run: " + "; ".join(why), file=log, flush=True)
            else:
                rc, extra_sets, run_why = self._execute(cmd, server, ns, log, json_path + ".part")
                sets += extra_sets
                why += run_why
            s.net.restore_devices()
            json_arg = None
            if nonempty(json_path + ".part"):
                os.replace(json_path + ".part", json_path)
                sets += ["--set", f"json=runs/{rid}.json"]
                json_arg = json_path
                if rc in (None, 0):
                    why += self._read_back(json_path, p, server, log)
                if why:
                    print("read back: " + "; ".join(why), file=log, flush=True)
        if why:
            sets += ["--set", "error=" + "; ".join(why)]
        row, json_arg = self._row(sets, why, json_arg)
        os.replace(log_path + ".part", log_path)
        self.parts = []
        s.results.append(row)
        s.results.write_summary()
        return self._say(sets, why, json_arg, rc, p, rid)

    def _prepare(self, run, log):
        """The run's --set arguments and device settings: (sets, why it
        cannot run [], the server it talks to, the namespace it runs in)."""
        s, p = self.s, run.point
        route = s.net.route(p.net, p.backend, s.server)
        server = route.server
        if s.mode == "veth" and server and dict(p.knobs).get("family") == "ipv6":
            server = s.net.server_address("ipv6")
        model = s.knobs.model(p.knobs, s.model)
        sets = ["--set", f"backend={p.backend}", "--set", f"clients={p.clients}", "--set", f"offload={p.label}",
                "--set", f"rep={run.rep}", "--set", f"model={model}"]
        sets += s.knobs.set_args(p.knobs, p.label, p.net)
        if "sitting" in s.header.split(","):
            sets += ["--set", f"sitting={s.sitting_id}"]
        r = s.knobs.read
        if not p.net:
            sets += ["--set", "dev=", "--set", f"tso{r}=n/a", "--set", f"gso{r}=n/a", "--set", f"gro{r}=n/a"]
        elif route.devs:
            rb = s.net.apply_offloads(route.devs, p.tso, p.gso, p.gro, log=log)
            sets += ["--set", f"dev={rb.dev}", "--set", f"tso{r}={rb.tso}", "--set", f"gso{r}={rb.gso}",
                     "--set", f"gro{r}={rb.gro}"]
            if any(want and want != got for want, got in ((p.tso, rb.tso), (p.gso, rb.gso), (p.gro, rb.gro))):
                print(f"{s.prog}: warning: {p.backend} offload={p.label}: read back tso={rb.tso} gso={rb.gso} "
                      f"gro={rb.gro}", file=sys.stderr)
        # Else tbench --netns sets them on its lo and fails the run unless
        # they read back as asked; its JSON says what they were.
        why = []
        if s.mode != "lo":
            for kind, value in s.knobs.device_settings(p.knobs):
                if route.devs:
                    why += s.net.set_knob(kind, route.devs, value, log=log)
                else:
                    why.append(f"{kind}={value}: this run crosses no device")
        if s.mode in ("veth", "remote") and server and not why:
            srv_args = (["--threads"] if s.opts.threads else []) + s.knobs.server_args(p.knobs)
            srv_args += ["--mptcp"] if s.backends.has(p.backend, "multipath") else []
            try:
                if s.mode == "remote":
                    s.remote.server_start(srv_args)
                else:
                    s.net.start_server(srv_args)
            except RunError as e:
                why.append(str(e))
        return sets, why, server, route.ns

    def _execute(self, cmd, server, ns, log, json_part):
        """Runs CMD: (exit status, --set arguments, why it failed [])."""
        s = self.s
        srv_pid = s.net.server_pid if server and s.mode == "veth" else None
        srv0 = programs.run_stats(s.stats, ["proc-cpu", str(srv_pid)]).strip() if srv_pid else ""
        started = now_iso()
        why = []
        if s.remote is not None and s.remote.clients_for(server):
            run_s = float(s.opts.time) + float(s.opts.warmup)
            log.flush()
            rc = supervise.interruptible(s.remote.clients_run, json_part, log.name, cmd, run_s)
            why += [w for w in (s.remote.clients_why(),) if w]
        else:
            argv = s.net.argv(ns, cmd) if ns else cmd
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
            rc = supervise.wait(proc)
        sets = []
        srv1 = programs.run_stats(s.stats, ["proc-cpu", str(srv_pid)]).strip() if srv0 else ""
        if srv1:
            sets += ["--server-cpu-start", srv0, "--server-cpu-end", srv1]
        print(f"exit status {rc}", file=log, flush=True)
        sets += ["--set", f"exit_code={rc}", "--set", f"started={started}"]
        if rc != 0:
            sets += ["--set", "error=" + (log_error(log.name) or f"exit status {rc}")]
        return rc, sets, why

    def _read_back(self, json_path, point, server, log):
        """Why the run failed though tbench ran: a knob read back otherwise."""
        try:
            with open(json_path) as f:
                doc = json.load(f)
        except (OSError, ValueError):
            return []
        wrong, notes = self.s.knobs.check_json(doc, point.knobs, self.s.mode == "lo", not server)
        for note in notes:
            print(note, file=log, flush=True)
        return wrong

    def _row(self, sets, why, json_arg):
        """The run's row (tbench-stats row), and the JSON it was made from:
        tbench's own, marked failed with WHY where the sweep failed it; a
        JSON tbench-stats cannot read is left out, saying why."""
        s = self.s
        src = self._marked(json_arg, why)
        try:
            return programs.run_stats(s.stats, ["row"] + sets + ([src] if src else [])).rstrip("\n"), json_arg
        except (RunError, UsageError) as e:
            if not src:
                raise
            sets += ["--set", "error=" + str(e).split("\n", 1)[0]]
            return programs.run_stats(s.stats, ["row"] + sets).rstrip("\n"), None

    def _marked(self, json_arg, why):
        if not json_arg or not why:
            return json_arg
        with open(json_arg) as f:
            doc = json.load(f)
        doc.setdefault("result", {}).update(status="failed", error="; ".join(why))
        marked = os.path.join(self.s.tmp, "failed.json")
        with open(marked, "w") as f:
            json.dump(doc, f)
        return marked

    def _say(self, sets, why, json_arg, rc, point, rid):
        """One line on how the run went; True if it was ok."""
        s, r = self.s, self.s.knobs.read
        cols = f"status,mb_per_sec,dev,tso{r},gso{r},gro{r},error,disturbed"
        src = self._marked(json_arg, why)
        out = programs.run_stats(s.stats, ["row", "--columns", cols] + sets + ([src] if src else []))
        cells = out.rstrip("\n").split("\t") + [""] * 8
        if cells[0] == "ok":
            offloads = f"  ({cells[2]}: tso={cells[3]} gso={cells[4]} gro={cells[5]})" if point.net else ""
            noise = ""
            if cells[7] not in ("", "no"):
                noise = f"  disturbed: {cells[7]}, left out of summary.csv (runs/{rid}.log says why)"
            s.log(f"        ok: {float(cells[1] or 0):.2f} MB/sec{offloads}{noise}")
            return True
        exit_words = f"exit {rc}: " if rc not in (None, 0) else ""
        print(f"        {cells[0]}: {exit_words}{cells[6] or 'no reason given'} (log: runs/{rid}.log)", file=sys.stderr)
        return False

    def abandon(self):
        """A run cut short leaves no half-written file (finished ones were
        renamed already)."""
        for part in self.parts:
            remove(part)
        self.parts = []


def nonempty(path):
    try:
        return os.path.getsize(path) > 0
    except OSError:
        return False


def remove(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def log_error(path):
    """The last line of a failed run's output that says why."""
    try:
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return ""
    lines = [l for l in lines if not re.match(r"\+ |offloads of|exit status", l)]
    said = [l for l in lines if re.search(r"error|tbench|fail", l, re.I)]
    return said[-1] if said else ""
