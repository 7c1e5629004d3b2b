"""What a rule sees: the facts, and the findings of the rules that ran before it (lower layers).

Rules are pure functions `rule(facts, prior) -> iterable of Finding`. Lower layers run first, so
a symptom can name its root cause with `caused_by=prior.root_cause(...)`.
"""

from __future__ import annotations

from typing import Callable, Dict, Iterable, List, Optional

from ..facts import Facts
from ..model import Finding, Severity


class Prior:
    def __init__(self) -> None:
        self._findings: Dict[str, Finding] = {}
        self._every: List[Finding] = []

    def add(self, finding: Finding) -> None:
        self._findings.setdefault(finding.code, finding)
        self._every.append(finding)

    def has(self, code: str) -> bool:
        return code in self._findings

    def get(self, code: str) -> Optional[Finding]:
        return self._findings.get(code)

    def first_error(self, *codes: str) -> Optional[str]:
        """The first of `codes` found as an error: the root cause to point `caused_by` at."""
        for code in codes:
            f = self._findings.get(code)
            if f is not None and f.severity == Severity.ERROR:
                return code
        return None

    def first_error_for(self, framework: str, *codes: str) -> Optional[str]:
        """Like first_error, but only findings about this framework or about the machine as a whole count:
        a symptom of TensorFlow is not caused by PyTorch's wrong build (caused_by means that fixing the
        cause fixes the symptom)."""
        for code in codes:
            for f in self._every:
                if f.code == code and f.severity == Severity.ERROR and _about(f, framework):
                    return code
        return None

    def all(self) -> List[Finding]:
        return list(self._findings.values())


def _about(finding: Finding, framework: str) -> bool:
    """Is a finding about this framework, or about no framework in particular (driver, libraries)?"""
    named = finding.evidence.get("framework") or finding.evidence.get("frameworks")
    if not named:
        return True
    return framework in ([named] if isinstance(named, str) else list(named))


Rule = Callable[[Facts, Prior], Iterable[Finding]]
