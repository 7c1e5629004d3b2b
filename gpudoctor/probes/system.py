"""The machine (OS, kernel, container, WSL2) and the target interpreter (pip vs conda fixes)."""

from __future__ import annotations

import os
import platform
import socket
import sys
from typing import List, Optional, Tuple

from ..facts.probe_status import ProbeStatus
from ..facts.system import SystemFacts
from .context import ProbeContext
from .files import read_text
from .runner import ChildSpec, run_child

_CONTAINER_CGROUP_MARKERS = ("docker", "kubepods", "containerd", "libpod", "lxc", "/ecs/")


def probe_system(ctx: ProbeContext) -> Tuple[SystemFacts, List[ProbeStatus]]:
    uname = platform.uname()
    facts = SystemFacts(os=uname.system, kernel_release=uname.release, machine=uname.machine,
                        distro=_distro(), hostname=socket.gethostname(), python_executable=ctx.python,
                        gpudoctor_python=sys.executable)
    proc_version = read_text(ctx.host_path("/proc/version")) or ""
    # WSL2 kernels are named like 5.15.153.1-microsoft-standard-WSL2.
    facts.wsl = "microsoft" in proc_version.lower() or os.path.exists(ctx.host_path("/dev/dxg"))
    facts.container_evidence = _container_evidence(ctx)
    facts.in_container = bool(facts.container_evidence)
    statuses = _describe_interpreter(ctx, facts)
    return facts, statuses


def _distro() -> Optional[str]:
    for line in (read_text("/etc/os-release") or "").splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip().strip('"')
    return None


def _container_evidence(ctx: ProbeContext) -> List[str]:
    evidence = []
    for marker in ("/.dockerenv", "/run/.containerenv"):
        if os.path.exists(ctx.host_path(marker)):
            evidence.append(marker)
    for line in (read_text(ctx.host_path("/proc/1/cgroup")) or "").splitlines():
        if any(m in line for m in _CONTAINER_CGROUP_MARKERS):
            evidence.append(f"/proc/1/cgroup: {line.strip()[:120]}")
            break
    if ctx.env.get("container"):
        evidence.append(f"container={ctx.env['container']}")
    if ctx.env.get("KUBERNETES_SERVICE_HOST"):  # set in every pod's containers
        evidence.append("KUBERNETES_SERVICE_HOST set")
    return evidence


def _describe_interpreter(ctx: ProbeContext, facts: SystemFacts) -> List[ProbeStatus]:
    result = run_child(ChildSpec("interpreter", "interpreter_child.py", ctx.python, ctx.env,
                                 min(ctx.timeout, 10.0), python_flags=("-E", "-s")))
    rec = result.records
    facts.python_version = rec.get("python_version")
    prefix = rec.get("prefix")
    if rec.get("conda_env"):
        facts.env_kind, facts.conda_prefix = "conda", prefix
    elif prefix and prefix != rec.get("base_prefix"):
        facts.env_kind, facts.virtual_env = "venv", prefix
    if result.ok:
        return []
    return [ProbeStatus("interpreter", result.status, result.duration_s,
                        result.error or "the target interpreter did not describe itself", result.stderr_tail)]
