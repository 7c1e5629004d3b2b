"""The framework-free runtime test: a vector add through the CUDA driver API."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional


@dataclass
class DeviceOpResult:
    ordinal: int  # logical device
    pci_bus_id: Optional[str] = None
    step: str = ""  # the step reached: context | alloc | copy-in | module | launch | copy-out | compare | done
    ok: bool = False
    error_code: Optional[int] = None
    error_name: Optional[str] = None
    error_string: Optional[str] = None
    max_abs_error: Optional[float] = None
    elements: int = 0
    seconds: Optional[float] = None


@dataclass
class RuntimeTestFacts:
    ran: bool = False
    skipped_reason: Optional[str] = None  # quick mode, no libcuda, cuInit failed, ...
    devices: List[DeviceOpResult] = field(default_factory=list)
