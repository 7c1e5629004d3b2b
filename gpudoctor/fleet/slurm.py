"""`fleet slurm`: one `gpudoctor check --json` per node through `srun --ntasks-per-node=1`.

How the reports come back without breaking each other: framed standard output. srun --label
prefixes every line with its task number, and each task prints its node's name
(`SLURMD_NODENAME`, not the host name, which repeats with several slurmd per host), its exit
status, then its report in base64 lines between markers. So the lines of several tasks may
interleave freely, the labels sort them back, and a line that srun splits or a task killed
mid-report cannot corrupt another node's JSON: base64 ignores line breaks, and a report that does
not decode is that node's error. Unlike files in a shared folder or `srun --output`, this needs no
file system shared by the nodes (/tmp is node-local on most clusters).
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import queue
import re
import shlex
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Optional, Sequence

from .aggregate import NodeAnswer
from .node_check import TIMED_OUT, check_argv, failed_error, missing_error, startup_allowance, timeout_error

MARK = "@@gpudoctor-fleet"
_LABELED = re.compile(r"^\s*(\d+): ?(.*)$")
_LAUNCHING = re.compile(r"launching \S+ on host (\S+), \d+ tasks?: ([\d,\-]+)")


class SlurmUsageError(Exception):
    """srun is missing, or refused the arguments before any task ran."""


def node_script(quick: bool, node_timeout: float) -> str:
    """The POSIX sh each task runs. Every outcome, even gpudoctor missing, ends in framed lines."""
    check = " ".join(shlex.quote(a) for a in check_argv(quick, node_timeout))
    return f"""node="${{SLURMD_NODENAME:-$(hostname)}}"
echo "{MARK} node $node"
if ! command -v gpudoctor >/dev/null 2>&1; then echo "{MARK} missing"; exit 0; fi
limit=""; command -v timeout >/dev/null 2>&1 && limit="timeout -k 2 {node_timeout:g}"
err=$(mktemp 2>/dev/null || echo /dev/null)
out=$($limit {check} 2>"$err"); rc=$?
echo "{MARK} exit $rc"
echo "{MARK} report"; printf '%s\\n' "$out" | base64
echo "{MARK} stderr"; tail -c 600 "$err" 2>/dev/null | base64
[ "$err" != /dev/null ] && rm -f "$err"
echo "{MARK} end"
exit 0
"""


def srun_argv(srun_args: Sequence[str], quick: bool, node_timeout: float) -> List[str]:
    return (["srun", "--ntasks-per-node=1", "--label", "--verbose", "--kill-on-bad-exit=0"] + list(srun_args) +
            ["sh", "-c", node_script(quick, node_timeout)])


@dataclass
class _Task:
    node: Optional[str] = None
    status: Optional[int] = None
    missing: bool = False
    section: str = ""
    parts: Dict[str, List[str]] = field(default_factory=lambda: {"report": [], "stderr": []})
    done: bool = False


class FramedOutput:
    """Sorts srun --label lines into tasks; hands back each node's answer when its frame ends."""

    def __init__(self, node_timeout: float):
        self.tasks: Dict[int, _Task] = {}
        self.node_timeout = node_timeout

    def feed(self, line: str) -> Optional[NodeAnswer]:
        m = _LABELED.match(line.rstrip("\n"))
        if not m:
            return None
        task = self.tasks.setdefault(int(m.group(1)), _Task())
        text = m.group(2)
        if not text.startswith(MARK):
            if task.section in task.parts:
                task.parts[task.section].append(text)
            return None
        word, _, rest = text[len(MARK):].strip().partition(" ")
        if word == "node":
            task.node = rest.strip()
        elif word == "missing":
            task.missing, task.done = True, True
            return NodeAnswer(self.name(int(m.group(1))), error=missing_error())
        elif word == "exit":
            task.status = int(rest) if rest.strip().isdigit() else None
        elif word in task.parts:
            task.section = word
        elif word == "end":
            task.done = True
            return self._answer(int(m.group(1)), task)
        return None

    def name(self, index: int, hosts: Optional[Dict[int, str]] = None) -> str:
        task = self.tasks.get(index)
        return (task and task.node) or (hosts or {}).get(index) or f"task {index}"

    def _answer(self, index: int, task: _Task) -> NodeAnswer:
        name = self.name(index)
        stderr = _decode(task.parts["stderr"]) or ""
        if task.status in TIMED_OUT:
            return NodeAnswer(name, error=timeout_error(self.node_timeout))
        error = failed_error(task.status if task.status is not None else -1, stderr)
        if error:
            return NodeAnswer(name, error=error)
        text = _decode(task.parts["report"])
        try:
            report = json.loads(text or "")
        except ValueError:
            return NodeAnswer(name, error="its report arrived damaged (not valid JSON after decoding)")
        return NodeAnswer(name, report if isinstance(report, dict) else None,
                          None if isinstance(report, dict) else "its report is not a JSON object")


def _decode(lines: List[str]) -> Optional[str]:
    try:
        return base64.b64decode("".join(lines).replace(" ", ""), validate=True).decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return None


