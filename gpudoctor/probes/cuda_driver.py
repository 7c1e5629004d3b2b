"""User-space driver layer, part 1: libcuda.so.1 (cuInit, driver version, devices) in a child."""

from __future__ import annotations

import sys
from typing import List, Tuple

from ..facts.driver import CudaDevice, CudaDriverFacts
from ..facts.probe_status import ProbeStatus
from ..facts.serialize import from_json
from .context import ProbeContext
from .runner import ChildResult, ChildSpec, run_child


def probe_cuda_driver(ctx: ProbeContext) -> Tuple[CudaDriverFacts, List[ProbeStatus]]:
    # gpudoctor's own interpreter: loading libcuda does not depend on the target environment,
    # but the user's variables (LD_LIBRARY_PATH, CUDA_VISIBLE_DEVICES) do matter, so ctx.env.
    result = run_child(ChildSpec("cuda-driver", "cuda_driver_child.py", sys.executable, ctx.env,
                                 ctx.timeout, python_flags=("-S", "-E")))
    return facts_from_records(result), statuses_of(result, "cuInit")


def facts_from_records(result: ChildResult) -> CudaDriverFacts:
    rec = result.records
    facts = CudaDriverFacts(loaded="path" in rec or "driver_version" in rec, path=rec.get("path"),
                            load_error=rec.get("load_error"), driver_version=rec.get("driver_version"),
                            device_count=rec.get("device_count"))
    init = rec.get("init") or {}
    facts.init_result = init.get("result")
    facts.init_error_name = init.get("name")
    facts.init_error_string = init.get("string")
    facts.devices = [from_json(CudaDevice, d) for d in rec.get("devices") or []]
    return facts


def statuses_of(result: ChildResult, hung_step: str) -> List[ProbeStatus]:
    if result.ok:
        return []
    error = result.error or result.status
    if result.status == "timeout" and result.records.get("init_started") and "init" not in result.records:
        error = f"{hung_step} did not return within the timeout ({error})"
    return [ProbeStatus(result.name, result.status, result.duration_s, error, result.stderr_tail)]
