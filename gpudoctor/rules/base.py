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

    def add(self, finding: Finding) -> None:
        self._findings.setdefault(finding.code, finding)

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

    def all(self) -> List[Finding]:
        return list(self._findings.values())


Rule = Callable[[Facts, Prior], Iterable[Finding]]
