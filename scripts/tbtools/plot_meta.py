"""What a sweep's meta.json says on its charts: the title's line (host,
kernel, CPUs, date, run length, repetitions, client model, where the
traffic went), the CPUs its runs had, its device's MTU. Read as data: a
field of another type than expected is written as JSON text, not run."""

import json
import os

from . import store
from .errors import UsageError


def _meta(directory):
    path = os.path.join(directory, "meta.json")
    return store.read_meta(path) if os.path.isfile(path) else None


def _meta_or_none(directory):
    """meta.json, or None when it is missing or no JSON object: for what
    a chart can do without."""
    try:
        return _meta(directory)
    except UsageError:
        return None


def _get(doc, *keys):
    for k in keys:
        doc = doc.get(k) if isinstance(doc, dict) else None
    return doc


def _text(value):
    """VALUE as jq's string interpolation writes it: a string as it is,
    null as null, a whole number without a point, others as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e17:
        return str(int(value))
    return json.dumps(value, ensure_ascii=False)


def title_of(directory):
    """The line that says where and how the sweep in DIRECTORY ran; its
    directory's name when it has no meta.json."""
    meta = _meta(directory)
    if meta is None:
        return os.path.basename(os.path.realpath(directory))
    sweep = _get(meta, "sweep")
    start = _get(meta, "start")
    title = (f"{_text(_get(meta, 'host', 'name'))}, Linux {_text(_get(meta, 'host', 'kernel'))}, "
             f"{_text(_get(meta, 'host', 'cores_online'))} CPUs, "
             f"{_text(start[0:10] if isinstance(start, str) else None)}; "
             f"{_text(_get(sweep, 'time_s'))} s runs, ")
    precision = _get(sweep, "precision")
    if precision not in (None, False):
        title += (f"{_text(_get(precision, 'min_reps'))}–{_text(_get(precision, 'max_reps'))} reps "
                  f"(--precision {_text(_get(precision, 'pct'))}%), ")
    else:
        title += f"{_text(_get(sweep, 'reps'))} reps, "
    model = _get(sweep, "client_model")
    if model not in (None, False):
        title += f"clients as {_text(model)}, "
    mode = _get(sweep, "mode")
    if mode == "veth":
        return title + f"veth MTU {_text(_get(sweep, 'veth_mtu'))}"
    if mode == "dev":
        return title + f"device {_text(_get(sweep, 'dev'))}"
    return title + "loopback"


def cpus_of(directory):
    """The CPUs the sweep's runs had: meta.json's, else this machine's."""
    n = _text(_get(_meta_or_none(directory), "host", "cores_online"))
    if n.isdigit() and n.isascii() and not n.startswith("0"):
        return int(n)
    return len(os.sched_getaffinity(0))


def mtu_note(directory):
    """" (lo MTU 65536)" from meta.json's first device, when it says."""
    devices = _get(_meta_or_none(directory), "devices")
    first = devices[0] if isinstance(devices, list) and devices else None
    if _get(first, "mtu") is None:
        return ""
    return f" ({_text(_get(first, 'device'))} MTU {_text(_get(first, 'mtu'))})"
