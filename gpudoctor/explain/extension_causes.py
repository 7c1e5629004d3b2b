"""Compiled packages and builds that met another CUDA than the torch they belong with.

A flash-attn wheel built for CUDA 11 next to a cu121 torch asks for libcudart.so.11.0, which no torch
wheel of that environment brings: the missing library is the package's, not the environment's CUDA. A
C++/CUDA extension build on a machine with several toolkits may compile with the old one's headers,
whose host_config.h then refuses a gcc the intended toolkit accepts: the toolkit, not the compiler.
Both are re-read here from the findings the signatures made and the facts of the whole log.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Dict, List, Optional

from ..codes import make_finding
from ..model import Finding
from .cuda_causes import LOADER_SIGNATURES


# -- a CUDA runtime of another major than the installed torch's --------------------------------

OTHER_FRAMEWORK_FACTS = ("tf_version", "tf_cuda", "tf_cudnn", "tf_gpu_check", "jax_cuda_install", "jax_cuda_devices")
# CUDA toolkit libraries a compiled extension links against (not cuDNN or NCCL, whose majors are not CUDA's)
_TOOLKIT_SONAME = re.compile(r"^lib(?:cudart|cublas|cublasLt|cufft|curand|cusparse|cusolver|nvrtc|nvToolsExt|nvJitLink)"
                             r"\.so\.(\d+)")


def torch_cuda_major(facts: Dict[str, Any]) -> Optional[str]:
    """The CUDA major of the torch build the log shows: collect_env's 'CUDA used to build PyTorch', a
    '+cu121' local version, or the .../whl/cu121 index it was installed from."""
    built = str(facts.get("torch_cuda") or "")
    if re.fullmatch(r"\d+\.\d+", built):
        return built.split(".")[0]
    local = re.search(r"\+cu(\d{2,3})$", str(facts.get("torch_version") or ""))
    index = str(facts.get("torch_index_cuda") or "")
    digits = local.group(1) if local else index if index.isdigit() else ""
    return digits[:-1] or None


def reread_foreign_cuda_runtime(findings: List[Finding], facts: Dict[str, Any]) -> List[Finding]:
    """A CUDA library of one major missing where the log shows a torch built for another major, and no
    other framework: torch loads its own CUDA runtime, so the library is asked for by a compiled package
    built for the other CUDA (a flash-attn wheel for CUDA 11 beside a cu121 torch)."""
    torch_major = torch_cuda_major(facts)
    if not torch_major or any(facts.get(k) for k in OTHER_FRAMEWORK_FACTS):
        return findings
    out = []
    for f in findings:
        m = _TOOLKIT_SONAME.match(str(f.evidence.get("soname") or ""))
        if f.code in ("cuda-library-missing", "cuda-version-mismatch") and m and m.group(1) != torch_major \
                and f.evidence.get("signature") in LOADER_SIGNATURES and f.evidence.get("signature") != "tf-dso-loader-missing":
            f = _foreign_runtime_finding(f, m.group(1), torch_major)
        out.append(f)
    return out


def _foreign_runtime_finding(f: Finding, wanted: str, torch_major: str) -> Finding:
    soname = f.evidence.get("soname")
    detail = (f"{soname} (CUDA {wanted}) cannot be loaded, and the torch in this environment is built for CUDA "
              f"{torch_major}: torch brings and loads its own CUDA {torch_major} runtime, so what asks for {soname} is "
              f"another compiled package (flash-attn, xformers, bitsandbytes, a project's own extension) built for "
              f"CUDA {wanted} and an older torch.")
    fix = [f"Install that package's build for this torch and CUDA {torch_major} (`python -c \"import torch; "
           "print(torch.__version__, torch.version.cuda)\"`): prebuilt wheels such as flash-attn's and xformers' name the "
           "torch and CUDA they were built for; or rebuild it here against this torch: "
           "`pip install --no-build-isolation --no-cache-dir --force-reinstall <package>`.",
           f"Do not install the CUDA {wanted} runtime to satisfy it: the extension must match the torch it runs with."]
    return replace(make_finding("conflicting-packages", detail, evidence={**f.evidence, "torch_cuda_major": torch_major},
                                fix=fix, severity=f.severity,
                                title=f"A package built for CUDA {wanted} beside a torch built for CUDA {torch_major}"),
                   caused_by=f.caused_by)


# -- a build that picked another CUDA toolkit than the one the log says is in use ---------------

_TOOLKIT_IN_PATH = re.compile(r"(?P<folder>/[\w./-]*?cuda-(?P<version>\d+\.\d+))(?=/)")


def reread_foreign_toolkit_headers(findings: List[Finding], facts: Dict[str, Any]) -> List[Finding]:
    """nvcc's host-compiler refusal from the headers of a CUDA X toolkit where the log says CUDA Y is the one
    in use (torch's, or the reporter's): with several toolkits installed the build picked the old one, whose
    host_config.h rejects a gcc that the intended toolkit accepts."""
    stated = str(facts.get("torch_cuda") or facts.get("cuda_stated") or "")
    if not re.fullmatch(r"\d+\.\d+", stated):
        return findings
    out = []
    for f in findings:
        m = _TOOLKIT_IN_PATH.search(str(f.evidence.get("text") or ""))
        if f.code == "host-compiler-unsupported" and m and m.group("version") != stated:
            folder, used = m.group("folder"), m.group("version")
            detail = (f"The build compiled with the CUDA {used} toolkit ({folder}), whose headers refuse this host "
                      f"compiler, while the log says CUDA {stated} is the one in use: with several toolkits installed, "
                      f"the build found the older one first (CUDA_HOME, PATH or CMake's CUDA_TOOLKIT_ROOT_DIR). The "
                      f"CUDA {stated} toolkit accepts newer compilers.")
            fix = [f"Point the build at the CUDA {stated} toolkit before building again: `export CUDA_HOME=<its folder, "
                   f"e.g. /usr/local/cuda-{stated}>`, `export PATH=$CUDA_HOME/bin:$PATH` (and for CMake "
                   "`-DCUDA_TOOLKIT_ROOT_DIR=$CUDA_HOME`); delete the build folder so no cached path is reused.",
                   "Check: `which nvcc` and `nvcc --version` print that toolkit's version, the one PyTorch was built with "
                   "(`python -c 'import torch; print(torch.version.cuda)'`)."]
            f = replace(make_finding("extension-cuda-mismatch", detail, fix=fix,
                                     evidence={**f.evidence, "toolkit_used": used, "cuda_in_use": stated,
                                               "reread_from": f.code},
                                     title=f"The build used the CUDA {used} toolkit, not CUDA {stated}",
                                     severity=f.severity),
                        caused_by=f.caused_by)
        out.append(f)
    return out
