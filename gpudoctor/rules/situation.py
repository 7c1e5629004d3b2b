"""Facts about the situation that decide how a fix is worded (container or host, which driver).

Pure helpers over Facts, shared by the rule modules.
"""

from __future__ import annotations

import re
from typing import List, Optional

from ..facts import Facts
from ..facts.driver import DeviceNode, NvmlGpu
from ..units import MIB, mib  # noqa: F401  (re-exported for the rule modules)
from ..versions import cuda_version_text  # noqa: F401  (re-exported for the rule modules)


def gpu_on_bus(facts: Facts) -> bool:
    """A GPU on the PCI bus, or one that NVML or libcuda reports (containers may hide /sys)."""
    d = facts.driver
    return bool(d.pci_devices or d.nvml.gpus or d.libcuda.devices or facts.gpus or (d.libcuda.device_count or 0) > 0)


def driver_sees_gpu(facts: Facts) -> bool:
    """NVML or libcuda enumerate at least one GPU: the GPU works below the frameworks."""
    d = facts.driver
    return bool(d.nvml.gpus or (d.libcuda.device_count or 0) > 0 or d.libcuda.devices)


def any_gpu(facts: Facts) -> bool:
    """An NVIDIA GPU exists here: on the PCI bus, or (WSL2, some VMs) reported by the driver."""
    return gpu_on_bus(facts) or facts.driver.kernel.wsl_dxg_present


def kernel_module_loaded(facts: Facts) -> bool:
    k = facts.driver.kernel
    return k.version is not None or bool(k.modules.get("nvidia"))


def gpu_device_nodes(facts: Facts) -> List[DeviceNode]:
    """/dev/nvidia0, /dev/nvidia1, ...: one per GPU (not nvidiactl, nvidia-uvm, nvidia-modeset)."""
    return [n for n in facts.driver.kernel.device_nodes if n.path[len("/dev/nvidia"):].isdigit()]


def in_container(facts: Facts) -> bool:
    return facts.system.in_container


def driver_cuda_version(facts: Facts) -> Optional[int]:
    return facts.driver.libcuda.driver_version or facts.driver.nvml.cuda_driver_version


def driver_version(facts: Facts) -> Optional[str]:
    return facts.driver.nvml.driver_version or facts.driver.kernel.version


def gpu_label(gpu: NvmlGpu) -> str:
    return f"GPU {gpu.index} ({gpu.name or 'unknown model'}, {gpu.pci_bus_id or 'bus id unknown'})"


def host_driver_fix(facts: Facts) -> List[str]:
    """Where a driver problem must be fixed: on the host, even when we run in a container."""
    if in_container(facts):
        return ["This runs in a container: the NVIDIA kernel driver belongs to the host. Fix it on the host, "
                "then restart the container."]
    return []


def pip(facts: Facts) -> str:
    """`pip`, or `/path/to/python -m pip` when gpudoctor examined another interpreter (--python):
    a bare `pip` would install into whatever environment is first on PATH."""
    target = facts.frameworks.python or facts.system.python_executable
    own = facts.system.gpudoctor_python
    return "%s -m pip" % target if target and own and target != own else "pip"


_PIP_COMMAND = re.compile(r"(^|`)pip (install|uninstall) ")


def with_target_pip(facts: Facts, command: str) -> str:
    """A pip command from the tables or a template, aimed at the examined environment."""
    return _PIP_COMMAND.sub(lambda m: f"{m.group(1)}{pip(facts)} {m.group(2)} ", command)
