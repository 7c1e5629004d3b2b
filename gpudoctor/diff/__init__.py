"""`gpudoctor diff`: it works on machine A and not on machine B — what differs?"""

from __future__ import annotations

from .compare import FactDifference, FindingSide, ReportDiff, aspects_of, diff_reports
from .render import render_terminal

__all__ = ["FactDifference", "FindingSide", "ReportDiff", "aspects_of", "diff_reports", "render_terminal"]
