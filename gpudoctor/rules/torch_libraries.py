"""torch's own CUDA libraries, judged like TensorFlow's: the sonames its shared objects link
(DT_NEEDED of torch/lib/libtorch_cuda.so and friends) joined with the copies the library search found
where torch's loader looks (the nvidia/*/lib wheel folders of its RUNPATH, torch/lib, LD_LIBRARY_PATH,
the ldconfig cache). A missing one is why `import torch` fails with "libcudnn.so.9: cannot open shared
object file"; this names the library and the wheel torch pins for it, not only the import failure.
"""

from __future__ import annotations

import os
from typing import Dict, Iterable, List, Optional, Tuple

from .. import compat
from ..codes import make_finding
from ..facts import Facts
from ..facts.frameworks import FrameworkFacts, PinCheck, normalize_name
from ..facts.libraries import LibraryCopy
from ..model import Finding
from .base import Prior
from .framework_facts import cuda_builds, label
from .framework_libraries import missing_sonames
from .libraries import describe_copy
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


# -- a foreign copy first on the loader's path ------------------------------------------------------

def torch_copy(facts: Facts, family: str, soname: str) -> Optional[LibraryCopy]:
    """The copy torch's loader takes for a DT_NEEDED soname: LD_LIBRARY_PATH is searched before the
    RUNPATH of libtorch_cuda.so (the nvidia/*/lib wheels, torch/lib), which comes before the ldconfig cache."""
    lib = facts.libraries.library(family)
    copies = [c for c in (lib.copies if lib else []) if c.soname == soname]
    for step in ("LD_LIBRARY_PATH", "site-packages", "conda", "ldconfig"):
        found = next((c for c in copies if step in c.found_via), None)
        if found is not None:
            return found
    return copies[0] if copies else None


def _major_minor(version: Optional[str]) -> Optional[str]:
    parts = (version or "").split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 and all(p.isdigit() for p in parts[:2]) else None


def torch_foreign_libraries(facts: Facts, prior: Prior) -> Iterable[Finding]:
    """torch pins nvidia-cudnn-cu12==9.1.0.70, but a cuDNN of another minor on LD_LIBRARY_PATH is what it
    loads: "cuDNN version incompatibility: PyTorch was compiled against (9, 1, 0) but found runtime version"."""
    if not any_gpu(facts) or not facts.libraries.search_dirs:
        return
    for fw in _torch_builds(facts):
        pins = [p for p in facts.frameworks.pins if normalize_name(p.framework) == "torch" and p.extra is None]
        for need in fw.static.sonames:
            pin = _pin_for(pins, need.library)
            copy = torch_copy(facts, need.library, need.soname)
            wanted = _major_minor(pin.specifier.lstrip("=")) if pin and pin.specifier.startswith("==") else None
            have = _major_minor(copy.version) if copy else None
            if not wanted or not have or have == wanted or copy is None or "site-packages" in copy.found_via:
                continue
            yield _foreign_finding(fw, facts, need.library, need.soname, copy, pin, have)
            break  # one foreign library is the cause; the others follow the same path


def _foreign_finding(fw: FrameworkFacts, facts: Facts, family: str, soname: str, copy: LibraryCopy, pin: PinCheck,
                     have: str) -> Finding:
    folder = os.path.dirname(copy.path)
    pinned = pin.specifier.lstrip("=")
    if "LD_LIBRARY_PATH" in copy.found_via:
        why = ("the loader searches LD_LIBRARY_PATH before torch's RUNPATH (the nvidia/*/lib wheel folders), so this "
               f"{have} copy shadows the pinned wheel")
        fix = (f"Take {folder} off LD_LIBRARY_PATH for this environment (or `unset LD_LIBRARY_PATH`), so torch loads "
               f"the {pin.package} {pinned} it pins.")
    else:
        why = "no pinned wheel copy is on torch's RUNPATH, so the loader falls back to this one"
        fix = f'{pip(facts)} install "{pin.package}{pin.specifier}"  # the version torch pins'
    effect = ("PyTorch refuses it ('cuDNN version incompatibility: PyTorch was compiled against ... but found "
              "runtime version ...')" if family == "cudnn" else "its symbols and kernels are not the ones torch was built with")
    return make_finding(
        "cudnn-version-mismatch" if family == "cudnn" else "cuda-version-mismatch",
        f"{label(fw)} pins {pin.package}{pin.specifier}, but the {soname} it loads is {describe_copy(copy)}: {why}; "
        f"{effect}.",
        fix=[fix], evidence={"framework": fw.name, "version": fw.static.version, "library": copy.real_path,
                             "library_version": copy.version, "pinned": f"{pin.package}{pin.specifier}",
                             "found_via": list(copy.found_via)})


RULES = [torch_sonames, torch_foreign_libraries]
