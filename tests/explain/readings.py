"""What `explain` reads from a log, in the shapes the reading tests assert on."""

from __future__ import annotations

from typing import List

from gpudoctor.explain import explain_text
from gpudoctor.model import Finding, Severity


def first(text: str) -> Finding:
    """The first finding (the root cause explain names first); a log with none fails the test."""
    findings = explain_text(text).findings
    assert findings, text
    return findings[0]


def errors(text: str) -> List[str]:
    """The codes of the error findings, in explain's order."""
    return [f.code for f in explain_text(text).findings if f.severity == Severity.ERROR]
