"""Which GPUs CUDA programs see, and how logical cuda:N maps to physical GPUs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional


@dataclass
class VisibleEntry:
    text: str  # the entry as written
    kind: str  # index | uuid | mig | invalid
    valid: bool
    reason: Optional[str] = None  # why CUDA stops here


@dataclass
class DeviceMapping:
    logical: str  # cuda:0
    physical_index: Optional[int]  # nvidia-smi index
    name: Optional[str] = None
    pci_bus_id: Optional[str] = None
    uuid: Optional[str] = None
    memory_free: Optional[int] = None


@dataclass
class VisibilityFacts:
    cuda_visible_devices: Optional[str] = None  # None: unset
    cuda_device_order: str = "FASTEST_FIRST"
    entries: List[VisibleEntry] = field(default_factory=list)
    stopped_at: Optional[str] = None  # the first invalid entry: CUDA ignores it and all after it
    duplicates: List[str] = field(default_factory=list)
    hides_all: bool = False
    mapping: List[DeviceMapping] = field(default_factory=list)
    mapping_source: str = "none"  # cuda (enumerated by libcuda) | parsed (from the variable) | none