def task_hosts(srun_stderr: str) -> Dict[int, str]:
    """task number -> node, from srun --verbose's "launching StepId=... on host node1, 1 tasks: 0"."""
    hosts: Dict[int, str] = {}
    for host, tasks in _LAUNCHING.findall(srun_stderr):
        for part in tasks.split(","):
            lo, _, hi = part.partition("-")
            for i in range(int(lo), int(hi or lo) + 1):
                hosts[i] = host
    return hosts


def run_slurm(srun_args: Sequence[str], quick: bool, node_timeout: float, notes: List[str]) -> Iterator[NodeAnswer]:
    """Yield one answer per node as its frame completes; after the deadline, the nodes still silent."""
    if not shutil.which("srun"):
        raise SlurmUsageError("srun is not on PATH: run `gpudoctor fleet slurm` on a Slurm login node "
                              "(or inside an allocation)")
    proc = subprocess.Popen(srun_argv(srun_args, quick, node_timeout), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, errors="replace",
                            start_new_session=True)
    answers: "queue.Queue[Optional[NodeAnswer]]" = queue.Queue()
    framed = FramedOutput(node_timeout)
    stderr_lines: List[str] = []

    def read_stdout() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            answer = framed.feed(line)
            if answer:
                answers.put(answer)
        answers.put(None)

    def read_stderr() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            if len(stderr_lines) < 5000:
                stderr_lines.append(line)

    readers = [threading.Thread(target=f, daemon=True) for f in (read_stdout, read_stderr)]
    for t in readers:
        t.start()
    try:
        yield from _collect(proc, answers, framed, stderr_lines, readers, srun_args, node_timeout, notes)
    finally:  # also when the caller stops early (Ctrl-C): no srun left running
        if proc.poll() is None:
            _stop(proc)
        for t in readers:
            t.join(2)


def _collect(proc: subprocess.Popen, answers: "queue.Queue[Optional[NodeAnswer]]", framed: FramedOutput,
             stderr_lines: List[str], readers: List[threading.Thread], srun_args: Sequence[str],
             node_timeout: float, notes: List[str]) -> Iterator[NodeAnswer]:
    """The answers as they come, then after srun ends (or is stopped at the deadline) the tasks
    that never finished their frame, and the nodes srun was waiting for if it started none."""
    allowed = node_timeout + startup_allowance(node_timeout)
    deadline = time.monotonic() + allowed
    timed_out = False
    while True:
        try:
            answer = answers.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            timed_out = True
            _stop(proc)
            break
        if answer is None:
            break
        yield answer
    proc.wait()
    for t in readers:  # srun's last stderr lines say which node ran which task
        t.join(2)
    hosts = task_hosts("".join(stderr_lines))
    for index in sorted(set(hosts) | set(framed.tasks)):
        task = framed.tasks.get(index)
        if task is None or not task.done:
            why = (timeout_error(node_timeout) + ", srun stopped") if timed_out else "its task ended without a report"
            yield NodeAnswer(framed.name(index, hosts), error=why)
    problems = [ln.strip() for ln in stderr_lines if ": error:" in ln or "Unable to" in ln]
    if framed.tasks or hosts:
        notes.extend(problems[:10])
        return
    message = (problems or [ln.strip() for ln in stderr_lines[-3:]] or ["no output"])[-1]
    if not timed_out:
        raise SlurmUsageError(f"srun ran no task (exit status {proc.returncode}): {message}")
    notes.append(f"srun started no task within {allowed:g} s: {message}")
    yield from unavailable_nodes(srun_args)


_UNAVAILABLE = ("down", "drain", "drng", "fail", "maint", "unk", "no_respond", "npc", "inval")


def unavailable_nodes(srun_args: Sequence[str]) -> Iterator[NodeAnswer]:
    """When srun could not start (it waits for nodes that are down or drained), name those nodes,
    within the nodes or partition that SRUN_ARGS select, with Slurm's state and reason."""
    selection = _selection(srun_args)
    try:
        out = subprocess.run(["sinfo", "-h", "-N", "-o", "%N|%T|%E"] + selection, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, universal_newlines=True,
                             timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired):
        return
    seen = set()
    for line in out.splitlines():
        node, _, rest = line.partition("|")
        state, _, reason = rest.partition("|")
        if node not in seen and any(word in state.lower() for word in _UNAVAILABLE):
            seen.add(node)
            why = f"; reason: {reason}" if reason and reason != "none" else ""
            yield NodeAnswer(node, error=f"not available in Slurm (state {state.lower()}{why})")


def _selection(srun_args: Sequence[str]) -> List[str]:
    """sinfo options for the nodes (-w) and partition (-p) that srun was asked for."""
    out: List[str] = []
    args = list(srun_args)
    for i, arg in enumerate(args):
        for short, long_, sinfo in (("-w", "--nodelist", "-n"), ("-p", "--partition", "-p")):
            if arg in (short, long_) and i + 1 < len(args):
                out += [sinfo, args[i + 1]]
            elif arg.startswith(long_ + "="):
                out += [sinfo, arg.split("=", 1)[1]]
            elif arg.startswith(short) and len(arg) > 2 and arg[:2] == short:
                out += [sinfo, arg[2:]]
    return out


def _stop(proc: subprocess.Popen) -> None:
    """Like pressing Ctrl-C twice: srun cancels the step on the nodes; then make sure it is gone."""
    try:
        os.killpg(proc.pid, signal.SIGINT)
        time.sleep(0.3)
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(5)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
