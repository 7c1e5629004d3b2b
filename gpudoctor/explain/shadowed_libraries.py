"""A CUDA library of torch's pip wheels that resolves a sibling from another copy, when the log shows that copy.

"libcublas.so.11: undefined symbol: cublasLtGetStatusString, version libcublasLt.so.11" says that the
nvidia-cublas wheel's libcublas found an older libcublasLt first. The signatures read it as the CUDA
release found not being the wheel's own (cuda-version-mismatch). When the same log also shows the copy
that won (`locate` listing a conda cudatoolkit's libcublasLt, `ldd` resolving libnvJitLink to
/usr/local/cuda-12.1/lib64), the cause is two copies of one library with the wrong one first
(multiple-cuda-installs): that copy is what has to leave the search path. The same holds when the failing
library's path is one of the nvidia-* wheels, whose own sibling sits beside it; a conda environment's two libraries
of different releases are mixed packages instead.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Dict, List

from ..codes import make_finding
from ..model import Finding, Severity
from .cuda_causes import as_list

SIBLING_SIGNATURES = ("cublas-foreign-cublaslt", "foreign-nvjitlink")


# the library that failed, as its path shows it: one of torch's nvidia-* wheels, or a conda environment's lib folder
WHEEL_LIB_RE = re.compile(r"(?:site|dist)-packages/(?:torch/lib/\.\./\.\./)?nvidia/\w+/lib/lib\w+\.so")
CONDA_LIB_RE = re.compile(r"/(?:(?:ana|mini)conda\d?|miniforge\d?|mambaforge|micromamba|conda|envs/[^/\s]+)(?:/bin/\.\.)?/lib/lib\w+\.so")


def _stated_older_cuda(f: Finding, facts: Dict[str, Any]) -> str:
    """A system CUDA the log states (CUDA version: 12.2, nvcc), of the same major but older than the symbol needs
    (nvJitLink's versioned symbols name the release: __nvJitLinkComplete_12_4)."""
    need_major, need_minor = str(f.evidence.get("need_major") or ""), str(f.evidence.get("need_minor") or "")
    for stated in (facts.get("cuda_found"), facts.get("cuda_stated")):
        m = re.match(r"(\d+)\.(\d+)", str(stated or ""))
        if m and need_minor.isdigit() and m.group(1) == need_major and int(m.group(2)) < int(need_minor):
            return m.group(0)
    return ""


def _reread_without_the_copy(f: Finding, facts: Dict[str, Any]) -> Finding:
    """A sibling symbol missing when the log does not show the copy that won, but shows where the two come from."""
    text = str(f.evidence.get("text") or "")
    lib = f.evidence.get("lib") or "torch's CUDA library"
    sibling = "libcublasLt" if f.evidence.get("signature") == "cublas-foreign-cublaslt" else "libnvJitLink"
    if WHEEL_LIB_RE.search(text):
        # the wheel's own sibling sits in the same nvidia/*/lib folder tree and satisfies it: the one that answered came
        # from another copy found first (pytorch/pytorch#111469, #91067: a system CUDA or conda cudatoolkit)
        stated = _stated_older_cuda(f, facts)
        where = (f"the log states a system CUDA {stated}, whose older {sibling}" if stated
                 else f"an older {sibling} from outside the wheels (a system CUDA's lib64, a conda cudatoolkit, an image's CUDA)")
        return replace(make_finding(
            "multiple-cuda-installs",
            f"{f.detail} The failing {lib} is from the nvidia-* wheels that torch installs, which carry their own "
            f"{sibling}; {where}, on LD_LIBRARY_PATH or preloaded, is found before it.",
            evidence={**f.evidence, "reread_from": f.code, **({"system_cuda": stated} if stated else {})},
            fix=[f"Find the copy that wins: `ldconfig -p | grep {sibling}` and `echo $LD_LIBRARY_PATH`; take that folder"
                 + (f" (CUDA {stated}'s lib64)" if stated else "") + " off LD_LIBRARY_PATH for this program (in ~/.bashrc, "
                 "the job script or the image's ENV), so the wheel's own copy is found.", *f.fix],
            severity=Severity.ERROR,
            title=(f"The system CUDA {stated}'s {sibling} is loaded before the one torch's wheels need" if stated
                   else f"Another copy of {sibling} is loaded before the one torch's wheels ship")),
            caused_by=f.caused_by)
    if f.evidence.get("signature") == "foreign-nvjitlink" and CONDA_LIB_RE.search(text):
        # rapidsai/deployment#487: libcusparse from the nvidia channel beside an older libnvjitlink in one environment
        return replace(make_finding(
            "conflicting-packages",
            f"{f.detail} Both libraries are the conda environment's own: its CUDA library packages come from different "
            f"CUDA releases (often a newer {lib} from one channel beside an older libnvjitlink from another).",
            evidence={**f.evidence, "reread_from": f.code},
            fix=["See which releases the environment mixes: `conda list | grep -i -e cusparse -e nvjitlink -e cuda-version` "
                 "and the channel of each.",
                 "Bring them to one CUDA release from one channel: `conda install -c conda-forge libnvjitlink libcusparse "
                 "cuda-version=<major.minor>` (the version of the newer library), or recreate the environment with "
                 "RAPIDS' install command, which pins them together."],
            severity=Severity.ERROR,
            title=f"The conda environment mixes CUDA library releases: {lib} is newer than its libnvJitLink"),
            caused_by=f.caused_by)
    return f


def reread_shadowed_siblings(findings: List[Finding], facts: Dict[str, Any]) -> List[Finding]:
    copies = as_list(facts.get("cuda_lib_copy"))
    if not copies:
        return [_reread_without_the_copy(f, facts)
                if f.code == "cuda-version-mismatch" and f.evidence.get("signature") in SIBLING_SIGNATURES else f
                for f in findings]
    out = []
    for f in findings:
        if f.code != "cuda-version-mismatch" or f.evidence.get("signature") not in SIBLING_SIGNATURES:
            out.append(f)
            continue
        other = copies[0]
        folder = other.rsplit("/", 1)[0]
        detail = (f"{f.detail} The log shows the copy that was loaded instead: {other}, outside the pip wheels that "
                  "torch ships its CUDA libraries in.")
        fix = [f"Take {folder} off the library search path for this program (remove it from LD_LIBRARY_PATH, or "
               "`conda remove cudatoolkit` when it is a conda environment's copy), so the wheel's own copy is found.",
               *f.fix]
        out.append(replace(make_finding("multiple-cuda-installs", detail,
                                        evidence={**f.evidence, "reread_from": f.code, "other_copy": other},
                                        fix=fix, severity=Severity.ERROR,
                                        title=f"Two copies of a CUDA library, and the other one is loaded first: {other}"),
                           caused_by=f.caused_by))
    return out
