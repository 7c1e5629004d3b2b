"""Framework probes: installed packages, static build facts, and live checks in child processes.

`probe_frameworks(ctx)` is what the pipeline calls. In quick mode (ctx.quick) it reads files only:
no framework is imported and no GPU op runs.
"""

from __future__ import annotations

from typing import List, Tuple

from ...facts.frameworks import FrameworksFacts
from ...facts.probe_status import ProbeStatus
from ..context import ProbeContext
from .extensions import read_extension_links
from .live import probe_live
from .packages import probe_packages
from .static import read_static

__all__ = ["probe_frameworks"]


def probe_frameworks(ctx: ProbeContext) -> Tuple[FrameworksFacts, List[ProbeStatus]]:
    facts, status, dirs = probe_packages(ctx)
    statuses = [status]
    # --quick must stay well under a second even on a cold disk: a shorter walk of the fat binaries
    facts.frameworks = read_static(facts, dirs, fatbin_deadline_s=0.3 if ctx.quick else 2.0)
    try:
        torch = facts.frameworks.get("torch")
        facts.extension_links = read_extension_links(facts.distributions, deadline_s=0.2 if ctx.quick else 1.0,
                                                     torch_package_dir=torch.static.package_dir if torch else None)
    except Exception:  # an odd RECORD or library is no reason to lose the other facts
        facts.extension_links = []
    if not ctx.quick:
        statuses.extend(probe_live(ctx, facts.frameworks))
    return facts, statuses
