"""gpudoctor from Python: notebooks, scripts, a REPL.

    import gpudoctor
    report = gpudoctor.check()        # the same diagnosis as `gpudoctor check`
    report                            # in Jupyter/Colab: HTML, root cause first, commands copyable
    report.verdict, report.exit_code  # "error", 1
    gpudoctor.explain(log_text)       # the same as `gpudoctor explain`

No framework is imported here: the probes that touch one run it in a child process, as the
command does.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional

from .model import Finding, Severity, verdict_of

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult

    from .explain import ExplainResult
    from .facts import Facts
    from .pipeline import Report

def _render_captured(console: "Console", options: "ConsoleOptions", draw: Any) -> Iterator[Any]:
    """Rich text for a REPL: draw with the terminal renderer on a console of the same width, then
    hand the lines back. The outer console crops at its width, so long commands fold here instead."""
    from rich.console import Console
    from rich.text import Text

    capture = Console(file=io.StringIO(), width=options.max_width, force_terminal=True,
                      color_system=console.color_system or "standard", no_color=console.no_color,
                      highlight=False)
    draw(capture)
    for line in capture.file.getvalue().splitlines():  # type: ignore[attr-defined]
        yield Text.from_ansi(line, overflow="fold", no_wrap=False)


class CheckReport:
    """The result of `check()`: verdict, findings (root cause first), facts, JSON, exit code."""

    def __init__(self, report: "Report") -> None:
        self._report = report

    @property
    def verdict(self) -> str:
        return self._report.verdict

    @property
    def findings(self) -> List[Finding]:
        return self._report.findings

    @property
    def facts(self) -> "Facts":
        return self._report.facts

    @property
    def exit_code(self) -> int:
        return self._report.exit_code

    def to_json(self) -> Dict[str, Any]:
        """The `gpudoctor check --json` object."""
        return self._report.to_json()

    def __repr__(self) -> str:
        return f"<gpudoctor check: {self.verdict}, {len(self.findings)} finding(s)>"

    def _framework_lines(self) -> List[str]:
        from .renderers.framework_lines import readiness_lines

        return readiness_lines(self.facts, self.findings)

    def _repr_html_(self) -> str:
        from .renderers.html import report_html
        from .renderers.terminal import layer_statuses, shown_findings, summarize_layers, verdict_summary

        summary = verdict_summary(self.verdict, self.findings)
        seen = summarize_layers(self.facts)
        layers = [[layer.label, status, seen.get(layer, "")] for layer, status in layer_statuses(self.findings).items()]
        frameworks = [[line] for line in self._framework_lines()]
        tables = [("Layers", ["Layer", "Status", "What gpudoctor saw"], layers)]
        if frameworks:
            tables.append(("Frameworks", ["Readiness"], frameworks))
        return report_html(self.verdict, summary, shown_findings(self.findings), tables, title="gpudoctor check")

    def __rich_console__(self, console: "Console", options: "ConsoleOptions") -> "RenderResult":
        from .renderers.terminal import render_terminal

        yield from _render_captured(console, options, lambda c: render_terminal(
            c, self.facts, self.findings, self.verdict, False, self._framework_lines()))


class ExplainReport:
    """The result of `explain()`: the findings a log shows, root cause first."""

    def __init__(self, result: "ExplainResult") -> None:
        self._result = result

    @property
    def findings(self) -> List[Finding]:
        return self._result.findings

    @property
    def verdict(self) -> str:
        return verdict_of(self.findings)

    @property
    def exit_code(self) -> int:
        return 1 if any(f.severity == Severity.ERROR for f in self.findings) else 0

    def to_json(self) -> Dict[str, Any]:
        """The `gpudoctor explain --json` object."""
        from .commands.explain import json_report

        return json_report(self._result, self.findings, check=None)

    def __repr__(self) -> str:
        return f"<gpudoctor explain: {self.verdict}, {len(self.findings)} finding(s)>"

    def _repr_html_(self) -> str:
        from .causes import tally_text
        from .renderers.html import report_html

        stats = self._result.stats
        summary = f"{stats.lines:,} lines read" + (f"; {tally_text(self.findings)}" if self.findings else
                                                  "; nothing in this log points at a GPU environment problem")
        return report_html(self.verdict, summary, self.findings, title="gpudoctor explain")

    def __rich_console__(self, console: "Console", options: "ConsoleOptions") -> "RenderResult":
        from .commands.explain import render_explain

        yield from _render_captured(console, options, lambda c: render_explain(c, self._result, self.findings, None))


def check(quick: bool = False, python: Optional[str] = None, timeout: Optional[float] = None) -> CheckReport:
    """Run the check of `gpudoctor check` (`--quick`, `--python PATH`, `--timeout`). Raises ValueError
    when `python` is not a Python interpreter."""
    from .commands.check import DEFAULT_QUICK_TIMEOUT, DEFAULT_TIMEOUT
    from .pipeline import CheckOptions, run_check
    from .target_python import validate_python

    target = validate_python(python)
    options = CheckOptions(quick=quick, python=target,
                           timeout=timeout or (DEFAULT_QUICK_TIMEOUT if quick else DEFAULT_TIMEOUT))
    return CheckReport(run_check(options))


def explain(text: str) -> ExplainReport:
    """Read an error message or a whole log (a string) as `gpudoctor explain` does."""
    from .explain import explain_text

    return ExplainReport(explain_text(text, name="<text>"))
