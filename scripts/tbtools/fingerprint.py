"""A sitting's fingerprint: what makes one boot, or one stretch of time on
a machine, measure differently from another. A sweep records it in
meta.json ("sitting"); tbench-compare says which fields two sweeps differ
in, since a patch is always judged across two boots."""

import glob
import hashlib
import os
import platform

# Field: what it is, as tbench-compare names it when two sittings differ.
FIELDS = {
    "kernel_release": "kernel release (uname -r)",
    "kernel_build": "kernel build (uname -v)",
    "boot_id": "boot (/proc/sys/kernel/random/boot_id)",
    "cpu_model": "CPU model",
    "cpu_flags_sha256": "CPU flags (a hash of /proc/cpuinfo's flags)",
    "microcode": "microcode revision",
    "cpus_online": "CPUs online",
    "clocksource": "clock source",
    "cpu_governor": "CPU frequency governor",
    "cpufreq_driver": "CPU frequency driver",
    "thp": "transparent huge pages",
    "mitigations_sha256": "CPU vulnerability mitigations (a hash of their states)",
    "hypervisor": "hypervisor",
    "tbench": "tbench build (--version)",
}


def _read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read().strip()
    except OSError:
        return None


def _cpuinfo_field(cpuinfo, name):
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == name:
            return value.strip()
    return None


def _sha256(text):
    return hashlib.sha256(text.encode()).hexdigest()[:16] if text is not None else None


def _one_of(pattern):
    """The values of the files PATTERN matches, joined when they differ."""
    values = sorted({v for v in (_read(p) for p in glob.glob(pattern)) if v})
    return ",".join(values) or None


def _thp():
    """The setting in brackets of transparent_hugepage/enabled."""
    text = _read("/sys/kernel/mm/transparent_hugepage/enabled") or ""
    start, end = text.find("["), text.find("]")
    return text[start + 1:end] if 0 <= start < end else None


def _mitigations():
    """Each vulnerability's state, name: state a line, in name order."""
    files = sorted(glob.glob("/sys/devices/system/cpu/vulnerabilities/*"))
    if not files:
        return None
    return "\n".join(f"{os.path.basename(p)}: {_read(p)}" for p in files)


def _hypervisor(cpuinfo):
    """The hypervisor's name where the system says it, "yes" where only the
    CPU's hypervisor flag does, "none" where neither."""
    named = _read("/sys/hypervisor/type") or _read("/sys/class/dmi/id/sys_vendor")
    flags = (_cpuinfo_field(cpuinfo, "flags") or "").split()
    if "hypervisor" not in flags:
        return "none"
    return named or "yes"


def sitting(tbench_version=None):
    """The fingerprint of this sitting: a dict of FIELDS (None where the
    system does not say)."""
    cpuinfo = _read("/proc/cpuinfo") or ""
    u = platform.uname()
    return {
        "kernel_release": u.release,
        "kernel_build": u.version,
        "boot_id": _read("/proc/sys/kernel/random/boot_id"),
        "cpu_model": _cpuinfo_field(cpuinfo, "model name"),
        "cpu_flags_sha256": _sha256(_cpuinfo_field(cpuinfo, "flags")),
        "microcode": _cpuinfo_field(cpuinfo, "microcode"),
        "cpus_online": len(os.sched_getaffinity(0)),
        "clocksource": _read("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
        "cpu_governor": _one_of("/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor"),
        "cpufreq_driver": _one_of("/sys/devices/system/cpu/cpu*/cpufreq/scaling_driver"),
        "thp": _thp(),
        "mitigations_sha256": _sha256(_mitigations()),
        "hypervisor": _hypervisor(cpuinfo),
        "tbench": tbench_version,
    }


def differences(a, b):
    """(field, what it is, A's value, B's value) for each field of FIELDS
    in which two fingerprints (dicts, as meta.json holds them) differ."""
    out = []
    for field, what in FIELDS.items():
        va, vb = a.get(field), b.get(field)
        if va != vb:
            out.append((field, what, va, vb))
    return out
