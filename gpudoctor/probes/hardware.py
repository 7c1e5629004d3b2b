"""Hardware layer: NVIDIA devices on the PCI bus, read from sysfs (works with no driver at all)."""

from __future__ import annotations

import os
from typing import List, Optional, Tuple

from ..facts.driver import PciDevice
from ..facts.probe_status import ProbeStatus
from .context import ProbeContext
from .files import read_text

NVIDIA_VENDOR_ID = "0x10de"
DISPLAY_CLASS_PREFIX = "0x03"  # PCI base class 03: display controller (VGA 0x0300, 3D 0x0302)


def probe_pci_devices(ctx: ProbeContext) -> Tuple[List[PciDevice], List[ProbeStatus]]:
    root = ctx.host_path("/sys/bus/pci/devices")
    try:
        addresses = sorted(os.listdir(root))
    except OSError:
        return [], []
    devices = []
    for address in addresses:
        device = _nvidia_display_device(os.path.join(root, address), address)
        if device is not None:
            devices.append(device)
    return devices, []


def _nvidia_display_device(path: str, address: str) -> Optional[PciDevice]:
    vendor = (read_text(os.path.join(path, "vendor")) or "").strip().lower()
    class_code = (read_text(os.path.join(path, "class")) or "").strip().lower()
    if vendor != NVIDIA_VENDOR_ID or not class_code.startswith(DISPLAY_CLASS_PREFIX):
        return None  # NVIDIA audio functions and bridges share the vendor id
    device_id = (read_text(os.path.join(path, "device")) or "").strip().lower()
    driver_link = os.path.join(path, "driver")
    bound = None
    if os.path.islink(driver_link):
        bound = os.path.basename(os.readlink(driver_link))
    elif os.path.isdir(driver_link):  # fake sysroots may use a plain directory
        bound = (read_text(os.path.join(driver_link, "name")) or "").strip() or None
    return PciDevice(address=address, vendor_id=vendor, device_id=device_id, class_code=class_code,
                     bound_driver=bound)
