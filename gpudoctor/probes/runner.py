"""Run probe scripts in child processes: parallel, with a timeout, and never fatal.

A segfault, a hang or an import error in a driver library or a framework becomes a
`ChildResult` with a status; whatever facts the child emitted before that are kept.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

CHILDREN_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "children")
STDERR_TAIL_CHARS = 4000
DRAIN_SECONDS = 2.0  # after a kill, for the output already written


@dataclass
class ChildSpec:
    name: str  # e.g. "cuda-driver": names the probe in findings ("probe-timeout: cuda-driver")
    script: str  # file name under probes/children
    python: str
    env: Mapping[str, str]
    timeout: float
    args: Sequence[str] = ()
    python_flags: Sequence[str] = ()  # e.g. ("-S", "-E") for stdlib-only native probes: faster start


@dataclass
class ChildResult:
    name: str
    status: str  # ok | timeout | crashed | failed | not-started
    records: Dict[str, Any] = field(default_factory=dict)
    returncode: Optional[int] = None
    signal: Optional[str] = None
    stderr_tail: str = ""
    duration_s: float = 0.0
    error: Optional[str] = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def parse_records(stdout: str) -> Dict[str, Any]:
    records: Dict[str, Any] = {}
    for line in stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            records.update(obj)
    return records


def _signal_name(returncode: int) -> Optional[str]:
    if returncode >= 0:
        return None
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def _decode(data: Optional[bytes]) -> str:
    return (data or b"").decode("utf-8", errors="replace")


def _kill_group(proc: "subprocess.Popen[bytes]") -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the child's own children too (e.g. a framework's workers)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def _drain_after_kill(proc: "subprocess.Popen[bytes]") -> Tuple[bytes, bytes]:
    """What the killed child wrote. A grandchild that left the process group (a daemon) may hold
    the pipes open forever: then give up on the rest of the output rather than wait."""
    try:
        return proc.communicate(timeout=DRAIN_SECONDS)
    except subprocess.TimeoutExpired:
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
        proc.wait()
        return b"", b""


def run_child(spec: ChildSpec) -> ChildResult:
    script = os.path.join(CHILDREN_DIR, spec.script)
    cmd = [spec.python, *spec.python_flags, script, *spec.args]
    started = time.monotonic()
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=dict(spec.env), start_new_session=True)
    except OSError as exc:
        return ChildResult(spec.name, "not-started", error=f"cannot run {spec.python}: {exc}")
    try:
        out, err = proc.communicate(timeout=spec.timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, err = _drain_after_kill(proc)
        timed_out = True
    duration = time.monotonic() - started
    result = ChildResult(spec.name, "ok", parse_records(_decode(out)), proc.returncode,
                         _signal_name(proc.returncode), _decode(err)[-STDERR_TAIL_CHARS:], round(duration, 3))
    if timed_out:
        result.status, result.signal = "timeout", None
        result.error = f"no answer within {spec.timeout:g} s"
    elif result.signal:
        result.status, result.error = "crashed", f"killed by {result.signal}"
    elif proc.returncode != 0:
        result.status, result.error = "failed", f"exited with status {proc.returncode}"
    return result


def run_children(specs: List[ChildSpec]) -> Dict[str, ChildResult]:
    """Run all specs at once; the slowest child bounds the wall time."""
    if not specs:
        return {}
    with ThreadPoolExecutor(max_workers=len(specs)) as pool:
        results = list(pool.map(run_child, specs))
    return {r.name: r for r in results}
