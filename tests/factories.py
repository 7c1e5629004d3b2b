"""Facts for rule tests, built the way the probes would report a machine."""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence

from gpudoctor.facts import Facts
from gpudoctor.facts.driver import CudaDevice, DeviceNode, GpuProcess, NvmlGpu, PciDevice
from gpudoctor.probes.assemble import physical_gpus, visibility
from gpudoctor.rules import diagnose

MIB = 1024 * 1024


def gpu_machine(count: int = 4, name: str = "NVIDIA GeForce RTX 2080 Ti", cc: str = "7.5", memory_mib: int = 11264,
                used_mib: Sequence[int] = (), driver: str = "535.183.01", cuda: int = 12020,
                env: Optional[Dict[str, str]] = None, names: Optional[Sequence[str]] = None,
                container: bool = False) -> Facts:
    """A healthy Linux machine with `count` GPUs, as every probe would see it."""
    facts = Facts()
    facts.system.os = "Linux"
    facts.system.in_container = container
    facts.system.container_evidence = ["/.dockerenv"] if container else []
    buses = [f"0000:{0x17 + i * 0x10:02x}:00.0" for i in range(count)]
    facts.driver.pci_devices = [PciDevice(b, "0x10de", "0x1e07", "0x030000", "nvidia") for b in buses]
    k = facts.driver.kernel
    k.version = driver
    k.modules = {"nvidia": True, "nvidia_uvm": True, "nvidia_modeset": True, "nvidia_drm": True}
    k.device_nodes = [DeviceNode("/dev/nvidiactl", True, True), DeviceNode("/dev/nvidia-uvm", True, True)] + \
        [DeviceNode(f"/dev/nvidia{i}", True, True) for i in range(count)]
    nvml = facts.driver.nvml
    nvml.initialized, nvml.driver_version, nvml.cuda_driver_version = True, driver, cuda
    used = list(used_mib) + [0] * (count - len(used_mib))
    for i in range(count):
        gpu_name = names[i] if names else name
        uuid = f"GPU-{i:08x}-1111-2222-3333-444444444444"
        procs = [GpuProcess(4242, used[i] * MIB, "python train.py")] if used[i] else []
        nvml.gpus.append(NvmlGpu(index=i, name=gpu_name, uuid=uuid, pci_bus_id=f"0000{buses[i]}",
                                 memory_total=memory_mib * MIB, memory_used=used[i] * MIB,
                                 memory_free=(memory_mib - used[i]) * MIB, compute_capability=cc,
                                 processes=procs))
    lib = facts.driver.libcuda
    lib.loaded, lib.path, lib.driver_version, lib.init_result = True, f"/usr/lib/x86_64-linux-gnu/libcuda.so.{driver}", cuda, 0
    set_environment(facts, env or {})
    return facts


def set_environment(facts: Facts, env: Dict[str, str], cuda_devices: Optional[List[CudaDevice]] = None) -> Facts:
    """Apply CUDA_VISIBLE_DEVICES etc. as the assemble step does (no libcuda enumeration unless given)."""
    from gpudoctor.probes.environment import allowed_environment, find_misspellings

    facts.environment.variables = allowed_environment(env)
    facts.environment.misspelled = find_misspellings(env)
    facts.gpus = physical_gpus(facts.driver)
    facts.visible_devices = visibility(env, facts.gpus, cuda_devices or [], facts.driver.libcuda.init_result)
    return facts


def no_gpu_machine() -> Facts:
    facts = Facts()
    facts.system.os = "Linux"
    facts.driver.libcuda.load_error = "libcuda.so.1: cannot open shared object file: No such file or directory"
    facts.driver.nvml.error = "NVML Shared Library Not Found"
    return facts


def codes(facts: Facts) -> List[str]:
    return [f.code for f in diagnose(facts)]


def problems(facts: Facts) -> List[str]:
    """Codes of the errors and warnings: what a healthy machine must not have."""
    return [f.code for f in diagnose(facts) if f.severity.value != "info"]


def finding(facts: Facts, code: str):
    matches = [f for f in diagnose(facts) if f.code == code]
    assert matches, f"no {code} finding; got {codes(facts)}"
    return matches[0]
