"""User-space driver layer, part 2: NVML (driver version, GPUs, memory, processes) in a child."""

from __future__ import annotations

import sys
from typing import List, Tuple

from ..facts.driver import NvmlFacts, NvmlGpu
from ..facts.probe_status import ProbeStatus
from ..facts.serialize import from_json
from .context import ProbeContext
from .cuda_driver import statuses_of
from .processes import describe_processes
from .runner import ChildResult, ChildSpec, run_child


def probe_nvml(ctx: ProbeContext) -> Tuple[NvmlFacts, List[ProbeStatus]]:
    # No -S: pynvml lives in gpudoctor's site-packages.
    result = run_child(ChildSpec("nvml", "nvml_child.py", sys.executable, ctx.env, ctx.timeout, python_flags=("-E",)))
    facts = facts_from_records(result)
    describe_processes(ctx, facts.gpus)  # here, not in the child: /proc is read through the sysroot
    return facts, statuses_of(result, "nvmlInit")


def facts_from_records(result: ChildResult) -> NvmlFacts:
    rec = result.records
    count = rec.get("gpu_count")
    indices = range(count) if isinstance(count, int) else sorted(
        int(k[4:]) for k in rec if k.startswith("gpu_") and k[4:].isdigit())
    gpus = [from_json(NvmlGpu, rec[f"gpu_{i}"]) for i in indices if f"gpu_{i}" in rec]
    return NvmlFacts(initialized=bool(rec.get("initialized")), error=rec.get("error"),
                     driver_version=rec.get("driver_version"), cuda_driver_version=rec.get("cuda_driver_version"),
                     gpus=gpus)
