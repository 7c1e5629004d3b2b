"""gpudoctor explain: read an error log and name the root cause and the fix.

    from gpudoctor.explain import explain_stream
    result = explain_stream(open("train.log", "rb"))
    result.findings  # the same Finding objects as `gpudoctor check`, root cause first
"""

from __future__ import annotations

import io
import sys
import types
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Dict, List, Optional

from ..model import Finding
from .catalogue import load_catalogue
from .engine import Diagnosis, Explainer, Note, rank
from .join import join_with_check
from .grep_filter import GREP_CHUNK_BYTES, grep_command, iter_candidate_lines_grep
from .reader import CHUNK_BYTES, HeadAndTail, SourceStats, iter_candidate_lines
from .similar import Memory, likely_cause, names_a_problem
from .template_fields import template_facts

__all__ = ["ExplainResult", "explain_stream", "explain_text", "join_with_check", "rank"]


@dataclass
class ExplainResult:
    findings: List[Finding]
    facts: Dict[str, Any]
    notes: List[Note]
    stats: SourceStats = field(default_factory=SourceStats)
    name: str = "-"

    @property
    def recognised(self) -> bool:
        return bool(self.findings)

    def source_json(self) -> Dict[str, Any]:
        return {
            "name": self.name,
            "bytes": self.stats.bytes_read,
            "lines": self.stats.lines,
            "candidate_lines": self.stats.candidate_lines,
            "truncated_lines": self.stats.truncated_lines,
            "replaced_characters": self.stats.replaced_chars,
            "facts": self.facts,
            "notes": [{"id": n.id, "meaning": n.meaning, "line": n.first_line, "count": n.count, "text": n.text}
                      for n in self.notes],
        }


def explain_stream(stream: BinaryIO, name: str = "-", chunk_bytes: Optional[int] = None,
                   use_grep: Optional[bool] = None, memory: Optional[Memory] = None) -> ExplainResult:
    """Read a binary stream to its end and diagnose it. Memory stays flat whatever its size.

    The candidate lines come from the system's grep where one works (use_grep=None), else from
    the pure-Python scanner; both give the same lines. `memory` replaces the known reports that the
    last resort searches (similar.py)."""
    explainer = Explainer(load_catalogue())
    stats = SourceStats()
    scan = iter_candidate_lines_grep if (grep_command() if use_grep is None else use_grep) else iter_candidate_lines
    chunk = chunk_bytes or (GREP_CHUNK_BYTES if scan is iter_candidate_lines_grep else CHUNK_BYTES)
    sample = HeadAndTail(stream)
    for lineno, line, keywords in scan(sample, explainer.keywords, stats, chunk, explainer.saturable):
        explainer.feed(lineno, line, keywords)
    whole = sample.whole_text()
    if whole is not None:  # a paste, small enough to look for lines it folded
        explainer.feed_wrapped(whole)
    kept = sample.text()  # the log's head and tail, for the steps that read it whole
    for fact, value in template_facts(kept).items():  # issue-form fields: no line says what they are
        explainer.facts.setdefault(fact, value)
    diagnosis: Diagnosis = explainer.diagnose()
    findings = diagnosis.findings
    # no line named a cause: the last resort (not when a context rule read the whole log as harmless)
    if not any(names_a_problem(f) or f.evidence.get("context_rule") for f in findings):
        guess = likely_cause(kept, explainer.reads, memory)
        if guess is not None:
            findings = rank([guess, *findings])
    return ExplainResult(findings, diagnosis.facts, diagnosis.notes, stats, name)


def explain_text(text: str, name: str = "-") -> ExplainResult:
    return explain_stream(io.BytesIO(text.encode("utf-8", "surrogatepass")), name)


class _CallablePackage(types.ModuleType):
    """`gpudoctor.explain(text)` is the Python API (gpudoctor/api.py). Once this package is imported,
    the attribute `gpudoctor.explain` is the package itself, so the package answers the call."""

    def __call__(self, text: str) -> Any:
        from ..api import explain

        return explain(text)


sys.modules[__name__].__class__ = _CallablePackage
