"""GPU generations: what a GPU can never have, so that no fix asks for it.

A Kepler GPU's last driver branch is R470 and its last toolkit CUDA 11.x (NVIDIA's architecture
matrix, compat/gpu_generations.toml): "upgrade the driver to 525" cannot be carried out on a Tesla K80,
and no CUDA 12 build has kernels for it. Pure helpers over facts and the compat tables.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

from .. import compat
from ..facts import Facts
from ..facts.driver import NvmlGpu


def gpu_ceilings(facts: Facts) -> List[Tuple[NvmlGpu, compat.GpuCeiling]]:
    """Each GPU whose architecture NVIDIA has retired, with how far its driver and CUDA can go."""
    out = []
    for gpu in facts.gpus:
        try:
            ceiling = compat.gpu_ceiling(gpu.compute_capability) if gpu.compute_capability else None
        except compat.CompatDataError:
            ceiling = None
        if ceiling is not None and ceiling.retired:
            out.append((gpu, ceiling))
    return out


def gpus_left_behind(facts: Facts, driver: Optional[str]) -> List[Tuple[NvmlGpu, compat.GpuCeiling]]:
    """The GPUs that a driver of `driver`'s branch would no longer support."""
    if not driver:
        return []
    return [(g, c) for g, c in gpu_ceilings(facts)
            if c.last_driver_branch is not None and not compat.driver_branch_fits(driver, c.last_driver_branch)]


def ceiling_text(gpu: NvmlGpu, ceiling: compat.GpuCeiling) -> str:
    """'Tesla K80 (Kepler, compute capability 3.7): its last driver branch is R470 (CUDA 11.x ...)'."""
    cuda = f"CUDA {ceiling.last_cuda_major}.x" if ceiling.last_cuda_major is not None else "its CUDA"
    if ceiling.newest_cuda_full:
        cuda += f"; CUDA {ceiling.newest_cuda_full} with every feature"
    return (f"{gpu.name or 'the GPU'} ({ceiling.architecture}, compute capability "
            f"{gpu.compute_capability}): its last driver branch is R{ceiling.last_driver_branch} ({cuda})")


def _unique(texts: List[str]) -> str:
    """Identical GPUs (a K80 board is two) are described once."""
    return "; ".join(dict.fromkeys(texts))


def driver_upgrade_steps(facts: Facts, needed_driver: Optional[str], step: str) -> List[str]:
    """`step` (an "upgrade the driver" fix) unless a GPU here cannot take that driver; then the honest
    statement instead, so no fix asks for a driver the GPU cannot run."""
    blocked = gpus_left_behind(facts, needed_driver)
    if not blocked:
        return [step]
    return ["Do not upgrade the driver for this: " + _unique([ceiling_text(g, c) for g, c in blocked])
            + f". Driver {needed_driver} would not support it."]


def build_blocked_on(facts: Facts, cuda: Optional[str]) -> List[Tuple[NvmlGpu, compat.GpuCeiling]]:
    """The GPUs for which a build for CUDA `cuda` can have no kernels at all (its toolkit no longer
    builds for their architecture)."""
    if not cuda or not compat.versions.is_dotted(cuda):
        return []
    out = []
    for gpu in facts.gpus:
        try:
            if gpu.compute_capability and compat.cuda_runs_on_gpu(cuda, gpu.compute_capability) is False:
                out.append((gpu, compat.gpu_ceiling(gpu.compute_capability)))
        except compat.CompatDataError:
            continue
    return out


def runtime_beyond_gpus(facts: Facts, runtime: str) -> str:
    """Why no driver can run a CUDA `runtime` ("13.x", "12.4") on the retired GPUs here ('' if it can)."""
    parts = runtime.split(".")
    if not parts[0].isdigit():
        return ""
    blocked = []
    for gpu, ceiling in gpu_ceilings(facts):
        top = ceiling.newest_cuda
        if top is None:
            continue
        top_key = tuple(int(p) for p in top.split("."))
        want = (int(parts[0]), int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0)
        if want > top_key:
            blocked.append(ceiling_text(gpu, ceiling) + f", so CUDA {top} at most")
    return _unique(blocked)


def wheel_of_blocked_build(facts: Facts, copy, cuda_major: int) -> bool:
    """Is this library copy a pip wheel of a CUDA major that an installed framework build needs, where
    that build can have no kernels for any GPU here (a cu121 torch's libcudart.so.12 on a Tesla K80)?
    Then the framework build is the cause, and the wheel goes with it."""
    if "site-packages" not in copy.found_via or not facts.gpus:
        return False
    for fw in facts.frameworks.frameworks.values():
        cuda = fw.static.cuda_version or ""
        if fw.static.build == "cuda" and cuda.split(".")[0] == str(cuda_major) \
                and len(build_blocked_on(facts, cuda)) == len(facts.gpus):
            return True
    return False


def wheels_of_major(facts: Facts, cuda_major: str) -> List[str]:
    """The nvidia-*-cuNN wheels of one CUDA major installed here (what a CUDA build of a framework pulled in)."""
    return sorted({d.name for d in facts.frameworks.distributions
                   if d.key.startswith("nvidia-") and d.key.endswith(f"-cu{cuda_major}")})
