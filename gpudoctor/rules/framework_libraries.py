"""CUDA-library rules for framework builds: the sonames a framework dlopens, joined with the
libraries found. TensorFlow's dso_loader asks for exact sonames (libcudart.so.10.0 for 1.14,
libcudnn.so.8 for 2.15), so a CUDA of another version on the path does not serve it.
"""

from __future__ import annotations

from typing import Dict, Iterable, List, Optional, Tuple

from .. import compat
from ..codes import make_finding
from ..compat.versions import is_dotted, major_minor, vkey
from ..facts import Facts
from ..fixes import cuda_install_steps
from ..facts.frameworks import FrameworkFacts
from ..facts.libraries import LibraryCopy
from ..model import Finding
from .base import Prior
from .framework_facts import cuda_builds, label
from .libraries import describe_copy
from .situation import any_gpu, driver_sees_gpu, with_target_pip

def _copies(facts: Facts, library: str) -> List[LibraryCopy]:
    lib = facts.libraries.library(library)
    return list(lib.copies) if lib else []


def _checked_frameworks(facts: Facts) -> List[FrameworkFacts]:
    # Only frameworks whose dlopen list is known from their build rules: TensorFlow's dso_loader.
    # PyTorch links its CUDA libraries (a missing one is an import failure, reported by the
    # framework rules) and may carry them in torch/lib, which the library search does not cover.
    return [fw for fw in cuda_builds(facts) if fw.name == "tensorflow" and fw.static.sonames]


def missing_sonames(fw: FrameworkFacts, facts: Facts) -> Dict[str, List[Tuple[str, List[str]]]]:
    """code -> [(needed soname, sonames of other versions that are present)]."""
    out: Dict[str, List[Tuple[str, List[str]]]] = {}
    for need in fw.static.sonames:
        copies = _copies(facts, need.library)
        if any(c.soname == need.soname for c in copies):
            continue
        others = sorted({c.soname for c in copies})
        if need.library == "cudnn":
            code = "cudnn-version-mismatch" if others else "cudnn-missing"
        else:
            code = "cuda-version-mismatch" if others else "cuda-library-missing"
        out.setdefault(code, []).append((need.soname, others))
    return out


def framework_sonames(facts: Facts, prior: Prior) -> Iterable[Finding]:
    if not any_gpu(facts) or not facts.libraries.search_dirs:
        return  # no GPU: the framework needs none of them; no search ran: absence proves nothing
    for fw in _checked_frameworks(facts):
        by_code = missing_sonames(fw, facts)
        if len(by_code) > 1:
            # One build's CUDA and cuDNN are one cause: one finding, under the code that matters most.
            code = next(c for c in SONAME_CODE_PRIORITY if c in by_code)
            by_code = {code: [m for c in SONAME_CODE_PRIORITY for m in by_code.get(c, [])]}
        for code, missing in by_code.items():
            yield _soname_finding(code, fw, facts, missing)


SONAME_CODE_PRIORITY = ("cuda-version-mismatch", "cuda-library-missing", "cudnn-version-mismatch", "cudnn-missing")


def _and_cuda_release(fw: FrameworkFacts) -> Optional[str]:
    """The release to pass to `tensorflow[and-cuda]==` when this release installs CUDA from wheels."""
    release = compat.tensorflow_release(fw.static.version)
    if release and release.and_cuda:
        return release.and_cuda.version
    version = fw.static.version.split("+")[0]
    return version if compat.tensorflow_has_and_cuda(version) else None


