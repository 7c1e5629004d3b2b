"""User-space driver layer rules: libcuda, NVML, cuInit."""

from __future__ import annotations

import os
import re
from typing import Dict, Iterable, List, Optional, Tuple

from ..codes import make_finding
from ..facts import Facts
from ..model import Finding
from .base import Prior
from .situation import any_gpu, gpu_on_bus, host_driver_fix, in_container, kernel_module_loaded

# CUresult values (cuda.h) that cuInit returns in practice, with their usual cause on a real machine.
INIT_ERROR_CAUSES: Dict[int, Tuple[str, str]] = {
    3: ("CUDA_ERROR_NOT_INITIALIZED", "the driver could not initialise; often a driver/library mismatch"),
    34: ("CUDA_ERROR_STUB_LIBRARY", "the libcuda.so found is the CUDA toolkit's link-time stub "
         "(lib64/stubs), not the real driver library"),
    46: ("CUDA_ERROR_DEVICE_UNAVAILABLE", "the GPU is in exclusive-process compute mode and another process uses it"),
    100: ("CUDA_ERROR_NO_DEVICE", "the driver sees no usable GPU: the kernel module is not loaded, the device "
          "nodes are missing (a container without GPU access), or CUDA_VISIBLE_DEVICES hides every GPU"),
    101: ("CUDA_ERROR_INVALID_DEVICE", "CUDA_VISIBLE_DEVICES or the program names a device that does not exist"),
    304: ("CUDA_ERROR_OPERATING_SYSTEM", "an OS call failed: usually device nodes this user or container "
          "cannot open (cgroup device rules)"),
    801: ("CUDA_ERROR_NOT_SUPPORTED", "the operation is not supported on this device or driver"),
    802: ("CUDA_ERROR_SYSTEM_NOT_READY", "the system is not initialised yet: on NVSwitch systems (HGX/DGX) the "
          "NVIDIA Fabric Manager service is not running"),
    803: ("CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "a CUDA forward-compatibility libcuda (cuda-compat) does not match "
          "the kernel driver's version"),
    804: ("CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", "CUDA forward compatibility is only supported on data-center "
          "GPUs, and a cuda-compat libcuda is loaded on another GPU"),
    999: ("CUDA_ERROR_UNKNOWN", "most often nvidia_uvm is not loaded or broke after suspend/resume, or the "
           "driver files do not match"),
}


def _init_fix(code: int, facts: Facts) -> List[str]:
    libcuda = facts.driver.libcuda.path or "libcuda.so.1"
    fixes = {
        34: [f"Take the stub folder off the loader path (it provided {libcuda}); check "
             "`echo $LD_LIBRARY_PATH` for a `.../lib64/stubs` entry and remove it."],
        46: ["`nvidia-smi -q -d COMPUTE` shows the compute mode; `sudo nvidia-smi -c DEFAULT` allows sharing, "
             "or wait for the other process."],
        304: host_driver_fix(facts) + ["Check `ls -l /dev/nvidia*` and that this user can open them; in a container "
                                       "start it with `--gpus all` (NVIDIA Container Toolkit)."],
        802: ["`sudo systemctl enable --now nvidia-fabricmanager` (its version must equal the driver's), then retry."],
        803: ["Remove the cuda-compat folder from LD_LIBRARY_PATH, or install the cuda-compat package whose "
              "version matches the kernel driver."],
        804: ["Remove the cuda-compat libraries from LD_LIBRARY_PATH: forward compatibility does not work on this "
              "GPU; upgrade the driver instead."],
        999: host_driver_fix(facts) + ["Reload the unified-memory module: `sudo rmmod nvidia_uvm && sudo modprobe "
                                       "nvidia_uvm` (needed after suspend/resume); if that fails, reboot."],
    }
    return fixes.get(code, host_driver_fix(facts) + ["Check `sudo dmesg | grep -i -E 'nvrm|xid'` for driver errors, "
                                                     "and reboot if the GPU fell into a bad state."])


