"""Read a saved report back: a `check --json` output, or a Markdown report with the JSON inside.

`gpudoctor report --from` and `gpudoctor diff` accept either, so support staff can load what a
user attached to a ticket.
"""

from __future__ import annotations

import json
import re
from typing import Any, Dict

# The Markdown report puts the JSON right after this marker, in a fenced block.
JSON_MARKER = "<!-- gpudoctor:report-json -->"
_FENCE = re.compile(r"^(`{3,})\s*json\s*$", re.MULTILINE)


class SavedReportError(Exception):
    """The file is not a report gpudoctor can read; the message says why, for the user."""


def parse_saved_report(text: str, source: str = "the input") -> Dict[str, Any]:
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
        except ValueError as exc:
            raise SavedReportError(f"{source} is not valid JSON: {exc}") from None
    else:
        data = _json_from_markdown(text, source)
    if not isinstance(data, dict) or not isinstance(data.get("findings"), list) or "facts" not in data:
        raise SavedReportError(f"{source} is not a gpudoctor report (no `findings` and `facts`); "
                               "save one with `gpudoctor check --json > FILE` or `gpudoctor report`.")
    return data


def _json_from_markdown(text: str, source: str) -> Any:
    start = text.find(JSON_MARKER)
    fences = list(_FENCE.finditer(text, start if start >= 0 else 0))
    if not fences:
        raise SavedReportError(f"{source} holds no JSON: expected `check --json` output or a `gpudoctor report` file.")
    fence = fences[0] if start >= 0 else fences[-1]
    ticks = fence.group(1)
    end = re.compile(r"^" + ticks + r"\s*$", re.MULTILINE).search(text, fence.end())
    if end is None:
        raise SavedReportError(f"{source}: the JSON block is not closed (was the file cut short?).")
    try:
        return json.loads(text[fence.end():end.start()])
    except ValueError as exc:
        raise SavedReportError(f"{source}: the JSON block is not valid JSON: {exc}") from None


def load_saved_report(path: str) -> Dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as exc:
        raise SavedReportError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise SavedReportError(f"{path} is not a text file") from None
    return parse_saved_report(text, path)
