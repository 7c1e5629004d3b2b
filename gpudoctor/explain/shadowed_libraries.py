"""A CUDA library of torch's pip wheels that resolves a sibling from another copy, when the log shows that copy.

"libcublas.so.11: undefined symbol: cublasLtGetStatusString, version libcublasLt.so.11" says that the
nvidia-cublas wheel's libcublas found an older libcublasLt first. The signatures read it as the CUDA
release found not being the wheel's own (cuda-version-mismatch). When the same log also shows the copy
that won (`locate` listing a conda cudatoolkit's libcublasLt, `ldd` resolving libnvJitLink to
/usr/local/cuda-12.1/lib64), the cause is two copies of one library with the wrong one first
(multiple-cuda-installs): that copy is what has to leave the search path.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Dict, List

from ..codes import make_finding
from ..model import Finding, Severity
from .cuda_causes import as_list

SIBLING_SIGNATURES = ("cublas-foreign-cublaslt", "foreign-nvjitlink")


def reread_shadowed_siblings(findings: List[Finding], facts: Dict[str, Any]) -> List[Finding]:
    copies = as_list(facts.get("cuda_lib_copy"))
    if not copies:
        return findings
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
