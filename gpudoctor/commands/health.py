"""`gpudoctor health [--drain]`: a node health check for Slurm's HealthCheckProgram or a job prolog.

One quick check (static facts, no framework import, no GPU operation: about a second, far inside
Slurm's 60-second limit for a health check), one line out, exit 0 or 1. With --drain, a node with
an error finding is drained through `scontrol` with a reason people read in `sinfo -R`.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
from typing import List, Optional

HELP = "one-line node health check for Slurm (HealthCheckProgram, prolog): OK or the root cause; exit 0 or 1"
PROBE_TIMEOUT_S = 5.0  # per probe; the quick pipeline waits at most 2 x 5 + 2 s, well inside 60 s
SCONTROL_TIMEOUT_S = 20.0


def register(subparsers: "argparse._SubParsersAction") -> None:
    parser = subparsers.add_parser(
        "health", help=HELP, description=HELP[0].upper() + HELP[1:] + ". Prints `OK`, or `CODE: title` of the root "
        "cause; warnings do not fail a node.")
    parser.add_argument("--drain", action="store_true",
                        help='on an error, run `scontrol update NodeName=$SLURMD_NODENAME State=DRAIN '
                             'Reason="gpudoctor: CODE"`')
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ..model import Severity
    from ..pipeline import CheckOptions, run_check

    report = run_check(CheckOptions(quick=True, timeout=PROBE_TIMEOUT_S))
    cause = next((f for f in report.findings if f.severity == Severity.ERROR and not f.caused_by),
                 next((f for f in report.findings if f.severity == Severity.ERROR), None))
    if cause is None:
        print("OK")
        return 0
    print(f"{cause.code}: {cause.title}")
    if args.drain:
        drain(cause.code)
    return 1


def drain(code: str) -> bool:
    """Drain this node in Slurm; on failure say why on stderr (the health line stays one line)."""
    node = os.environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]
    if not os.environ.get("SLURMD_NODENAME"):
        print(f"gpudoctor health: SLURMD_NODENAME is not set; draining node {node} (the host name)", file=sys.stderr)
    argv: List[str] = ["scontrol", "update", f"NodeName={node}", "State=DRAIN", f"Reason=gpudoctor: {code}"]
    error: Optional[str] = None
    try:
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                              timeout=SCONTROL_TIMEOUT_S, stdin=subprocess.DEVNULL)
        if proc.returncode != 0:
            error = (proc.stderr or proc.stdout).strip() or f"exit status {proc.returncode}"
    except FileNotFoundError:
        error = "scontrol is not on PATH"
    except subprocess.TimeoutExpired:
        error = f"scontrol did not answer within {SCONTROL_TIMEOUT_S:g} s"
    if error:
        print(f"gpudoctor health: could not drain {node}: {error}", file=sys.stderr)
        return False
    return True
