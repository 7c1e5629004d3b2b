"""A fleet for people (rich) and for tools (JSON). Only formats a `FleetSummary`."""

from __future__ import annotations

import json
import re
from typing import Dict, List, Optional, Sequence, Tuple

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .aggregate import Difference, FleetSummary, Group
from .hostlist import compress

_VERDICT_STYLE = {"ok": "green", "warning": "yellow", "error": "red", "no-answer": "red"}
_MAX_DIFFERS = 5
_PER_GPU = re.compile(r"^gpus\.(\d+)\.(.+)$")
# Fingerprint keys shown in the group table, in this order, when present.
_STACK_COLUMNS = (("driver", ("driver.version",)), ("CUDA", ("driver.cuda_version",)),
                  ("GPUs", ("gpus.count", "gpus.0.name")))


def render_json(summary: FleetSummary) -> str:
    return json.dumps(summary.to_json(), indent=2, default=str)


def render_terminal(summary: FleetSummary, console: Console) -> None:
    verdict = summary.verdict
    counts = summary.to_json()["counts"]
    console.print(Text("Fleet verdict: ", style="bold") + Text(verdict.upper(), style=_VERDICT_STYLE[verdict]) +
                  Text(f"  ({counts['nodes']} nodes via {summary.engine}, {counts['answered']} answered, "
                       f"{len(summary.groups)} stack group{'s' if len(summary.groups) != 1 else ''})"))
    for note in summary.notes:
        console.print(Text(note, style="dim"))
    console.print()
    if summary.groups:
        console.print(_group_table(summary))
    _print_outliers(summary, console)
    if summary.unanswered:
        console.print(Text("Nodes that did not answer", style="bold red"))
        for n in summary.unanswered:
            console.print(Text(f"  {n.node}: ", style="bold") + Text(n.error or ""))
        console.print()
    if summary.findings:
        table = Table(title="Findings by node", title_justify="left", box=None, padding=(0, 1))
        for col in ("severity", "code", "nodes", "title"):
            table.add_column(col)
        for f in summary.findings:
            cause = Text(f" (caused by {f.caused_by})", style="dim") if f.caused_by else Text("")
            table.add_row(Text(f.severity, style=_VERDICT_STYLE.get(f.severity, "cyan")), Text(f.code, style="bold"),
                          f"{len(f.nodes)}: {compress(f.nodes)}", Text(f.title) + cause)
        console.print(table)


def _group_table(summary: FleetSummary) -> Table:
    table = Table(title="Nodes by stack (the first group is the majority)", title_justify="left")
    table.add_column("group")
    table.add_column("nodes", overflow="fold")
    for name, _ in _STACK_COLUMNS:
        table.add_column(name, overflow="fold")
    table.add_column("verdicts")
    verdicts = {n.node: n.verdict for n in summary.nodes}
    for i, group in enumerate(summary.groups):
        label = Text(group.id + (" (majority)" if i == 0 else ""), style="bold" if i == 0 else "")
        table.add_row(label, f"{len(group.nodes)}: {compress(group.nodes)}",
                      *[_stack_cell(group, keys) for _, keys in _STACK_COLUMNS], _verdict_counts(group, verdicts))
    return table


def _stack_cell(group: Group, keys: Sequence[str]) -> str:
    return " × ".join(group.fingerprint[k] for k in keys if k in group.fingerprint) or "—"


def _verdict_counts(group: Group, verdicts: Dict[str, str]) -> Text:
    out = Text()
    for verdict in ("error", "warning", "ok"):
        n = sum(verdicts.get(node) == verdict for node in group.nodes)
        if n:
            out += Text(f"{n} {verdict} ", style=_VERDICT_STYLE[verdict])
    return out


def _per_gpu_folded(differs: Sequence[Difference]) -> List[Tuple[str, Optional[str], Optional[str]]]:
    """One line for the same difference on several GPUs ("GPUs 0-3 model"), in ranking order."""
    lines: List[Tuple[str, Optional[str], Optional[str]]] = []
    folded: Dict[Tuple[str, Optional[str], Optional[str]], Tuple[int, List[str]]] = {}
    for d in differs:
        m = _PER_GPU.match(d.key)
        if not m:
            lines.append((d.label, d.value, d.majority))
            continue
        key = (m.group(2), d.value, d.majority)
        if key in folded:
            folded[key][1].append(m.group(1))
            continue
        folded[key] = (len(lines), [m.group(1)])
        lines.append((d.label, d.value, d.majority))
    for (_, value, majority), (at, gpus) in folded.items():
        if len(gpus) > 1:
            label = lines[at][0].replace(f"GPU {gpus[0]} ", f"GPUs {compress(gpus).strip('[]')} ", 1)
            lines[at] = (label, value, majority)
    return lines


def _value(value: object) -> str:
    return "(unknown)" if value is None else str(value)


def _print_outliers(summary: FleetSummary, console: Console) -> None:
    if not summary.outliers:
        if summary.groups:
            console.print("Every node that answered has the same stack.\n")
        return
    console.print(Text("Nodes that differ from the majority, most likely culprit first", style="bold"))
    by_group: Dict[str, List[str]] = {}
    for o in summary.outliers:
        by_group.setdefault(o.group, []).append(o.node)
    shown = {o.group: o for o in summary.outliers}
    for group_id, nodes in by_group.items():
        differs = shown[group_id].differs
        console.print(Text(f"  {compress(nodes)}", style="bold yellow") + Text(f"  (group {group_id})", style="dim"))
        lines = _per_gpu_folded(differs)
        for label, value, majority in lines[:_MAX_DIFFERS]:
            console.print(Text(f"    {label}: ") + Text(_value(value), style="bold") +
                          Text(f"  (majority: {_value(majority)})", style="dim"))
        if len(lines) > _MAX_DIFFERS:
            console.print(Text(f"    … and {len(lines) - _MAX_DIFFERS} more (--json lists all)", style="dim"))
    console.print()
