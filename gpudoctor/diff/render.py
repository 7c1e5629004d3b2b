"""The terminal view of a diff (rich). `--json` output is `ReportDiff.to_json()`."""

from __future__ import annotations

from typing import List, Optional

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .compare import FindingSide, ReportDiff

_VERDICT_STYLE = {"ok": "green", "warning": "yellow", "error": "red"}
_SEVERITY_STYLE = {"error": "red", "warning": "yellow", "info": "cyan"}
_MAX_VALUE = 120


def _cell(value: Optional[str]) -> Text:
    if value is None:
        return Text("—", style="dim")
    return Text(value if len(value) <= _MAX_VALUE else value[:_MAX_VALUE] + "…")


def _findings(title: str, sides: List[FindingSide]) -> Table:
    table = Table(title=title, title_justify="left", show_header=False, box=None, padding=(0, 1))
    for f in sides:
        cause = Text(f" (caused by {f.caused_by})", style="dim") if f.caused_by else Text("")
        table.add_row(Text(f.severity, style=_SEVERITY_STYLE.get(f.severity, "")), Text(f.code, style="bold"),
                      Text(f.title) + cause)
    return table


def render_terminal(diff: ReportDiff, console: Console, limit: Optional[int] = 30) -> None:
    """Print the diff: verdicts, the facts that differ (most likely cause first), the findings."""
    for side, name, verdict in (("A", diff.a_name, diff.a_verdict), ("B", diff.b_name, diff.b_verdict)):
        console.print(Text(f"{side}: ", style="bold") + Text(name) + Text("  verdict: ") +
                      Text(verdict, style=_VERDICT_STYLE.get(verdict, "")))
    console.print()
    if not diff.facts:
        console.print("No fact that gpudoctor compares differs.")
    else:
        shown = diff.facts if limit is None else diff.facts[:limit]
        table = Table(title="What differs, most likely cause first", title_justify="left", show_lines=False)
        table.add_column("#", justify="right", style="dim")
        table.add_column("fact", style="bold")
        table.add_column("A", overflow="fold")
        table.add_column("B", overflow="fold")
        table.add_column("why", style="dim")
        for n, d in enumerate(shown, 1):
            table.add_row(str(n), d.label, _cell(d.a), _cell(d.b), d.why or d.category)
        console.print(table)
        if len(shown) < len(diff.facts):
            console.print(Text(f"… and {len(diff.facts) - len(shown)} smaller differences (--all shows them).",
                               style="dim"))
    console.print()
    if diff.only_in_a:
        console.print(_findings("Findings only in A", diff.only_in_a))
    if diff.only_in_b:
        console.print(_findings("Findings only in B", diff.only_in_b))
    for a, b in diff.severity_changed:
        console.print(Text(f"{a.code}: {a.severity} in A, {b.severity} in B"))
    if not (diff.only_in_a or diff.only_in_b or diff.severity_changed):
        console.print("Both sides have the same findings.")
