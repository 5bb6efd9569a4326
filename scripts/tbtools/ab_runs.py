"""tbench-ab's runs: one tbench run of a side, its JSON kept in
DIR/runs/, its row added to runs.csv (tbench-stats row's, and the side in
a last column, variant); a disturbed run run once more; a failed one
stops the A/B naming the side and why. And the tbench_srv a side brings."""

import json
import os
import re
import subprocess

from . import ab_plan, programs
from .errors import RunError

STDERR_TAIL_LINES = 8


def header(stats):
    """runs.csv's header: tbench-stats row's, then variant (a or b)."""
    return programs.run_stats(stats, ["row", "--header"]).strip() + ",variant"


class Server:
    """A side's own tbench_srv on a port of loopback the kernel picks,
    running from start() to stop()."""

    def __init__(self, path, log_path):
        self.path, self.log_path, self.proc, self.port = path, log_path, None, None

    def start(self):
        try:
            self.proc = subprocess.Popen([self.path, "-p", "0", "-l", "127.0.0.1"], stdin=subprocess.DEVNULL,
                                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        except OSError as e:
            raise RunError(f"{self.path}: {e.strerror}") from None
        first = self.proc.stdout.readline()
        found = re.search(r"listening on 127\.0\.0\.1:([0-9]+)", first)
        if not found:
            self.stop()
            raise RunError(f"{self.path} did not say where it listens: '{first.strip()}'")
        self.port = int(found.group(1))
        return self.port

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Runs:
    """The runs of one A/B in OUT: TBENCH of each side, STATS, COMMON
    arguments, PORTS of the sides' servers, SITTING (runs.csv's column)."""

    def __init__(self, out, stats, tbench, common, ports, sitting, results):
        self.out, self.stats, self.tbench, self.common = out, stats, tbench, common
        self.ports, self.sitting, self.results = ports, sitting, results
        self.notes = []      # the disturbed runs run again, said in meta.json

    def run(self, side, block, rep, k):
        """Run K (1..4) of BLOCK for SIDE, once more if disturbed; its row
        appended. RunError (naming the side, the run and tbench's last
        lines) when tbench failed."""
        rid = f"block{block:03d}-{k}-{side.name}"
        doc = self._tbench(side, rid, block, k)
        if doc.get("noise", {}).get("disturbed"):
            reasons = "; ".join(map(str, doc["noise"].get("reasons", []))) or "noise.disturbed"
            self.notes.append(f"block {block} run {k} ({side.name.upper()}) disturbed ({reasons}): run again")
            print(f"tbench-ab: {self.notes[-1]}", flush=True)
            rid += "-again"
            doc = self._tbench(side, rid, block, k)
        row = programs.run_stats(self.stats, ["row", "--set", f"rep={rep}", "--set", f"sitting={self.sitting}",
                                              "--set", f"json=runs/{rid}.json",
                                              os.path.join(self.out, "runs", rid + ".json")])
        self.results.append(row.rstrip("\n") + "," + side.name)
        return doc

    def _tbench(self, side, rid, block, k):
        json_path = os.path.join(self.out, "runs", rid + ".json")
        log_path = os.path.join(self.out, "runs", rid + ".log")
        # Written as .part and renamed whole, as a sweep's runs are: a run
        # cut short leaves no JSON that looks finished.
        cmd = ab_plan.command(side, self.tbench[side.name], self.common, json_path + ".part",
                              self.ports.get(side.name))
        try:
            with open(log_path + ".part", "w") as log:
                print("+ " + " ".join(cmd), file=log, flush=True)
                rc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT).returncode
            os.replace(log_path + ".part", log_path)
            if rc == 0:
                os.replace(json_path + ".part", json_path)
        except OSError as e:
            raise RunError(f"side {side.name.upper()}, block {block} run {k}: {e.filename or cmd[0]}: "
                           f"{e.strerror}") from None
        if rc != 0:
            raise RunError(f"side {side.name.upper()} failed in block {block} run {k} (exit status {rc}); "
                           f"no verdict from a failed run. The end of {log_path}:\n{tail(log_path)}")
        try:
            with open(json_path) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            raise RunError(f"side {side.name.upper()}, block {block} run {k}: {json_path}: {e}") from None
        if not isinstance(doc, dict) or doc.get("result", {}).get("status") != "ok":
            raise RunError(f"side {side.name.upper()}, block {block} run {k}: {json_path} does not say "
                           f"status ok. The end of {log_path}:\n{tail(log_path)}")
        return doc


def tail(path):
    """The last lines of a run's log, indented."""
    try:
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()[-STDERR_TAIL_LINES:]
    except OSError:
        return "  (no log)"
    return "\n".join("  " + line for line in lines)
