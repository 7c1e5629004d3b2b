"""HTML for notebooks (Jupyter, Colab): the verdict, then findings root cause first, each fix
command in its own <pre><code> block so that it copies whole. Standard library only; every piece
of text is escaped, because details quote logs and paths that anyone could have written."""

from __future__ import annotations

from html import escape
from typing import List, Optional, Sequence, Tuple

from ..model import Finding, Severity
from .fix_steps import split_step

VERDICT_LABEL = {"ok": ("✔ OK", "#1a7f37"), "warning": ("⚠ WARNING", "#9a6700"), "error": ("✖ ERROR", "#cf222e")}
SEVERITY_COLOR = {Severity.ERROR: "#cf222e", Severity.WARNING: "#9a6700", Severity.INFO: "#0969da"}
_PRE = "margin:2px 0 6px 0;padding:4px 8px;white-space:pre;overflow-x:auto;background:rgba(127,127,127,0.12)"


def _text(value: object) -> str:
    return escape(str(value), quote=True)


def _fix_html(steps: Sequence[str]) -> str:
    items = []
    for step in steps:
        parts = split_step(step)
        body = [f'<pre style="{_PRE}"><code>{_text(c)}</code></pre>' for c in parts.lead]
        if parts.prose:
            body.append(f"<p style=\"margin:2px 0\">{_text(parts.prose)}</p>")
        body += [f'<pre style="{_PRE}"><code>{_text(c)}</code></pre>' for c in parts.commands]
        items.append("<li>" + "".join(body) + "</li>")
    return "<ol class=\"fix\">" + "".join(items) + "</ol>" if items else ""


def finding_html(finding: Finding, role: str = "") -> str:
    color = SEVERITY_COLOR[finding.severity]
    head = (f'<span style="color:{color};font-weight:bold">{_text(finding.severity.value.upper())}</span> '
            f"<code>{_text(finding.code)}</code> — {_text(finding.title)}"
            + (f' <em class="role">({_text(role)})</em>' if role else ""))
    parts = [f'<div class="finding" data-code="{_text(finding.code)}" style="border-left:4px solid {color};'
             f'padding-left:8px;margin:8px 0">',
             f'<p class="title" style="margin:0">{head}</p>',
             f'<p class="detail" style="margin:4px 0">{_text(finding.detail)}</p>']
    if finding.caused_by:
        parts.append(f'<p class="caused-by" style="margin:4px 0">Caused by: <code>{_text(finding.caused_by)}</code></p>')
    if finding.fix:
        parts.append("<p style=\"margin:4px 0\"><strong>Fix:</strong></p>" + _fix_html(finding.fix))
    parts.append("</div>")
    return "".join(parts)


def _role(finding: Finding, first_root: Optional[Finding]) -> str:
    if finding is first_root:
        return "root cause"
    return f"caused by {finding.caused_by}" if finding.caused_by else ""


def report_html(verdict: str, summary: str, findings: List[Finding],
                tables: Sequence[Tuple[str, List[str], List[List[str]]]] = (), title: str = "gpudoctor") -> str:
    """The whole report: verdict line, findings in the order given (root cause first), then the
    tables (caption, header, rows) folded away in <details>."""
    label, color = VERDICT_LABEL[verdict]
    roots = [f for f in findings if f.severity != Severity.INFO and f.caused_by is None]
    out = [f'<div class="gpudoctor" data-verdict="{_text(verdict)}">',
           f'<p class="verdict" style="margin:4px 0"><strong>{_text(title)}</strong>: '
           f'<span style="color:{color};font-weight:bold">{_text(label)}</span> {_text(summary)}</p>']
    out += [finding_html(f, _role(f, roots[0] if roots else None)) for f in findings]
    for caption, header, rows in tables:
        out.append(f"<details><summary>{_text(caption)}</summary><table>")
        out.append("<tr>" + "".join(f"<th style=\"text-align:left\">{_text(h)}</th>" for h in header) + "</tr>")
        out += ["<tr>" + "".join(f"<td style=\"text-align:left\">{_text(c)}</td>" for c in row) + "</tr>"
                for row in rows]
        out.append("</table></details>")
    out.append("</div>")
    return "\n".join(out)
