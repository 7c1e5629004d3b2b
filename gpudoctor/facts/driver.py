"""Hardware, kernel driver and user-space driver facts (the bottom three layers)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional


@dataclass
class PciDevice:
    address: str  # 0000:01:00.0
    vendor_id: str  # 0x10de
    device_id: str
    class_code: str  # 0x030000 VGA, 0x030200 3D controller
    bound_driver: Optional[str] = None  # nvidia, nouveau, vfio-pci, None


@dataclass
class DeviceNode:
    path: str  # /dev/nvidia0 (as the user sees it, not the sysroot path)
    exists: bool
    accessible: bool
    error: Optional[str] = None


@dataclass
class KernelDriverFacts:
    version: Optional[str] = None  # from /proc/driver/nvidia/version, e.g. 535.183.01
    version_text: Optional[str] = None
    modules: Dict[str, bool] = field(default_factory=dict)  # nvidia, nvidia_uvm, nvidia_modeset, nvidia_drm
    device_nodes: List[DeviceNode] = field(default_factory=list)
    nouveau_loaded: bool = False
    wsl_dxg_present: bool = False
    wsl_libcuda_present: bool = False
    wsl_libcuda_real_path: Optional[str] = None  # the real file behind /usr/lib/wsl/lib/libcuda.so.1, if any


@dataclass
class CudaDevice:
    """A device as libcuda enumerates it: logical order, after CUDA_VISIBLE_DEVICES."""

    ordinal: int
    name: Optional[str] = None
    compute_capability: Optional[str] = None  # "8.6"
    total_memory: Optional[int] = None  # bytes
    uuid: Optional[str] = None  # GPU-xxxxxxxx-...
    pci_bus_id: Optional[str] = None  # 0000:01:00.0
    multiprocessor_count: Optional[int] = None


@dataclass
class CudaDriverFacts:
    """libcuda.so.1 through ctypes, run in a child process with the user's environment."""

    loaded: bool = False
    path: Optional[str] = None  # real path of the libcuda that was loaded
    load_error: Optional[str] = None  # dlerror text
    driver_version: Optional[int] = None  # cuDriverGetVersion, e.g. 12020
    init_result: Optional[int] = None  # cuInit CUresult
    init_error_name: Optional[str] = None  # CUDA_ERROR_NO_DEVICE
    init_error_string: Optional[str] = None
    device_count: Optional[int] = None
    devices: List[CudaDevice] = field(default_factory=list)


@dataclass
class GpuProcess:
    pid: int
    used_memory: Optional[int] = None  # bytes
    name: Optional[str] = None  # as NVML names it (nvmlSystemGetProcessName: the executable)
    # From /proc/PID under GPUDOCTOR_SYSROOT; visible False: another PID namespace (a container)
    # or a process that ended since NVML listed it. None: not looked at.
    visible: Optional[bool] = None
    uid: Optional[int] = None
    user: Optional[str] = None  # the uid's name in the sysroot's /etc/passwd, else the number
    command: Optional[str] = None  # /proc/PID/cmdline, arguments joined by spaces


@dataclass
class NvmlGpu:
    index: int  # NVML index = nvidia-smi index (PCI order)
    name: Optional[str] = None
    uuid: Optional[str] = None
    pci_bus_id: Optional[str] = None
    memory_total: Optional[int] = None
    memory_used: Optional[int] = None
    memory_free: Optional[int] = None
    utilization_gpu: Optional[int] = None  # percent
    compute_capability: Optional[str] = None
    mig_mode: Optional[bool] = None
    processes: List[GpuProcess] = field(default_factory=list)
    errors: Dict[str, str] = field(default_factory=dict)  # query -> NVML error text, kept verbatim


@dataclass
class NvmlFacts:
    initialized: bool = False
    error: Optional[str] = None  # verbatim, e.g. "Driver/library version mismatch"
    library_path: Optional[str] = None
    driver_version: Optional[str] = None  # 535.183.01
    cuda_driver_version: Optional[int] = None  # 12020
    gpus: List[NvmlGpu] = field(default_factory=list)


@dataclass
class DriverFacts:
    pci_devices: List[PciDevice] = field(default_factory=list)  # NVIDIA display controllers only
    kernel: KernelDriverFacts = field(default_factory=KernelDriverFacts)
    libcuda: CudaDriverFacts = field(default_factory=CudaDriverFacts)
    nvml: NvmlFacts = field(default_factory=NvmlFacts)
