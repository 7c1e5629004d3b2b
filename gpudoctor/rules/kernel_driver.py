"""Kernel-driver layer rules: the nvidia module, nvidia_uvm, device nodes, WSL2."""

from __future__ import annotations

from typing import Iterable, List

from ..codes import make_finding
from ..facts import Facts
from ..model import Finding
from .base import Prior
from .situation import cuda_version_text, gpu_device_nodes, gpu_on_bus, host_driver_fix, in_container, kernel_module_loaded


def driver_not_loaded(facts: Facts, prior: Prior) -> Iterable[Finding]:
    if not gpu_on_bus(facts) or kernel_module_loaded(facts) or facts.system.wsl:
        return
    devices = facts.driver.pci_devices
    bound = sorted({d.bound_driver for d in devices if d.bound_driver})
    userspace = facts.driver.libcuda.driver_version
    detail = (f"{len(devices)} NVIDIA GPU(s) are on the PCI bus ({', '.join(d.address for d in devices)}), "
              "but the nvidia kernel module is not loaded (/proc/driver/nvidia/version is absent).")
    if userspace:
        detail += (f" The user-space driver libraries are installed (libcuda reports CUDA "
                   f"{cuda_version_text(userspace)}), so the kernel module failed to load or was never built "
                   "for the running kernel.")
    if "nouveau" in bound or facts.driver.kernel.nouveau_loaded:
        detail += " The open-source nouveau driver holds the GPU."
    fix: List[str] = host_driver_fix(facts)
    fix += ["See why the module does not load: `sudo modprobe nvidia` (\"Key was rejected by service\" means "
            "Secure Boot refuses the unsigned module) and `sudo dmesg | grep -i -E 'nvidia|nouveau'`.",
            "If the module was not built for this kernel: `sudo dkms status`, then `sudo dkms autoinstall`, "
            "or reinstall your distribution's NVIDIA driver package; then reboot."]
    if "nouveau" in bound or facts.driver.kernel.nouveau_loaded:
        fix.append("Blacklist nouveau (`echo 'blacklist nouveau' | sudo tee /etc/modprobe.d/blacklist-nouveau.conf`, "
                   "`sudo update-initramfs -u`) and reboot.")
    yield make_finding("driver-not-loaded", detail, fix=fix, evidence={
        "pci_devices": [d.address for d in devices], "bound_driver": bound or None,
        "proc_driver_nvidia_version": None, "libcuda_driver_version": userspace,
        "nvml_error": facts.driver.nvml.error})


def uvm_not_loaded(facts: Facts, prior: Prior) -> Iterable[Finding]:
    if not kernel_module_loaded(facts) or facts.system.wsl or prior.has("container-no-gpu-access"):
        return
    uvm_node = next((n for n in facts.driver.kernel.device_nodes if n.path == "/dev/nvidia-uvm"), None)
    module = facts.driver.kernel.modules.get("nvidia_uvm")
    if uvm_node is not None and uvm_node.exists and (module or in_container(facts)):
        return  # containers often cannot see /sys/module; the node being there is what counts
    missing = "/dev/nvidia-uvm is missing" if uvm_node is None or not uvm_node.exists else "nvidia_uvm is not loaded"
    fix = host_driver_fix(facts) + ["Load it: `sudo modprobe nvidia-uvm` (or `sudo nvidia-modprobe -u -c=0`, "
                                    "which also creates /dev/nvidia-uvm)."]
    yield make_finding("uvm-not-loaded",
                       f"The nvidia driver is loaded but {missing}. nvidia-smi works, yet every CUDA program fails "
                       "to initialise (often error 999, 'unknown error').",
                       evidence={"nvidia_uvm_module": module, "dev_nvidia_uvm": bool(uvm_node and uvm_node.exists)},
                       fix=fix)


