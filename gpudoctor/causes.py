"""One cause, one finding: fold findings that share a cause into one, and count causes.

Used by `explain` (the six libraries of one missing CUDA version are one finding) and by rules
(the libraries that all miss the same dependency); the verdict line counts what `count_causes`
counts, so a cause with many symptoms counts once.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional

from .model import Finding, Severity

CauseKey = Callable[[Finding], Optional[str]]  # None: this finding stands alone
Merge = Callable[[str, List[Finding]], Finding]


def one_finding_per_cause(findings: List[Finding], cause_of: CauseKey, merge: Merge,
                          merge_single: bool = False) -> List[Finding]:
    """Findings with the same cause key become one (built by `merge`), placed where the first was;
    `caused_by` pointers to a code that was merged away point at the merged finding instead.
    `merge_single`: a cause with one symptom goes through `merge` too (to be worded as the cause)."""
    groups: Dict[str, List[Finding]] = {}
    for f in findings:
        key = cause_of(f)
        if key is not None:
            groups.setdefault(key, []).append(f)
    out: List[Finding] = []
    renamed: Dict[str, str] = {}
    for f in findings:
        key = cause_of(f)
        members = groups.get(key) if key is not None else None
        if not members or (len(members) == 1 and not merge_single):
            out.append(f)
        elif f is members[0]:
            merged = merge(key, members)
            out.append(merged)
            renamed.update({m.code: merged.code for m in members})
    codes = {f.code for f in out}
    return [f if f.caused_by is None or f.caused_by in codes or f.caused_by not in renamed
            else _with_cause(f, renamed[f.caused_by]) for f in out]


def _with_cause(f: Finding, code: str) -> Finding:
    return Finding(f.code, f.severity, f.layer, f.title, f.detail, f.evidence, f.fix, code)


def is_root_cause(f: Finding, findings: List[Finding]) -> bool:
    """Not a symptom of another finding in the same report."""
    return f.caused_by is None or all(o.code != f.caused_by for o in findings if o is not f)


def count_causes(findings: List[Finding]) -> Dict[str, int]:
    """Errors and warnings that are root causes (a symptom counts under its cause), and symptoms."""
    roots = [f for f in findings if is_root_cause(f, findings)]
    return {
        "errors": sum(1 for f in roots if f.severity == Severity.ERROR),
        "warnings": sum(1 for f in roots if f.severity == Severity.WARNING),
        "symptoms": sum(1 for f in findings if f.severity != Severity.INFO and not is_root_cause(f, findings)),
    }


def tally_text(findings: List[Finding]) -> str:
    """'1 error + 1 symptom', '2 warnings': the verdict line's counts, causes not lines."""
    c = count_causes(findings)
    parts = [f"{n} {word}{'s' if n != 1 else ''}" for word, n in (("error", c["errors"]), ("warning", c["warnings"]))
             if n]
    text = ", ".join(parts) or "no problems"
    if c["symptoms"]:
        text += f" + {c['symptoms']} symptom{'s' if c['symptoms'] != 1 else ''}"
    return text
