"""The file-reading probes against a fake sysroot (GPUDOCTOR_SYSROOT)."""

import os

from gpudoctor.probes.context import ProbeContext
from gpudoctor.probes.hardware import probe_pci_devices
from gpudoctor.probes.kernel_driver import parse_driver_version, probe_kernel_driver


def write(root, path, text):
    full = os.path.join(root, path.lstrip("/"))
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as handle:
        handle.write(text)


def test_driver_version_from_proprietary_and_open_kernel_modules():
    assert parse_driver_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.183.01  Sun May 12 19:39:15 UTC 2024\n") == "535.183.01"
    assert parse_driver_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build  (dvs-builder@U16-I3-B03-4-3)  Thu Jan 23 22:50:36 UTC 2025\n") == "570.86.15"
    assert parse_driver_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  470.82.01  Wed Oct 27 21:21:55 UTC 2021") == "470.82.01"
    assert parse_driver_version("garbage\x00\xff") is None


def test_pci_scan_keeps_nvidia_display_controllers_only(tmp_path):
    root = str(tmp_path)
    for address, vendor, cls in [("0000:01:00.0", "0x10de", "0x030000"), ("0000:01:00.1", "0x10de", "0x040300"),
                                 ("0000:02:00.0", "0x8086", "0x030000"), ("0000:41:00.0", "0x10de", "0x030200")]:
        write(root, f"/sys/bus/pci/devices/{address}/vendor", vendor + "\n")
        write(root, f"/sys/bus/pci/devices/{address}/class", cls + "\n")
        write(root, f"/sys/bus/pci/devices/{address}/device", "0x2204\n")
    devices, _ = probe_pci_devices(ProbeContext(sysroot=root))
    assert [d.address for d in devices] == ["0000:01:00.0", "0000:41:00.0"]


def test_kernel_probe_reads_version_modules_and_nodes(tmp_path):
    root = str(tmp_path)
    write(root, "/proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.183.01  Sun May 12\n")
    write(root, "/proc/modules", "nvidia_uvm 1540096 0 - Live 0x0\nnvidia 56717312 2 nvidia_uvm, Live 0x0\n")
    write(root, "/dev/nvidiactl", "")
    write(root, "/dev/nvidia0", "")
    facts, _ = probe_kernel_driver(ProbeContext(sysroot=root))
    assert facts.version == "535.183.01"
    assert facts.modules == {"nvidia": True, "nvidia_uvm": True, "nvidia_modeset": False, "nvidia_drm": False}
    nodes = {n.path: n for n in facts.device_nodes}
    assert nodes["/dev/nvidia0"].accessible and not nodes["/dev/nvidia-uvm"].exists


def test_unreadable_and_garbage_files_do_not_raise(tmp_path):
    root = str(tmp_path)
    write(root, "/proc/driver/nvidia/version", "\xff\xfe garbage")
    os.makedirs(os.path.join(root, "sys/bus/pci/devices/0000:01:00.0"))  # no vendor/class files
    facts, _ = probe_kernel_driver(ProbeContext(sysroot=root))
    assert facts.version is None and facts.version_text
    assert probe_pci_devices(ProbeContext(sysroot=root))[0] == []
