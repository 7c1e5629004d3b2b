"""Pure questions answered from the compat tables. No I/O beyond the (cached) table load.

Every function returns None (or an empty tuple) when the tables do not know the answer: callers
must treat "unknown" differently from "no".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Sequence, Tuple

from .loader import Tables, tables
from .model import (
    ArchSeries, CudnnPackage, DriverRequirement, GpuInfo, MinorVersionCompat, TfAndCuda, TfTested,
    ToolkitDriver, TorchRelease, TorchVariant,
)
from ..versions import version_parts
from .versions import is_dotted, major, major_minor, normalize_release, vge, vkey

OSES = ("linux", "windows")


def _t(t: Optional[Tables]) -> Tables:
    return t if t is not None else tables()


def _os(os: str) -> str:
    o = os.lower()
    if o.startswith("win"):
        return "windows"
    if o.startswith("lin"):
        return "linux"
    raise ValueError(f"os must be 'linux' or 'windows', not {os!r}")


# -- CUDA and the driver ---------------------------------------------------------------------
def cuda_versions(t: Optional[Tables] = None) -> Tuple[str, ...]:
    """Every CUDA major.minor the driver table knows, oldest first."""
    return tuple(sorted({r.cuda for r in _t(t).toolkit_drivers}, key=vkey))


def toolkit_releases(cuda: str, t: Optional[Tables] = None) -> Tuple[ToolkitDriver, ...]:
    """The toolkit releases (GA, Updates) of a CUDA major.minor, lowest driver first."""
    mm = major_minor(cuda)
    rows = [r for r in _t(t).toolkit_drivers if r.cuda == mm]
    return tuple(sorted(rows, key=lambda r: vkey(r.linux)))


def _mvc(cuda_major: int, t: Tables) -> Optional[MinorVersionCompat]:
    return next((m for m in t.minor_version_compat if m.cuda_major == cuda_major), None)


def min_driver_for_cuda(cuda: str, os: str = "linux", t: Optional[Tables] = None) -> Optional[DriverRequirement]:
    """Minimum driver for a CUDA runtime major.minor: the toolkit's own driver (its GA release) and,
    from CUDA 11 on, the lower driver that minor version compatibility allows. None when unknown."""
    t = _t(t)
    o = _os(os)
    if not is_dotted(cuda):
        return None
    releases = toolkit_releases(cuda, t)
    if not releases:
        return None
    ga = releases[0]  # the GA release has the lowest driver of its minor
    toolkit = ga.linux if o == "linux" else ga.windows
    mvc = _mvc(major(cuda), t)
    mvc_driver = None
    if mvc is not None:
        mvc_driver = mvc.linux if o == "linux" else mvc.windows
    sources = [ga.source] + ([mvc.source] if mvc else [])
    limits = t.mvc_limits if mvc is not None else ()
    return DriverRequirement(major_minor(cuda), o, toolkit, mvc_driver, tuple(limits), tuple(sources))


def driver_supports_cuda(driver_version: str, cuda: str, os: str = "linux", needs_ptx_jit: bool = False,
                         t: Optional[Tables] = None) -> Optional[bool]:
    """Can a driver run a CUDA runtime major.minor? True/False, or None when the tables do not know.

    CUDA 11+: any driver at or above the major's minor-version-compatibility minimum runs it (with the
    limits in DriverRequirement.limits). A build that must JIT its PTX on this GPU (`needs_ptx_jit`)
    needs the toolkit driver instead. Before CUDA 11 the toolkit driver is always needed."""
    req = min_driver_for_cuda(cuda, os, t)
    if req is None or not is_dotted(driver_version):
        return None
    if req.toolkit_driver and vge(driver_version, req.toolkit_driver):
        return True
    if req.minor_version_compat_driver is None or needs_ptx_jit:
        return False if req.toolkit_driver else None
    return vge(driver_version, req.minor_version_compat_driver)


def newest_cuda_for_driver(driver_version: str, os: str = "linux", t: Optional[Tables] = None) -> Optional[str]:
    """Newest CUDA major.minor whose runtime this driver can run (minor version compatibility applied)."""
    t = _t(t)
    ok = [c for c in cuda_versions(t) if driver_supports_cuda(driver_version, c, os, t=t)]
    return ok[-1] if ok else None


def newest_cuda_for_driver_full(driver_version: str, os: str = "linux", t: Optional[Tables] = None) -> Optional[str]:
    """Newest CUDA major.minor whose toolkit driver this driver meets (full features, PTX JIT included)."""
    t = _t(t)
    ok = [c for c in cuda_versions(t) if driver_supports_cuda(driver_version, c, os, needs_ptx_jit=True, t=t)]
    return ok[-1] if ok else None


# -- architectures ---------------------------------------------------------------------------
def _arch_series(cuda: str, t: Tables) -> Optional[ArchSeries]:
    mm = major_minor(cuda)
    for s in t.arch_series:
        if vkey(s.cuda_from) <= vkey(mm) <= vkey(s.cuda_to):
            return s
    return None


@dataclass(frozen=True)
class BuildArchs:
    """Answer of cuda_build_archs(): what a toolkit can compile for, as far as the tables know."""

    cuda: str
    min_compute_capability: str
    dropped: Tuple[str, ...]
    deprecated: Tuple[str, ...]
    note: str
    source: str

    def can_build_for(self, compute_capability: str) -> Optional[bool]:
        """False below the minimum; None above it (the newest each toolkit knows is not tabulated)."""
        if not vge(compute_capability, self.min_compute_capability):
            return False
        return None


def cuda_build_archs(cuda: str, t: Optional[Tables] = None) -> Optional[BuildArchs]:
    t = _t(t)
    if not is_dotted(cuda):
        return None
    s = _arch_series(cuda, t)
    if s is None:
        return None
    return BuildArchs(major_minor(cuda), s.min_compute_capability, s.dropped, s.deprecated, s.note, s.source)


def _arch_entry(entry: str) -> Optional[Tuple[Tuple[int, ...], bool, bool]]:
    """(compute capability, is PTX, arch-specific) of an arch-list entry in any of the spellings in
    use: "8.6" and "9.0+PTX" (PyTorch's TORCH_CUDA_ARCH_LIST), "sm_86" and "compute_80" (nvcc,
    torch.cuda.get_arch_list(), TensorFlow's build_info), "sm_90a" (SASS for exactly 9.0)."""
    text = entry.strip().lower()
    ptx = text.endswith("+ptx") or text.startswith("compute_")
    text = text.replace("+ptx", "").replace("sm_", "").replace("compute_", "")
    specific = text[-1:] in ("a", "f")
    digits = text.rstrip("af")
    if "." not in digits and digits.isdigit() and len(digits) >= 2:
        digits = f"{digits[:-1]}.{digits[-1]}"
    return (vkey(digits), ptx, specific) if is_dotted(digits) else None


def arch_entries_run_on(entries: Sequence[str], compute_capability: str) -> Optional[bool]:
    """Does a build with this arch list carry kernels for this GPU: SASS of the same major and a minor
    <= the GPU's (binary compatibility within a major), or PTX of an arch <= the GPU's (JIT).
    None when the list is empty or unreadable."""
    parsed = [p for p in (_arch_entry(e) for e in entries) if p is not None]
    if not parsed or not is_dotted(compute_capability):
        return None
    gpu = vkey(compute_capability)
    for cc, ptx, specific in parsed:
        if specific:
            if cc == gpu:
                return True
        elif (cc[0] == gpu[0] and cc <= gpu) or (ptx and cc <= gpu):
            return True
    return False


def variant_runs_on(variant: TorchVariant, compute_capability: str) -> Optional[bool]:
    """Does a torch variant carry kernels for this GPU (see arch_entries_run_on)? Without an arch list,
    a GPU below the variant's supported range is a no; anything else is unknown (None)."""
    if variant.arch_list or not variant.capability_range or not is_dotted(compute_capability):
        return arch_entries_run_on(variant.arch_list, compute_capability)
    return False if vkey(compute_capability) < vkey(variant.capability_range[0]) else None


# -- GPUs ------------------------------------------------------------------------------------
def _norm_gpu(name: str) -> str:
    n = " ".join(name.lower().replace("_", " ").split())
    for prefix in ("nvidia ", "tesla "):
        if n.startswith(prefix):
            n = n[len(prefix):]
    return n


def gpu_by_name(name: str, t: Optional[Tables] = None) -> Optional[GpuInfo]:
    """Look a GPU up by the name NVML reports ("NVIDIA GeForce RTX 3090", "NVIDIA A100-SXM4-40GB",
    "Tesla K80", "NVIDIA H100 80GB HBM3"). The longest table name that the reported name starts with,
    followed by a word boundary, wins. None when the product is not in the table."""
    t = _t(t)
    want = _norm_gpu(name)
    best = None
    for g in t.gpus:
        have = _norm_gpu(g.name)
        if want == have or (want.startswith(have) and want[len(have)] in " -/("):
            if best is None or len(have) > len(_norm_gpu(best.name)):
                best = g
    if best is None:
        board = _BOARD_SUFFIX.match(name.strip())
        return gpu_by_name(board.group(1), t) if board else None
    return GpuInfo(best.name, best.compute_capability, architecture_of(best.compute_capability, t), best.kind, best.source)


# NVML names some Tesla boards by form factor: "Tesla K40m" (module), "Tesla K40c" / "Tesla K20c" (card) are
# the Tesla K40 / K20 of NVIDIA's list. Only a lower-case letter after the model number is a board suffix:
# an upper-case "M" is a different (mobile) GPU, "Quadro M2000M".
_BOARD_SUFFIX = re.compile(r"^((?:NVIDIA )?Tesla [A-Z]\d+)[mcs]$")


def architecture_of(compute_capability: str, t: Optional[Tables] = None) -> Optional[str]:
    t = _t(t)
    return next((a.name for a in t.architectures if a.compute_capability == compute_capability), None)


# -- cuDNN -----------------------------------------------------------------------------------
def cudnn_cuda_support(cudnn: str, t: Optional[Tables] = None) -> Tuple[CudnnPackage, ...]:
    """The packages of a cuDNN release ("9.10.2"; "9.10" matches the newest 9.10.x known), newest CUDA
    major first. Empty when the release's support matrix is not in the table."""
    t = _t(t)
    rows = [p for p in t.cudnn if p.cudnn == cudnn]
    if not rows and is_dotted(cudnn):
        cands = [p for p in t.cudnn if p.cudnn.startswith(cudnn + ".")]
        if cands:
            newest = max((p.cudnn for p in cands), key=vkey)
            rows = [p for p in cands if p.cudnn == newest]
    return tuple(sorted(rows, key=lambda p: -p.cuda_major))


# -- TensorFlow ------------------------------------------------------------------------------
@dataclass(frozen=True)
class TfRelease:
    """Answer of tensorflow_release(): the tested configurations of a release series, per platform,
    and the and-cuda pins of the exact release when it has them."""

    version: str
    linux: Optional[TfTested]
    windows: Optional[TfTested]
    and_cuda: Optional[TfAndCuda]

    @property
    def python(self) -> Tuple[str, ...]:
        return self.linux.python if self.linux else (self.windows.python if self.windows else ())


def _series(v: str) -> str:
    return major_minor(v)


def tensorflow_release(version: str, t: Optional[Tables] = None) -> Optional[TfRelease]:
    """TensorFlow "2.15", "2.15.1", "1.14.0": the tested GPU configurations of that minor series (the
    table lists one row per series) and the and-cuda pins of the exact release (or the newest of the
    series when only "X.Y" is given). None when the series is not in the tables."""
    t = _t(t)
    v = normalize_release(version)
    if not is_dotted(v):
        return None
    s = _series(v)
    linux = next((r for r in t.tf_tested if r.platform == "linux" and _series(r.version) == s), None)
    windows = next((r for r in t.tf_tested if r.platform == "windows" and _series(r.version) == s), None)
    pins = [a for a in t.tf_and_cuda if _series(a.version) == s]
    exact = [a for a in pins if normalize_release(a.version) == v]
    and_cuda = exact[0] if exact else (max(pins, key=lambda a: vkey(normalize_release(a.version))) if pins and v == s else None)
    if linux is None and windows is None and and_cuda is None:
        return None
    return TfRelease(v, linux, windows, and_cuda)


def tensorflow_series(t: Optional[Tables] = None) -> Tuple[str, ...]:
    """Every TensorFlow X.Y with a Linux GPU row, oldest first."""
    return tuple(sorted({_series(r.version) for r in _t(t).tf_tested if r.platform == "linux"}, key=vkey))


# -- PyTorch ---------------------------------------------------------------------------------
def torch_release(version: str, t: Optional[Tables] = None) -> Optional[TorchRelease]:
    """PyTorch "2.4.1" (a local tag such as "+cu124" is ignored). "2.4" picks the newest 2.4.x known."""
    t = _t(t)
    v = normalize_release(version)
    if not is_dotted(v):
        return None
    exact = next((r for r in t.torch if r.version == v), None)
    if exact or v.count(".") >= 2:
        return exact
    cands = [r for r in t.torch if major_minor(r.version) == v]
    return max(cands, key=lambda r: vkey(r.version)) if cands else None


def pip_command(release: TorchRelease, variant: TorchVariant) -> str:
    """The pip command that installs this build: the one the source states, else the --index-url form."""
    if variant.command:
        return variant.command
    return f"pip install torch=={release.version} --index-url {variant.index_url}"


# -- newest builds for a machine -------------------------------------------------------------
@dataclass(frozen=True)
class TorchBuild:
    version: str
    variant: str
    cuda: str
    command: str
    arch_checked: Optional[bool]  # True: arch list covers the GPU; None: arch list unknown / no GPU given


@dataclass(frozen=True)
class TfBuild:
    version: str
    cuda: str
    cudnn: str
    command: str


@dataclass(frozen=True)
class NewestBuilds:
    driver_version: str
    cuda: Optional[str]  # newest CUDA runtime this driver runs (minor version compatibility)
    cuda_full: Optional[str]  # newest CUDA whose toolkit driver this driver meets
    torch: Optional[TorchBuild]
    tensorflow: Optional[TfBuild]


def _py_ok(pythons: Tuple[str, ...], python: Optional[str]) -> bool:
    """Recommend a release for this Python only where a source lists it: an unknown list is not a yes
    (torch 1.8.1's list is not in the tables, and it has no Python 3.11 wheels)."""
    return python is None or major_minor(python) in pythons


def _usable_torch_variants(driver_version: str, python: Optional[str], os: str, t: Tables):
    """(release, variant) this driver and Python can run, newest release and CUDA first."""
    for rel in sorted(t.torch, key=lambda r: vkey(r.version), reverse=True):
        if not _py_ok(rel.python, python):
            continue
        for var in sorted(rel.variants, key=lambda v: vkey(v.cuda), reverse=True):
            if driver_supports_cuda(driver_version, var.cuda, os, t=t):
                yield rel, var


def needs_known_arch(cuda: str, compute_capability: str, t: Optional[Tables] = None) -> bool:
    """A retired architecture (a Kepler GPU), or one this CUDA series deprecates: builds often leave it
    out, so an unknown arch list is not a yes."""
    gen = gpu_generation(compute_capability)
    return (gen is not None and gen.last_driver_branch is not None) or arch_deprecated_in(cuda, compute_capability, t)


def newest_torch_for(driver_version: str, python: Optional[str] = None, compute_capability: Optional[str] = None,
                     os: str = "linux", t: Optional[Tables] = None) -> Optional[TorchBuild]:
    t = _t(t)
    for rel, var in _usable_torch_variants(driver_version, python, os, t):
        runs = variant_runs_on(var, compute_capability) if compute_capability else None
        if runs is None and compute_capability and needs_known_arch(var.cuda, compute_capability, t):
            continue
        if runs is not False:
            return TorchBuild(rel.version, var.name, var.cuda, pip_command(rel, var), runs)
    return None


# tensorflow.org/install/pip documents `pip install tensorflow[and-cuda]` (CUDA and cuDNN from wheels)
# for every release since 2.14; older releases need a system CUDA and cuDNN.
AND_CUDA_SINCE = "2.14"


def tensorflow_has_and_cuda(version: str) -> bool:
    """Does this TensorFlow release install CUDA and cuDNN from wheels with `tensorflow[and-cuda]`?"""
    return version_parts(version)[:2] >= vkey(AND_CUDA_SINCE)


def newest_tensorflow_for(driver_version: str, python: Optional[str] = None, os: str = "linux",
                          t: Optional[Tables] = None) -> Optional[TfBuild]:
    """Newest TensorFlow GPU release whose tested CUDA this driver runs. TF >= 2.14 installs CUDA from
    wheels with `tensorflow[and-cuda]`; older releases need a matching system CUDA and cuDNN."""
    t = _t(t)
    rows = [r for r in t.tf_tested if r.platform == _os(os)]
    for r in sorted(rows, key=lambda r: vkey(r.version), reverse=True):
        if not _py_ok(r.python, python):
            continue
        if not driver_supports_cuda(driver_version, r.cuda, os, t=t):
            continue
        s = _series(r.version)
        pins = sorted((a for a in t.tf_and_cuda if _series(a.version) == s), key=lambda a: vkey(normalize_release(a.version)))
        if pins:
            cmd = f'pip install "tensorflow[and-cuda]=={pins[-1].version}"'
            version = pins[-1].version
        elif tensorflow_has_and_cuda(r.version):
            cmd = f'pip install "tensorflow[and-cuda]=={r.version}"'
            version = r.version
        else:
            pkg = r.package.replace("_", "-")
            cmd = f'pip install "{pkg}=={r.version}"  # needs system CUDA {r.cuda} and cuDNN {r.cudnn}'
            version = r.version
        return TfBuild(version, r.cuda, r.cudnn, cmd)
    return None


def newest_builds_for_driver(driver_version: str, python: Optional[str] = None,
                             compute_capability: Optional[str] = None, os: str = "linux",
                             t: Optional[Tables] = None) -> NewestBuilds:
    """The newest CUDA, PyTorch build and TensorFlow release a machine with this driver (and Python,
    GPU compute capability when given) can run, with the install commands."""
    t = _t(t)
    return NewestBuilds(
        driver_version,
        newest_cuda_for_driver(driver_version, os, t),
        newest_cuda_for_driver_full(driver_version, os, t),
        newest_torch_for(driver_version, python, compute_capability, os, t),
        newest_tensorflow_for(driver_version, python, os, t),
    )


# -- GPU generations: how far a GPU's driver and CUDA can ever go --------------------------------
@dataclass(frozen=True)
class GpuCeiling:
    """Answer of gpu_ceiling(): the newest driver branch and CUDA a GPU can ever have."""

    compute_capability: str
    architecture: str
    last_driver_branch: Optional[int]  # None: still supported by new drivers
    last_cuda_major: Optional[int]  # the newest CUDA major whose toolkit builds for it
    newest_cuda_full: Optional[str]  # newest CUDA whose own driver is in the last branch (PTX JIT works)
    newest_cuda: Optional[str]  # newest CUDA runtime the last branch runs, minor version compatibility included
    source: str

    @property
    def retired(self) -> bool:
        return self.last_driver_branch is not None


def gpu_generation(compute_capability: str):
    """The generation row of a compute capability, or None when the table does not list it."""
    from .loader import gpu_generations

    if not is_dotted(compute_capability):
        return None
    mm = major_minor(compute_capability)
    return next((g for g in gpu_generations() if mm in g.compute_capabilities), None)


def _branch(driver: Optional[str]) -> Optional[int]:
    head = (driver or "").split(".")[0]
    return int(head) if head.isdigit() else None


def driver_branch_fits(driver: str, branch: int) -> bool:
    """Is a driver version ("525.60.13") from branch `branch` or an older one?"""
    b = _branch(driver)
    return b is not None and b <= branch


def gpu_ceiling(compute_capability: str, os: str = "linux", t: Optional[Tables] = None) -> Optional[GpuCeiling]:
    """How far a GPU can go: its last driver branch and the newest CUDA it can run, from the generation
    table and the driver table. None when its architecture is not in the generation table."""
    gen = gpu_generation(compute_capability)
    if gen is None:
        return None
    full = newest = None
    if gen.last_driver_branch is not None:
        t = _t(t)
        o = _os(os)
        ok_full = [c for c in cuda_versions(t) if any(
            driver_branch_fits(r.linux if o == "linux" else (r.windows or ""), gen.last_driver_branch)
            for r in toolkit_releases(c, t)[:1])]
        full = ok_full[-1] if ok_full else None
        ok = list(ok_full)
        for m in t.minor_version_compat:
            if driver_branch_fits(m.linux if o == "linux" else (m.windows or ""), gen.last_driver_branch):
                ok += [c for c in cuda_versions(t) if major(c) == m.cuda_major]
        newest = max(ok, key=vkey) if ok else None
        if gen.last_cuda_major is not None:  # a runtime the toolkit cannot build kernels for is no use
            ok_toolkit = [c for c in ok if major(c) <= gen.last_cuda_major]
            newest = max(ok_toolkit, key=vkey) if ok_toolkit else None
            full = full if full and major(full) <= gen.last_cuda_major else newest
    return GpuCeiling(major_minor(compute_capability), gen.architecture, gen.last_driver_branch, gen.last_cuda_major,
                      full, newest, gen.source)


def cuda_runs_on_gpu(cuda: str, compute_capability: str) -> Optional[bool]:
    """Can a build for CUDA `cuda` have kernels for this GPU at all? False when the GPU's architecture
    left the toolkit before that CUDA major (a CUDA 12 build on a Kepler GPU); None when unknown."""
    gen = gpu_generation(compute_capability)
    if gen is None or not is_dotted(cuda):
        return None
    if gen.last_cuda_major is not None and major(cuda) > gen.last_cuda_major:
        return False
    if gen.first_cuda and vkey(major_minor(cuda)) < vkey(gen.first_cuda):
        return False
    return True


def newest_torch_with_kernels(driver_version: str, compute_capability: str, python: Optional[str] = None,
                              os: str = "linux", t: Optional[Tables] = None) -> Optional[TorchBuild]:
    """Newest PyTorch build this driver runs whose sourced arch list covers the GPU (unknown lists skipped)."""
    for rel, var in _usable_torch_variants(driver_version, python, os, _t(t)):
        if variant_runs_on(var, compute_capability):
            return TorchBuild(rel.version, var.name, var.cuda, pip_command(rel, var), True)
    return None


def arch_deprecated_in(cuda: str, compute_capability: str, t: Optional[Tables] = None) -> bool:
    """Is this compute capability deprecated (or dropped) in the toolkit series of `cuda`? Builds for such
    a series may well leave it out, so only a sourced arch list can say that they have its kernels."""
    b = cuda_build_archs(cuda, t)
    if b is None or not is_dotted(compute_capability):
        return False
    cc = major_minor(compute_capability)
    return cc in b.deprecated or cc in b.dropped or b.can_build_for(cc) is False
