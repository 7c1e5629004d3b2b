"""Typed rows of the compat tables. Each dataclass is also the schema of its table: `from_row`
checks required fields, their types and version strings, and that the row names its source."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Dict, Mapping, Optional, Tuple

from .versions import is_dotted


class CompatDataError(ValueError):
    """A compat table is missing, unreadable or does not match its schema."""


def _where(table: str, index: int) -> str:
    return f"compat table {table!r}, row {index}"


class _Row:
    """Mixin: build a frozen dataclass from a TOML table, checking the schema."""

    _versions: Tuple[str, ...] = ()  # fields that must be dotted version strings (or lists of them)

    @classmethod
    def from_row(cls, raw: Mapping[str, Any], where: str):
        if not isinstance(raw, Mapping):
            raise CompatDataError(f"{where}: expected a table, got {type(raw).__name__}")
        known = {f.name: f for f in fields(cls)}
        unknown = set(raw) - set(known)
        if unknown:
            raise CompatDataError(f"{where}: unknown field(s) {sorted(unknown)}")
        values: Dict[str, Any] = {}
        for name, f in known.items():
            required = f.default is _MISSING and f.default_factory is _MISSING  # type: ignore[attr-defined]
            if name not in raw:
                if required:
                    raise CompatDataError(f"{where}: missing required field {name!r}")
                continue
            values[name] = _check_type(raw[name], f.type, f"{where}, field {name!r}")
        src = values.get("source")
        if not isinstance(src, str) or not src.strip():
            raise CompatDataError(f"{where}: every row needs a non-empty 'source'")
        for name in cls._versions:
            v = values.get(name)
            for item in (v if isinstance(v, (list, tuple)) else [v]):
                if item is not None and not is_dotted(item):
                    raise CompatDataError(f"{where}, field {name!r}: {item!r} is not a dotted version")
        for name, v in list(values.items()):
            if isinstance(v, list):
                values[name] = tuple(v)
        return cls(**values)  # type: ignore[call-arg]


from dataclasses import MISSING as _MISSING  # noqa: E402


def _check_type(value: Any, type_name: Any, where: str) -> Any:
    t = str(type_name)
    if t.startswith("Optional["):
        t = t[len("Optional["):-1]
    if t == "str":
        ok = isinstance(value, str)
    elif t == "int":
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif t.startswith("Tuple[str"):
        ok = isinstance(value, list) and all(isinstance(x, str) for x in value)
    elif t.startswith("Dict[str, str]"):
        ok = isinstance(value, dict) and all(isinstance(k, str) and isinstance(x, str) for k, x in value.items())
    else:
        ok = True
    if not ok:
        raise CompatDataError(f"{where}: expected {t}, got {value!r}")
    return dict(value) if isinstance(value, dict) else value


# -- TensorFlow ------------------------------------------------------------------------------
@dataclass(frozen=True)
class TfTested(_Row):
    """One row of TensorFlow's tested build configurations (GPU table)."""

    platform: str  # "linux" | "windows"
    version: str  # as the table writes it, e.g. "2.15.0", "1.13.1"
    package: str  # "tensorflow" | "tensorflow_gpu"
    python: Tuple[str, ...]
    compiler: str
    build_tools: str
    cuda: str
    cudnn: str
    source: str
    _versions = ("version", "python", "cuda", "cudnn")


@dataclass(frozen=True)
class TfAndCuda(_Row):
    """What `pip install tensorflow[and-cuda]==version` pins (wheel METADATA Requires-Dist)."""

    version: str
    cuda_runtime: str  # nvidia-cuda-runtime-cuXX pin, e.g. "12.2.140"
    cudnn: str  # nvidia-cudnn-cuXX pin, e.g. "8.9.4.25"
    pins: Dict[str, str]
    source: str
    requires_python: str = ""
    _versions = ("cuda_runtime", "cudnn")


# -- PyTorch ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class TorchVariant(_Row):
    """One CUDA variant of a PyTorch release (cu118, cu124, ...)."""

    name: str  # "cu124"
    cuda: str  # "12.4"
    source: str
    cudnn: Optional[str] = None  # bundled/pinned cuDNN, when a source states it
    arch_list: Tuple[str, ...] = ()  # TORCH_CUDA_ARCH_LIST entries, "8.0", "12.0+PTX"; empty = unknown
    arch_source: str = ""
    # Where no arch list is sourced: the lowest and highest compute capability PyTorch's own release
    # says this variant supports (torch/cuda/__init__.py's CUDA_ARCHES_SUPPORTED, 2.8-2.10).
    capability_range: Tuple[str, ...] = ()
    capability_range_source: str = ""
    experimental: bool = False
    command: str = ""  # the install command a source gives, when it is not the --index-url form
    _versions = ("cuda", "capability_range")

    @property
    def index_url(self) -> str:
        return f"https://download.pytorch.org/whl/{self.name}"


@dataclass(frozen=True)
class TorchRelease:
    """A PyTorch release with its CUDA variants (built by the loader from pytorch.toml)."""

    version: str
    python: Tuple[str, ...]
    default_variant: Optional[str]  # the variant of the plain Linux x86_64 wheel on PyPI
    variants: Tuple[TorchVariant, ...]
    source: str
    note: str = ""

    def variant(self, name: str) -> Optional[TorchVariant]:
        return next((v for v in self.variants if v.name == name), None)


