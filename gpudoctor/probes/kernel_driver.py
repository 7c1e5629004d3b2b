"""Kernel-driver layer: the nvidia module, its version, its device nodes, and WSL2's /dev/dxg."""

from __future__ import annotations

import errno
import os
import re
from typing import List, Optional, Tuple

from ..facts.driver import DeviceNode, KernelDriverFacts
from ..facts.probe_status import ProbeStatus
from .context import ProbeContext
from .files import read_text

MODULES = ("nvidia", "nvidia_uvm", "nvidia_modeset", "nvidia_drm")
# "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.183.01  Sun May 12 ..." (open modules say
# "NVIDIA UNIX Open Kernel Module for x86_64"); the version is the first dotted number after it.
_VERSION_RE = re.compile(r"NVRM version:.*?Kernel Module(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)?)")


def parse_driver_version(text: str) -> Optional[str]:
    match = _VERSION_RE.search(text)
    return match.group(1) if match else None


def probe_kernel_driver(ctx: ProbeContext) -> Tuple[KernelDriverFacts, List[ProbeStatus]]:
    facts = KernelDriverFacts()
    text = read_text(ctx.host_path("/proc/driver/nvidia/version"))
    if text is not None:
        facts.version_text = text.strip()[:500]
        facts.version = parse_driver_version(text)
    loaded = _loaded_modules(ctx)
    facts.modules = {name: name in loaded for name in MODULES}
    facts.nouveau_loaded = "nouveau" in loaded
    facts.device_nodes = _device_nodes(ctx)
    facts.wsl_dxg_present = os.path.exists(ctx.host_path("/dev/dxg"))
    facts.wsl_libcuda_present = os.path.exists(ctx.host_path("/usr/lib/wsl/lib/libcuda.so"))
    wsl_libcuda = ctx.host_path("/usr/lib/wsl/lib/libcuda.so.1")
    facts.wsl_libcuda_real_path = os.path.realpath(wsl_libcuda) if os.path.exists(wsl_libcuda) else None
    return facts, []


def _loaded_modules(ctx: ProbeContext) -> set:
    names = set()
    for line in (read_text(ctx.host_path("/proc/modules")) or "").splitlines():
        if line.strip():
            names.add(line.split()[0])
    # /sys/module/<name> also exists for modules built into the kernel; in containers /proc/modules
    # may be hidden while /sys/module is visible.
    for name in MODULES + ("nouveau",):
        if os.path.isdir(ctx.host_path(f"/sys/module/{name}")):
            names.add(name)
    return names


def _device_nodes(ctx: ProbeContext) -> List[DeviceNode]:
    dev = ctx.host_path("/dev")
    try:
        names = sorted(n for n in os.listdir(dev) if n.startswith("nvidia"))
    except OSError:
        names = []
    for required in ("nvidiactl", "nvidia-uvm"):
        if required not in names:
            names.append(required)
    return [_node(ctx, name) for name in names if not os.path.isdir(os.path.join(dev, name))]


def _node(ctx: ProbeContext, name: str) -> DeviceNode:
    shown = f"/dev/{name}"
    path = ctx.host_path(shown)
    if not os.path.exists(path):
        return DeviceNode(shown, exists=False, accessible=False)
    try:
        # O_RDWR is what libcuda asks for; opening a character device node has no side effects.
        fd = os.open(path, os.O_RDWR | os.O_NONBLOCK)
        os.close(fd)
        return DeviceNode(shown, exists=True, accessible=True)
    except OSError as exc:
        if exc.errno in (errno.ENXIO, errno.ENODEV):  # node exists but no such device behind it
            return DeviceNode(shown, exists=True, accessible=False, error=os.strerror(exc.errno))
        return DeviceNode(shown, exists=True, accessible=False, error=exc.strerror or str(exc))
