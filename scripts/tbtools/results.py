"""tbench-sweep's results directory: runs.csv (a row a run, tbench-stats
row's), summary.csv (tbench-stats summarize's) and meta.json (the machine,
the programs, the sweep's options and its context). Every file is written
whole through store.atomic_write: a failed write raises RunError and
leaves what was there."""

import datetime
import glob
import os
import platform
import re
import socket
import subprocess
import sys

from . import programs, store
from .errors import RunError, UsageError
from .precision import quiet_notes


def now_iso():
    """The time as date -Iseconds says it."""
    return datetime.datetime.now().astimezone().isoformat(timespec="seconds")


class Results:
    """runs.csv and summary.csv of the sweep in OUT, written with STATS."""

    def __init__(self, out, stats):
        self.out, self.stats = out, stats
        self.runs_csv = os.path.join(out, "runs.csv")
        self.summary_csv = os.path.join(out, "summary.csv")

    def select(self, columns, where=()):
        """Rows of runs.csv as lists of cells (tbench-stats select --tsv)."""
        args = ["select"] + [w for cond in where for w in ("--where", cond)]
        text = programs.run_stats(self.stats, args + ["--columns", ",".join(columns), "--tsv", self.runs_csv])
        return [line.split("\t") for line in text.splitlines() if line]

    def existing(self, resume, retry_failed, key_columns, header, unrecorded):
        """The runs already in runs.csv (key_columns + rep), after checking
        OUT for --resume, or that it holds no sweep yet."""
        if not resume:
            if os.path.exists(self.runs_csv):
                raise RunError(f"{self.out} already holds a sweep: use --resume to continue it, or another --out")
            return []
        if not os.path.isfile(self.runs_csv):
            raise RunError(f"--resume: {self.runs_csv} does not exist")
        first = store.read_text(self.runs_csv).split("\n", 1)[0]
        if first != header:
            raise RunError(f"--resume: {self.runs_csv} has other columns than this version writes "
                           f"({self.stats} row --header)")
        if unrecorded:
            raise RunError(f"--resume: runs.csv cannot say which runs of knob {','.join(unrecorded)} are done (no column)")
        return self.select(key_columns + ["rep"], ["status=ok"] if retry_failed else ())

    def start(self, resume, retry_failed, header):
        """runs.csv of a new sweep (its header), or of a resumed one whose
        failed runs are to run again (the ok ones kept). What a sweep
        killed with -9 left half-written (a run's .part files, a temporary
        file of atomic_write) goes first: nothing reads it."""
        for name in ("runs.csv", "summary.csv", "meta.json"):
            for left in glob.glob(os.path.join(glob.escape(self.out), f".{name}.*")):
                os.unlink(left)
        for left in glob.glob(os.path.join(glob.escape(self.out), "runs", "*.part")):
            os.unlink(left)
        if not resume:
            store.atomic_write(self.runs_csv, header + "\n")
        elif retry_failed:
            kept = programs.run_stats(self.stats, ["select", "--where", "status=ok", self.runs_csv])
            store.atomic_write(self.runs_csv, kept)

    def append(self, row):
        """A run's row added to runs.csv: the whole file written anew."""
        text = store.read_text(self.runs_csv)
        if text and not text.endswith("\n"):
            text += "\n"
        store.atomic_write(self.runs_csv, text + row.rstrip("\n") + "\n")

    def write_summary(self):
        try:
            p = subprocess.run([self.stats, "summarize", self.runs_csv], capture_output=True, text=True)
        except OSError as e:
            raise RunError(f"{self.stats}: {e.strerror}") from None
        print(quiet_notes(p.stderr), end="", file=sys.stderr)
        if p.returncode != 0:
            raise RunError(f"summary.csv: tbench-stats summarize exited {p.returncode}")
        store.atomic_write(self.summary_csv, p.stdout)

    def models(self, fallback):
        """The client models of the runs so far ("processes", "threads" or
        both, comma-joined); FALLBACK before any."""
        try:
            seen = sorted({r[0] for r in self.select(["model"]) if r and r[0]})
        except (RunError, UsageError):
            seen = []
        return ",".join(seen) or fallback


# ---- the machine around the sweep ----------------------------------------------

