"""How far the tables reach: the newest release each one covers, and whether a version is past it.

A version newer than a table's coverage is unknown to gpudoctor: callers say so (finding
`newer-than-tables`, `gpudoctor compat`) and infer no compatibility fact for it.
"""

from __future__ import annotations

from typing import Optional, Tuple

from .loader import Tables, tables
from .model import Coverage
from .versions import is_dotted, normalize_release, vkey


def coverage_of(subject: str, t: Optional[Tables] = None) -> Tuple[Coverage, ...]:
    """Every table's coverage row for `subject` (several tables may cover the same subject)."""
    t = t if t is not None else tables()
    return tuple(c for c in t.coverage if c.subject == subject)


def newest_covered(subject: str, t: Optional[Tables] = None) -> Optional[Coverage]:
    rows = coverage_of(subject, t)
    return max(rows, key=lambda c: vkey(c.newest)) if rows else None


def newer_than_tables(subject: str, version: str, t: Optional[Tables] = None) -> Optional[Coverage]:
    """The coverage row `version` is newer than, or None when the tables reach it (or the version is
    unreadable). Compared on as many parts as the coverage states: "2.21" covers 2.21.4."""
    cov = newest_covered(subject, t)
    v = normalize_release(version or "")
    if cov is None or not is_dotted(v):
        return None
    n = len(vkey(cov.newest))
    have = vkey(v)[:n]
    have = have + (0,) * (n - len(have))
    return cov if have > vkey(cov.newest) else None
