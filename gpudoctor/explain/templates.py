"""Fill the catalogue's text templates with values extracted from the log.

`{name}` is replaced by a value; text inside `[[ ]]` is kept only if every value it names
is known, so a detail reads well whether or not the log showed, say, the driver version.
"""

from __future__ import annotations

import re
import string
from typing import Any, Dict, Iterable, List, Optional

_OPTIONAL = re.compile(r"\[\[(.*?)\]\]", re.DOTALL)
_FORMATTER = string.Formatter()


def _names(text: str) -> List[str]:
    return [name for _, name, _, _ in _FORMATTER.parse(text) if name]


def _known(values: Dict[str, Any], name: str) -> bool:
    value = values.get(name)
    return value is not None and str(value).strip() != ""


def _fill(text: str, values: Dict[str, Any]) -> str:
    out = []
    for literal, name, spec, conv in _FORMATTER.parse(text):
        out.append(literal)
        if name is not None:
            out.append(str(values[name]).strip() if _known(values, name) else "(unknown)")
    return "".join(out)


def render(template: str, values: Dict[str, Any]) -> str:
    if not template:
        return ""

    def optional(m: "re.Match[str]") -> str:
        inner = m.group(1)
        return _fill(inner, values) if all(_known(values, n) for n in _names(inner)) else ""

    try:
        return " ".join(_fill(_OPTIONAL.sub(optional, template), values).split())
    except (ValueError, IndexError):  # a malformed template must not crash explain
        return template


def render_all(templates: Iterable[str], values: Dict[str, Any]) -> List[str]:
    seen, out = set(), []
    for t in templates:
        text = render(t, values)
        if text and text not in seen:
            seen.add(text)
            out.append(text)
    return out


def first(*texts: Optional[str]) -> str:
    for t in texts:
        if t:
            return t
    return ""
