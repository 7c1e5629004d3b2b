"""Scenarios for the simulated-GPU lab: a machine described as data.

A :class:`Scenario` is written out twice:

* :meth:`Scenario.write_flat` writes the flat ``key=value`` text file that the C stand-ins
  for ``libcuda.so.1`` and ``libnvidia-ml.so.1`` read (their path comes from the environment
  variable ``GPUDOCTOR_LAB_SCENARIO``);
* :meth:`Scenario.write_sysroot` writes a fake ``/proc``, ``/sys`` and ``/dev`` tree for
  ``GPUDOCTOR_SYSROOT`` (layout in ``tests/lab/README.md``).

Both are derived from the same fields, so the kernel-driver view (sysroot) and the
user-space view (the libraries) of a machine always agree, as on a real machine. Where a
kernel-side state has a known user-space symptom, the symptom is derived here (see
:meth:`Scenario.effective_errors`), so a scenario says *what is wrong*, not every code it causes.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple, Union

# --- real numbers from NVIDIA's headers ----------------------------------------------------
# cuda.h, enum cudaError_enum (CUresult)
CUDA_SUCCESS = 0
CUDA_ERROR_INVALID_VALUE = 1
CUDA_ERROR_OUT_OF_MEMORY = 2
CUDA_ERROR_NOT_INITIALIZED = 3
CUDA_ERROR_NO_DEVICE = 100
CUDA_ERROR_INVALID_DEVICE = 101
CUDA_ERROR_INVALID_PTX = 218
CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222
CUDA_ERROR_NOT_FOUND = 500
CUDA_ERROR_ILLEGAL_ADDRESS = 700
CUDA_ERROR_LAUNCH_FAILED = 719
CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803
CUDA_ERROR_UNKNOWN = 999
# nvml.h, nvmlReturn_t
NVML_SUCCESS = 0
NVML_ERROR_UNINITIALIZED = 1
NVML_ERROR_NOT_SUPPORTED = 3
NVML_ERROR_NO_PERMISSION = 4
NVML_ERROR_DRIVER_NOT_LOADED = 9
NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18
NVML_ERROR_UNKNOWN = 999

MIB = 1024 * 1024

#: The C side refuses a file whose first line is not exactly this.
FLAT_HEADER = "# gpudoctor-lab-scenario 1"

#: Kernel modules of a normal desktop/server install of the NVIDIA driver.
ALL_NVIDIA_MODULES = ("nvidia", "nvidia_uvm", "nvidia_modeset", "nvidia_drm")

_CUDA_SYMBOL = re.compile(r"^(cu|nvml)[A-Za-z0-9_]+$")


@dataclass
class LabProcess:
    """A process holding memory on a GPU (as NVML reports it).

    ``name`` is what NVML calls it; ``cmdline`` (default: ``name``) and ``uid`` are written to the
    sysroot's ``proc/PID/{cmdline,status}`` and ``user`` to its ``etc/passwd`` (``None``: the uid
    has no name there). ``visible=False``: no ``proc/PID`` (another PID namespace, or ended).
    """

    pid: int
    used_mib: int
    name: str = "python"
    user: Optional[str] = "alice"
    uid: int = 1001
    cmdline: Optional[Sequence[str]] = None
    visible: bool = True

    @property
    def argv(self) -> List[str]:
        return list(self.cmdline) if self.cmdline is not None else self.name.split()


@dataclass
class LabMig:
    """A MIG device (GPU instance + compute instance) on a GPU in MIG mode."""

    uuid: str  # "MIG-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (R470+ format)
    profile: str = "1g.5gb"
    memory_total_mib: int = 4864


@dataclass
class LabGpu:
    """One physical NVIDIA GPU.

    ``pci_bus_id`` is written the way NVML prints it (``00000000:01:00.0``); the short form
    ``0000:01:00.0`` is accepted too. ``speed_rank`` emulates CUDA's FASTEST_FIRST heuristic:
    lower is faster; ``None`` means "as fast as its PCI position" (ties keep PCI order).
    ``kernel`` is what the ``vadd`` test kernel does on this GPU: ``"ok"``, ``"wrong"``
    (a wrong sum) or an int CUresult that ``cuCtxSynchronize`` reports after the launch
    (an asynchronous kernel fault, e.g. 719 or 700). ``mig_mode``: ``None`` = the GPU does
    not support MIG (NVML answers NOT_SUPPORTED), else the current mode.
    """

    name: str
    uuid: str
    pci_bus_id: str
    compute_capability: Tuple[int, int] = (7, 5)
    memory_total_mib: int = 11264
    memory_used_mib: int = 0
    processes: List[Union[LabProcess, Tuple[int, int, str]]] = field(default_factory=list)
    utilization: Tuple[int, int] = (0, 0)  # (gpu %, memory %)
    mig_mode: Optional[bool] = None
    mig_devices: List[LabMig] = field(default_factory=list)
    speed_rank: Optional[int] = None
    pci_device_id: int = 0x1E07  # 0x1E07 = TU102 [GeForce RTX 2080 Ti Rev. A]
    pci_subsystem_id: int = 0x12FA10DE  # (subsystem device << 16) | subsystem vendor
    pci_class: int = 0x030000  # VGA compatible controller; 0x030200 = 3D controller
    multiprocessor_count: int = 68
    kernel: Union[str, int] = "ok"

    def process_list(self) -> List[LabProcess]:
        out = []
        for p in self.processes:
            out.append(p if isinstance(p, LabProcess) else LabProcess(int(p[0]), int(p[1]), str(p[2])))
        return out

    @property
    def pci_parts(self) -> Tuple[int, int, int, int]:
        """(domain, bus, device, function) parsed from ``pci_bus_id``."""
        m = re.fullmatch(r"([0-9A-Fa-f]{4,8}):([0-9A-Fa-f]{2}):([0-9A-Fa-f]{2})\.([0-7])", self.pci_bus_id)
        if not m:
            raise ValueError("bad pci_bus_id %r (want 00000000:01:00.0)" % self.pci_bus_id)
        return tuple(int(x, 16) for x in m.groups())  # type: ignore[return-value]

    @property
    def sysfs_name(self) -> str:
        """The name of its directory under /sys/bus/pci/devices (``0000:01:00.0``)."""
        d, b, s, f = self.pci_parts
        return "%04x:%02x:%02x.%x" % (d, b, s, f)

    @property
    def nvml_bus_id(self) -> str:
        d, b, s, f = self.pci_parts
        return "%08X:%02X:%02X.%X" % (d, b, s, f)


@dataclass
class PciDevice:
    """A non-NVIDIA PCI device, so the hardware probe has something to skip."""

    address: str = "0000:00:02.0"
    vendor: int = 0x8086
    device: int = 0x3E92
    pci_class: int = 0x030000
    subsystem_vendor: int = 0x1028


@dataclass
class Scenario:
    """A whole machine: hardware, kernel driver, user-space driver, and faults.

    Faults are keyed by the C symbol they affect. A key names an exact symbol
    (``cuCtxCreate_v2``) or its base name, which also covers every ``_vN`` variant
    (``cuCtxCreate`` covers ``cuCtxCreate_v2``; ``nvmlInit`` covers ``nvmlInit_v2`` and
    ``nvmlInitWithFlags``).

    * ``errors``: symbol -> code the call returns (CUresult or nvmlReturn_t);
    * ``hangs``: symbols that never return (the call sleeps forever);
    * ``crashes``: symbols that raise SIGSEGV;
    * ``delays``: symbol -> seconds to sleep before doing the work.
    """

    name: str = "lab"
    gpus: List[LabGpu] = field(default_factory=list)
    other_pci_devices: List[PciDevice] = field(default_factory=lambda: [PciDevice()])
    driver_version: Optional[str] = "535.183.01"  # user-space driver (libcuda/NVML); None: not installed
    cuda_driver_version: int = 12020  # what cuDriverGetVersion answers
    kernel_module_version: Optional[str] = None  # None: same as driver_version
    modules: Sequence[str] = ALL_NVIDIA_MODULES  # loaded kernel modules
    device_nodes: Optional[Sequence[str]] = None  # None: derived from modules and GPUs
    missing_device_nodes: Sequence[str] = ()
    wsl: bool = False
    wsl_libcuda_links: Sequence[str] = ("libcuda.so.1", "libcuda.so")  # what the Windows driver put in /usr/lib/wsl/lib
    wsl_linux_driver: bool = False  # a Linux NVIDIA driver installed inside WSL, found before /usr/lib/wsl/lib
    container: Optional[str] = None  # None, "docker", "podman" or "kubernetes"
    errors: Dict[str, int] = field(default_factory=dict)
    hangs: Sequence[str] = ()
    crashes: Sequence[str] = ()
    delays: Dict[str, float] = field(default_factory=dict)
    context_memory_mib: int = 300  # device memory a CUDA context takes (fails with OOM if not free)

    # ---- derived facts -----------------------------------------------------------------
    @property
    def userspace_driver(self) -> bool:
        """Whether libcuda.so.1 / libnvidia-ml.so.1 exist on this machine."""
        return self.driver_version is not None

    @property
    def module_loaded(self) -> bool:
        return "nvidia" in self.modules and not self.wsl

    @property
    def effective_kernel_version(self) -> Optional[str]:
        return self.kernel_module_version or self.driver_version

    def effective_device_nodes(self) -> List[str]:
        if self.device_nodes is not None:
            nodes = list(self.device_nodes)
        elif self.wsl:
            nodes = ["dxg"]
        elif not self.module_loaded:
            nodes = []
        else:
            nodes = ["nvidiactl"] + ["nvidia%d" % i for i in range(len(self.gpus))]
            if "nvidia_uvm" in self.modules:
                nodes += ["nvidia-uvm", "nvidia-uvm-tools"]
            if "nvidia_modeset" in self.modules:
                nodes.append("nvidia-modeset")
        return [n for n in nodes if n not in set(self.missing_device_nodes)]

    def effective_errors(self) -> Dict[str, int]:
        """Explicit ``errors`` over the errors that the machine's state implies.

        What a real driver does in these states (also in tests/lab/README.md):
        * no nvidia kernel module (or no /dev/nvidiactl): ``cuInit`` -> 100
          CUDA_ERROR_NO_DEVICE, ``nvmlInit`` -> 9 NVML_ERROR_DRIVER_NOT_LOADED. This is what
          NVIDIA's real 535 libraries answer on a machine without the module (checked with
          Debian's libcuda1/libnvidia-ml1, see DESIGN.md "Testing without a GPU").
        * kernel module version != user-space version (driver upgraded, no reboot): NVML ->
          18 "Driver/library version mismatch", ``cuInit`` -> 803
          CUDA_ERROR_SYSTEM_DRIVER_MISMATCH.
        * ``/dev/nvidia-uvm`` missing (nvidia_uvm not loaded, e.g. after suspend/resume):
          ``cuInit`` -> 999 CUDA_ERROR_UNKNOWN, while NVML works (it does not use UVM).
        * no GPU at all: ``cuInit`` -> 100 (and NVML_ERROR_DRIVER_NOT_LOADED, as no module
          binds to nothing).
        """
        derived: Dict[str, int] = {}
        nodes = set(self.effective_device_nodes())
        if not self.wsl:
            if not self.module_loaded or "nvidiactl" not in nodes or not self.gpus:
                derived["cuInit"] = CUDA_ERROR_NO_DEVICE
                derived["nvmlInit"] = NVML_ERROR_DRIVER_NOT_LOADED
            elif self.effective_kernel_version != self.driver_version:
                derived["cuInit"] = CUDA_ERROR_SYSTEM_DRIVER_MISMATCH
                derived["nvmlInit"] = NVML_ERROR_LIB_RM_VERSION_MISMATCH
            elif "nvidia-uvm" not in nodes:
                derived["cuInit"] = CUDA_ERROR_UNKNOWN
        derived.update(self.errors)
        return derived

    def validate(self) -> None:
        prev = None
        for g in self.gpus:
            key = g.pci_parts
            if prev is not None and key <= prev:
                raise ValueError("Scenario.gpus must be listed in PCI bus order (NVML's order)")
            prev = key
            if not g.uuid.startswith("GPU-"):
                raise ValueError("GPU uuid must start with 'GPU-': %r" % g.uuid)
            for m in g.mig_devices:
                if not m.uuid.startswith("MIG-"):
                    raise ValueError("MIG uuid must start with 'MIG-': %r" % m.uuid)
        for sym in list(self.errors) + list(self.hangs) + list(self.crashes) + list(self.delays):
            if not _CUDA_SYMBOL.match(sym):
                raise ValueError("not a CUDA/NVML symbol name: %r" % sym)

    # ---- the flat file read by the C stand-ins -----------------------------------------
    def to_flat(self) -> str:
        self.validate()
        lines = [FLAT_HEADER, "name=%s" % _one_line(self.name)]
        lines.append("driver_version=%s" % (self.driver_version or ""))
        lines.append("cuda_driver_version=%d" % self.cuda_driver_version)
        lines.append("context_memory_mib=%d" % self.context_memory_mib)
        lines.append("gpu_count=%d" % len(self.gpus))
        for i, g in enumerate(self.gpus):
            p = "gpu.%d." % i
            d, b, s, f = g.pci_parts
            procs = g.process_list()
            lines += [
                p + "name=" + _one_line(g.name),
                p + "uuid=" + g.uuid,
                p + "pci_domain=%d" % d,
                p + "pci_bus=%d" % b,
                p + "pci_device=%d" % s,
                p + "pci_device_id=%d" % g.pci_device_id,
                p + "pci_subsystem_id=%d" % g.pci_subsystem_id,
                p + "cc_major=%d" % g.compute_capability[0],
                p + "cc_minor=%d" % g.compute_capability[1],
                p + "memory_total_mib=%d" % g.memory_total_mib,
                p + "memory_used_mib=%d" % max(g.memory_used_mib, sum(x.used_mib for x in procs)),
                p + "utilization_gpu=%d" % g.utilization[0],
                p + "utilization_memory=%d" % g.utilization[1],
                p + "mig_mode=%d" % (-1 if g.mig_mode is None else int(bool(g.mig_mode))),
                p + "speed_rank=%d" % (i if g.speed_rank is None else g.speed_rank),
                p + "multiprocessor_count=%d" % g.multiprocessor_count,
                p + "kernel=%s" % g.kernel,
                p + "process_count=%d" % len(procs),
            ]
            for j, pr in enumerate(procs):
                lines += [
                    p + "process.%d.pid=%d" % (j, pr.pid),
                    p + "process.%d.used_mib=%d" % (j, pr.used_mib),
                    p + "process.%d.name=%s" % (j, _one_line(pr.name)),
                ]
            lines.append(p + "mig_count=%d" % len(g.mig_devices))
            for j, m in enumerate(g.mig_devices):
                lines += [
                    p + "mig.%d.uuid=%s" % (j, m.uuid),
                    p + "mig.%d.profile=%s" % (j, _one_line(m.profile)),
                    p + "mig.%d.memory_total_mib=%d" % (j, m.memory_total_mib),
                ]
        for sym, code in sorted(self.effective_errors().items()):
            lines.append("error.%s=%d" % (sym, code))
        for sym in self.hangs:
            lines.append("hang.%s=1" % sym)
        for sym in self.crashes:
            lines.append("crash.%s=1" % sym)
        for sym, secs in sorted(self.delays.items()):
            lines.append("delay.%s=%d" % (sym, int(secs * 1000)))  # milliseconds
        return "\n".join(lines) + "\n"

    def write_flat(self, path: Union[str, os.PathLike]) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.to_flat(), encoding="utf-8")
        return path

    # ---- the fake sysroot --------------------------------------------------------------
    def write_sysroot(self, root: Union[str, os.PathLike]) -> Path:
        """Write the fake ``/proc``, ``/sys`` and ``/dev`` (and a few marker files) under root."""
        self.validate()
        root = Path(root)
        root.mkdir(parents=True, exist_ok=True)
        w = lambda rel, text: _write(root / rel, text)  # noqa: E731

        # /proc/version: the kernel; WSL2 kernels say "microsoft-standard-WSL2".
        if self.wsl:
            w("proc/version", "Linux version 5.15.153.1-microsoft-standard-WSL2 (root@941d701f84f1) "
              "(gcc (GCC) 12.2.0, GNU ld (GNU Binutils) 2.40) #1 SMP Fri Mar 29 23:14:13 UTC 2024\n")
        else:
            w("proc/version", "Linux version 6.1.0-21-amd64 (builder@localhost) "
              "(gcc-12 (Debian 12.2.0-14) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) "
              "#1 SMP PREEMPT_DYNAMIC Debian 6.1.90-1 (2024-05-03)\n")

        # /proc/modules and /sys/module/<name>
        mods = [] if self.wsl else [m for m in ALL_NVIDIA_MODULES if m in self.modules]
        mods += [m for m in self.modules if m not in ALL_NVIDIA_MODULES]
        w("proc/modules", _proc_modules(mods, len(self.gpus)))
        for m in ["ext4", "snd_hda_intel"] + mods:
            _mkdir(root / "sys/module" / m)
            _write(root / "sys/module" / m / "initstate", "live\n")
        if "nvidia" in mods and self.effective_kernel_version:
            w("sys/module/nvidia/version", self.effective_kernel_version + "\n")

        # /proc/driver/nvidia: present while the nvidia module is loaded.
        if "nvidia" in mods and self.effective_kernel_version:
            w("proc/driver/nvidia/version", _nvrm_version(self.effective_kernel_version))
            for i, g in enumerate(self.gpus):
                w("proc/driver/nvidia/gpus/%s/information" % g.sysfs_name, _gpu_information(g, i))

        # /sys/bus/pci/devices: no NVIDIA device in a WSL2 VM (the GPU is behind /dev/dxg).
        _mkdir(root / "sys/bus/pci/devices")
        _mkdir(root / "sys/bus/pci/drivers")
        if "nvidia" in mods:
            _mkdir(root / "sys/bus/pci/drivers/nvidia")
        if not self.wsl:
            for g in self.gpus:
                sub_vendor, sub_device = g.pci_subsystem_id & 0xFFFF, g.pci_subsystem_id >> 16
                _pci_dev(root, g.sysfs_name, 0x10DE, g.pci_device_id, g.pci_class, sub_vendor, sub_device,
                         bound="nvidia" if "nvidia" in mods else None)
        for o in self.other_pci_devices:
            _pci_dev(root, o.address, o.vendor, o.device, o.pci_class, o.subsystem_vendor, 0x0000, bound=None)

        # /dev: regular files stand for device nodes (probes decide by trying to open them).
        _mkdir(root / "dev")
        for n in self.effective_device_nodes():
            w("dev/" + n, "")
        if self.wsl:
            # WSL2 ships libcuda in /usr/lib/wsl/lib (outside the /proc,/sys,/dev contract;
            # present so a probe that looks there under the sysroot finds a marker).
            _mkdir(root / "usr/lib/wsl/lib")
            w("usr/lib/wsl/lib/README.lab", "the lab's libcuda stand-in comes through LD_LIBRARY_PATH\n")

        # /proc/PID of the GPU processes this PID namespace sees, and the users' names.
        users = {0: "root"}
        for g in self.gpus:
            for p in g.process_list():
                if not p.visible:
                    continue
                w("proc/%d/cmdline" % p.pid, "".join(a + "\0" for a in p.argv))
                w("proc/%d/status" % p.pid, "Name:\t%s\nState:\tS (sleeping)\nPid:\t%d\n"
                  "Uid:\t%d\t%d\t%d\t%d\n" % (p.name.split()[0][:15], p.pid, p.uid, p.uid, p.uid, p.uid))
                if p.user is not None:
                    users.setdefault(p.uid, p.user)
        w("etc/passwd", "".join("%s:x:%d:%d::/home/%s:/bin/bash\n" % (n, u, u, n) for u, n in sorted(users.items())))

        # Containers: /.dockerenv, /run/.containerenv, /proc/1/cgroup.
        cid = "3f4e5d6c7b8a" * 5 + "9f8e"
        if self.container == "docker":
            w(".dockerenv", "")
            w("proc/1/cgroup", "12:devices:/docker/%s\n0::/docker/%s\n" % (cid, cid))
        elif self.container == "podman":
            w("run/.containerenv", 'engine="podman-4.3.1"\n')
            w("proc/1/cgroup", "0::/\n")
        elif self.container == "kubernetes":
            w("proc/1/cgroup", "0::/kubepods/besteffort/pod1234/%s\n" % cid)
        elif self.container is None:
            w("proc/1/cgroup", "0::/init.scope\n")
        else:
            raise ValueError("unknown container kind %r" % self.container)
        return root


def _one_line(s: str) -> str:
    if "\n" in s or "\r" in s:
        raise ValueError("value must be one line: %r" % s)
    return s


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _mkdir(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True)


def _pci_dev(root: Path, addr: str, vendor: int, device: int, cls: int, sub_vendor: int, sub_device: int,
             bound: Optional[str]) -> None:
    d = root / "sys/bus/pci/devices" / addr
    _mkdir(d)
    # sysfs prints these as "0x%04x\n" (class as "0x%06x\n").
    _write(d / "vendor", "0x%04x\n" % vendor)
    _write(d / "device", "0x%04x\n" % device)
    _write(d / "class", "0x%06x\n" % cls)
    _write(d / "subsystem_vendor", "0x%04x\n" % sub_vendor)
    _write(d / "subsystem_device", "0x%04x\n" % sub_device)
    if bound:
        link = d / "driver"
        if not link.exists():
            os.symlink("../../drivers/" + bound, str(link))


def _proc_modules(mods: Sequence[str], ngpus: int) -> str:
    # Format of /proc/modules: name size refcount deps state address [taints]
    sizes = {"nvidia": 56795136, "nvidia_uvm": 1437696, "nvidia_modeset": 1314816, "nvidia_drm": 77824}
    users = {"nvidia": [m for m in ("nvidia_uvm", "nvidia_modeset") if m in mods],
             "nvidia_modeset": [m for m in ("nvidia_drm",) if m in mods]}
    lines = ["ext4 1007616 1 - Live 0x0000000000000000", "snd_hda_intel 61440 3 - Live 0x0000000000000000"]
    for m in mods:
        deps = ",".join(users.get(m, [])) + "," if users.get(m) else "-"
        refs = len(users.get(m, [])) + (ngpus if m == "nvidia" else 0)
        taint = " (POE)" if m in sizes else ""
        lines.append("%s %d %d %s Live 0x0000000000000000%s" % (m, sizes.get(m, 16384), refs, deps, taint))
    return "\n".join(lines) + "\n"


def _nvrm_version(version: str) -> str:
    # The real file, e.g. on a 535 driver:
    # NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.183.01  Sun May 12 19:39:15 UTC 2024
    # GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)
    return ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  %s  Sun May 12 19:39:15 UTC 2024\n"
            "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14) \n" % version)


def _gpu_information(g: LabGpu, minor: int) -> str:
    return ("Model: \t\t %s\nIRQ:   \t\t 160\nGPU UUID: \t %s\nVideo BIOS: \t 90.02.17.00.58\n"
            "Bus Type: \t PCIe\nDMA Size: \t 47 bits\nDMA Mask: \t 0x7fffffffffff\n"
            "Bus Location: \t %s\nDevice Minor: \t %d\nGPU Excluded:\t No\n"
            % (g.name, g.uuid, g.sysfs_name, minor))
