"""The lab's predefined machines. Each function returns a fresh :class:`Scenario`.

Every scenario's ``name`` is its function's name; ``SCENARIOS`` maps names to functions.
Names, PCI ids and compute capabilities are those of the real boards; UUIDs are made up in
NVIDIA's format.
"""

from __future__ import annotations

from typing import Callable, Dict, List

from tests.lab.scenario import (
    CUDA_ERROR_UNKNOWN,
    LabGpu,
    LabMig,
    LabProcess,
    Scenario,
)

RTX_2080_TI = "NVIDIA GeForce RTX 2080 Ti"
#: GPU 0 and 1 share the prefix "GPU-3a", so "GPU-3a" is ambiguous and "GPU-3a1" is not.
RTX_2080_TI_UUIDS = [
    "GPU-3a1b5c2d-8e9f-4a0b-9c1d-2e3f4a5b6c7d",
    "GPU-3a7c9e1f-0a2b-4c3d-8e4f-5a6b7c8d9e0f",
    "GPU-b4d2f6a8-1c3e-4f5a-b6c7-d8e9f0a1b2c3",
    "GPU-e9f8a7b6-c5d4-4e3f-a2b1-c0d9e8f7a6b5",
]
RTX_2080_TI_BUS_IDS = ["00000000:1A:00.0", "00000000:1B:00.0", "00000000:3D:00.0", "00000000:3E:00.0"]


def rtx2080ti(i: int, **kw) -> LabGpu:
    """GPU ``i`` of the 4x RTX 2080 Ti machine (TU102, cc 7.5, 11264 MiB, 68 SMs)."""
    return LabGpu(name=RTX_2080_TI, uuid=RTX_2080_TI_UUIDS[i], pci_bus_id=RTX_2080_TI_BUS_IDS[i],
                  compute_capability=(7, 5), memory_total_mib=11264, pci_device_id=0x1E07,
                  pci_subsystem_id=0x12FA10DE, multiprocessor_count=68, **kw)


def no_gpu() -> Scenario:
    """A machine with no NVIDIA hardware and no NVIDIA software (an Intel iGPU only)."""
    return Scenario(name="no_gpu", gpus=[], driver_version=None, modules=())


def gpu_no_driver() -> Scenario:
    """An RTX 2080 Ti on the PCI bus, but no NVIDIA driver installed at all."""
    return Scenario(name="gpu_no_driver", gpus=[rtx2080ti(0)], driver_version=None, modules=())


def driver_installed_module_not_loaded() -> Scenario:
    """User-space driver 535 installed, kernel module not loaded (e.g. Secure Boot refused it,
    or a kernel update without DKMS): cuInit -> 100, NVML -> Driver Not Loaded."""
    return Scenario(name="driver_installed_module_not_loaded", gpus=[rtx2080ti(0)], modules=())


def rtx2080ti_x4() -> Scenario:
    """A healthy 4x RTX 2080 Ti box, driver 535.183.01 (CUDA 12.2)."""
    return Scenario(name="rtx2080ti_x4", gpus=[rtx2080ti(i) for i in range(4)],
                    driver_version="535.183.01", cuda_driver_version=12020)


def rtx2080ti_x4_two_full() -> Scenario:
    """The same box with GPUs 2 and 3 full: pid 4242 "python train.py" holds 11000 MiB on
    each, so a new CUDA context there fails with CUDA_ERROR_OUT_OF_MEMORY."""
    s = rtx2080ti_x4()
    s.name = "rtx2080ti_x4_two_full"
    for i in (2, 3):
        s.gpus[i].processes = [LabProcess(4242, 11000, "python train.py")]
        s.gpus[i].memory_used_mib = 11000
        s.gpus[i].utilization = (100, 87)
    return s


def nvml_mismatch() -> Scenario:
    """Driver upgraded from 535.161.08 to 535.183.01 without a reboot: the old kernel module is
    still loaded. NVML: "Driver/library version mismatch"; cuInit -> 803."""
    s = rtx2080ti_x4()
    s.name = "nvml_mismatch"
    s.kernel_module_version = "535.161.08"
    return s


def cuinit_999() -> Scenario:
    """cuInit returns CUDA_ERROR_UNKNOWN (999) although everything else looks fine."""
    s = rtx2080ti_x4()
    s.name = "cuinit_999"
    s.errors["cuInit"] = CUDA_ERROR_UNKNOWN
    return s


def uvm_missing() -> Scenario:
    """nvidia_uvm not loaded, so /dev/nvidia-uvm is missing: cuInit -> 999, NVML works."""
    s = rtx2080ti_x4()
    s.name = "uvm_missing"
    s.modules = ("nvidia", "nvidia_modeset", "nvidia_drm")
    return s


def cuinit_hang() -> Scenario:
    """cuInit never returns."""
    s = rtx2080ti_x4()
    s.name = "cuinit_hang"
    s.hangs = ["cuInit"]
    return s


def cuinit_crash() -> Scenario:
    """cuInit dies with SIGSEGV."""
    s = rtx2080ti_x4()
    s.name = "cuinit_crash"
    s.crashes = ["cuInit"]
    return s


