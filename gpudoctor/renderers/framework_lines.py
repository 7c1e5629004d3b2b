"""One readiness line per installed framework, for the terminal report.

  PyTorch 2.5.1+cu124: GPU ready, 2 devices, cuDNN 9.1
  TensorFlow 2.15.0: cannot use the GPU — see cudnn-version-mismatch
  PyTorch 2.13.0+cpu: CPU-only build — see cpu-only-build
"""

from __future__ import annotations

from typing import List, Optional

from ..facts import Facts
from ..facts.frameworks import FrameworkFacts
from ..model import Finding, Severity


def readiness_lines(facts: Facts, findings: List[Finding]) -> List[str]:
    return [readiness_line(fw, facts, findings) for fw in facts.frameworks.frameworks.values()]


def readiness_line(fw: FrameworkFacts, facts: Facts, findings: List[Finding]) -> str:
    version = (fw.live.version if fw.live and fw.live.version else None) or fw.static.version
    head = "%s %s" % (fw.display_name, version) if version else fw.display_name
    return "%s: %s" % (head, _state(fw, facts, findings))


def _state(fw: FrameworkFacts, facts: Facts, findings: List[Finding]) -> str:
    mine = [f for f in findings if _concerns(f, fw.name)]
    errors = [f for f in mine if f.severity == Severity.ERROR]
    live = fw.live
    if fw.static.build == "cpu":
        return "CPU-only build" + (" — see %s" % _root(errors[0], findings) if errors else "")
    if live is None:
        built = _built_with(fw)
        return "%s; not imported (quick check)%s" % (built, " — see %s" % _root(errors[0], findings) if errors else "")
    if live.status not in ("ok",) and not (live.import_ok and live.status == "crashed" and live.phase == "op"):
        if errors:
            return "%s — see %s" % (_status_words(live.status), _root(errors[0], findings))
        return _status_words(live.status)
    if live.gpu_available:
        if errors:
            return "GPU found but not working — see %s" % _root(errors[0], findings)
        return "GPU ready, " + ", ".join(_ready_parts(fw))
    if errors:
        return "cannot use the GPU — see %s" % _root(errors[0], findings)
    if _is_gpu_build(fw):
        return "%s, no usable NVIDIA GPU here — runs on the CPU" % _built_with(fw)
    return "no GPU support in this build — runs on the CPU"


def _concerns(finding: Finding, name: str) -> bool:
    ev = finding.evidence or {}
    return ev.get("framework") == name or name in (ev.get("frameworks") or [])


def _root(finding: Finding, findings: List[Finding]) -> str:
    """Follow caused_by down to the root cause's code."""
    by_code = {f.code: f for f in findings}
    code, seen = finding.code, set()
    while code in by_code and by_code[code].caused_by and code not in seen:
        seen.add(code)
        code = by_code[code].caused_by  # type: ignore[assignment]
    return code


def _status_words(status: str) -> str:
    return {"import-failed": "import fails", "crashed": "the probe crashed", "timeout": "the probe timed out",
            "not-started": "the probe could not start", "failed": "the probe failed"}.get(status, status)


def _built_with(fw: FrameworkFacts) -> str:
    cuda = fw.static.cuda_version or (fw.live.cuda_version if fw.live else None)
    if fw.static.build == "rocm":
        return "built with ROCm %s" % (fw.static.hip_version or "")
    return "built with CUDA %s" % cuda if cuda else "GPU build"


def _is_gpu_build(fw: FrameworkFacts) -> bool:
    return fw.static.build in ("cuda", "rocm") or bool(fw.live and fw.live.built_with_cuda)


def _ready_parts(fw: FrameworkFacts) -> List[str]:
    live = fw.live
    assert live is not None
    count = live.device_count if live.device_count is not None else len(live.devices)
    parts = ["%d device%s" % (count, "" if count == 1 else "s")]
    cudnn = _short(live.cudnn_version)
    if cudnn and fw.name == "torch":
        parts.append("cuDNN %s" % cudnn)
    return parts


def _short(version: Optional[str]) -> Optional[str]:
    return ".".join(version.split(".")[:2]) if version else None
