"""Runtime-test layer without any framework: a vector add through the CUDA driver API."""

from __future__ import annotations

import sys
from typing import List, Tuple

from ..facts.probe_status import ProbeStatus
from ..facts.runtime import DeviceOpResult, RuntimeTestFacts
from ..facts.serialize import from_json
from .context import ProbeContext
from .runner import ChildSpec, run_child

MAX_DEVICES = 8  # one context per GPU costs ~300 MB and ~0.2 s: enough to prove each one works


def probe_runtime_test(ctx: ProbeContext) -> Tuple[RuntimeTestFacts, List[ProbeStatus]]:
    if ctx.quick:
        return RuntimeTestFacts(ran=False, skipped_reason="--quick: no GPU operation"), []
    result = run_child(ChildSpec("runtime-test", "driver_api_test_child.py", sys.executable, ctx.env, ctx.timeout,
                                 args=(str(MAX_DEVICES),), python_flags=("-S", "-E")))
    rec = result.records
    devices = [from_json(DeviceOpResult, rec[k]) for k in sorted(rec) if k.startswith("device_") and k[7:].isdigit()]
    facts = RuntimeTestFacts(ran="device_count" in rec, skipped_reason=rec.get("skipped"), devices=devices)
    if result.ok:
        return facts, []
    error = result.error or result.status
    if result.status == "timeout" and rec.get("init_started") and "init_returned" not in rec:
        error = f"cuInit did not return within the timeout ({error})"
    elif devices and not devices[-1].ok:
        error = f"{error} while testing cuda:{devices[-1].ordinal} (step: {devices[-1].step})"
    return facts, [ProbeStatus("runtime-test", result.status, result.duration_s, error, result.stderr_tail)]