def _soname_finding(code: str, fw: FrameworkFacts, facts: Facts, missing: List[Tuple[str, List[str]]]) -> Finding:
    wanted = ", ".join(s for s, _ in missing)
    others = sorted({o for _, found in missing for o in found})
    built = f"CUDA {fw.static.cuda_version}" if fw.static.cuda_version else "its CUDA"
    if code in ("cuda-version-mismatch", "cudnn-version-mismatch"):
        present = "; ".join(describe_copy(c) for lib in facts.libraries.libraries for c in lib.copies
                            if c.soname in others)
        detail = (f"{label(fw)} was built for {built} (cuDNN {fw.static.cudnn_version or '?'}) and dlopens {wanted}; "
                  f"this machine offers {', '.join(others)} instead: {present}. Another version does not serve it, "
                  f"so {fw.display_name} skips the GPU ('Cannot dlopen some GPU libraries').")
    else:
        detail = (f"{label(fw)} was built for {built} and dlopens {wanted}, which no folder on the loader's path "
                  f"provides, so {fw.display_name} skips the GPU ('Cannot dlopen some GPU libraries').")
    return make_finding(code, detail, fix=tensorflow_cuda_fix(fw, facts, others),
                        evidence={"framework": fw.name, "version": fw.static.version, "needs": [s for s, _ in missing],
                                  "found": others})


def tensorflow_cuda_fix(fw: FrameworkFacts, facts: Facts, others: List[str]) -> List[str]:
    """How to give this TensorFlow the CUDA and cuDNN it dlopens; `others`: sonames of other versions present."""
    release = compat.tensorflow_release(fw.static.version)
    tested = release.linux if release else None
    fix: List[str] = []
    and_cuda = _and_cuda_release(fw)
    if and_cuda:
        fix.append(f"Install the CUDA and cuDNN libraries this release needs as wheels: "
                   f"`pip install \"tensorflow[and-cuda]=={and_cuda}\"`.")
    elif tested:
        # The era's routes (gpudoctor.fixes): toolkit/cudatoolkit before CUDA 11, wheels after; conda
        # next to the other route in a conda env.
        fix.append(f"Install what {label(fw)} was tested with: CUDA {tested.cuda} and cuDNN {tested.cudnn}.")
        libraries = [n.library for n in fw.static.sonames] or ["cudart"]
        fix += cuda_install_steps(tested.cuda, libraries, facts.system.env_kind,
                                  cudnn_major=tested.cudnn.split(".")[0] if "cudnn" in libraries else None)
    offered = _offered_cuda(others)
    if offered:
        alternative = _tensorflow_for_cuda(offered, facts.system.python_version)
        if alternative:
            fix.append(f"Or install the TensorFlow release tested with the CUDA {offered} you have: "
                       f"`pip install \"{alternative.package.replace('_', '-')}=={alternative.version}\"` "
                       f"(tested with cuDNN {alternative.cudnn}).")
    return [with_target_pip(facts, step) for step in fix] or [
        "Install the CUDA and cuDNN versions this TensorFlow release was built with."]


def _offered_cuda(sonames: List[str]) -> Optional[str]:
    """'10.1' from libcudart.so.10.1 (versioned like the toolkit until CUDA 11)."""
    for soname in sonames:
        if soname.startswith("libcudart.so."):
            version = soname[len("libcudart.so."):]
            if is_dotted(version) and "." in version:
                return version
    return None


def _tensorflow_for_cuda(cuda: str, python: Optional[str]) -> Optional[compat.TfTested]:
    rows = [r for r in compat.tables().tf_tested if r.platform == "linux" and r.cuda == cuda
            and (not python or major_minor(python) in r.python)]
    return max(rows, key=lambda r: vkey(r.version)) if rows else None