def mixed_order() -> Scenario:
    """A GTX 1080 at PCI 01:00.0 and an RTX 3090 at 02:00.0. nvidia-smi (PCI order) calls the
    1080 GPU 0; CUDA's default FASTEST_FIRST makes the 3090 cuda:0."""
    gtx1080 = LabGpu(name="NVIDIA GeForce GTX 1080", uuid="GPU-1c0e2a4b-6d8f-4a1c-9e3b-5d7f9a1c3e5b",
                     pci_bus_id="00000000:01:00.0", compute_capability=(6, 1), memory_total_mib=8192,
                     pci_device_id=0x1B80, pci_subsystem_id=0x119E10DE, multiprocessor_count=20, speed_rank=1)
    rtx3090 = LabGpu(name="NVIDIA GeForce RTX 3090", uuid="GPU-7f3d5b1a-9c2e-4d6f-8a0b-1c3e5f7a9b2d",
                     pci_bus_id="00000000:02:00.0", compute_capability=(8, 6), memory_total_mib=24576,
                     pci_device_id=0x2204, pci_subsystem_id=0x147D10DE, multiprocessor_count=82, speed_rank=0)
    return Scenario(name="mixed_order", gpus=[gtx1080, rtx3090], driver_version="535.183.01",
                    cuda_driver_version=12020)


def driver_418() -> Scenario:
    """An old datacenter box: Tesla V100 (3D controller class), driver 418.87.01 = CUDA 10.1."""
    v100 = LabGpu(name="Tesla V100-SXM2-16GB", uuid="GPU-5e2c8a4f-1b3d-4e6a-9c8b-7d5f3a1e9c2b",
                  pci_bus_id="00000000:00:1E.0", compute_capability=(7, 0), memory_total_mib=16160,
                  pci_device_id=0x1DB1, pci_subsystem_id=0x121210DE, pci_class=0x030200,
                  multiprocessor_count=80)
    return Scenario(name="driver_418", gpus=[v100], driver_version="418.87.01", cuda_driver_version=10010)


def wsl2() -> Scenario:
    """WSL2 on a Windows host with driver 551.86 (CUDA 12.4): no PCI GPU, no kernel module,
    /dev/dxg instead of /dev/nvidia*, yet CUDA and NVML work."""
    rtx3080 = LabGpu(name="NVIDIA GeForce RTX 3080", uuid="GPU-2b4d6f8a-0c1e-4a3b-8d5f-7a9c1e3b5d7f",
                     pci_bus_id="00000000:01:00.0", compute_capability=(8, 6), memory_total_mib=10240,
                     pci_device_id=0x2206, pci_subsystem_id=0x146610DE, multiprocessor_count=68)
    return Scenario(name="wsl2", gpus=[rtx3080], driver_version="551.86", cuda_driver_version=12040,
                    wsl=True, modules=())


def container_no_device_nodes() -> Scenario:
    """A Docker container started without --gpus: the host's GPUs show in /sys and the host's
    module in /proc, but there are no /dev/nvidia* nodes and no driver libraries inside."""
    s = rtx2080ti_x4()
    s.name = "container_no_device_nodes"
    s.container = "docker"
    s.kernel_module_version = "535.183.01"
    s.driver_version = None
    s.device_nodes = []
    return s


def kernel_wrong_result() -> Scenario:
    """One RTX 2080 Ti whose vadd kernel returns wrong sums."""
    return Scenario(name="kernel_wrong_result", gpus=[rtx2080ti(0, kernel="wrong")])


def kernel_launch_failure() -> Scenario:
    """One RTX 2080 Ti whose kernel faults: cuCtxSynchronize -> 719 CUDA_ERROR_LAUNCH_FAILED."""
    return Scenario(name="kernel_launch_failure", gpus=[rtx2080ti(0, kernel=719)])


def a100_mig() -> Scenario:
    """An A100 in MIG mode with two 1g.5gb instances, next to an A100 without MIG."""
    a = LabGpu(name="NVIDIA A100-SXM4-40GB", uuid="GPU-9a8b7c6d-5e4f-4a3b-2c1d-0e9f8a7b6c5d",
               pci_bus_id="00000000:07:00.0", compute_capability=(8, 0), memory_total_mib=40960,
               pci_device_id=0x20B0, pci_subsystem_id=0x134F10DE, pci_class=0x030200, multiprocessor_count=108,
               mig_mode=True,
               mig_devices=[LabMig("MIG-4f1e2d3c-b4a5-5968-7a8b-9c0d1e2f3a4b", "1g.5gb", 4864),
                            LabMig("MIG-8c7b6a59-4837-5261-9a0b-c1d2e3f4a5b6", "1g.5gb", 4864)])
    b = LabGpu(name="NVIDIA A100-SXM4-40GB", uuid="GPU-0d1c2b3a-4f5e-4d6c-8b7a-9f0e1d2c3b4a",
               pci_bus_id="00000000:0F:00.0", compute_capability=(8, 0), memory_total_mib=40960,
               pci_device_id=0x20B0, pci_subsystem_id=0x134F10DE, pci_class=0x030200, multiprocessor_count=108,
               mig_mode=False)
    return Scenario(name="a100_mig", gpus=[a, b], driver_version="535.183.01", cuda_driver_version=12020)


SCENARIOS: Dict[str, Callable[[], Scenario]] = {
    f.__name__: f
    for f in [
        no_gpu, gpu_no_driver, driver_installed_module_not_loaded, rtx2080ti_x4, rtx2080ti_x4_two_full,
        nvml_mismatch, cuinit_999, uvm_missing, cuinit_hang, cuinit_crash, mixed_order, driver_418, wsl2,
        container_no_device_nodes, kernel_wrong_result, kernel_launch_failure, a100_mig,
    ]
}


def all_scenarios() -> List[Scenario]:
    return [f() for f in SCENARIOS.values()]