def device_nodes_missing(facts: Facts, prior: Prior) -> Iterable[Finding]:
    if not kernel_module_loaded(facts) or facts.system.wsl or prior.has("container-no-gpu-access"):
        return
    nodes = {n.path: n for n in facts.driver.kernel.device_nodes}
    gpu_nodes = gpu_device_nodes(facts)
    ctl = nodes.get("/dev/nvidiactl")
    problems = []
    if ctl is None or not ctl.exists:
        problems.append("/dev/nvidiactl is missing")
    elif not ctl.accessible:
        problems.append(f"/dev/nvidiactl cannot be opened ({ctl.error})")
    if not gpu_nodes:
        problems.append("no /dev/nvidiaN node exists")
    problems += [f"{n.path} cannot be opened ({n.error})" for n in gpu_nodes if n.exists and not n.accessible]
    if not problems:
        return
    if in_container(facts):
        fix = ["Start the container with GPU access: `docker run --gpus all ...` with the NVIDIA Container Toolkit "
               "installed on the host (`nvidia-ctk runtime configure --runtime=docker`, then restart docker); "
               "on Kubernetes, request `nvidia.com/gpu` through the NVIDIA device plugin."]
    else:
        fix = ["Create the nodes: `sudo nvidia-modprobe -c=0 -u` (or run `sudo nvidia-smi` once).",
               "If they exist but cannot be opened: `ls -l /dev/nvidia*` and add your user to the owning group "
               "(often `video` or `render`): `sudo usermod -aG video $USER`, then log in again."]
    yield make_finding("device-nodes-missing", "; ".join(problems) + ". Programs cannot reach the GPU.",
                       evidence={"device_nodes": [vars(n) for n in nodes.values()]}, fix=fix)


def wsl_driver_misconfigured(facts: Facts, prior: Prior) -> Iterable[Finding]:
    if not facts.system.wsl:
        return
    k = facts.driver.kernel
    libcuda_path = facts.driver.libcuda.path or ""
    problems: List[str] = []
    fix: List[str] = []
    if not k.wsl_dxg_present:
        problems.append("/dev/dxg is missing (the Windows driver does not expose the GPU to WSL)")
        fix += ["Install or update the NVIDIA driver on Windows (it is the only driver WSL 2 uses), then from Windows: "
                "`wsl --update` and `wsl --shutdown`.",
                "Check that this distribution runs as WSL 2 (`wsl -l -v` in Windows shows VERSION 2; WSL 1 has no "
                "GPU): `wsl --set-version <distribution> 2`."]
    if not k.wsl_libcuda_present:
        problems.append("/usr/lib/wsl/lib/libcuda.so is missing (programs and libraries that load plain libcuda.so, "
                        "cuDNN among them, fail)")
        fix += ["Update the Windows NVIDIA driver (it provides /usr/lib/wsl/lib/libcuda.so*), and let the loader search "
                "that folder: `echo /usr/lib/wsl/lib | sudo tee /etc/ld.so.conf.d/ld.wsl.conf && sudo ldconfig`."]
    # the loader's libcuda is not the Windows driver's: compared as real files (the WSL copy may be a link)
    if libcuda_path and "/usr/lib/wsl/" not in libcuda_path and libcuda_path != k.wsl_libcuda_real_path:
        problems.append(f"libcuda.so.1 resolves to {libcuda_path}, not to the WSL driver in /usr/lib/wsl/lib "
                        "(a Linux driver installed inside WSL shadows it)")
        fix += ["Remove the Linux NVIDIA driver installed inside WSL: `dpkg -l | grep -E 'nvidia-driver|libnvidia-compute'` "
                "lists its packages; `sudo apt-get remove --purge` them (keep CUDA toolkit packages), and delete "
                f"stray copies such as {libcuda_path}; then `sudo ldconfig`."]
    if not problems:
        return
    yield make_finding("wsl-driver-misconfigured", "Under WSL2: " + "; ".join(problems) + ".",
                       evidence={"dev_dxg": k.wsl_dxg_present, "wsl_libcuda": k.wsl_libcuda_present,
                                 "libcuda_path": libcuda_path or None}, fix=fix)


RULES = [driver_not_loaded, uvm_not_loaded, device_nodes_missing, wsl_driver_misconfigured]
