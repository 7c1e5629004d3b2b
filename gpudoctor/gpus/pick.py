"""Pick the N GPUs with the most free memory, for `gpudoctor gpus --pick` and `gpudoctor.pick_gpus`.

The choice is written as nvidia-smi indices with CUDA_DEVICE_ORDER=PCI_BUS_ID: CUDA's default
order (FASTEST_FIRST) may number GPUs differently from nvidia-smi, PCI_BUS_ID never does. UUIDs
need no order. Nothing heavy is imported at module level: gpudoctor/__init__.py imports this.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Dict, List, Mapping, Optional, Sequence

if TYPE_CHECKING:
    from ..facts.driver import NvmlGpu

MIB = 1024 * 1024
# Import names whose import may start CUDA (or fix the device list): after one, it is too late.
FRAMEWORK_MODULES = ("torch", "tensorflow", "jax", "jaxlib", "cupy", "numba.cuda", "paddle")


class GpuPickError(RuntimeError):
    """Not enough GPUs qualify, NVML cannot list them, or a framework was imported first."""


def choose(gpus: Sequence["NvmlGpu"], n: int, min_free_mib: int = 0) -> List["NvmlGpu"]:
    """The n GPUs with the most free memory (at least min_free_mib), most free first; ties keep
    nvidia-smi order. Fewer than n when fewer qualify; a GPU whose free memory is unknown never does,
    nor one in MIG mode (programs use its MIG devices, by MIG- UUID, never the whole GPU)."""
    qualified = [g for g in gpus if g.memory_free is not None and g.memory_free >= min_free_mib * MIB
                 and g.mig_mode is not True]
    return sorted(qualified, key=lambda g: (-(g.memory_free or 0), g.index))[:n]


def exports_for(chosen: Sequence["NvmlGpu"], uuid: bool = False) -> Dict[str, str]:
    """The variables that make CUDA programs see exactly `chosen`, in that order."""
    if uuid:
        return {"CUDA_VISIBLE_DEVICES": ",".join(g.uuid or "" for g in chosen)}
    return {"CUDA_DEVICE_ORDER": "PCI_BUS_ID", "CUDA_VISIBLE_DEVICES": ",".join(str(g.index) for g in chosen)}


def shortfall_message(gpus: Sequence["NvmlGpu"], chosen: Sequence["NvmlGpu"], n: int, min_free_mib: int) -> str:
    need = f" with at least {min_free_mib} MiB free" if min_free_mib else ""
    free = ", ".join(f"GPU {g.index} {(g.memory_free or 0) // MIB} MiB" if g.memory_free is not None
                     else f"GPU {g.index} unknown" for g in gpus)
    return (f"only {len(chosen)} of the {len(gpus)} GPU(s) qualify, {n} wanted{need}"
            + (f" (free memory: {free})" if gpus else ""))


def imported_frameworks(modules: Optional[Mapping[str, object]] = None) -> List[str]:
    modules = sys.modules if modules is None else modules
    return [name for name in FRAMEWORK_MODULES if name in modules]


def pick_gpus(n: int, min_free_mib: int = 0, uuid: bool = False) -> List[int]:
    """Make this process (and its children) use the n GPUs with the most free memory.

    Call it before importing torch, TensorFlow or JAX: it sets CUDA_VISIBLE_DEVICES (and
    CUDA_DEVICE_ORDER=PCI_BUS_ID) in os.environ, which CUDA reads once, when it starts.
    Returns the chosen nvidia-smi indices, most free first. Raises GpuPickError when a framework
    is already imported, NVML cannot list the GPUs, or fewer than n GPUs qualify.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"pick_gpus: n must be a positive whole number, not {n!r}")
    if not isinstance(min_free_mib, int) or min_free_mib < 0:
        raise ValueError(f"pick_gpus: min_free_mib must be a whole number of MiB >= 0, not {min_free_mib!r}")
    early = imported_frameworks()
    if early:
        raise GpuPickError(f"pick_gpus() must run before {', '.join(early)} is imported: CUDA reads "
                           "CUDA_VISIBLE_DEVICES once, when it starts, so the GPU choice can no longer change. "
                           "Call gpudoctor.pick_gpus() first thing in your script.")
    from .collect import collect_gpu_facts, nvml_problem

    facts = collect_gpu_facts()
    problem = nvml_problem(facts)
    if problem:
        raise GpuPickError(f"pick_gpus: cannot list the GPUs: {problem}. `gpudoctor check` says why.")
    chosen = choose(facts.gpus, n, min_free_mib)
    if len(chosen) < n:
        raise GpuPickError("pick_gpus: " + shortfall_message(facts.gpus, chosen, n, min_free_mib))
    os.environ.update(exports_for(chosen, uuid))
    return [g.index for g in chosen]
