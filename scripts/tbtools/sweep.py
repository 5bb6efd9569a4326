"""tbench-sweep: its options, its --help, and main (the work is
session.py's; the plan plan.py's; resume.py continues a sweep)."""

import argparse
import contextlib
import io
import os
import sys

from . import precision, programs, remote, results, resume, session, text, yardstick
from .plan import is_secs, is_seed, secs_to_ms
from .errors import Parser, UsageError

PROG = "tbench-sweep"


class VaryAction(argparse.Action):
    """--vary NAME=LIST, and --offload/--tso/--gso/--gro/--mtu LIST as
    --vary of their knob: (option as typed, "NAME=LIST") in order."""

    def __call__(self, parser, namespace, values, option_string=None):
        entry = values if option_string == "--vary" else f"{option_string[2:]}={values}"
        namespace.vary = list(getattr(namespace, "vary", None) or []) + [(option_string, entry)]


def parser():
    p = Parser(prog=PROG)
    add = p.add_argument
    add("--backends", default="")
    add("--clients", default="1..64")
    add("-t", "--time", default="10")
    add("--warmup", default="2")
    add("--reps", default=None)
    add("--precision", default=None)
    add("--max-reps", default=None)
    add("--budget", default=None)
    add("--seed", default=None)
    add("--threads", action="store_true")
    add("--no-yardstick", action="store_true")
    add("--yardstick-seconds", default=yardstick.DEFAULT_SECONDS)
    p.set_defaults(vary=[])
    for opt in ("--vary", "--offload", "--tso", "--gso", "--gro", "--mtu"):
        add(opt, action=VaryAction, dest="vary")
    add("--net-backends", default="")
    add("--all-offloads", action="store_true")
    add("--veth", action="store_const", const="veth", dest="mode", default="lo")
    add("--dev", default="")
    add("--server", default="")
    remote.add_options(p)
    add("--label", default="")
    add("--out", default="")
    add("--resume", action="store_true")
    add("--retry-failed", action="store_true")
    add("--tbench", default=None)
    add("--tbench-srv", default=None)
    add("--tbench-stats", default=None)
    add("-n", "--dry-run", "--plan", action="store_true", dest="dry_run")
    add("-q", "--quiet", action="store_true")
    add("-h", "--help", action="store_true")
    add("--version", action="store_true")
    return p


def check(opts):
    """Usage errors of the options alone (before any program is asked)."""
    if not is_secs(opts.time) or secs_to_ms(opts.time) == 0:
        raise UsageError(f"-t: '{opts.time}' is not a positive number of seconds")
    if not is_secs(opts.yardstick_seconds) or secs_to_ms(opts.yardstick_seconds) == 0:
        raise UsageError(f"--yardstick-seconds: '{opts.yardstick_seconds}' is not a positive number of seconds")
    if not is_secs(opts.warmup):
        raise UsageError(f"--warmup: '{opts.warmup}' is not a number of seconds")
    reps = opts.reps or "3"
    if not (reps.isdigit() and len(reps) <= 4 and int(reps) >= 1):
        raise UsageError(f"--reps: '{reps}' is not a positive integer")
    if opts.seed is not None and not is_seed(opts.seed):
        raise UsageError(f"--seed: '{opts.seed}' is not a whole number from 0 to 2147483647")
    if opts.retry_failed and not opts.resume:
        raise UsageError("--retry-failed needs --resume")
    if opts.resume and not opts.out:
        raise UsageError("--resume needs --out DIR (the sweep to continue)")
    if opts.dev:
        opts.mode = "dev"
        if not opts.server:
            raise UsageError(f"--dev needs --server ADDR (a tbench_srv reached through {opts.dev})")
        if not remote.IFACE_RE.match(opts.dev):
            raise UsageError(f"--dev: bad interface name '{opts.dev}'")
    if opts.server and opts.mode != "dev":
        raise UsageError("--server is for --dev (--veth starts its own server)")
    opts.remote = remote.Options.from_args(opts)
    opts.mode = remote.check_options(opts.remote, opts.mode)
    bad = text.check_label(opts.label) if opts.label else None
    if bad:
        raise UsageError(bad)


