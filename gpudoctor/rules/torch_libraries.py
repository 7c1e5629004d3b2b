"""torch's own CUDA libraries, judged like TensorFlow's: the sonames its shared objects link
(DT_NEEDED of torch/lib/libtorch_cuda.so and friends) joined with the copies the library search found
where torch's loader looks (the nvidia/*/lib wheel folders of its RUNPATH, torch/lib, LD_LIBRARY_PATH,
the ldconfig cache). A missing one is why `import torch` fails with "libcudnn.so.9: cannot open shared
object file"; this names the library and the wheel torch pins for it, not only the import failure.
"""

from __future__ import annotations

from typing import Dict, Iterable, List, Optional, Tuple

from .. import compat
from ..codes import make_finding
from ..facts import Facts
from ..facts.frameworks import FrameworkFacts, PinCheck, normalize_name
from ..model import Finding
from .base import Prior
from .framework_facts import cuda_builds, label
from .framework_libraries import missing_sonames
from .situation import any_gpu, pip

# library family -> the nvidia-* wheel that ships it (nvidia-<name>-cuXX); only used to find torch's pin
WHEEL_OF = {"cudart": "cuda-runtime", "cublas": "cublas", "cublasLt": "cublas", "cufft": "cufft", "curand": "curand",
            "cusolver": "cusolver", "cusparse": "cusparse", "cudnn": "cudnn", "nccl": "nccl", "nvrtc": "cuda-nvrtc",
            "nvJitLink": "nvjitlink"}


def _torch_builds(facts: Facts) -> List[FrameworkFacts]:
    searched = {lib.name for lib in facts.libraries.libraries}
    return [fw for fw in cuda_builds(facts) if fw.name == "torch"
            and any(n.source == "elf-needed" and n.library in searched for n in fw.static.sonames)]


def torch_sonames(facts: Facts, prior: Prior) -> Iterable[Finding]:
    if not any_gpu(facts) or not facts.libraries.search_dirs:
        return  # no GPU: nothing is loaded; no search ran: absence proves nothing
    searched = {lib.name for lib in facts.libraries.libraries}
    for fw in _torch_builds(facts):
        linked = [n for n in fw.static.sonames if n.source == "elf-needed" and n.library in searched]
        checked = FrameworkFacts(fw.name, fw.static.__class__(**{**fw.static.__dict__, "sonames": linked}), fw.live)
        for code, missing in missing_sonames(checked, facts).items():
            yield _finding(code, fw, facts, missing, {n.soname: n.library for n in linked})


def _finding(code: str, fw: FrameworkFacts, facts: Facts, missing: List[Tuple[str, List[str]]],
             family_of: Dict[str, str]) -> Finding:
    wanted = ", ".join(s for s, _ in missing)
    others = sorted({o for _, found in missing for o in found})
    where = "the nvidia/*/lib wheel folders and torch/lib (its RUNPATH), LD_LIBRARY_PATH and the ldconfig cache"
    detail = (f"{label(fw)} links {wanted} (DT_NEEDED of its torch/lib libraries), which no folder torch's loader "
              f"searches provides ({where})")
    detail += f"; only other versions are there: {', '.join(others)}." if others else "."
    detail += f" `import torch` fails with '{missing[0][0]}: cannot open shared object file'."
    return make_finding(code, detail, fix=torch_library_fix(fw, facts, [family_of[s] for s, _ in missing]),
                        evidence={"framework": fw.name, "version": fw.static.version,
                                  "needs": [s for s, _ in missing], "found": others})


def _pin_for(pins: List[PinCheck], family: str) -> Optional[PinCheck]:
    wheel = WHEEL_OF.get(family)
    if not wheel:
        return None
    return next((p for p in pins if normalize_name(p.package).startswith(f"nvidia-{wheel}-cu")), None)


def torch_library_fix(fw: FrameworkFacts, facts: Facts, families: List[str]) -> List[str]:
    """The wheels torch pins for these libraries, else reinstalling the torch build (its wheel brings them)."""
    pins = [p for p in facts.frameworks.pins if normalize_name(p.framework) == "torch" and p.extra is None]
    found = [p for p in (_pin_for(pins, f) for f in dict.fromkeys(families)) if p is not None]
    if found:
        return [f"{pip(facts)} install " + " ".join(f'"{p.package}{p.specifier}"' for p in found)
                + f"  # the versions {label(fw)} pins"]
    version = fw.static.version or ""
    release = compat.torch_release(version)
    variant = release.variant(version.partition("+")[2]) if release and "+" in version else None
    index = f" --index-url {variant.index_url}" if variant else ""
    return [f"{pip(facts)} install --force-reinstall {fw.static.distribution or 'torch'}=={version.split('+')[0]}{index}"
            "  # the torch wheel brings or pins its CUDA libraries"]


RULES = [torch_sonames]
