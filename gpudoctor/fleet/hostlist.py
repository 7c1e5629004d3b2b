"""Node lists the way Slurm people read them: `node[1-3,7],gpu01` instead of five names."""

from __future__ import annotations

import re
from typing import Dict, List, Sequence

_NUMBERED = re.compile(r"^(.*?)(\d+)$")
_MAX_SHOWN = 12  # ranges (and names): a long list is cut with a count


def compress(names: Sequence[str]) -> str:
    prefixes: Dict[str, List[str]] = {}
    plain: List[str] = []
    for name in names:
        m = _NUMBERED.match(name)
        if m:
            prefixes.setdefault(m.group(1), []).append(m.group(2))
        else:
            plain.append(name)
    parts: List[str] = []
    for prefix, digits in prefixes.items():
        # zero-padded numbers keep their width (gpu01..gpu12)
        width = min((len(d) for d in digits if d.startswith("0") and len(d) > 1), default=0)
        ranges = _ranges(sorted({int(d) for d in digits}), width)
        if len(ranges) > _MAX_SHOWN:
            ranges = ranges[:_MAX_SHOWN] + [f"… {len(ranges) - _MAX_SHOWN} more"]
        if len(ranges) == 1 and "-" not in ranges[0]:
            parts.append(prefix + ranges[0])
        else:
            parts.append(f"{prefix}[{','.join(ranges)}]")
    parts.extend(plain)
    if len(parts) > _MAX_SHOWN:
        return ",".join(parts[:_MAX_SHOWN]) + f",… ({len(parts) - _MAX_SHOWN} more)"
    return ",".join(parts)


def _ranges(numbers: List[int], width: int) -> List[str]:
    out: List[str] = []
    start = prev = None
    for n in numbers + [None]:  # type: ignore[operator]
        if start is not None and n is not None and n == prev + 1:
            prev = n
            continue
        if start is not None:
            a, b = str(start).zfill(width), str(prev).zfill(width)
            out.append(a if start == prev else f"{a}-{b}")
        start = prev = n
    return out
