"""Ctrl-C, SIGTERM and kill -9 for the sweep: signals, its children, what
a killed sweep leaves.

The process the user started (the supervisor) forks the worker that does
the sweep and only waits, passing SIGINT and SIGTERM on. The worker dies
with its supervisor's death signal (PR_SET_PDEATHSIG) turned into a
SIGTERM of its own, so that a supervisor killed with -9 still leaves a
worker that stops its run, cleans up and records the sweep as interrupted.
In the worker a signal is a request: it stops the run in progress at
once (wait), and anything else between two steps (check)."""

import ctypes
import os
import shutil
import signal
import subprocess
import sys
import tempfile

from . import netns

PR_SET_PDEATHSIG = 1
EXIT_STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143}
TMP_PREFIX = "tbench-sweep."


class Interrupted(Exception):
    """A signal asked the sweep to stop; STATUS is its exit status."""

    def __init__(self, status):
        super().__init__(f"interrupted ({status})")
        self.status = status


_asked = None       # the exit status a signal asked for
_waiting = False    # a run's child is being waited for: stop it at once


def start():
    """Forks the worker: returns the supervisor's PID (the one the user
    knows, which names what the sweep makes) in the worker; waits for it
    and exits with its status in the supervisor."""
    owner = os.getpid()
    sys.stdout.flush()
    sys.stderr.flush()
    worker = os.fork()
    if worker == 0:
        _become_worker(owner)
        return owner
    for sig in EXIT_STATUS:
        signal.signal(sig, lambda signum, frame: _forward(worker, signum))
    _, status = os.waitpid(worker, 0)
    code = os.waitstatus_to_exitcode(status)
    os._exit(128 - code if code < 0 else code)


def _forward(worker, signum):
    try:
        os.kill(worker, signum)
    except ProcessLookupError:
        pass


def _become_worker(owner):
    for sig in EXIT_STATUS:
        signal.signal(sig, _on_signal)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        pass   # no prctl: check() notices the supervisor gone instead
    if os.getppid() != owner:   # it died before prctl
        _on_signal(signal.SIGTERM, None)


def _on_signal(signum, frame):
    global _asked
    if _asked is None:
        _asked = EXIT_STATUS.get(signum, 130)
        # os.write: a print here could land inside another print
        os.write(2, f"\ntbench-sweep: {signal.Signals(signum).name}: stopping\n".encode())
    if _waiting:
        raise Interrupted(_asked)


def asked():
    """The exit status a signal asked for, None if none did."""
    return _asked


def check():
    """Raises Interrupted if a signal asked the sweep to stop."""
    if _asked is not None:
        raise Interrupted(_asked)


def wait(proc):
    """PROC's exit status; a signal meanwhile stops PROC and raises
    Interrupted: an interrupted run is not recorded."""
    global _waiting
    _waiting = True
    try:
        check()
        return proc.wait()
    except Interrupted:
        _waiting = False   # a second signal must not cut the stopping short
        stop(proc)
        raise
    finally:
        _waiting = False


def interruptible(fn, *args):
    """FN(*ARGS) with a signal raising Interrupted inside it (FN stops
    what it started on the way out)."""
    global _waiting
    _waiting = True
    try:
        check()
        return fn(*args)
    finally:
        _waiting = False


def stop(proc, grace_s=3.0):
    """Stops a run's PROC as Ctrl-C would (SIGINT: tbench reports and ends),
    then as netns.kill_wait does if it does not end within GRACE_S."""
    if proc.poll() is not None:
        return
    try:
        proc.send_signal(signal.SIGINT)
        proc.wait(grace_s)
    except subprocess.TimeoutExpired:
        netns.kill_wait(proc, 1.0)


def make_tmp(owner):
    """The sweep's temporary directory, named by its owner and worker PIDs
    so that the next sweep can tell it is stale (remove_stale_tmp)."""
    return tempfile.mkdtemp(prefix=f"{TMP_PREFIX}{owner}-{os.getpid()}.")


def remove_stale_tmp(prog):
    """Removes the temporary directories of this user's sweeps that no
    longer run (killed with -9), saying so; returns their paths."""
    removed = []
    base = tempfile.gettempdir()
    try:
        names = os.listdir(base)
    except OSError:
        return removed
    for name in names:
        pids = name[len(TMP_PREFIX):].split(".", 1)[0].split("-") if name.startswith(TMP_PREFIX) else []
        if len(pids) != 2 or not all(p.isdigit() for p in pids) or any(netns.pid_alive(int(p)) for p in pids):
            continue
        path = os.path.join(base, name)
        try:
            if os.lstat(path).st_uid != os.geteuid():
                continue
        except OSError:
            continue
        shutil.rmtree(path, ignore_errors=True)
        print(f"{prog}: removed {path}, left by sweep {pids[0]} (not running)", file=sys.stderr)
        removed.append(path)
    return removed
