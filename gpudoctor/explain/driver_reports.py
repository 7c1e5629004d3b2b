"""What the driver's own reports show when read together, across lines.

Two versions of one driver (TensorFlow's CUDA diagnostics): when cuInit fails, TensorFlow (and XLA)
print "libcuda reported version is: 384.111.0" and "kernel reported version is: 384.90.0" on separate
lines, then the verdict "kernel version X does not match DSO version Y". A paste often stops before the
verdict. Two different versions are the same finding:
the user-space driver and the loaded kernel module come from different driver releases (an upgrade
without a reboot), and every later CUDA failure follows from it.

nvidia-smi's header ("NVIDIA-SMI 545.36  Driver Version: 546.33"): nvidia-smi and the driver are one
package on Linux and on Windows, so two different versions mean WSL 2, where nvidia-smi is a Linux
build talking to the Windows driver.

The loaded modules (`lsmod | grep nvidia`): the nvidia modules listed without nvidia_uvm, which
every CUDA program needs, while nvidia-smi (which does not) works.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Dict, List

from ..codes import make_finding
from ..compat.versions import vge
from ..model import Finding

# What CUDA reports when the user-space driver and the kernel module disagree
SYMPTOMS = ("no-visible-gpu", "cuda-init-failed", "driver-not-loaded", "libcuda-missing", "gpu-unavailable")
# What CUDA reports without nvidia_uvm (cuInit's unknown error, or no device)
UVM_SYMPTOMS = ("cuda-init-failed", "no-visible-gpu", "framework-gpu-not-detected")


def _same_release(a: str, b: str) -> bool:
    """384.111.0 and 384.111 are one release (zero-padded comparison both ways)."""
    return vge(a, b) and vge(b, a)


def read_driver_versions(findings: List[Finding], facts: Dict[str, Any]) -> List[Finding]:
    dso, kernel = str(facts.get("libcuda_reported", "")), str(facts.get("kernel_reported", ""))
    if not dso or not kernel or _same_release(dso, kernel) or any(f.code == "nvml-driver-mismatch"
                                                                         for f in findings):
        return findings
    finding = make_finding(
        "nvml-driver-mismatch",
        f"TensorFlow's CUDA diagnostics show libcuda {dso} (the user-space driver) but the kernel module {kernel}: two "
        f"releases of the NVIDIA driver are mixed, usually an upgrade (often an automatic one) whose new module is not "
        f"loaded yet, or another installation's libcuda found first. CUDA finds no working device until they match.",
        title=f"The NVIDIA user-space driver ({dso}) and the kernel module ({kernel}) are different versions",
        fix=["Reboot (the new module loads at boot), or with no GPU process running reload it: `sudo rmmod nvidia_uvm "
             "nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia nvidia_uvm`.",
             "If it comes back after every system update, the updates replace the driver's libraries without "
             "reloading the module: reboot after them, or hold the NVIDIA packages: `apt-mark showmanual | grep -i "
             "nvidia` lists them, then `sudo apt-mark hold <those package names>`.",
             "If a reboot does not help, a second libcuda is found first: `ldconfig -p | grep libcuda`."],
        evidence={"source": "log", "libcuda_reported": dso, "kernel_reported": kernel,
                  "read_from": "TensorFlow's cuda_diagnostics"})
    rest = [replace(f, caused_by="nvml-driver-mismatch") if f.code in SYMPTOMS and f.caused_by is None else f
            for f in findings]
    return [finding, *rest]


def read_loaded_modules(findings: List[Finding], facts: Dict[str, Any]) -> List[Finding]:
    modules = facts.get("lsmod_module") or []
    if isinstance(modules, str):
        modules = [modules]
    nvidia = [m for m in modules if m.startswith("nvidia")]
    if not nvidia or "nvidia_uvm" in nvidia or any(f.code == "uvm-not-loaded" for f in findings):
        return findings
    # nvidia_uvm is often loaded on demand when the first CUDA program starts: its absence matters only
    # where CUDA failed, or where the reporter looked for it
    failed = [f for f in findings if f.code in UVM_SYMPTOMS and f.caused_by is None]
    if not failed and not facts.get("lsmod_uvm_checked"):
        return findings
    finding = make_finding(
        "uvm-not-loaded",
        f"lsmod lists the NVIDIA modules {', '.join(nvidia)} but not nvidia_uvm, the Unified Memory module every CUDA "
        f"program needs (nvidia-smi works without it, which hides the problem): CUDA initialisation fails with an "
        f"unknown error or finds no device until it is loaded.",
        title="The nvidia_uvm kernel module is not loaded",
        fix=["Load it now: `sudo modprobe nvidia_uvm` (or `sudo nvidia-modprobe -u -c=0`); `ls /dev/nvidia-uvm` must "
             "then exist.",
             "Load it at every boot: add `nvidia_uvm` to /etc/modules-load.d/nvidia.conf (NixOS: "
             "`boot.kernelModules = [ \"nvidia_uvm\" ];`), since some set-ups load it only through a modprobe softdep "
             "that does not fire."],
        evidence={"source": "log", "lsmod_modules": ", ".join(nvidia), "read_from": "lsmod"})
    return [finding, *[replace(f, caused_by="uvm-not-loaded") if f in failed else f for f in findings]]


def wsl_from_smi_versions(facts: Dict[str, Any]) -> Dict[str, str]:
    """{"wsl_smi": ...} when nvidia-smi's header shows its own version and the driver's differing."""
    smi, driver = str(facts.get("smi_version", "")), str(facts.get("driver_version", ""))
    if smi and driver and not _same_release(smi, driver):
        return {"wsl_smi": f"NVIDIA-SMI {smi} with Driver Version {driver}"}
    return {}
