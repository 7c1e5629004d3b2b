"""Memory at start-up: a framework's preallocation against the memory the GPUs actually have free.

JAX reserves a fraction of each visible GPU's TOTAL memory at its first operation (75% unless
XLA_PYTHON_CLIENT_PREALLOCATE=false or XLA_CLIENT_MEM_FRACTION / the older
XLA_PYTHON_CLIENT_MEM_FRACTION say otherwise; https://docs.jax.dev/en/latest/gpu_memory_allocation.html,
and since jaxlib 0.4.1 of the total, not the free memory). When other processes hold more than the
rest, start-up fails with RESOURCE_EXHAUSTED although the GPU is far from "full".
"""

from __future__ import annotations

import math
from typing import Dict, Iterable, List, Optional, Tuple

from ..codes import make_finding
from ..facts import Facts
from ..facts.driver import NvmlGpu
from ..model import Finding
from .base import Prior, Rule
from .libraries import _xla_users
from .situation import mib

JAX_DEFAULT_FRACTION = 0.75
FRACTION_VARIABLES = ("XLA_CLIENT_MEM_FRACTION", "XLA_PYTHON_CLIENT_MEM_FRACTION")  # new name first
HEADROOM = 0.05  # left for the cuDNN/cuBLAS handles and the CUDA context when a fraction is suggested


def _jax_fraction(env: Dict[str, str]) -> Tuple[Optional[float], Optional[str]]:
    """(fraction JAX will reserve, or None when it does not preallocate; the variable that set it)."""
    if env.get("XLA_PYTHON_CLIENT_PREALLOCATE", "").strip().lower() in ("false", "0"):
        return None, "XLA_PYTHON_CLIENT_PREALLOCATE"
    if env.get("XLA_PYTHON_CLIENT_ALLOCATOR", "").strip().lower() == "platform":
        return None, "XLA_PYTHON_CLIENT_ALLOCATOR"
    for name in FRACTION_VARIABLES:
        if env.get(name):
            try:
                value = float(env[name])
            except ValueError:
                return JAX_DEFAULT_FRACTION, None  # not a number: judged by jax itself, not guessed here
            return (value, name) if 0.0 < value <= 1.0 else (JAX_DEFAULT_FRACTION, None)
    return JAX_DEFAULT_FRACTION, None


def _visible_gpus(facts: Facts) -> List[NvmlGpu]:
    mapped = [m.physical_index for m in facts.visible_devices.mapping if m.physical_index is not None]
    if facts.visible_devices.mapping:
        return [g for g in facts.gpus if g.index in mapped]
    return [] if facts.visible_devices.hides_all else list(facts.gpus)


def jax_preallocation_exceeds_free(facts: Facts, prior: Prior) -> Iterable[Finding]:
    users = _xla_users(facts)
    if not users:
        return
    fraction, set_by = _jax_fraction(facts.environment.variables)
    if fraction is None:
        return
    short = [g for g in _visible_gpus(facts) if g.memory_total and g.memory_free is not None
             and fraction * g.memory_total > g.memory_free]
    if not short:
        return
    tightest = min(g.memory_free / g.memory_total for g in short if g.memory_total)
    suggested = math.floor((tightest - HEADROOM) * 100) / 100
    roomy = [g for g in _visible_gpus(facts) if g not in short]
    fix = ["export XLA_PYTHON_CLIENT_PREALLOCATE=false"]
    if suggested >= 0.05:
        fix.append(f"or export XLA_PYTHON_CLIENT_MEM_FRACTION={suggested:.2f}")
    if roomy:
        fix.append(f"or use the GPUs that have room: export CUDA_VISIBLE_DEVICES={','.join(g.uuid or str(g.index) for g in roomy)}")
    lines = [f"GPU {g.index} ({g.name or 'unknown model'}): {mib(g.memory_free)} free of {mib(g.memory_total)}"
             for g in short]
    yield make_finding(
        "gpu-memory-preallocated",
        f"{', '.join(users)} is installed: JAX reserves {fraction:.0%} of each GPU's total memory at its first "
        f"operation{' (' + set_by + ')' if set_by else ' (the default)'}, more than is free on "
        f"{'; '.join(lines)}. Start-up will fail with RESOURCE_EXHAUSTED / out of memory.",
        evidence={"fraction": fraction, "set_by": set_by, "gpus": [g.index for g in short],
                  "free_mib": {str(g.index): (g.memory_free or 0) // (1 << 20) for g in short}},
        fix=fix,
        caused_by="gpu-memory-full" if prior.has("gpu-memory-full") else None)


RULES: List[Rule] = [jax_preallocation_exceeds_free]
