"""Framework facts (PyTorch, TensorFlow, JAX, CuPy) and the installed packages around them.

Owned by the framework probes (gpudoctor/probes/frameworks/). Three kinds of facts:
- packages: distributions of the *target* interpreter read from their metadata (no import),
  conda packages from conda-meta, and the nvidia-* pins a framework requires vs what is installed;
- static: what a framework's own files say (torch/version.py, tensorflow's build_info.py) and the
  sonames it will load, read without importing it (these feed `check --quick`);
- live: what the framework says about itself when imported in a child process, with a tiny GPU op.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

FRAMEWORK_NAMES = ("torch", "tensorflow", "jax", "cupy")
DISPLAY_NAMES = {"torch": "PyTorch", "tensorflow": "TensorFlow", "jax": "JAX", "cupy": "CuPy"}


@dataclass
class Distribution:
    """One installed distribution (a *.dist-info or *.egg-info folder on the target's sys.path)."""

    name: str  # as its metadata spells it, e.g. "nvidia-cudnn-cu12"
    version: str
    location: str  # the sys.path entry it was found in
    installer: Optional[str] = None  # INSTALLER file: pip | conda | uv | None
    requires: List[str] = field(default_factory=list)  # Requires-Dist lines (kept for frameworks only)
    metadata_dir: Optional[str] = None  # the *.dist-info folder's name in `location` (its RECORD lists the files)

    @property
    def key(self) -> str:
        """The normalised name (PEP 503) used to compare distributions."""
        return normalize_name(self.name)


@dataclass
class ExtensionLink:
    """A compiled extension module of a companion package, read without loading it: the CUDA runtime it
    was linked against (DT_NEEDED) and the symbols of torch it needs that the installed torch lacks."""

    distribution: str  # "flash-attn"
    version: str
    path: str
    cuda_runtime: Optional[str] = None  # the libcudart soname it needs, e.g. "libcudart.so.11.0"
    missing_torch_symbols: List[str] = field(default_factory=list)  # the first few, mangled as the loader prints them
    missing_torch_symbol_count: int = 0


@dataclass
class CondaPackage:
    """A package recorded in the target env's conda-meta/*.json (read without conda)."""

    name: str  # cudatoolkit, cuda-cudart, cudnn, pytorch, tensorflow, ...
    version: str
    build: str = ""  # e.g. "cuda120py311h..." or "cpu_py311h..."
    channel: Optional[str] = None


@dataclass
class PinCheck:
    """One nvidia-* requirement of a framework compared with what is installed."""

    framework: str  # the distribution that requires it: torch, tensorflow
    requirement: str  # the Requires-Dist line, verbatim
    package: str  # nvidia-cudnn-cu12
    specifier: str  # ==9.1.0.70, >=8.9.4.25
    extra: Optional[str] = None  # and-cuda (TensorFlow), None for an unconditional requirement
    installed: Optional[str] = None  # the installed version, None when not installed
    satisfied: Optional[bool] = None  # None: not installed, or the specifier cannot be evaluated


@dataclass
class SonameNeed:
    """A shared library a framework will load, and how gpudoctor knows."""

    library: str  # cudart, cublas, cudnn, ...
    soname: str  # libcudart.so.12
    source: str  # elf-needed (DT_NEEDED of the framework's own .so) | build-info (TF's dso_loader rule) | metadata


@dataclass
class FrameworkStatic:
    """What a framework's files say, read without importing it."""

    name: str  # torch | tensorflow | jax | cupy
    installed: bool = False
    distribution: Optional[str] = None  # the distribution that provides it: torch, tensorflow-cpu, cupy-cuda12x
    version: Optional[str] = None
    package_dir: Optional[str] = None
    build: str = "unknown"  # cuda | cpu | rocm | unknown
    cuda_version: Optional[str] = None  # the CUDA version it was built with ("12.4")
    cudnn_version: Optional[str] = None  # the cuDNN version it was built with, as the build states it ("8", "9.3")
    hip_version: Optional[str] = None
    cuda_compute_capabilities: List[str] = field(default_factory=list)  # TF: sm_35, compute_80, ...
    sonames: List[SonameNeed] = field(default_factory=list)
    library_runpath: List[str] = field(default_factory=list)  # RUNPATH/RPATH of torch's CUDA .so
    details: Dict[str, Any] = field(default_factory=dict)  # raw version.py / build_info.py values
    error: Optional[str] = None  # why a file could not be read


@dataclass
class GpuDeviceInfo:
    """A GPU as a framework enumerates it (logical numbering, after CUDA_VISIBLE_DEVICES)."""

    index: int
    name: Optional[str] = None
    compute_capability: Optional[str] = None  # "8.6"
    total_memory: Optional[int] = None  # bytes
    kind: Optional[str] = None  # JAX device_kind, TF device type


@dataclass
class OpCheck:
    """A tiny operation on the GPU compared with the CPU result."""

    name: str  # matmul | conv2d | sum
    device: Optional[str] = None  # where it ran, as the framework reports it (TF: .../device:GPU:0)
    ran: bool = False
    ok: Optional[bool] = None  # None: it did not run
    max_abs_error: Optional[float] = None
    tolerance: Optional[float] = None  # the stated bound on max_abs_error
    seconds: Optional[float] = None
    error: Optional[str] = None  # the exception, verbatim
    placement_verified: Optional[bool] = None  # TF: the result tensor really lives on the GPU


@dataclass
class FrameworkLogLine:
    """A framework's own log line (TensorFlow's C++ logging, JAX's warnings), parsed."""

    kind: str  # dlopen-failed | no-cuda-drivers | cuinit-failed | cannot-dlopen-gpu-libs | cudnn-version-mismatch | ...
    text: str  # the message, verbatim (without the timestamp prefix)
    level: Optional[str] = None  # I | W | E | F
    source: Optional[str] = None  # dso_loader.cc:64
    library: Optional[str] = None  # the soname that failed to load
    error: Optional[str] = None  # dlerror text, cuInit error text
    runtime_version: Optional[str] = None  # "Loaded runtime CuDNN library: X"
    compiled_version: Optional[str] = None  # "but source was compiled with: Y"


@dataclass
class FrameworkLive:
    """What the framework says about itself when imported in a child of the target interpreter."""

    name: str
    probe: str  # child probe name: framework-torch
    status: str = "not-run"  # ok | import-failed | crashed | timeout | failed | not-started | not-run
    phase: Optional[str] = None  # the last phase the child reached: import | query | devices | op | done
    import_ok: bool = False
    import_seconds: Optional[float] = None
    import_error: Optional[str] = None  # "ImportError: libcudnn.so.8: cannot open shared object file ..."
    traceback: Optional[str] = None
    signal: Optional[str] = None  # SIGSEGV when the child was killed by a signal
    duration_s: Optional[float] = None
    version: Optional[str] = None
    built_with_cuda: Optional[bool] = None
    cuda_version: Optional[str] = None  # the CUDA version the build reports
    cudnn_version: Optional[str] = None  # the cuDNN the framework loaded ("9.1.0"), or its build's
    gpu_available: Optional[bool] = None  # torch.cuda.is_available(), TF/JAX: any GPU listed
    device_count: Optional[int] = None
    devices: List[GpuDeviceInfo] = field(default_factory=list)
    arch_list: List[str] = field(default_factory=list)  # torch.cuda.get_arch_list()
    nccl_version: Optional[str] = None
    cuda_init_error: Optional[str] = None  # why the framework could not initialise CUDA, verbatim
    loaded_libraries: List[str] = field(default_factory=list)  # real paths from /proc/self/maps
    cudnn_acceptable: Optional[bool] = None
    ops: List[OpCheck] = field(default_factory=list)
    op_skipped_reason: Optional[str] = None
    log_lines: List[FrameworkLogLine] = field(default_factory=list)
    details: Dict[str, Any] = field(default_factory=dict)  # build info, backend, plugin versions, ...
    errors: Dict[str, str] = field(default_factory=dict)  # query -> exception text, kept verbatim
    stderr_tail: str = ""


@dataclass
class FrameworkFacts:
    name: str  # torch | tensorflow | jax | cupy
    static: FrameworkStatic
    live: Optional[FrameworkLive] = None  # None in quick mode

    @property
    def display_name(self) -> str:
        return DISPLAY_NAMES.get(self.name, self.name)


@dataclass
class FrameworksFacts:
    python: Optional[str] = None  # the target interpreter the packages were read from
    packages: Dict[str, str] = field(default_factory=dict)  # distribution name -> version (all of them)
    distributions: List[Distribution] = field(default_factory=list)  # the relevant ones, with locations
    conda_prefix: Optional[str] = None
    conda_packages: List[CondaPackage] = field(default_factory=list)  # CUDA, cuDNN and framework packages
    pins: List[PinCheck] = field(default_factory=list)
    extension_links: List[ExtensionLink] = field(default_factory=list)  # companions' CUDA runtimes, torch symbols
    frameworks: Dict[str, FrameworkFacts] = field(default_factory=dict)  # installed frameworks only
    marker_environment: Dict[str, str] = field(default_factory=dict)  # PEP 508 environment of the target
    error: Optional[str] = None  # why the package listing failed

    def nvidia_wheels(self) -> Dict[str, str]:
        return {d.name: d.version for d in self.distributions if d.key.startswith("nvidia-")}

    def installed(self, name: str) -> List[Distribution]:
        key = normalize_name(name)
        return [d for d in self.distributions if d.key == key]

    def framework(self, name: str) -> Optional[FrameworkFacts]:
        return self.frameworks.get(name)


def normalize_name(name: str) -> str:
    """PEP 503 normalisation: case, '-', '_' and '.' do not distinguish distributions."""
    out = []
    prev_sep = False
    for ch in name.lower():
        if ch in "-_.":
            if not prev_sep:
                out.append("-")
            prev_sep = True
        else:
            out.append(ch)
            prev_sep = False
    return "".join(out)
