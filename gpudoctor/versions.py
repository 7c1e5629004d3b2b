"""Version numbers as NVIDIA's APIs and package files write them. Dependency-free: every layer
(probes, rules, renderers, explain, the conda hook) may use it."""

from __future__ import annotations

import re
from typing import Any, Optional, Tuple


def cuda_version_parts(code: int) -> Tuple[int, int]:
    """cuDriverGetVersion / cudaRuntimeGetVersion / NVML encoding, 1000*major + 10*minor: 12020 -> (12, 2)."""
    return code // 1000, (code % 1000) // 10


def cuda_version_text(code: Any) -> Optional[str]:
    """12020 -> "12.2"; None for anything that is not such a number (0 means: no driver answered)."""
    if not isinstance(code, int) or isinstance(code, bool) or code <= 0:
        return None
    return "%d.%d" % cuda_version_parts(code)


def version_parts(text: Optional[str]) -> Tuple[int, ...]:
    """Every number in a version string, in order: "12.4.127" -> (12, 4, 127); tolerant of junk."""
    return tuple(int(p) for p in re.findall(r"\d+", text or ""))
