"""One session of tbench-sweep: the programs and the plan, printed with
--plan or run, rep by rep; the results directory and meta.json; and the
clean-up that leaves the host as it was, however the session ends."""

import os
import shutil
import socket
import sys
import time

from . import (fingerprint, knobs, netns, plan, precision, programs, remote, resume, results, store, supervise,
               yardstick)
from .errors import RunError, UsageError
from .runner import Runner

ORDER_TEXT = "each rep in turn; within it the points of a client count back to back, shuffled"
EXIT_RUNS_FAILED = 3
# Where the programs are looked for first: beside the script that was run
# (bin/ of an install), not beside this package (share/tbench/python).
SCRIPT_DIR = os.path.dirname(os.path.realpath(sys.argv[0]))


class Session:
    def __init__(self, prog, parser, opts, typed, used):
        self.prog, self.parser, self.opts = prog, parser, opts
        # argv as typed; as used (with --resume, meta.json's and the session's)
        self.typed, self.used = typed, used
        self.mode = opts.mode
        self.n_runs = self.n_failed = 0
        self.t0 = time.monotonic()
        self.net = self.remote = self.tmp = None
        self.status = "running"
        self.meta_ready = False
        self.yardstick = None           # meta.json's "yardstick": made, kept or skipped
        self.yardstick_todo = []

    def log(self, line):
        if not self.opts.quiet:
            print(line, flush=True)

    # ---- what there is to do

    def find_programs(self):
        o = self.opts
        self.tbench = programs.find(self.prog, "tbench", "--tbench PATH or TBENCH=PATH",
                                    o.tbench or os.environ.get("TBENCH"), script_dir=SCRIPT_DIR)
        self.tbench_version = programs.version_of(self.tbench)[0]
        self.stats = programs.find(self.prog, "tbench-stats", "--tbench-stats PATH or TBENCH_STATS=PATH",
                                   o.tbench_stats or os.environ.get("TBENCH_STATS"), os.path.dirname(self.tbench),
                                   SCRIPT_DIR)
        self.backends = programs.Backends(self.tbench)
        self.header = programs.run_stats(self.stats, ["row", "--header"]).strip()
        self.stats_knobs = programs.run_stats(self.stats, ["row", "--knobs"]).split()

    def choose_backends(self):
        o = self.opts
        if not o.backends:
            chosen = self.backends.with_caps("default")
        else:
            chosen = o.backends.split(",")
            for b in chosen:
                if b not in self.backends.names():
                    raise UsageError(f"--backends: '{b}' is not a backend of {self.tbench} "
                                     f"(it has: {' '.join(self.backends.names())})")
        if not chosen:
            raise UsageError("--backends: empty list")
        return chosen

    def sweep_knobs(self, net):
        """The knobs of --vary, checked against the mode and the options.
        NET: the backends whose bytes cross a device, or "all"."""
        o = self.opts
        vary = knobs.parse_vary(o.vary, knobs.offered(self.stats_knobs))
        sysctls = [k for k in vary if k.startswith(knobs.SYSCTL_PREFIX)]
        if sysctls and self.mode != "lo":
            raise UsageError(f"--vary {sysctls[0]}: a sysctl is set by tbench --netns in the run's own "
                             f"namespace, so only in the loopback mode (not --{self.mode})")
        if "rate" in vary and self.mode == "lo":
            raise UsageError("--vary rate: a tbf qdisc needs a device the sweep may change: add --veth (or --dev IFACE)")
        if o.threads and "model" in vary:
            raise UsageError("--threads and --vary model: give the models with --vary model=processes,threads alone")
        k = knobs.Knobs(vary, self.backends, net, self.header.split(","), self.stats_knobs)
        if k.varies_sockopts() and any(a == "-T" or a.startswith("--tcp-options") for a in o.extra):
            raise UsageError("-T in TBENCH-ARGS and --vary of a socket option: give the options with --vary "
                             "(nodelay, sndbuf, ...)")
        return k

    def make_plan(self):
        o = self.opts
        self.net_backends = o.net_backends.split(",") if o.net_backends else self.backends.with_caps("offloads")
        net = "all" if o.all_offloads else self.net_backends
        self.knobs = self.sweep_knobs(net)
        self.backend_list = self.choose_backends()
        self.client_list = plan.clients(o.clients)
        self.settings = plan.settings(self.knobs.vary)
        self.model = "threads" if o.threads else "processes"
        self.out = o.out or default_out(o.label)
        self.meta_path = os.path.join(self.out, "meta.json")
        self.seed = self.order_seed()
        self.rule = self.precision_rule()
        self.reps = self.rule.min_reps if self.rule else int(o.reps or 3)
        self.points = plan.points(self.backend_list, self.client_list, self.settings, net, self.knobs)
        self.all_runs = plan.runs(self.points, self.reps, self.seed)
        for k in self.knobs.unrecorded:
            print(f"{self.prog}: warning: {self.stats} has no column {k}: runs.csv will not say it "
                  "(each run's file name and log do)", file=sys.stderr)
        self.key_columns = ["backend", "clients", "offload"] + self.knobs.columns
        self.results = results.Results(self.out, self.stats)
        done = self.results.existing(o.resume, o.retry_failed, self.key_columns, self.header, self.knobs.unrecorded)
        self.todo = plan.todo(self.all_runs, done, self.knobs.columns)
        self.plan_yardstick()

    def plan_yardstick(self):
        """The yardstick's runs to make (none when skipped, or kept from
        the sweep resumed), and meta.json's value until they are made."""
        why = yardstick.skipped_why(self.opts)
        if why is None and not yardstick.backends_of(self.backends):
            why = f"no backend of '{self.tbench} -b list' is marked yardstick"
        kept = yardstick.read(self.meta(), self.meta_path) if self.opts.resume else None
        if kept is not None:
            self.yardstick = kept
        elif why is not None:
            self.yardstick = yardstick.skipped(why)
        else:
            self.yardstick_todo = yardstick.runs(yardstick.backends_of(self.backends), self.seed)

    def meta(self):
        """The meta.json of the sweep resumed, {} without one."""
        if not (self.opts.resume and os.path.isfile(self.meta_path)):
            return {}
        return store.read_meta(self.meta_path)

    def order_seed(self):
        """--seed, else with --resume the sweep's own (the runs left keep
        their places), else a new one."""
        if self.opts.seed is not None:
            return int(self.opts.seed)
        kept = self.meta().get("sweep", {})
        kept = kept.get("order_seed") if isinstance(kept, dict) else None
        if isinstance(kept, int) and not isinstance(kept, bool) and plan.is_seed(kept):
            return kept
        return plan.new_seed()

    def precision_rule(self):
        """--precision's rule; a resumed sweep keeps its own (meta.json's)
        unless the command line gives one."""
        o = self.opts
        if not o.resume or o.precision is not None:
            return precision.rule_of(o)
        if not os.path.isfile(self.meta_path):
            return precision.rule_of(o, f" ({self.out} has no meta.json)")
        sweep = self.meta().get("sweep")
        kept = sweep.get("precision") if isinstance(sweep, dict) else None
        if kept is None:
            return precision.rule_of(o, f" (the sweep in {self.out} was not one of --precision)")
        field = "sweep.precision"
        if not isinstance(kept, dict):
            raise UsageError(f"{self.meta_path}: field '{field}' must be an object")
        pct = store.meta_field(kept, self.meta_path, "pct", float)
        o.precision = f"{pct:g},{store.meta_field(kept, self.meta_path, 'figure', str)}"
        o.reps = o.reps or str(store.meta_field(kept, self.meta_path, "min_reps", int))
        o.max_reps = o.max_reps or str(store.meta_field(kept, self.meta_path, "max_reps", int))
        budget = kept.get("budget_s")
        o.budget = o.budget or (str(budget) if isinstance(budget, int) and not isinstance(budget, bool) else None)
        rule = precision.rule_of(o)
        print(f"{self.prog}: --resume: the sweep's rule: --precision {rule.pct},{rule.figure} --reps {rule.min_reps} "
              f"--max-reps {rule.max_reps}{f' --budget {rule.budget}' if rule.budget else ''}", file=sys.stderr)
        return rule

    # ---- the plan, said

    def model_words(self):
        if "model" in self.knobs.vary:
            return " and ".join(self.knobs.vary["model"]) + " (--vary model)"
        return self.model

    def dimensions(self):
        line = (f"backends {','.join(self.backend_list)} x clients {','.join(map(str, self.client_list))}"
                f" x offload {','.join(s[0] for s in self.settings)}")
        line += "".join(f" x {k} {','.join(self.knobs.vary[k])}" for k in self.knobs.varied)
        lines = [f"dimensions: {line}"]
        for k in ["offload"] + self.knobs.varied:
            if k == "offload":
                na = [b for b in self.backend_list if not self.knobs.applies("offload", b)]
            else:
                na = [b for b in self.backend_list if not self.knobs.applies(k, b)]
            if na:
                lines.append(f"  {k}: n/a for {','.join(na)} (run once)")
        return lines

    def offload_note(self):
        """On lo, whose MTU is 64 KB, a write of tbench's fits one segment."""
        if self.mode != "lo" or len(self.settings) < 2 or "mtu" in self.knobs.vary:
            return []
        return ["note: on lo (MTU 65536) nearly every write of tbench's fits one segment, so TSO/GSO on and off "
                "send the same packets and the offload layer is near 0; --vary mtu=1500 or --veth makes "
                "segmentation happen"]

    def reps_shown(self):
        return self.rule.max_reps if self.rule else self.reps

    def estimate(self, runs_):
        return plan.fmt_secs(plan.estimate_s(len(runs_), self.opts.time, self.opts.warmup,
                                             sum(r.point.clients for r in runs_)))

    def heading(self):
        return (f"{len(self.todo)} of {len(self.all_runs)} runs to do, {self.opts.time} s + {self.opts.warmup} s "
                f"warm-up each, client model {self.model_words()}, mode {self.mode}")

    def precision_lines(self):
        if not self.rule:
            return []
        return precision.plan_lines(self.rule, len(self.points), sum(p.clients for p in self.points),
                                    self.opts.time, self.opts.warmup)

    def print_plan(self, runner):
        print(self.heading())
        for line in self.dimensions() + self.offload_note():
            print(line)
        print(f"order: {ORDER_TEXT} (--seed {self.seed})")
        print(f"estimated time: {self.estimate(self.todo)} (results in {self.out})")
        for line in self.precision_lines():
            print(line)
        if self.yardstick_todo:
            for line in yardstick.plan_lines(self, self.yardstick_todo, self.opts.yardstick_seconds):
                print(line)
        else:
            kept = "kept from the sweep resumed" if self.yardstick and "points" in self.yardstick else \
                f"skipped ({(self.yardstick or {}).get('skipped')})"
            print(f"yardstick: {kept}")
        for n, run in enumerate(self.todo, 1):
            dev = ""
            if self.mode != "lo":
                dev = " ".join(f"{k} {v}" for k, v in self.knobs.device_settings(run.point.knobs))
            print(f"[{n}/{len(self.todo)}] {plan.describe_run(run, self.reps_shown())}: "
                  f"{' '.join(runner.command(run))}{f' (device: {dev})' if dev else ''}")

    # ---- the session

    def main(self):
        self.find_programs()
        self.make_plan()
        self.check_resumed()
        runner = Runner(self)
        if self.opts.dry_run:
            self.print_plan(runner)
            return 0
        self.check_host()
        check_out_dir(self.out)
        if self.mode == "lo":
            self.check_netns()
        self.owner = supervise.start()
        return self.run_session(runner)

    def check_resumed(self):
        """A sweep resumed must not run still: its meta.json says running
        and its process is there. Says so when it says running and is gone."""
        meta = self.meta()
        if meta.get("status") != "running":
            return
        pid = meta.get("pid")
        if store.sweep_status(meta) == "running" and not self.opts.dry_run:
            raise RunError(f"--resume: the sweep in {self.out} still runs (pid {pid}, {self.meta_path}): "
                           "wait for it to end, or stop it first (kill -INT)")
        if store.sweep_status(meta) == "interrupted":
            print(f"{self.prog}: --resume: {self.meta_path} says running, but sweep {pid} is gone: "
                  "it was interrupted", file=sys.stderr)

    def check_host(self):
        o = self.opts
        if self.mode != "lo":
            if os.geteuid() != 0:
                raise RunError(f"--{self.mode} needs root (network namespaces and ethtool -K); try sudo, or --dry-run")
            for p in ("ip", "ethtool"):
                if not shutil.which(p):
                    raise RunError(f"{p} not found (Debian/Ubuntu: apt-get install iproute2 ethtool)")
        self.tbench_srv = None
        if self.mode == "veth" or o.remote.push:
            self.tbench_srv = programs.find(self.prog, "tbench_srv", "--tbench-srv PATH or TBENCH_SRV=PATH",
                                            o.tbench_srv or os.environ.get("TBENCH_SRV"), os.path.dirname(self.tbench),
                                            SCRIPT_DIR)

    def check_netns(self):
        """tbench --netns must work for this user: a run of one operation
        says so, or tbench says why not (user namespaces refused, ...)."""
        probe = os.path.join(self.out, "runs", ".probe.txt")
        try:
            with open(probe, "w") as f:
                f.write("Flush 1 NT_STATUS_OK\n")
            p = netns.run([self.tbench, "--netns", "1", "--run-once", "-q", "-c", probe])
        finally:
            os.unlink(probe)
        if p.returncode != 0:
            said = next((l for l in p.stderr.splitlines() if l.strip()), f"exit status {p.returncode}")
            raise RunError(f"'{self.tbench} --netns' does not work here: {said} (--veth and --dev, as root, do without it)")

    def run_session(self, runner):
        """In the worker: the set-up, the runs, the clean-up."""
        rc = 1
        try:
            self.set_up()
            self.run_yardstick()
            rc = self.sweep(runner)
            self.status = "complete"
        except supervise.Interrupted as e:
            self.status, rc = "interrupted", e.status
        except OSError as e:
            self.status = "failed"
            print(f"{self.prog}: {e.filename or ''}{': ' if e.filename else ''}{e.strerror}", file=sys.stderr)
        except (RunError, UsageError) as e:
            self.status, rc = "failed", 2 if isinstance(e, UsageError) else 1
            print(f"{self.prog}: {e}", file=sys.stderr)
        finally:
            if self.status == "failed" and self.meta_ready:
                print(f"{self.prog}: stopped; the runs before are kept in {self.out} (continue with "
                      f"--resume --out {self.out})", file=sys.stderr)
            rc = self.clean_up(runner, rc)
        return rc

    def set_up(self):
        o = self.opts
        supervise.remove_stale_tmp(self.prog)
        if os.geteuid() == 0:
            netns.remove_stale(self.prog)
        self.tmp = supervise.make_tmp(self.owner)
        self.out = os.path.abspath(self.out)
        self.results = results.Results(self.out, self.stats)
        self.start_iso = results.now_iso()
        # The sitting of this session's runs (runs.csv's sitting column):
        # its boot and when it started, so that tbench-stats can tell the
        # spread between sittings from that within one.
        self.sitting_id = f"{(fingerprint.sitting()['boot_id'] or 'boot')[:8]}@{self.start_iso}"
        self.sessions, first = results.previous_sessions(self.meta_path) if o.resume else ([], None)
        for earlier in self.sessions:   # one that never said how it ended
            if isinstance(earlier, dict) and earlier.get("status") == "running":
                earlier["status"] = "interrupted"
        self.first_start = first or self.start_iso
        self.results.start(o.resume, o.retry_failed, self.header)
        self.remote = remote.Remote(self.prog, o.remote, self.out, self.stats, o.threads) if self.mode == "remote" else None
        self.net = netns.Net(self.prog, self.mode, self.backends, o.dev, self.remote, self.owner)
        self.net.setup(1500, os.path.join(self.out, "runs", "tbench_srv.log"), self.tbench_srv,
                       ["--threads"] if o.threads else [])
        multi = [b for b in self.backend_list if self.backends.has(b, "multipath")]
        if self.mode == "veth" and multi:
            try:
                self.net.mptcp_paths(1500)
            except netns.NetError as e:
                print(f"{self.prog}: {e}\n{self.prog}: {','.join(multi)}: one subflow a connection", file=sys.stderr)
        self.server = o.server
        if self.remote is not None:
            self.server = self.remote.setup(self.tbench, self.tbench_srv)
        self.devices = self.net.devices_json()
        self.context_fixed = results.context_fixed()
        self.context_start = results.context_sample()
        self.meta_ready = True
        self.write_meta()
        self.results.write_summary()

    # ---- the runs

    def per_run_ms(self):
        """Milliseconds a run takes: as measured so far, else the estimate."""
        if self.n_runs:
            return int((time.monotonic() - self.t0) * 1000 / self.n_runs)
        return plan.secs_to_ms(self.opts.time) + plan.secs_to_ms(self.opts.warmup) + plan.RUN_OVERHEAD_MS

    def run_list(self, runner, todo):
        for n, run in enumerate(todo):
            supervise.check()
            eta = self.per_run_ms() * (len(todo) - n) // 1000
            print(f"[{n + 1}/{len(todo)}] {plan.describe_run(run, self.reps_shown())}  ETA {plan.fmt_secs(eta)}",
                  flush=True)
            self.n_runs += 1
            if not runner.run(run):
                self.n_failed += 1
            supervise.check()

    def run_yardstick(self):
        """The sitting's yardstick before the plan (yardstick.py), recorded
        in meta.json; its failed runs are warned of, never the sweep's."""
        if self.yardstick_todo:
            self.yardstick = yardstick.run(self, self.seed, self.opts.yardstick_seconds)
            self.write_meta()
        if self.yardstick and "points" in self.yardstick:
            self.log(f"{self.prog}: {yardstick.line(self.yardstick)}")

    def sweep(self, runner):
        self.t0 = time.monotonic()
        p = self.prog
        self.log(f"{p}: {self.heading()}")
        self.log(f"{p}: estimated time {self.estimate(self.todo)}; results in {self.out}")
        self.log(f"{p}: order: {ORDER_TEXT} (--seed {self.seed})")
        for line in self.offload_note():
            self.log(f"{p}: {line}")
        for i, line in enumerate(self.precision_lines()):
            self.log(f"{p}: {line}" if i == 0 else line)
        if not self.todo and not self.rule:
            self.log(f"{p}: nothing left to do")
        self.run_list(runner, self.todo)
        status, why = self.precision_sweep(runner) if self.rule else (None, "")
        disturbed = sum(1 for r in self.results.select(["disturbed"]) if r and r[0] not in ("", "no"))
        self.log(f"{p}: done in {plan.fmt_secs(time.monotonic() - self.t0)}: {self.n_runs} runs, {self.n_failed} "
                 f"failed, {disturbed} disturbed (in runs.csv, not in summary.csv); results in {self.out}")
        self.log(f"{p}: plot with: {os.path.join(SCRIPT_DIR, 'tbench-plot')} {self.out}")
        if self.rule:
            for line in precision.report(p, self.points, status, why, self.rule.pct, self.rule.figure,
                                         self.knobs.columns):
                print(line)
        return EXIT_RUNS_FAILED if self.n_failed else 0

    def precision_sweep(self, runner):
        """The reps after the minimum: after each full rep, the points not
        within the target run once more, until none is left, --max-reps or
        --budget. Returns (status by point, what stopped it)."""
        r, rep, why = self.rule, self.reps + 1, ""
        while True:
            status = precision.status(self.stats, self.results.runs_csv, r.pct, r.figure, self.knobs.columns)
            unmet = precision.unmet(self.points, status, self.knobs.columns)
            if not unmet:
                return status, why
            if rep > r.max_reps:
                return status, f"--max-reps {r.max_reps}"
            done = self.results.select(self.key_columns + ["rep"])
            todo = plan.todo(precision.rep_runs(unmet, rep, self.seed), done, self.knobs.columns)
            if r.budget and (time.monotonic() - self.t0) * 1000 + self.per_run_ms() * len(todo) > r.budget * 1000:
                return status, f"--budget {plan.fmt_secs(r.budget)}"
            self.log(f"{self.prog}: rep {rep}: {len(unmet)} points not within {r.pct}% of {r.figure} yet")
            self.run_list(runner, todo)
            rep += 1

    # ---- meta.json and the end

    def write_meta(self):
        o, ended = self.opts, self.status != "running"
        end = results.now_iso() if ended else None
        keep = resume.argv_to_keep(self.parser, self.used)
        command = results.shell_words([sys.argv[0]] + list(self.typed))
        sitting = fingerprint.sitting(self.tbench_version)   # this session's; each resumed one keeps its own
        doc = {
            "status": self.status, "start": self.first_start, "end": end,
            "pid": self.owner, "pid_start": store.process_start(self.owner),
            "command": command, "argv": keep, "cwd": os.getcwd(),
            "host": results.host_facts(),
            "sitting": sitting,
            "yardstick": self.yardstick,
            "tbench": {"path": self.tbench, "version": self.tbench_version,
                       "git_revision": results.git_revision(SCRIPT_DIR),
                       "tbench_stats": self.stats, "extra_args": list(o.extra)},
            "sweep": self.sweep_meta(),
            "devices": self.devices, "context": results.context(self.context_fixed, self.context_start, ended),
            "remote_hosts": self.remote.meta if self.remote else [],
            "sessions": self.sessions + [{"command": command, "start": self.start_iso, "end": end,
                                          "status": self.status, "sitting": sitting}],
        }
        results.write_meta(self.meta_path, doc)

    def sweep_meta(self):
        o, k = self.opts, self.knobs
        return {
            "mode": self.mode, "client_model": self.results.models(",".join(k.vary.get("model", [self.model]))),
            "backends": self.backend_list, "clients": self.client_list,
            "offload_settings": [s[0] for s in self.settings],
            "offload_backends": "all" if o.all_offloads else self.net_backends,
            "knobs": {name: k.vary[name] for name in k.varied},
            "placement_cpus": {"same": [k.cpu0, k.cpu0], "split": [k.cpu0, k.cpu1]},
            "time_s": number(o.time), "warmup_s": number(o.warmup), "reps": self.reps, "label": o.label,
            "precision": precision.rule_json(self.rule), "order": ORDER_TEXT, "order_seed": self.seed,
            "veth_mtu": 1500 if self.mode == "veth" else None, "dev": o.dev or None, "server": o.server or None,
        }

    def clean_up(self, runner, rc):
        """Stops what runs, undoes what was set up, records how the sweep
        ended; safe after any failure. Returns the exit status."""
        runner.abandon()
        for part in (self.remote, self.net):
            if part is not None:
                try:
                    part.cleanup()
                except Exception as e:   # noqa: BLE001 -- clean-up goes on whatever failed
                    print(f"{self.prog}: WARNING: clean-up: {e}", file=sys.stderr)
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)
        if supervise.asked() is not None and self.status != "complete":
            self.status, rc = "interrupted", supervise.asked()
        if self.meta_ready:
            try:
                self.write_meta()
                self.results.write_summary()
            except (RunError, UsageError, OSError) as e:
                print(f"{self.prog}: {e}", file=sys.stderr)
        if self.status == "interrupted":
            print(f"{self.prog}: interrupted; finished runs are in {self.out} (continue with --resume --out {self.out})",
                  file=sys.stderr)
        return rc


def number(text):
    return float(text) if "." in text else int(text)


def default_out(label):
    host = socket.gethostname().split(".", 1)[0]
    return f"tbench-results/{time.strftime('%Y-%m-%d-%H%M')}-{host}{'-' + label if label else ''}"


def check_out_dir(out):
    """--out can be written, before any run: UsageError naming it and why not."""
    try:
        os.makedirs(os.path.join(out, "runs"), exist_ok=True)
        probe = os.path.join(out, "runs", ".writable")
        open(probe, "w").close()
        os.unlink(probe)
    except OSError as e:
        raise UsageError(f"--out {out}: {e.strerror} (give a directory you can write)") from None
