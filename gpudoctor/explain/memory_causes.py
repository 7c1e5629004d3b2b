"""Why a library handle could not be created: the memory the log shows, or the driver.

cuBLAS and cuDNN allocate GPU memory for their handles; when cublasCreate or cudnnCreate fails, the
log's own numbers often say why:
- a GPU table in the same log (nvidia-smi's Memory-Usage, CUDA.jl's device list) shows a GPU almost
  full: another process holds it (gpu-memory-full), unless TensorFlow or JAX runs here, whose own
  preallocation is read by the signatures and the context rules;
- XLA prints the free memory and the driver after CUDNN_STATUS_NOT_INITIALIZED: with most memory free,
  preallocation is not the cause, and a driver too old for CUDA 12 (what every current jaxlib and
  TensorFlow wheel is built for) is (driver-too-old).
A log that names no other problem but shows a GPU almost full while it computes nothing (0 % GPU-Util)
is a GPU whose memory an idle or leftover process holds: the next program on it has none left.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Dict, Iterable, List, Optional, Tuple

from ..codes import make_finding
from ..compat.queries import min_driver_for_cuda, newest_cuda_for_driver
from ..compat.versions import vkey
from ..model import Finding, Severity
from ..units import in_mib

HANDLE_SIGNATURES = ("cublas-not-initialized", "cudnn-handle-failed")
PREALLOCATION_SIGNATURES = ("tf-cudnn-init-after-preallocation", "jax-cudnn-init-or-exhausted-after-preallocation")
FULL_SHARE = 0.95  # used / total at which a GPU counts as full
IDLE_FULL_SHARE = 0.9  # used / total at which an idle GPU's memory counts as held
IDLE_UTIL_PERCENT = 5  # GPU-Util at or below which nothing computes on it
_PAIR = re.compile(r"([\d.]+)\s*([KMG])iB\s*/\s*([\d.]+)\s*([KMG])iB")
_UTIL = re.compile(r"\|\s*(\d+)%")


def _pairs(values: Any) -> Iterable[Tuple[float, float]]:
    for text in values if isinstance(values, list) else [values]:
        m = _PAIR.search(str(text))
        if m:
            yield in_mib(m.group(1), m.group(2)), in_mib(m.group(3), m.group(4))


def full_gpu(facts: Dict[str, Any]) -> Optional[str]:
    """'11000 of 11264 MiB used' for the first GPU the log shows almost full, else None."""
    for used, total in _pairs(facts.get("smi_memory", [])):
        if total > 0 and used >= FULL_SHARE * total:
            return f"{used:.0f} of {total:.0f} MiB used"
    for available, total in _pairs(facts.get("cudajl_memory", [])):
        if total > 0 and available <= (1 - FULL_SHARE) * total:
            return f"only {available:.0f} of {total:.0f} MiB available"
    return None


def idle_full_gpu(findings: List[Finding], facts: Dict[str, Any]) -> List[Finding]:
    """A gpu-memory-full warning for a GPU table row almost full at (nearly) 0 % GPU-Util, when nothing else
    in the log names a problem."""
    if any(f.severity in (Severity.ERROR, Severity.WARNING) or f.code == "not-environment" for f in findings):
        return findings
    rows = facts.get("smi_memory", [])
    for text in rows if isinstance(rows, list) else [rows]:
        pair, util = _PAIR.search(str(text)), _UTIL.search(str(text))
        if not pair or not util:
            continue
        used, total = in_mib(pair.group(1), pair.group(2)), in_mib(pair.group(3), pair.group(4))
        if total > 0 and used >= IDLE_FULL_SHARE * total and int(util.group(1)) <= IDLE_UTIL_PERCENT:
            share = f"{used:.0f} of {total:.0f} MiB"
            detail = (f"nvidia-smi shows a GPU with {share} in use while it computes nothing "
                      f"({util.group(1)} % GPU-Util): an idle process, or what a crashed or stopped program left "
                      "behind, holds that memory, and the next program on this GPU finds none free.")
            return findings + [make_finding(
                "gpu-memory-full", detail, evidence={"source": "log", "gpu_memory": share, "text": str(text)[:120]},
                title="A GPU's memory is held while nothing runs on it",
                fix=["See who holds it: the Processes table of `nvidia-smi`, or `gpudoctor gpus`; for a process "
                     "nvidia-smi cannot show (another container or user): `sudo fuser -v /dev/nvidia*`.",
                     "Stop that process (a crashed program's leftover workers too: `kill <PID>`), or run on another "
                     "GPU: `export CUDA_VISIBLE_DEVICES=<index>` (`gpudoctor gpus --pick 1` picks a free one)."])]
    return findings


def _driver_too_old_for_cuda12(driver: str) -> bool:
    newest = newest_cuda_for_driver(driver)
    return newest is not None and vkey(newest) < vkey("12.0")


def reread_handle_failures(findings: List[Finding], facts: Dict[str, Any]) -> List[Finding]:
    out = []
    framework_allocates = "tf_version" in facts  # TensorFlow's own preallocation is read by the context rules
    for f in findings:
        sig = f.evidence.get("signature")
        if f.caused_by is None and f.code == "gpu-op-failed" and sig in HANDLE_SIGNATURES and not framework_allocates:
            full = full_gpu(facts)
            if full:
                detail = (f"{f.title} ({f.evidence.get('text', '')[:120]}), and the log shows a GPU with {full}: the "
                          f"library could not allocate its handle because another process holds that GPU's memory.")
                out.append(replace(make_finding(
                    "gpu-memory-full", detail, evidence={**f.evidence, "reread_from": f.code, "gpu_memory": full},
                    title="A library could not start: the GPU's memory is held by another process", severity=Severity.ERROR,
                    fix=["See who holds the memory: `nvidia-smi` (Processes) or `gpudoctor gpus`; stop them, or run on a "
                         "GPU with free memory: `export CUDA_VISIBLE_DEVICES=<index>` (`gpudoctor gpus --pick 1`)."]),
                    caused_by=f.caused_by))
                continue
        if f.code == "gpu-memory-preallocated" and sig in PREALLOCATION_SIGNATURES and "xla_driver" in facts:
            free, total = int(facts.get("xla_mem_free", 0) or 0), int(facts.get("xla_mem_total", 0) or 0)
            driver = str(facts["xla_driver"])
            if total and free >= 0.5 * total and _driver_too_old_for_cuda12(driver):
                need = min_driver_for_cuda("12.0")
                least = need.minor_version_compat_driver if need else None
                need_text = f" (CUDA 12 needs {least} or newer on Linux)" if least else ""
                detail = (f"cuDNN could not be initialised although {free * 100 // total} % of the GPU's memory is free, "
                          f"so memory is not the cause; the driver is {driver}, which runs CUDA "
                          f"{newest_cuda_for_driver(driver)} at most, and current jaxlib and TensorFlow wheels are built "
                          f"for CUDA 12{need_text}.")
                out.append(replace(make_finding(
                    "driver-too-old", detail, evidence={**f.evidence, "reread_from": f.code, "driver_version": driver},
                    title=f"The NVIDIA driver {driver} is too old for this build's CUDA",
                    fix=[f"Update the NVIDIA driver{need_text}; check with `nvidia-smi` afterwards.",
                         "If the driver cannot change, install a release built for the CUDA this driver runs "
                         "(`gpudoctor compat --driver " + driver + "` lists them)."]),
                    caused_by=f.caused_by))
                continue
        preallocation_off = _jax_preallocation_off(facts)
        if f.code == "gpu-memory-preallocated" and sig == "jax-cudnn-init-or-exhausted-after-preallocation" \
                and f.evidence.get("size") and preallocation_off:
            out.append(_program_asks_too_much(f, preallocation_off))
            continue
        out.append(f)
    return _name_the_new_cause(findings, out)


def _jax_preallocation_off(facts: Dict[str, Any]) -> Optional[str]:
    if facts.get("jax_preallocation_off"):
        return f"XLA_PYTHON_CLIENT_PREALLOCATE={facts['jax_preallocation_off']}"
    if facts.get("jax_allocator_platform"):
        return "XLA_PYTHON_CLIENT_ALLOCATOR=platform"
    return None


def _program_asks_too_much(f: Finding, setting: str) -> Finding:
    """XLA's failed request while the log turns preallocation off (`setting`): no pool took the memory, the program's
    own arrays (a model, a batch) need more than the GPU has."""
    detail = (f"XLA could not allocate {f.evidence.get('size')} although preallocation is off in this log ({setting}): "
              "JAX allocates on demand then, so the program itself (its model, its batch, arrays it keeps alive) asks "
              "for more memory than the GPU has free.")
    return replace(make_finding(
        "not-environment", detail, evidence={**f.evidence, "reread_from": f.code},
        title="Out of GPU memory while running: the program needs more memory than the GPU has",
        fix=["Reduce the batch size (or the model, image or sequence size); `jax.checkpoint` (rematerialisation) and "
             "lower precision (bfloat16) cut memory further.",
             "Check that the program does not keep large arrays alive between steps (results collected in a list, "
             "a whole dataset put on the device).",
             "Check `nvidia-smi` that no other process holds memory on the same GPU."]),
        caused_by=f.caused_by)


def _name_the_new_cause(before: List[Finding], after: List[Finding]) -> List[Finding]:
    """A re-read finding is the cause of what named the old one, and of the other handle failures."""
    changed = {b.code: a.code for b, a in zip(before, after) if b.code != a.code}
    if not changed:
        return after
    cause = next(a.code for b, a in zip(before, after) if b.code != a.code)
    out = []
    for b, a in zip(before, after):
        if b.code == a.code and a.caused_by in changed:
            a = replace(a, caused_by=changed[a.caused_by])
        elif b.code == a.code and a.caused_by is None and a.code == "gpu-op-failed" and \
                a.evidence.get("signature") in HANDLE_SIGNATURES:
            a = replace(a, caused_by=cause)
        out.append(a)
    return out