def main(argv):
    p = parser()
    typed = resume.parse(p, argv)
    if typed.help:
        print(help_text(typed.tbench or os.environ.get("TBENCH")))
        return 0
    if typed.version:
        print(programs.script_version(PROG, typed.tbench or os.environ.get("TBENCH")))
        return 0
    opts, used = typed, list(argv)
    if typed.resume and typed.out:
        used, stored = resume.merge(p, argv, typed.out)
        if stored is not None:
            opts = resume.parse(p, used)
            print(f"{PROG}: --resume: the sweep's options from {os.path.join(typed.out, 'meta.json')}: "
                  f"{results.shell_words(stored)}", file=sys.stderr)
    check(opts)
    return session.Session(PROG, p, opts, argv, used).main()


def help_text(explicit_tbench):
    """--help, with the backends of the tbench that would be used by
    capability (else where to read them)."""
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            backends = programs.Backends(programs.find(PROG, "tbench", "", explicit_tbench,
                                                       script_dir=session.SCRIPT_DIR))
    except Exception:   # noqa: BLE001 -- --help prints whatever tbench is there
        backends = None

    def bw(*caps):
        if backends is None:
            return f"those with {' '.join(caps)} in 'tbench -b list'"
        return ",".join(backends.with_caps(*caps))
    return HELP.format(prog=PROG, default=bw("default"), offloads=bw("offloads"), sockopts=bw("sockopts"),
                       wire=bw("wire"), replies=bw("copy-replies"), multipath=bw("multipath"),
                       server=bw("server"),
                       max_reps=precision.DEFAULT_MAX_REPS)


