"""Failures that the program itself causes, read from the traceback around a CUDA error.

A CUDA error line names what failed, not who caused it. Two shapes of log put the cause in the
program:
- "CUDA error: out of memory" raised inside loss.backward() or an optimizer step: the program was
  already training on the GPU, and its own tensors (often kept alive across iterations) filled it;
- Python's "An attempt has been made to start a new process before the current process has finished
  its bootstrapping phase": on Windows (spawn) the DataLoader workers re-import the main module
  without an `if __name__ == '__main__':` guard, and the CUDA errors printed beside it come from
  those children.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Dict, List

from ..codes import make_finding
from ..model import Finding, Severity

# CUDA errors the children of an unguarded main module print (each re-runs the CUDA set-up)
CHILD_SYMPTOMS = ("gpu-memory-full", "uvm-not-loaded", "cuda-init-failed", "no-visible-gpu", "gpu-unavailable")


def _cudart_dlerror(f: Finding) -> bool:
    """TensorFlow's failed dlopen of the CUDA runtime (libcudart.so.X / cudart64_X.dll)."""
    soname = str(f.evidence.get("soname") or "")
    return f.code in ("cuda-library-missing", "dll-load-failed") and soname.startswith(("libcudart", "cudart"))


def read_program_causes(findings: List[Finding], facts: Dict[str, Any]) -> List[Finding]:
    # TensorFlow says a missing libcudart is expected without a GPU set up; the program's own error ended the run
    if facts.get("tf_cudart_stub") and any(f.code == "not-environment" for f in findings):
        findings = [replace(f, severity=Severity.WARNING) if _cudart_dlerror(f) else f for f in findings]
    if facts.get("spawn_bootstrap") and any(f.code == "not-environment" for f in findings):
        return [replace(f, caused_by="not-environment", severity=Severity.WARNING)
                if f.code in CHILD_SYMPTOMS and f.caused_by is None else f for f in findings]
    if not facts.get("training_step_frame"):
        return findings
    out = []
    for f in findings:
        if f.evidence.get("signature") == "torch-cuda-runtime-oom" and f.caused_by is None:
            f = make_finding(
                "not-environment",
                "The GPU ran out of memory inside the training step (" + str(facts["training_step_frame"]) + "): the "
                "program was already running on the GPU, and its own tensors filled it. After some epochs this is "
                "usually memory the loop keeps alive (losses or outputs accumulated with their graphs, lists of "
                "tensors), not another process.",
                title="Out of GPU memory inside the training step: the program's own memory",
                fix=["Keep only numbers across iterations: `total += loss.item()` (not `loss`), `del` outputs you no "
                     "longer need, and wrap evaluation in `with torch.no_grad():`.",
                     "If memory runs out from the first step, reduce the batch size or use mixed precision; "
                     "`nvidia-smi` shows whether another process holds memory too."],
                evidence={**f.evidence, "reread_from": f.code})
        out.append(f)
    return out
