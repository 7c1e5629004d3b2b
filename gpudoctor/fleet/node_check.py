"""What every engine runs on a node: `gpudoctor check --json`, bounded, and how to read its outcome.

Shared by the Slurm script (which runs it through `sh`) and the Ray task (which runs it through
`subprocess`), so that both name the same failures the same way.
"""

from __future__ import annotations

from typing import List, Optional

# check's own per-probe timeout, chosen so that even a hung probe leaves time for the report to
# come out before the node's whole budget is spent (the pipeline waits at most 2 x timeout + 2 s).
_DEFAULT_PROBE_TIMEOUT = {True: 5.0, False: 30.0}
TIMED_OUT = (124, 137)  # coreutils `timeout`: the command was stopped (TERM, then KILL)


def startup_allowance(node_timeout: float) -> float:
    """Time the engine gets to start the tasks (allocation, a worker process per node) on top of
    --timeout before silent nodes are given up on: as long as --timeout, between 5 and 30 s."""
    return min(30.0, max(5.0, node_timeout))


def check_argv(quick: bool, node_timeout: float) -> List[str]:
    probe_timeout = max(1.0, min(_DEFAULT_PROBE_TIMEOUT[quick], (node_timeout - 3.0) / 2.0))
    return ["gpudoctor", "check", "--json"] + (["--quick"] if quick else []) + ["--timeout", f"{probe_timeout:g}"]


def missing_error() -> str:
    return "gpudoctor is not installed on this node (not on the PATH of its tasks)"


def timeout_error(node_timeout: float) -> str:
    return f"no answer within {node_timeout:g} s (--timeout)"


def failed_error(status: int, stderr: str) -> Optional[str]:
    """Why a finished `check --json` gave no report (None: its exit status carries a report)."""
    if status in (0, 1):
        return None
    last = (stderr.strip().splitlines() or [""])[-1][:300]
    return f"gpudoctor check failed with exit status {status}" + (f": {last}" if last else "")
