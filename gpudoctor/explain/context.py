"""Re-read findings in the context the whole log gives (gpudoctor/explain/context.toml).

A line says "libcuda.so: cannot open shared object file"; another line, anywhere in the log, says
the kernel is 5.15.90.1-microsoft-standard-WSL2. Matching works line by line, so the first line
alone becomes libcuda-missing; this step joins them: in a WSL log that finding is a symptom of
wsl-driver-misconfigured. Facts are already collected from every line, so the join is a pure
function of (findings, facts).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Optional, Pattern, Tuple

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from ..codes import CATALOG, make_finding
from ..compat.queries import arch_entries_run_on
from ..model import Finding, Severity
from .templates import render, render_all

TABLE = Path(__file__).resolve().parent / "context.toml"


@dataclass(frozen=True)
class ContextRule:
    id: str
    facts: Tuple[str, ...]
    codes: Tuple[str, ...]
    becomes: str
    title: str = ""
    detail: str = ""
    fix: Tuple[str, ...] = ()
    value: Optional[Pattern[str]] = None
    evidence: Dict[str, Pattern[str]] = field(default_factory=dict)
    requires: Dict[str, Pattern[str]] = field(default_factory=dict)  # facts that must also be there, matching
    requires_any: Tuple[Dict[str, Pattern[str]], ...] = ()  # alternatives: one of these groups must match too
    unless: Tuple[str, ...] = ()  # facts that put the log in another context
    from_facts: bool = False  # the facts alone establish the cause: a finding is made when no line named one
    severity: Optional[str] = None  # what the re-read finding costs, when not its code's usual severity
    later_minor_of: Tuple[str, ...] = ()  # (device, built): capabilities, the first a later minor of the second's major
    source: str = ""

    def context(self, facts: Dict[str, Any]) -> Optional[Tuple[str, str]]:
        """(fact, value) that puts a log in this context, or None."""
        def holds(group: Dict[str, Pattern[str]]) -> bool:
            return all(name in facts and pattern.fullmatch(str(facts[name])) for name, pattern in group.items())

        if (any(name in facts for name in self.unless) or not holds(self.requires)
                or (self.requires_any and not any(holds(group) for group in self.requires_any))):
            return None
        for name in self.facts:
            if name in facts and (self.value is None or self.value.fullmatch(str(facts[name]))):
                return name, str(facts[name])
        return None

    def required_facts(self) -> List[str]:
        """The facts `requires` and `requires_any` name: the evidence of a finding made from the facts alone."""
        return [*self.requires, *(name for group in self.requires_any for name in group)]

    def covers(self, finding: Finding, facts: Dict[str, Any]) -> bool:
        if finding.code not in self.codes or not all(
                pattern.fullmatch(str(finding.evidence.get(key, ""))) for key, pattern in self.evidence.items()):
            return False
        if self.later_minor_of:
            device, built = ({**facts, **finding.evidence}.get(name) for name in self.later_minor_of)
            # CUDA's binary compatibility: kernels for X.y run on X.z for every z >= y (the tables' own rule)
            return bool(arch_entries_run_on([str(built or "")], str(device or "")))
        return True


@lru_cache(maxsize=1)
def load_rules() -> Tuple[ContextRule, ...]:
    with open(TABLE, "rb") as fh:
        entries = tomllib.load(fh)["context"]
    rules = []
    for e in entries:
        for code in [e["becomes"], *e["codes"]]:
            if code not in CATALOG:
                raise ValueError(f"context {e['id']}: code {code!r} is not in gpudoctor.codes")
        rules.append(ContextRule(
            id=e["id"], facts=tuple(e["facts"]), codes=tuple(e["codes"]), becomes=e["becomes"],
            title=e.get("title", ""), detail=e.get("detail", ""), fix=tuple(e.get("fix", ())),
            value=re.compile(e["value"]) if "value" in e else None,
            evidence={k: re.compile(v) for k, v in e.get("evidence", {}).items()},
            requires={k: re.compile(v) for k, v in e.get("requires", {}).items()},
            requires_any=tuple({k: re.compile(v) for k, v in group.items()} for group in e.get("requires_any", ())),
            unless=tuple(e.get("unless", ())),
            from_facts=bool(e.get("from_facts", False)), severity=e.get("severity"),
            later_minor_of=tuple(e.get("later_minor_of", ())), source=e["source"]))
    return tuple(rules)


def _finding(rule: ContextRule, values: Dict[str, Any], evidence: Dict[str, Any]) -> Finding:
    """The finding a rule makes: its code, its templates over the log's facts, its severity."""
    return make_finding(rule.becomes, render(rule.detail, values), fix=render_all(rule.fix, values),
                        title=render(rule.title, values) or None, evidence={**evidence, "context_rule": rule.id,
                                                                             "context_source": rule.source},
                        severity=Severity(rule.severity) if rule.severity else None)


def apply_context(findings: List[Finding], facts: Dict[str, Any]) -> List[Finding]:
    """The first finding a rule covers becomes the rule's cause; the others it covers name it."""
    out = list(findings)
    for rule in load_rules():
        context = rule.context(facts)
        named = [f for f in out if f.code == rule.becomes and f.caused_by is None and not rule.covers(f, facts)]
        if context is None or any(f.severity == Severity.ERROR for f in named):
            continue  # no context, or a line already names the cause as an error
        if named:
            # the cause named only as a warning (a +cpu wheel alone may be meant) is what an error this rule
            # covers proves: the re-read finding replaces it, so the log still has one finding for one cause
            if not any(f.severity == Severity.ERROR and f.caused_by is None and rule.covers(f, facts) for f in out):
                continue
            absorbed = {id(f) for f in named}
            out = [f for f in out if id(f) not in absorbed]
        seen = {"context": {context[0]: context[1]}}
        covered = [i for i, f in enumerate(out) if f.caused_by is None and rule.covers(f, facts)]
        if not covered:
            if rule.from_facts:  # no line names the cause: the facts themselves are the evidence
                out.insert(0, _finding(rule, {**facts, "original": "no error line names it"},
                                       {**seen, **{k: str(facts[k]) for k in rule.required_facts() if k in facts}}))
            continue
        first = out[covered[0]]
        values = {**facts, **{k: v for k, v in first.evidence.items() if isinstance(v, (str, int))},
                  "original": first.title}
        out[covered[0]] = _finding(rule, values, {**first.evidence, **seen, "reread_from": first.code})
        for i in covered[1:]:
            out[i] = replace(out[i], caused_by=rule.becomes)
        out = [replace(f, caused_by=rule.becomes) if f.caused_by == first.code else f for f in out]
    return out
