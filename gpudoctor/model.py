"""The shared vocabulary of every command: severities, layers and findings.

Facts are collected by probes (gpudoctor/probes), judged by rules (gpudoctor/rules) into
findings, and findings are formatted by renderers (gpudoctor/renderers).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Dict, List, Optional


class Severity(str, Enum):
    """What a finding costs the user (DESIGN.md: the tool never cries wolf)."""

    ERROR = "error"  # the GPU, the driver, or an installed GPU framework cannot do its job
    WARNING = "warning"  # a latent problem that will bite later or elsewhere
    INFO = "info"  # facts worth knowing

    @property
    def rank(self) -> int:
        return {"error": 0, "warning": 1, "info": 2}[self.value]


class Layer(str, Enum):
    """The layers of a GPU stack, bottom up: the lowest broken layer is the root cause."""

    HARDWARE = "hardware"
    KERNEL_DRIVER = "kernel-driver"
    USERSPACE_DRIVER = "userspace-driver"
    VISIBILITY = "visibility"
    CUDA_LIBRARIES = "cuda-libraries"
    COMPATIBILITY = "compatibility"
    FRAMEWORK = "framework"
    RUNTIME_TEST = "runtime-test"
    LOGS = "logs"  # findings that only a log can show (gpudoctor explain)

    @property
    def depth(self) -> int:
        return list(Layer).index(self)

    @property
    def label(self) -> str:
        return {
            "hardware": "Hardware",
            "kernel-driver": "Kernel driver",
            "userspace-driver": "User-space driver",
            "visibility": "Visibility",
            "cuda-libraries": "CUDA libraries",
            "compatibility": "Compatibility",
            "framework": "Frameworks",
            "runtime-test": "Runtime test",
            "logs": "Logs",
        }[self.value]


@dataclass(frozen=True)
class Finding:
    """One diagnosis. The JSON form is a public contract (DESIGN.md, "Contracts")."""

    code: str
    severity: Severity
    layer: Layer
    title: str
    detail: str
    evidence: Dict[str, Any] = field(default_factory=dict)
    fix: List[str] = field(default_factory=list)
    caused_by: Optional[str] = None

    def to_json(self) -> Dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity.value,
            "layer": self.layer.value,
            "title": self.title,
            "detail": self.detail,
            "evidence": self.evidence,
            "fix": list(self.fix),
            "caused_by": self.caused_by,
        }

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "Finding":
        return cls(
            code=data["code"],
            severity=Severity(data["severity"]),
            layer=Layer(data["layer"]),
            title=data["title"],
            detail=data.get("detail", ""),
            evidence=dict(data.get("evidence") or {}),
            fix=list(data.get("fix") or []),
            caused_by=data.get("caused_by"),
        )


def verdict_of(findings: List[Finding]) -> str:
    """`ok` | `warning` | `error`: the worst severity among the findings (info counts as ok)."""
    severities = {f.severity for f in findings}
    if Severity.ERROR in severities:
        return "error"
    if Severity.WARNING in severities:
        return "warning"
    return "ok"


def root_cause_order(findings: List[Finding]) -> List[Finding]:
    """Root causes first, then by severity, then bottom layer first; symptoms after their cause."""
    by_code = {f.code: f for f in findings}

    def chain_depth(f: Finding) -> int:
        depth, seen, cur = 0, set(), f
        while cur.caused_by and cur.caused_by in by_code and cur.code not in seen:
            seen.add(cur.code)
            cur = by_code[cur.caused_by]
            depth += 1
        return depth

    return sorted(findings, key=lambda f: (chain_depth(f) > 0, f.severity.rank, f.layer.depth))