def libcuda_missing(facts: Facts, prior: Prior) -> Iterable[Finding]:
    libcuda = facts.driver.libcuda
    if libcuda.loaded or not (kernel_module_loaded(facts) or (facts.system.wsl and any_gpu(facts))):
        return
    if prior.has("container-no-gpu-access"):
        return  # one of that finding's symptoms
    kver = facts.driver.kernel.version
    if in_container(facts):
        fix = ["The driver's libraries are mounted into containers by the NVIDIA Container Toolkit: run with "
               "`--gpus all` (or `--runtime=nvidia` with NVIDIA_DRIVER_CAPABILITIES=compute,utility)."]
    else:
        fix = [f"Install the NVIDIA driver's user-space libraries for version {kver or 'of the kernel module'} "
               f"(Ubuntu: `sudo apt install libnvidia-compute-{kver.split('.')[0] if kver else 'NNN'}`; "
               "Debian: `sudo apt install libcuda1`), the same version as the kernel module.",
               "If it is installed in an unusual folder, add that folder to /etc/ld.so.conf.d/ and run `sudo ldconfig`."]
    yield make_finding("libcuda-missing",
                       f"libcuda.so.1 cannot be loaded: {libcuda.load_error or 'not found'}. The kernel driver"
                       f"{' ' + kver if kver else ''} is loaded, but without its user-space library no program "
                       "can use the GPU.",
                       evidence={"dlerror": libcuda.load_error, "kernel_driver": kver}, fix=fix)


def _version_in_file_name(path: Optional[str]) -> Optional[str]:
    match = re.search(r"\.so\.(\d+\.\d+(?:\.\d+)?)$", os.path.basename(path or ""))
    return match.group(1) if match else None


def nvml_driver_mismatch(facts: Facts, prior: Prior) -> Iterable[Finding]:
    nvml_error = facts.driver.nvml.error or ""
    kernel = facts.driver.kernel.version
    userspace = facts.driver.nvml.driver_version or _version_in_file_name(facts.driver.libcuda.path)
    differs = bool(kernel and userspace and kernel != userspace)
    if "mismatch" not in nvml_error.lower() and not differs:
        return
    detail = "The NVIDIA user-space libraries and the loaded kernel module are different versions"
    if differs:
        detail += f" (kernel module {kernel}, libraries {userspace})"
    if nvml_error:
        detail += f". NVML says: \"{nvml_error}\""
    yield make_finding("nvml-driver-mismatch",
                       detail + ". This happens after a driver upgrade without a reboot.",
                       evidence={"nvml_error": nvml_error or None, "kernel_module": kernel, "userspace": userspace},
                       fix=host_driver_fix(facts) + [
                           "Reboot the machine (simplest).",
                           "Or, with no GPU process running (`sudo lsof /dev/nvidia*`), reload the modules: "
                           "`sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia && "
                           "sudo modprobe nvidia_uvm`."])


def cuda_init_failed(facts: Facts, prior: Prior) -> Iterable[Finding]:
    libcuda = facts.driver.libcuda
    code = libcuda.init_result
    if code in (None, 0):
        return
    if code == 100 and (not gpu_on_bus(facts) or facts.visible_devices.hides_all):
        return  # no GPU at all (no-nvidia-gpu) or hidden on purpose (no-visible-gpu): not a driver fault
    name, cause = INIT_ERROR_CAUSES.get(code, (libcuda.init_error_name or "CUDA error", "see the driver's message"))
    root = prior.first_error("container-no-gpu-access", "driver-not-loaded", "device-nodes-missing", "uvm-not-loaded", "nvml-driver-mismatch",
                             "wsl-driver-misconfigured")
    message = libcuda.init_error_string or ""
    yield make_finding("cuda-init-failed",
                       f"cuInit returned {code} ({libcuda.init_error_name or name}"
                       f"{': ' + message if message else ''}). Usual cause: {cause}.",
                       evidence={"cuInit": code, "name": libcuda.init_error_name or name, "message": message or None,
                                 "libcuda": libcuda.path, "driver_cuda_version": libcuda.driver_version},
                       fix=[f"Fix {root} first (above)."] if root else _init_fix(code, facts),
                       caused_by=root)


RULES = [libcuda_missing, nvml_driver_mismatch, cuda_init_failed]