def cudnn_minor_too_old(facts: Facts, prior: Prior) -> Iterable[Finding]:
    """TensorFlow accepts a cuDNN of the same major and an equal or higher minor than it was compiled
    with ("CuDNN library needs to have matching major version and equal or higher minor version")."""
    if not any_gpu(facts) or prior.has("cudnn-version-mismatch") or prior.has("cudnn-missing"):
        return
    for fw in (f for f in cuda_builds(facts) if f.name == "tensorflow"):
        logged = _logged_cudnn_mismatch(fw)  # TF's own words are proof; else compare build and library
        required = logged[1] if logged else _tested_cudnn(fw)
        loaded = logged[0] if logged else _loaded_cudnn(facts, fw)
        if not required or not loaded or not is_dotted(required) or not is_dotted(loaded):
            continue
        if vkey(loaded)[0] != vkey(required)[0] or vkey(major_minor(loaded)) >= vkey(major_minor(required)):
            continue
        release = compat.tensorflow_release(fw.static.version)
        pin = release.and_cuda.cudnn if release and release.and_cuda else None
        wheel = f"nvidia-cudnn-cu{fw.static.cuda_version.split('.')[0]}" if fw.static.cuda_version else "nvidia-cudnn"
        fix = [f"`pip install {wheel}=={pin}` (the cuDNN {label(fw)} pins)" if pin else
               f"Install cuDNN {major_minor(required)} or a newer {vkey(required)[0]}.x for CUDA {fw.static.cuda_version}."]
        if facts.system.env_kind == "conda":
            fix.append(f"In this conda env: `conda install \"cudnn>={major_minor(required)},<{vkey(required)[0] + 1}\"`.")
        yield make_finding(
            "cudnn-version-mismatch",
            f"{label(fw)} was compiled with cuDNN {required}; the cuDNN it loads is {loaded}. TensorFlow refuses an "
            f"older minor: 'Loaded runtime CuDNN library: {loaded} but source was compiled with: {required}', and "
            "convolutions fail.",
            fix=[with_target_pip(facts, step) for step in fix],
            evidence={"framework": fw.name, "version": fw.static.version, "compiled": required,
                               "runtime": loaded, "from_log": bool(logged)})


def _logged_cudnn_mismatch(fw: FrameworkFacts) -> Optional[Tuple[str, str]]:
    for line in (fw.live.log_lines if fw.live else []):
        if line.kind == "cudnn-version-mismatch" and line.runtime_version and line.compiled_version:
            return line.runtime_version, line.compiled_version
    return None


def _tested_cudnn(fw: FrameworkFacts) -> Optional[str]:
    static = fw.static.cudnn_version
    if static and is_dotted(static) and "." in static:
        return static
    release = compat.tensorflow_release(fw.static.version)
    if release and release.and_cuda:
        return release.and_cuda.cudnn
    return release.linux.cudnn if release and release.linux else None


def _loaded_cudnn(facts: Facts, fw: FrameworkFacts) -> Optional[str]:
    majors = {n.soname for n in fw.static.sonames if n.library == "cudnn"}
    lib = facts.libraries.library("cudnn")
    if lib is None:
        return None
    for res in lib.loader_resolution:
        if res.soname in majors and res.version:
            return res.version
    versions = [c.version for c in lib.copies if c.soname in majors and c.version]
    return versions[0] if versions else None


# Libraries TensorFlow tries that are optional (TensorRT, CUPTI) or judged by the driver layer (libcuda).
NOT_A_CUDA_LIBRARY_PROBLEM = ("libcuda.so", "libnvinfer", "libcupti")


def logged_dlopen_failures(facts: Facts, prior: Prior) -> Iterable[Finding]:
    """What TensorFlow's own log says it could not dlopen, when the search above found no cause (a
    library present but unloadable: a missing dependency, a wrong architecture). TF's dlopen is the truth."""
    if not driver_sees_gpu(facts) or any(prior.has(code) for code in SONAME_CODE_PRIORITY):
        return  # no working GPU: dlopen failures are expected; or the cause is already named
    for fw in cuda_builds(facts):
        lines = [ln for ln in (fw.live.log_lines if fw.live else [])
                 if ln.kind == "dlopen-failed" and ln.library and not ln.library.startswith(NOT_A_CUDA_LIBRARY_PROBLEM)]
        if not lines:
            continue
        missing = [ln.library or "" for ln in lines]
        yield make_finding(
            "cudnn-missing" if all(s.startswith("libcudnn") for s in missing) else "cuda-library-missing",
            f"{label(fw)} could not dlopen {', '.join(missing)}.",
            evidence={"framework": fw.name, "libraries": missing, "dlerror": [ln.error for ln in lines]},
            fix=tensorflow_cuda_fix(fw, facts, []))


RULES = [framework_sonames, cudnn_minor_too_old, logged_dlopen_failures]
