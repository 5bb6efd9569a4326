"""Files of a results directory: written so that a failed write never
loses what was there, and read as data that is checked, never run."""

import json
import os
import tempfile

from .errors import RunError, UsageError


def atomic_write(path, data):
    """Writes DATA (str or bytes) to PATH through a temporary file in the
    same directory, flushed to disk, renamed over PATH only when all of it
    was written. On failure PATH is as it was and RunError says why."""
    path = os.fspath(path)
    directory = os.path.dirname(path) or "."
    if isinstance(data, str):
        data = data.encode()
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix="." + os.path.basename(path) + ".")
    except OSError as e:
        raise RunError(f"{path}: {e.strerror}") from None
    try:
        # mkstemp's file is private (0600): given the mode a file created
        # here would have, so that others read the results as before.
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.rename(tmp, path)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise RunError(f"{path}: {e.strerror}") from None


def _umask():
    """The process's umask, read without changing it (os.umask would, for
    a moment, under the sweep's other threads); 022 where /proc does not say."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022


def read_text(path):
    """The text of PATH; UsageError naming it when it cannot be read."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError as e:
        raise UsageError(f"{path}: {e.strerror}") from None


def read_json(path):
    """The JSON document in PATH; UsageError naming the file, line and
    column when it is not valid JSON."""
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise UsageError(f"{path}:{e.lineno}:{e.colno}: not valid JSON: {e.msg}") from None


def json_text(doc):
    """A document as the suite writes it: indented, keys in the order given."""
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def read_meta(path):
    """A sweep's meta.json as a dict; UsageError when it is not an object."""
    meta = read_json(path)
    if not isinstance(meta, dict):
        raise UsageError(f"{path}: not a JSON object (a tbench-sweep meta.json is one)")
    return meta


def meta_field(meta, path, field, kind, required=True):
    """meta[field] checked to be of KIND: str, int, float, bool, dict,
    or "strings" (a list of strings). A missing optional field is None.
    UsageError names the file and the field."""
    if field not in meta:
        if required:
            raise UsageError(f"{path}: field '{field}' is missing")
        return None
    value = meta[field]
    if kind == "strings":
        ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        what = "an array of strings"
    elif kind is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
        what = "a whole number"
    elif kind is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        what = "a number"
    else:
        ok = isinstance(value, kind)
        what = {str: "a string", bool: "true or false", dict: "an object", list: "an array"}[kind]
    if not ok:
        raise UsageError(f"{path}: field '{field}' must be {what}, not {json.dumps(value)[:60]}")
    return value


def sweep_status(meta):
    """A sweep's status as its meta.json says it (running, complete,
    interrupted, failed), but "interrupted" where it says running and the
    process it names is gone (pid, the same process if pid_start says when
    it started, on the machine host.name): killed with -9, or the machine
    went down."""
    import socket
    status = meta.get("status") if isinstance(meta.get("status"), str) else "unknown"
    pid, host = meta.get("pid"), meta.get("host")
    if status != "running" or not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return status
    if isinstance(host, dict) and host.get("name") not in (None, socket.gethostname()):
        return "running"   # another machine's: it cannot be told from here
    started = process_start(pid)
    if started is None or meta.get("pid_start") not in (None, started):
        return "interrupted"
    return "running"


def process_start(pid):
    """When process PID started (clock ticks since boot, /proc/PID/stat's
    field 22), None if there is no such process (a zombie counts as none)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return None if fields[0] == "Z" else int(fields[19])
