"""The facts `gpudoctor gpus` needs, and only those: the NVML probe (with who holds each GPU)
and the same logical cuda:N mapping as `check`. No library scan, no framework, no libcuda."""

from __future__ import annotations

from typing import Mapping, Optional

from ..facts import Facts
from ..facts.driver import DriverFacts
from ..probes.assemble import physical_gpus, visibility
from ..probes.context import ProbeContext
from ..probes.nvml import probe_nvml

NVML_TIMEOUT_S = 10.0  # NVML answers in milliseconds; a hung driver must not hang a shell's eval


def collect_gpu_facts(env: Optional[Mapping[str, str]] = None, timeout: float = NVML_TIMEOUT_S) -> Facts:
    ctx = ProbeContext.from_environment(timeout=timeout, quick=True, env=env)
    nvml, statuses = probe_nvml(ctx)
    facts = Facts(driver=DriverFacts(nvml=nvml), probes=statuses)
    facts.gpus = physical_gpus(facts.driver)
    # No libcuda enumeration here: the mapping is parsed from CUDA_VISIBLE_DEVICES (as check does
    # when libcuda is unusable); with mixed models in FASTEST_FIRST order it is unknown, shown "?".
    facts.visible_devices = visibility(dict(ctx.env), facts.gpus, [], None)
    return facts


def nvml_problem(facts: Facts) -> Optional[str]:
    """Why there is no GPU list, in NVML's words; None when there is one."""
    nvml = facts.driver.nvml
    if nvml.initialized:
        return None if facts.gpus else "NVML lists no GPU"
    failed = next((s for s in facts.probes if s.status != "ok"), None)
    return nvml.error or (failed.error if failed is not None and failed.error else "NVML did not answer")
