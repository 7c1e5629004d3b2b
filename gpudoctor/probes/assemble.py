"""Join what the probes collected into one Facts: the physical GPU list and the logical mapping."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from ..facts import Facts
from ..facts.driver import CudaDevice, DriverFacts, NvmlGpu
from ..facts.probe_status import ProbeStatus
from ..facts.visibility import DeviceMapping, VisibilityFacts
from .context import ProbeContext
from .visibility import parse_visible_devices


def normalize_bus_id(bus_id: Optional[str]) -> Optional[str]:
    """NVML says 00000000:01:00.0, CUDA and sysfs say 0000:01:00.0: compare them as one."""
    if not bus_id or ":" not in bus_id:
        return bus_id
    domain, rest = bus_id.split(":", 1)
    try:
        return f"{int(domain, 16):04x}:{rest.lower()}"
    except ValueError:
        return bus_id.lower()


def assemble_facts(ctx: ProbeContext, outcomes: Dict[str, Any], statuses: List[ProbeStatus]) -> Facts:
    facts = Facts()
    for key, attr in (("system", "system"), ("environment", "environment"), ("libraries", "libraries"),
                      ("frameworks", "frameworks"), ("runtime-test", "runtime_test")):
        if outcomes.get(key) is not None:
            setattr(facts, attr, outcomes[key])
    driver = DriverFacts()
    driver.pci_devices = outcomes.get("pci") or []
    for key, attr in (("kernel-driver", "kernel"), ("cuda-driver", "libcuda"), ("nvml", "nvml")):
        if outcomes.get(key) is not None:
            setattr(driver, attr, outcomes[key])
    facts.driver = driver
    facts.gpus = physical_gpus(driver)
    facts.visible_devices = visibility(ctx.env, facts.gpus, driver.libcuda.devices, driver.libcuda.init_result)
    facts.probes = sorted(statuses, key=lambda s: s.name)
    return facts


def physical_gpus(driver: DriverFacts) -> List[NvmlGpu]:
    """NVIDIA GPUs in nvidia-smi order: NVML's list, with what libcuda adds; else the PCI bus."""
    by_bus = {normalize_bus_id(d.pci_bus_id): d for d in driver.libcuda.devices}
    if driver.nvml.gpus:
        for gpu in driver.nvml.gpus:
            cuda = by_bus.get(normalize_bus_id(gpu.pci_bus_id))
            if cuda is not None and gpu.compute_capability is None:
                gpu.compute_capability = cuda.compute_capability
        return driver.nvml.gpus
    if driver.libcuda.devices:  # NVML unusable but CUDA answered: PCI order, as nvidia-smi would show
        ordered = sorted(driver.libcuda.devices, key=lambda d: normalize_bus_id(d.pci_bus_id) or "")
        return [_from_cuda(i, d) for i, d in enumerate(ordered)]
    return [NvmlGpu(index=i, pci_bus_id=p.address) for i, p in enumerate(driver.pci_devices)]


def _from_cuda(index: int, device: CudaDevice) -> NvmlGpu:
    return NvmlGpu(index=index, name=device.name, uuid=device.uuid, pci_bus_id=device.pci_bus_id,
                   memory_total=device.total_memory, compute_capability=device.compute_capability)


def visibility(env: Dict[str, str], gpus: List[NvmlGpu], cuda_devices: List[CudaDevice],
               init_result: Optional[int]) -> VisibilityFacts:
    value = env.get("CUDA_VISIBLE_DEVICES")
    order = (env.get("CUDA_DEVICE_ORDER") or "FASTEST_FIRST").strip().upper()
    facts = VisibilityFacts(cuda_visible_devices=value, cuda_device_order=order)
    enumeration = cuda_enumeration_order(gpus, order)
    entries, selected, stopped_at, duplicates = parse_visible_devices(
        value, [g.uuid for g in enumeration] if enumeration is not None else [],
        len(gpus) if gpus else None)
    facts.entries, facts.stopped_at, facts.duplicates = entries, stopped_at, duplicates
    facts.hides_all = selected == [] and bool(gpus)
    if cuda_devices:  # libcuda enumerated them in the user's environment: the truth
        facts.mapping = [_mapping_for(d, gpus) for d in cuda_devices]
        facts.mapping_source = "cuda"
    elif init_result == 100 and value is not None and gpus:
        facts.mapping, facts.mapping_source = [], "cuda"  # CUDA_ERROR_NO_DEVICE: the variable hid them all
        facts.hides_all = True
    elif enumeration is not None and gpus:
        chosen = selected if selected is not None else list(range(len(enumeration)))
        facts.mapping = [_mapping(f"cuda:{n}", enumeration[i]) for n, i in enumerate(chosen) if i < len(enumeration)]
        facts.mapping_source = "parsed"
    return facts


def cuda_enumeration_order(gpus: List[NvmlGpu], order: str) -> Optional[List[NvmlGpu]]:
    """The order CUDA numbers GPUs in, when it can be known without asking CUDA.

    PCI_BUS_ID is nvidia-smi's order. FASTEST_FIRST (the default) ranks by a heuristic the driver
    does not document; with identical models the tie keeps PCI order, otherwise it is unknown.
    """
    ordered = sorted(gpus, key=lambda g: normalize_bus_id(g.pci_bus_id) or "")
    if order == "PCI_BUS_ID" or len({g.name for g in gpus}) <= 1:
        return ordered
    return None


def _mapping_for(device: CudaDevice, gpus: List[NvmlGpu]) -> DeviceMapping:
    bus = normalize_bus_id(device.pci_bus_id)
    for gpu in gpus:
        if (bus and normalize_bus_id(gpu.pci_bus_id) == bus) or (device.uuid and gpu.uuid == device.uuid):
            return _mapping(f"cuda:{device.ordinal}", gpu)
    return DeviceMapping(f"cuda:{device.ordinal}", None, device.name, device.pci_bus_id, device.uuid)


def _mapping(logical: str, gpu: NvmlGpu) -> DeviceMapping:
    return DeviceMapping(logical, gpu.index, gpu.name, gpu.pci_bus_id, gpu.uuid, gpu.memory_free)
