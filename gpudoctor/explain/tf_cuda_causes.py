"""TensorFlow's CUDA read against the CUDA a log says is installed.

Issue templates state both ("TensorFlow version: 2.1.0", "CUDA/cuDNN version: 10.2.89"), and the paste
then shows only the symptom: the GPU list holds the CPU alone. TensorFlow opens the CUDA libraries of
the version it was built with by soname, which carries the CUDA major (and, up to CUDA 10.2, the minor:
libcudart.so.10.1, cudart64_101.dll). When the installed CUDA is not one whose libraries answer to those
names, TensorFlow cannot load them and quietly runs on the CPU: on Windows that is a DLL it cannot load.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from ..codes import make_finding
from ..compat.queries import tensorflow_release
from ..compat.versions import major_minor
from ..model import Finding, Severity


def _soname_version(cuda: str) -> str:
    """The part of the CUDA version its runtime's soname carries: 10.1 up to CUDA 10, 11 from CUDA 11."""
    major, _, minor = major_minor(cuda).partition(".")
    return f"{major}.{minor}" if int(major) <= 10 else major


def _tested_cuda(tf_version: str, windows: bool) -> Optional[str]:
    release = tensorflow_release(tf_version)
    row = (release.windows if windows else release.linux) if release else None
    return row.cuda if row and row.cuda else None


def read_tf_cuda(findings: List[Finding], facts: Dict[str, Any]) -> List[Finding]:
    if any(f.severity in (Severity.ERROR, Severity.WARNING) for f in findings):
        return findings
    tf, stated = str(facts.get("tf_version", "")), str(facts.get("cuda_stated", ""))
    if not tf[:1].isdigit() or not stated[:1].isdigit() or not facts.get("tf_gpu_check"):
        return findings
    windows = "windows_platform" in facts
    tested = _tested_cuda(tf, windows)
    if tested is None or _soname_version(tested) == _soname_version(stated):
        return findings
    if windows:
        soname = _soname_version(tested)  # cudart64_101.dll (10.1), cudart64_110.dll (11.x), cudart64_12.dll
        dll = f"cudart64_{soname.replace('.', '')}{'0' if soname == '11' else ''}.dll"
        finding = make_finding(
            "dll-load-failed",
            f"TensorFlow {tf} on Windows loads the CUDA {tested} DLLs ({dll} and the others of CUDA {tested}); the "
            f"log says CUDA {stated} is installed, whose DLLs have other names, so TensorFlow cannot load them and "
            f"lists only the CPU.",
            title=f"TensorFlow {tf} needs CUDA {tested}'s DLLs; CUDA {stated} is installed",
            fix=[f"Install CUDA {tested} (and the cuDNN TensorFlow {tf} was tested with; `gpudoctor compat tensorflow "
                 f"{tf}`) next to the other one, with its bin folder on PATH.",
                 f"Or install the TensorFlow release built for CUDA {major_minor(stated)}, if there is one (the tested "
                 f"configurations: https://www.tensorflow.org/install/source_windows)."],
            evidence={"source": "log", "tf_version": tf, "cuda_stated": stated, "tf_tested_cuda": tested,
                      "read_from": "TensorFlow's tested build configurations"})
    else:
        finding = make_finding(
            "cuda-version-mismatch",
            f"TensorFlow {tf} was built with CUDA {tested} and opens its libraries by soname (libcudart.so."
            f"{_soname_version(tested)}); the log says CUDA {stated} is installed, whose libraries have other "
            f"sonames, so TensorFlow cannot load them and lists only the CPU.",
            title=f"TensorFlow {tf} needs CUDA {tested}; CUDA {stated} is installed",
            fix=[f"Install CUDA {tested} (and the cuDNN TensorFlow {tf} was tested with; `gpudoctor compat tensorflow "
                 f"{tf}`) and put its lib64 folder on LD_LIBRARY_PATH.",
                 "Or install a TensorFlow release built for the CUDA you have (https://www.tensorflow.org/install/"
                 "source#gpu lists the pairs)."],
            evidence={"source": "log", "tf_version": tf, "cuda_stated": stated, "tf_tested_cuda": tested,
                      "read_from": "TensorFlow's tested build configurations"})
    return [finding, *findings]
