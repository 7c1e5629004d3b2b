"""Version strings as the compat tables and NVIDIA write them: dotted integers ("525.60.13", "12.4")."""

from __future__ import annotations

import re
from typing import Tuple

_DOTTED = re.compile(r"^\d+(\.\d+)*$")


def is_dotted(value: str) -> bool:
    return isinstance(value, str) and bool(_DOTTED.match(value))


def vkey(value: str) -> Tuple[int, ...]:
    """Sort/compare key of a dotted version; "12.4" < "12.10", "525.60.13" > "525.60.2"."""
    if not is_dotted(value):
        raise ValueError(f"not a dotted version: {value!r}")
    return tuple(int(p) for p in value.split("."))


def vge(a: str, b: str) -> bool:
    """a >= b, comparing only the parts both have plus zero padding ("580" >= "580" is true)."""
    ka, kb = vkey(a), vkey(b)
    n = max(len(ka), len(kb))
    return ka + (0,) * (n - len(ka)) >= kb + (0,) * (n - len(kb))


def major_minor(value: str) -> str:
    """"12.4.1" -> "12.4"; "12" -> "12"."""
    return ".".join(value.split(".")[:2])


def major(value: str) -> int:
    return int(value.split(".")[0])


def normalize_release(value: str) -> str:
    """A user's framework version: strip a local tag ("2.4.1+cu124" -> "2.4.1") and a .postN."""
    v = value.strip().split("+")[0]
    v = re.sub(r"\.post\d+$", "", v)
    return v
