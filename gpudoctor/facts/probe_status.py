"""How each child probe ended: the report says which probe timed out or crashed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass
class ProbeStatus:
    name: str
    status: str  # ok | timeout | crashed | failed | not-started | skipped
    duration_s: float = 0.0
    error: Optional[str] = None  # e.g. "killed by SIGSEGV", "no answer within 5 s"
    stderr_tail: str = ""
