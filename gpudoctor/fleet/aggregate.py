"""The one aggregation behind every engine: node answers in, a fleet summary out, streaming.

Each answer is reduced on arrival to a `NodeRecord` (the node's verdict, its findings, its group)
and dropped, so memory grows with the number of nodes by a few hundred bytes each, not by a report
each; `fleet reports` has worker processes do that reduction for a big fleet. A group keeps the stack part of its first report, for
ranking its differences from the majority at the end with `gpudoctor diff`'s ranking.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Set, Tuple, Union

from ..diff.compare import diff_reports
from .fingerprint import FingerprintCache, is_fingerprint_key, stack_report

SCHEMA = "gpudoctor-fleet/1"
_SEVERITY_RANK = {"error": 0, "warning": 1, "info": 2}


@dataclass
class NodeAnswer:
    """What an engine brought back from one node: a parsed `check --json` report, or why not."""

    node: str
    report: Optional[Mapping[str, Any]] = None
    error: Optional[str] = None  # "gpudoctor is not on PATH", "no answer within 60 s", ...


@dataclass
class RootCause:
    code: str
    severity: str
    title: str

    def to_json(self) -> Dict[str, Any]:
        return {"code": self.code, "severity": self.severity, "title": self.title}


@dataclass
class NodeSummary:
    node: str
    verdict: str  # ok | warning | error | no-answer
    error: Optional[str]
    root_causes: List[RootCause]
    group: Optional[str]

    def to_json(self) -> Dict[str, Any]:
        return {"node": self.node, "verdict": self.verdict, "error": self.error,
                "root_causes": [c.to_json() for c in self.root_causes], "group": self.group}


@dataclass
class Group:
    id: str
    fingerprint: Dict[str, str]  # key -> value
    labels: Dict[str, str]  # key -> label for people
    stack: Dict[str, Any]  # stack_report() of its first node
    nodes: List[str] = field(default_factory=list)

    def to_json(self) -> Dict[str, Any]:
        return {"group": self.id, "count": len(self.nodes), "nodes": self.nodes, "fingerprint": self.fingerprint}


@dataclass
class Difference:
    key: str
    label: str
    value: Optional[str]  # on the outlier
    majority: Optional[str]

    def to_json(self) -> Dict[str, Any]:
        return {"key": self.key, "label": self.label, "value": self.value, "majority": self.majority}


@dataclass
class Outlier:
    node: str
    group: str
    differs: List[Difference]  # most likely culprit first

    def to_json(self) -> Dict[str, Any]:
        return {"node": self.node, "group": self.group, "differs": [d.to_json() for d in self.differs]}


@dataclass
class FindingSpread:
    code: str
    severity: str
    title: str
    caused_by: Optional[str] = None  # as on the first node that has it
    nodes: List[str] = field(default_factory=list)

    def to_json(self) -> Dict[str, Any]:
        return {"code": self.code, "severity": self.severity, "title": self.title, "caused_by": self.caused_by,
                "count": len(self.nodes), "nodes": self.nodes}


@dataclass
class FleetSummary:
    engine: str
    nodes: List[NodeSummary]
    groups: List[Group]  # biggest first; the majority is groups[0]
    outliers: List[Outlier]
    findings: List[FindingSpread]  # errors first, then by how many nodes
    notes: List[str] = field(default_factory=list)  # what the engine said about the run itself

    @property
    def majority(self) -> Optional[Group]:
        return self.groups[0] if self.groups else None

    @property
    def unanswered(self) -> List[NodeSummary]:
        return [n for n in self.nodes if n.error]

    @property
    def verdict(self) -> str:
        verdicts = {n.verdict for n in self.nodes}
        if not self.nodes or "error" in verdicts or self.unanswered:
            return "error"
        if "warning" in verdicts or self.outliers:
            return "warning"
        return "ok"

    @property
    def exit_code(self) -> int:
        """0 when every node answered with no error finding, 1 otherwise."""
        return 1 if not self.nodes or self.unanswered or any(n.verdict == "error" for n in self.nodes) else 0

    def to_json(self) -> Dict[str, Any]:
        majority = self.majority
        return {
            "schema": SCHEMA,
            "engine": self.engine,
            "verdict": self.verdict,
            "counts": {"nodes": len(self.nodes), "answered": len(self.nodes) - len(self.unanswered),
                       "no_answer": len(self.unanswered), "groups": len(self.groups)},
            "nodes": [n.to_json() for n in self.nodes],
            "majority": majority.to_json() if majority else None,
            "groups": [g.to_json() for g in self.groups],
            "outliers": [o.to_json() for o in self.outliers],
            "findings": [f.to_json() for f in self.findings],
            "notes": self.notes,
        }


@dataclass
class NodeRecord:
    """One answer reduced to what the summary keeps: small and picklable, so that worker processes
    can reduce saved reports in parallel."""

    node: str
    verdict: str
    error: Optional[str] = None
    findings: List[Tuple[str, str, str, Optional[str]]] = field(default_factory=list)  # code, severity, title, cause
    group: Optional[str] = None
    seed: Optional[Group] = None  # the group with its stack, the first time this reducer met it


class Reducer:
    """Answers to records. Sends a group's stack along only the first time it meets the group."""

    def __init__(self) -> None:
        self._fingerprints = FingerprintCache()
        self._seeded: Set[str] = set()

    def reduce(self, answer: NodeAnswer) -> NodeRecord:
        report = answer.report
        if answer.error or not isinstance(report, Mapping):
            return NodeRecord(answer.node, "no-answer", answer.error or "no report")
        stack = stack_report(report)
        group_id, aspects = self._fingerprints.fingerprint(stack)
        seed = None
        if group_id not in self._seeded:
            self._seeded.add(group_id)
            seed = Group(group_id, {k: a.value or "" for k, a in aspects.items()},
                         {k: a.label for k, a in aspects.items()}, stack)
        findings = [(str(f["code"]), str(f.get("severity", "")), str(f.get("title", "")), f.get("caused_by"))
                    for f in report.get("findings") or [] if isinstance(f, Mapping) and f.get("code")]
        return NodeRecord(answer.node, str(report.get("verdict", "error")), None, findings, group_id, seed)


