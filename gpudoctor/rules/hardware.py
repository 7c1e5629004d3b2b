"""Hardware layer rules."""

from __future__ import annotations

from typing import Iterable

from ..codes import make_finding
from ..facts import Facts
from ..model import Finding
from .base import Prior
from .situation import any_gpu


def no_nvidia_gpu(facts: Facts, prior: Prior) -> Iterable[Finding]:
    if any_gpu(facts):
        return
    where = "in this container" if facts.system.in_container else "on this machine"
    yield make_finding(
        "no-nvidia-gpu",
        f"No NVIDIA GPU was found {where}: no NVIDIA display controller on the PCI bus, and no NVIDIA driver "
        "reports one. Deep-learning frameworks will run on the CPU.",
        evidence={"pci_nvidia_devices": 0, "nvml": facts.driver.nvml.error or "no GPUs",
                  "cuInit": facts.driver.libcuda.init_error_name or facts.driver.libcuda.load_error},
        fix=["Nothing to fix if this machine has no GPU.",
             "In a VM or cloud instance, attach a GPU (an instance type with a GPU, or PCI passthrough)."],
    )


RULES = [no_nvidia_gpu]
