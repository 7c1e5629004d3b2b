"""What gpudoctor can examine on this operating system.

The lower layers are read the Linux way: /proc, /sys and /dev, and the loader's sonames
(libcuda.so.1, libcudart.so.12). On native Windows and on macOS none of that exists, so their
rules would report absence as faults ("the kernel driver is not loaded"). There, those layers are
"not examined" and said to be; what is examined is the same everywhere: the installed frameworks,
their builds, the compatibility tables and NVML where the driver ships it.
"""

from __future__ import annotations

from typing import FrozenSet, Iterable

from ..codes import make_finding
from ..facts import Facts
from ..model import Finding, Layer
from .base import Prior

# Layers read through Linux interfaces only.
LINUX_ONLY_LAYERS: FrozenSet[Layer] = frozenset({
    Layer.HARDWARE, Layer.KERNEL_DRIVER, Layer.USERSPACE_DRIVER, Layer.CUDA_LIBRARIES, Layer.RUNTIME_TEST})
OS_NAMES = {"Windows": "native Windows", "Darwin": "macOS"}


def examined_the_linux_way(facts: Facts) -> bool:
    """Linux (WSL2 included), or an OS the probes did not name (a saved report): the lower layers count."""
    return facts.system.os not in OS_NAMES


def not_examined(facts: Facts) -> FrozenSet[Layer]:
    return frozenset() if examined_the_linux_way(facts) else LINUX_ONLY_LAYERS


def examined(facts: Facts, finding: Finding) -> bool:
    """False for what a Linux-only rule says about an OS it cannot read (absence there is not a fault)."""
    return finding.code == "platform-limited" or finding.layer not in not_examined(facts)


def platform_limited(facts: Facts, prior: Prior) -> Iterable[Finding]:
    if examined_the_linux_way(facts):
        return
    where = OS_NAMES[facts.system.os]
    labels = ", ".join(layer.label.lower() for layer in Layer if layer in LINUX_ONLY_LAYERS)
    detail = (f"This is {where}. gpudoctor reads the {labels} layers the Linux way (/proc, /sys, /dev and the "
              "loader's .so libraries), so on this OS it does not examine them; it reports the installed frameworks "
              "and their builds, the compatibility tables"
              + (" and the GPUs the NVIDIA driver's NVML lists." if facts.system.os == "Windows" else ".")
              + (" On macOS there is no CUDA: PyTorch uses the Apple GPU through MPS." if facts.system.os == "Darwin"
                 else ""))
    fix = ["For the full diagnosis, run gpudoctor where the frameworks run on Linux: under WSL 2 (install gpudoctor "
           "inside it the way you installed it here, then `gpudoctor check`), in a Linux container, or on a Linux "
           "machine."] \
        if facts.system.os == "Windows" else ["Nothing to fix: this is what gpudoctor can see here."]
    yield make_finding("platform-limited", detail, fix=fix, evidence={
        "os": facts.system.os, "not_examined": sorted(layer.value for layer in LINUX_ONLY_LAYERS)})


RULES = [platform_limited]