class FleetAggregator:
    """Feed answers (or records) one at a time; `finish` ranks the groups and names the outliers."""

    def __init__(self, engine: str):
        self.engine = engine
        self._nodes: List[NodeSummary] = []
        self._groups: Dict[str, Group] = {}
        self._findings: Dict[str, FindingSpread] = {}
        self._names: Dict[str, int] = {}
        self._reducer = Reducer()
        self.notes: List[str] = []

    def add(self, item: Union[NodeAnswer, NodeRecord]) -> None:
        record = item if isinstance(item, NodeRecord) else self._reducer.reduce(item)
        node = self._unique(record.node)
        if record.error is not None or record.group is None:
            self._nodes.append(NodeSummary(node, "no-answer", record.error or "no report", [], None))
            return
        group = self._groups.get(record.group)
        if group is None:
            assert record.seed is not None, "a reducer sends a group's stack with its first node"
            group = self._groups[record.group] = record.seed
        group.nodes.append(node)
        for code, severity, title, caused_by in record.findings:
            spread = self._findings.get(code)
            if spread is None:
                spread = self._findings[code] = FindingSpread(code, severity, title, caused_by)
            spread.nodes.append(node)
        causes = [RootCause(code, severity, title) for code, severity, title, caused_by in record.findings
                  if severity in ("error", "warning") and not caused_by]
        self._nodes.append(NodeSummary(node, record.verdict, None, causes, record.group))

    def add_all(self, items: Iterable[Union[NodeAnswer, NodeRecord]]) -> "FleetAggregator":
        for item in items:
            self.add(item)
        return self

    def finish(self) -> FleetSummary:
        verdicts = {n.node: n.verdict for n in self._nodes}
        # The majority is the biggest group; among equals, the one with fewer failing nodes.
        groups = sorted(self._groups.values(), key=lambda g: (
            -len(g.nodes), sum(verdicts[n] == "error" for n in g.nodes)))
        outliers: List[Outlier] = []
        for group in groups[1:]:
            differs = _differences(groups[0], group)
            outliers.extend(Outlier(node, group.id, differs) for node in group.nodes)
        findings = sorted(self._findings.values(), key=lambda f: (_SEVERITY_RANK.get(f.severity, 3), -len(f.nodes)))
        return FleetSummary(self.engine, self._nodes, groups, outliers, findings, list(self.notes))

    def _unique(self, name: str) -> str:
        """Two answers under one name (a host name that repeats) stay two nodes."""
        name = name or "?"
        seen = self._names.get(name, 0)
        self._names[name] = seen + 1
        return name if not seen else f"{name}#{seen + 1}"


def _differences(majority: Group, group: Group) -> List[Difference]:
    """The fingerprint facts in which `group` differs from the majority, in `gpudoctor diff`'s order."""
    ranked = diff_reports(majority.stack, group.stack, "majority", group.id).facts
    return [Difference(d.key, d.label, d.b, d.a) for d in ranked if is_fingerprint_key(d.key)]