# The sysctls that move tbench's figures, recorded as they were.
NET_SYSCTLS = ("net.core.default_qdisc", "net.ipv4.tcp_congestion_control", "net.core.rmem_max",
               "net.core.wmem_max", "net.core.rmem_default", "net.core.wmem_default", "net.ipv4.tcp_rmem",
               "net.ipv4.tcp_wmem", "net.ipv4.tcp_autocorking", "net.ipv4.tcp_slow_start_after_idle",
               "net.ipv4.tcp_notsent_lowat", "net.core.busy_poll", "net.core.busy_read",
               "net.core.netdev_max_backlog")


def _read(path, default=None):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return default


def _number(text):
    return float(text) if "." in text else int(text)


def context_sample():
    """How loaded the machine is now: load averages, CPU pressure (None
    where the kernel has no PSI), /proc/stat's steal and total CPU ticks."""
    psi = None
    text = _read("/proc/pressure/cpu")
    if text:
        psi = {}
        for line in text.splitlines():
            words = line.split()
            if words:
                psi[words[0]] = {k: _number(v) for k, v in (w.split("=", 1) for w in words[1:])}
    load = (_read("/proc/loadavg") or "0 0 0").split()[:3]
    ticks = [0] * 8
    for line in (_read("/proc/stat") or "").splitlines():
        if line.startswith("cpu "):
            ticks = [int(x) for x in line.split()[1:9]]
    return {"at": now_iso(), "loadavg": [float(x) for x in load], "psi_cpu": psi,
            "steal_ticks": ticks[7], "cpu_ticks": sum(ticks)}


def context_fixed():
    """What does not change during a sweep: the kernel's command line, the
    CPU frequency governors (or "none"), the network sysctls (None: not readable)."""
    govs = sorted({(_read(p) or "").strip() for p in glob.glob("/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor")} - {""})
    sysctls = {}
    for name in NET_SYSCTLS:
        value = _read("/proc/sys/" + name.replace(".", "/"))
        sysctls[name] = re.sub(r"\t+", " ", value.strip()) if value and value.strip() else None
    return {"cmdline": (_read("/proc/cmdline") or "").strip(), "cpu_governor": ",".join(govs) or "none",
            "net_sysctls": sysctls}


def context(fixed, start, ended):
    """meta.json's context: FIXED, the start sample and, once the sweep
    ended, the end sample and the steal over the sweep in % of CPU time."""
    end = context_sample() if ended else None
    steal = None
    if end is not None and end["cpu_ticks"] > start["cpu_ticks"]:
        steal = 100 * (end["steal_ticks"] - start["steal_ticks"]) / (end["cpu_ticks"] - start["cpu_ticks"])
    return dict(fixed, start=start, end=end, steal_pct=steal)


def host_facts():
    """meta.json's host: kernel, CPU, cores, memory."""
    cpu = next((l.split(":", 1)[1].strip() for l in (_read("/proc/cpuinfo") or "").splitlines()
                if l.startswith("model name")), "")
    mem = re.search(r"^MemTotal:\s*([0-9]+) kB", _read("/proc/meminfo") or "", re.M)
    u = platform.uname()
    return {"name": socket.gethostname(), "kernel": u.release, "kernel_version": u.version,
            "machine": u.machine, "cpu_model": cpu, "cores_online": len(os.sched_getaffinity(0)),
            "cores_configured": os.sysconf("SC_NPROCESSORS_CONF"), "memory_kb": int(mem.group(1)) if mem else 0}


def git_revision(script_dir):
    top = os.path.join(script_dir, "..")
    try:
        p = subprocess.run(["git", "-C", top, "describe", "--always", "--dirty", "--abbrev=12"],
                           capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return p.stdout.strip() if p.returncode == 0 and p.stdout.strip() else "unknown"


def shell_words(words):
    """A command line as one could paste it: words quoted only where needed."""
    out = []
    for w in words:
        if re.fullmatch(r"[A-Za-z0-9_./,:=@%+-]+", w):
            out.append(w)
        else:
            out.append("'" + w.replace("'", "'\\''") + "'")
    return " ".join(out)


def previous_sessions(meta_path):
    """(sessions, first start) of the sweep being resumed, from its meta.json."""
    if not os.path.isfile(meta_path):
        return [], None
    meta = store.read_meta(meta_path)
    sessions = meta.get("sessions") if isinstance(meta.get("sessions"), list) else []
    start = meta.get("start") if isinstance(meta.get("start"), str) else None
    return sessions, start


def write_meta(path, doc):
    store.atomic_write(path, store.json_text(doc))