HELP = """Usage: {prog} [OPTIONS] [-- TBENCH-ARGS...]

Run tbench for every backend x client count x offload setting x value of
each knob varied, REPS times, interleaved (rep 1 of every point, then rep 2,
...; within a rep the points of a client count back to back, in a shuffled
order), and store the results in
tbench-results/<date>-<host>[-label]/ (or --out DIR):
  runs.csv      one row per run: throughput, latency, CPU, what an operation
                cost (CPU, switches, system calls, TCP segments, bytes per
                segment: tbench's cost figures), the offloads as read back and
                a column per knob (the value asked for; "-" when not varied,
                "n/a" where it means nothing to the backend);
                its columns: tbench-stats row --header
  summary.csv   per point: n, mean, sd, 95% Student-t confidence interval
  meta.json     kernel, CPU, memory, devices and their offloads, git revision,
                tbench --version, client model, command line, start and end,
                the sweep's pid (status "running" with that process gone
                reads as interrupted); context: load average and CPU
                pressure at the start and the end, steal over the sweep,
                /proc/cmdline, CPU governor, the network sysctls that move tbench
  runs/         the --json document and the output of each run
Each run is 'tbench --netns': in a network namespace of its own, with its
own lo (and a user namespace when not root), offloads set there and read
back by tbench, gone when the run ends. The host's devices are never
touched and a loopback sweep needs no root. --veth and --dev need root: they
make namespaces with ip netns and set offloads with ethtool -K, and remove
them on every exit, Ctrl-C and errors included; what a sweep killed with -9
left (its namespaces, veth pair, temporary directory) the next sweep
removes, saying so.

What to run:
  --backends LIST     backends (default: those 'tbench -b list' marks
                      default: {default})
  --clients LIST      client counts: 1,2,4 or A..B doubling (default 1..64)
  -t, --time SECS     execute phase of each run (default 10)
  --warmup SECS       warm-up before it (default 2)
  --reps N            repetitions of every point (default 3); with
                      --precision the minimum (at least 2)
  --precision PCT[,FIGURE]
                      repeat each point, rep by rep, until the half-width
                      of the 95% interval of FIGURE is within PCT % of its
                      mean: from rep --reps on, each rep runs only the
                      points not within it yet. FIGURE: cost_cpu_us (CPU
                      us per operation, default), wall_us_per_op or
                      mb_per_sec. The end says each point's reps and the
                      half-width reached; disturbed runs do not count
  --max-reps N        with --precision: at most N reps of a point
                      (default {max_reps}, or --reps if more)
  --budget SECS       with --precision: no rep beyond --reps starts that
                      would end the sweep after SECS seconds
  --seed N            seed of the shuffled order (default: a new one, or with
                      --resume the sweep's own); kept in meta.json
  --threads           clients (and the servers backends bring) as threads of
                      one process; default: tbench's, a process per client
  -- TBENCH-ARGS      passed to every tbench run (e.g. -- -c client.txt)

The yardstick: before its plan, a sweep runs the backends 'tbench -b list'
marks yardstick at 1 and 2 clients, 3 reps interleaved, in tbench --netns
here (whatever the mode), its default loadfile and no TBENCH-ARGS: about
40 s. Its runs go to yardstick/, its figures with their 95% intervals to
meta.json's "yardstick"; tbench-compare uses them to tell a change from
the difference between two sittings. --resume keeps one already made.
  --no-yardstick      skip it (meta.json: "yardstick": {{"skipped": ...}})
  --yardstick-seconds SECS
                      its execute phase per run (default 2; warm-up a quarter)

Offloads (TSO = tcp-segmentation-offload, GSO = generic-segmentation-offload,
GRO = generic-receive-offload), set by tbench --netns on the run's lo (with
--veth and --dev: with ethtool -K before each run):
  --offload LIST      TSO and GSO together: on,off (default on,off)
  --tso LIST, --gso LIST, --gro LIST
                      each separately (on, off or on,off); combined with
                      --offload as a cross product, the separate one wins
  --net-backends LIST backends whose bytes cross a network device, run once
                      per offload setting (default: those with offloads in
                      'tbench -b list': {offloads}).
                      The others run once per point with offload "n/a": no
                      device sees their traffic.
  --all-offloads      run every backend once per offload setting anyway

Knobs: --vary NAME=V1,V2,... (repeatable) makes NAME a dimension: every
point runs once per value, the dimensions multiply, and runs.csv has a
column NAME. The knobs are those of 'tbench-stats row --knobs', and model.
A knob that means nothing to a backend (mtu for pipe) is "n/a"
there and the backend runs once for it, as with the offloads. Each is read
back (from the run's --json, or ip/tc for the sweep's devices); a value the
kernel refuses fails those runs with the reason, and the sweep goes on.
  offload, tso, gso, gro  on,off: as --offload, --tso, --gso, --gro
  mtu=N,...           MTU of the device (the run's lo: tbench --netns --mtu;
                      --veth: both ends of the pair, whose maximum is
                      65535; --dev: IFACE, restored). Backends: --net-backends
  cc=NAME,...         TCP congestion control of every connection
                      (tbench -T TCP_CONGESTION=NAME, and tbench_srv's)
  nodelay=on,off      TCP_NODELAY (default on, as dbench)
  sndbuf=BYTES,..., rcvbuf=BYTES,...
                      SO_SNDBUF, SO_RCVBUF (read back doubled, as the kernel
                      keeps them). cc, nodelay, sndbuf, rcvbuf and family
                      apply to {sockopts}
  family=ipv4,ipv6    address family of the connections (tbench --family)
  placement=same,split,free
                      same: clients and servers on one CPU (the first this
                      sweep may use), split: clients on it and servers on
                      the next, free: not pinned (tbench --cpus,
                      --server-cpus; tbench_srv --cpus with --veth). Every
                      backend.
  model=processes,threads
                      clients (and servers) as processes or as threads of
                      one process (tbench --threads); every backend. Not
                      with --threads
  rate=RATE,...       a tbf qdisc of RATE (100mbit, 1gbit) on the device the
                      wire backends cross ({wire}): needs --veth or
                      --dev; removed after each run
  inject_ns=NS,...    tbench --inject-ns: NS nanoseconds spun after every
                      exchange, a known cost to calibrate a study; every
                      backend
  copy_replies=on,off tbench --copy-replies: reply bodies copied to user
                      space (as unix's, pipe's are), not dropped by the
                      kernel: {replies}; decompose compares tcp with
                      unix at on
  sysctl:NAME=V,...   any net.* sysctl, set by tbench --netns --sysctl in the
                      run's own namespace (loopback mode only; the host's
                      never change), a dimension per NAME, e.g.
                      sysctl:net.ipv4.tcp_autocorking=0,1

Where the traffic goes:
  (default)           each run in a namespace of its own (tbench --netns);
                      {offloads} use its loopback (lo)
  --veth              (root) two namespaces joined by a veth pair (10.199.0.1/30 and
                      10.199.0.2/30, private to them): tbench_srv --listen in
                      one, the wire backends ({wire}) in the other,
                      the multipath ones ({multipath}) over a second
                      pair too; offloads set on both veth ends. The others
                      use their own loopback pairs, so their offloads are
                      those of the client namespace's lo.
  --mtu LIST          as --vary mtu=LIST (--veth's pair is 1500 otherwise)
  --dev IFACE         (root) explicit opt-in to change a REAL device: the wire
                      backends ({wire}) run in the host namespace
                      against --server ADDR (a tbench_srv you
                      started, reached through IFACE); IFACE's original TSO,
                      GSO and GRO settings are restored on every exit. The
                      other backends still run in a private namespace.
  --server ADDR       tbench_srv address for --dev

Other hosts, reached with ssh (as root there: it sets the device):
  --server-host [USER@]HOST
                      (root here too) tbench_srv on HOST, started over ssh
                      (HOST's own, found on its PATH, or this one with
                      --push); the runs of backends that take a SERVER
                      ({server}) go from here to it, the other
                      backends stay in a namespace here. HOST's --server-dev
                      gets the offloads and device knobs of each run; a
                      guard on HOST restores it and stops the server when
                      the sweep ends in any way or its ssh connection drops
  --server-dev IFACE  the device of HOST that the clients' traffic reaches
  --server-addr ADDR  the address the clients connect to (default: HOST's
                      host name as ssh resolves it, ssh -G)
  --client-hosts H1,H2,...
                      each run with a SERVER on every one of these hosts at once (the
                      same tbench command, --start-at a common instant, so
                      the clocks must agree), their --json merged into one
                      point (tbench-stats merge); a host that fails or ends
                      more than 30 s late fails the point, naming it
  --push              copy tbench_srv (and tbench) to a temporary directory
                      of each host instead of using its own
  --start-lead SECS   how far ahead the common instant is (default 5)
  --ssh CMD           the ssh command, split into words (as rsync -e):
                      e.g. --ssh "ssh -F cluster.conf -p 2222" (default ssh)

Results:
  --label TEXT        appended to the results directory name: one path
                      component (no '/', not '..', no control characters)
  --out DIR           results directory (default
                      ./tbench-results/<date>-<host>[-label])
  --resume            continue the sweep in --out DIR with its own options
                      (meta.json's argv): run only the runs that are not in
                      its runs.csv yet. Other options given must agree with
                      them, but --out, --retry-failed, --quiet, --plan,
                      --max-reps, --budget and the programs, which a session
                      sets anew (never from meta.json)
  --retry-failed      with --resume: also run again the runs not marked ok

Programs: each the option, else the environment variable, else the first of
this suite (its --version says "tbench suite") beside this script, at the
top of its tree, in its build/, in the current directory, then in PATH
(dbench's tbench there is skipped). The one used is said, and kept in meta.json.
  --tbench PATH       $TBENCH
  --tbench-srv PATH   $TBENCH_SRV (for --veth); first looked for beside tbench
  --tbench-stats PATH $TBENCH_STATS; first looked for beside tbench
Also: for --veth and --dev, ip (iproute2) and ethtool.

Other:
  --plan, -n, --dry-run
                      print the plan (the dimensions, every run and its
                      command, the estimated time) and exit; runs nothing
  -q, --quiet         only the progress lines
  -h, --help          this text
      --version       the suite's version, as the tbench it would use says

Exit status: 0 every run done and ok; 3 every run done, some failed (each
recorded in runs.csv with its reason; --resume --retry-failed runs them
again); 1 error (the sweep stopped: a write failed, a program could not
start; the files written before it are intact); 2 usage error or bad input
(an option, meta.json); 130/143 interrupted (finished runs are kept; use
--resume).

Example:
  {prog} --backends pipe,tcp --clients 1,4,16 --offload on,off --reps 2 -t 5
  {prog} --plan --backends tcp,pipe --vary placement=same,split,free --vary mtu=1500,65536"""
