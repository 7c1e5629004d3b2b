"""All facts of one check. The JSON form is `facts` in the report contract (DESIGN.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List

from .driver import DriverFacts, NvmlGpu
from .frameworks import FrameworksFacts
from .libraries import LibrariesFacts
from .probe_status import ProbeStatus
from .runtime import RuntimeTestFacts
from .system import EnvironmentFacts, SystemFacts
from .visibility import VisibilityFacts


@dataclass
class Facts:
    system: SystemFacts = field(default_factory=SystemFacts)
    driver: DriverFacts = field(default_factory=DriverFacts)
    gpus: List[NvmlGpu] = field(default_factory=list)  # physical GPUs in nvidia-smi order
    visible_devices: VisibilityFacts = field(default_factory=VisibilityFacts)
    libraries: LibrariesFacts = field(default_factory=LibrariesFacts)
    frameworks: FrameworksFacts = field(default_factory=FrameworksFacts)
    environment: EnvironmentFacts = field(default_factory=EnvironmentFacts)
    runtime_test: RuntimeTestFacts = field(default_factory=RuntimeTestFacts)
    probes: List[ProbeStatus] = field(default_factory=list)