@dataclass(frozen=True)
class _TorchReleaseRow(_Row):
    version: str
    python: Tuple[str, ...]
    source: str
    default_variant: Optional[str] = None
    note: str = ""
    _versions = ("version", "python")


# -- CUDA driver -----------------------------------------------------------------------------
@dataclass(frozen=True)
class ToolkitDriver(_Row):
    """CUDA toolkit release -> the driver it ships with and needs for its full feature set."""

    cuda: str  # major.minor
    release: str  # "CUDA 12.4 Update 1"
    linux: str
    source: str
    windows: Optional[str] = None
    _versions = ("cuda", "linux", "windows")


@dataclass(frozen=True)
class MinorVersionCompat(_Row):
    """Minimum driver of a CUDA major under minor version compatibility (CUDA 11+)."""

    cuda_major: int
    linux: str
    source: str
    windows: Optional[str] = None
    below: Optional[str] = None  # first driver branch of the next major (informational)
    note: str = ""
    _versions = ("linux", "windows", "below")


@dataclass(frozen=True)
class DriverRequirement:
    """Answer of min_driver_for_cuda()."""

    cuda: str
    os: str
    toolkit_driver: Optional[str]  # driver of the toolkit's GA release (full feature set)
    minor_version_compat_driver: Optional[str]  # None before CUDA 11: no minor version compatibility
    limits: Tuple[str, ...]
    sources: Tuple[str, ...]


# -- cuDNN, GPUs, architectures --------------------------------------------------------------
@dataclass(frozen=True)
class CudnnPackage(_Row):
    cudnn: str
    cuda_major: int
    cuda: Tuple[str, ...]
    source: str
    driver_linux: Optional[str] = None
    driver_windows: Optional[str] = None
    note: str = ""
    _versions = ("cudnn", "cuda", "driver_linux", "driver_windows")


@dataclass(frozen=True)
class Gpu(_Row):
    name: str
    compute_capability: str
    kind: str  # data_center | workstation | consumer | jetson
    source: str
    _versions = ("compute_capability",)


@dataclass(frozen=True)
class Architecture(_Row):
    compute_capability: str
    name: str
    source: str
    _versions = ("compute_capability",)


@dataclass(frozen=True)
class GpuInfo:
    """Answer of gpu_by_name()."""

    name: str  # the table's spelling
    compute_capability: str
    architecture: Optional[str]
    kind: str
    source: str


@dataclass(frozen=True)
class ArchSeries(_Row):
    cuda_from: str
    cuda_to: str
    min_compute_capability: str
    source: str
    dropped: Tuple[str, ...] = ()
    deprecated: Tuple[str, ...] = ()
    renamed: Dict[str, str] = field(default_factory=dict)
    note: str = ""
    _versions = ("cuda_from", "cuda_to", "min_compute_capability", "dropped", "deprecated")


# -- coverage: the newest release each table knows ------------------------------------------
@dataclass(frozen=True)
class Coverage(_Row):
    """A table's `[[coverage]]` row: the newest release of `subject` it covers and the date its
    sources were read. A release newer than `newest` is unknown to gpudoctor, never guessed about.
    `newest` with two parts ("2.21") covers every patch release of that series."""

    subject: str  # torch | tensorflow | jax | cuda | driver | cudnn | cupy | compute_capability
    newest: str
    read: str  # YYYY-MM-DD
    source: str
    note: str = ""
    table: str = ""  # filled in by the loader: the file the row came from
    _versions = ("newest",)


# -- JAX, CuPy -------------------------------------------------------------------------------
@dataclass(frozen=True)
class ExtraRow(_Row):
    """A JAX or CuPy row: a package and the CUDA major / minimums it needs."""

    package: str
    cuda_major: int
    source: str
    min_cuda: Optional[str] = None
    min_cudnn: Optional[str] = None
    min_driver_linux: Optional[str] = None
    note: str = ""
    _versions = ("min_cuda", "min_cudnn", "min_driver_linux")


# -- GPU generations -------------------------------------------------------------------------
@dataclass(frozen=True)
class GpuGeneration(_Row):
    """An architecture's support window: the last CUDA toolkit major that builds for it and the last
    driver branch that runs it (None while NVIDIA lists it as ongoing)."""

    architecture: str
    compute_capabilities: Tuple[str, ...]
    source: str
    first_cuda: Optional[str] = None
    last_cuda_major: Optional[int] = None
    last_driver_branch: Optional[int] = None
    _versions = ("compute_capabilities", "first_cuda")

@dataclass(frozen=True)
class JaxRelease(_Row):
    """One release of a JAX CUDA plugin wheel and the Requires-Dist lines of its CUDA extra."""

    package: str  # jax-cuda12-plugin | jax-cuda13-plugin
    version: str
    source: str
    requires_python: str = ""
    requires: Dict[str, str] = field(default_factory=dict)  # nvidia-* name -> version specifier
    _versions = ("version",)
