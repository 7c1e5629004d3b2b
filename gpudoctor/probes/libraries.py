"""The CUDA-libraries probe: every copy of each CUDA library, how it was found, and what dlopen loads.

Search order (the one NVIDIA's cuda-pathfinder documents for CuPy, numba and cuda-python, plus
the dynamic loader's own steps), each step a small function that records `found_via`:

1. site-packages   pip wheels of the TARGET interpreter: <site-packages>/nvidia/*/lib, including
                   the CUDA 13 layout nvidia/cu13/lib (frameworks preload these by path)
2. conda           the target prefix's lib/ when it has conda-meta/, then $CONDA_PREFIX/lib
3. LD_LIBRARY_PATH
4. ldconfig        the loader's cache (`ldconfig -p`); absent on some systems, then skipped
5. CUDA_HOME       $CUDA_HOME, then $CUDA_PATH: lib64, lib, targets/*/lib
6. default         /usr/local/cuda and /usr/local/cuda-*: lib64, lib, targets/*/lib
(7. dlopen         a copy that only the loader found, e.g. through the interpreter's RPATH)

cuda-pathfinder itself was evaluated and is not a dependency: it needs Python >= 3.11, returns
only the first match, and loads it into the calling process. gpudoctor needs every copy (to say
what shadows what), must run on Python 3.9 and must not load native code into its own process.
So it reuses pathfinder's search order and its found_via words ("site-packages", "conda",
"CUDA_HOME" for CUDA_HOME/CUDA_PATH), adding "LD_LIBRARY_PATH", "ldconfig" and "default".

Copies are merged by real path. Then, unless --quick, a child process of the target interpreter
(children/libraries_child.py) dlopens each soname as a program would and asks each library its
version (cudaRuntimeGetVersion, cublasGetProperty, cudnnGetVersion, ...). In quick mode versions
come from file names, cudnn_version.h and wheel dist-info, and the facts say so.
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ..facts.libraries import LibrariesFacts, LibraryCopy, LibraryFacts, LoaderResolution, ToolchainFacts, ToolFacts
from ..facts.probe_status import ProbeStatus
from .context import ProbeContext
from .runner import ChildResult, ChildSpec, run_child
from .children.site_paths_child import site_packages  # the child's function, run in-process for our own Python

LDCONFIG_CACHE = "/etc/ld.so.cache"  # what `ldconfig -p` reads; stands for the ldconfig step in search_dirs
SEARCH_ORDER = ("site-packages", "conda", "LD_LIBRARY_PATH", "ldconfig", "CUDA_HOME", "default", "dlopen")


@dataclass(frozen=True)
class LibrarySpec:
    name: str  # cudart
    stem: str  # libcudart
    sonames: Tuple[str, ...]  # what frameworks dlopen, newest first
    wheel: str  # nvidia-<wheel>-cuXX distribution, nvidia/<wheel>/lib folder (CUDA <= 12 wheels)


LIBRARIES: Tuple[LibrarySpec, ...] = (
    LibrarySpec("cudart", "libcudart", ("libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"), "cuda_runtime"),
    LibrarySpec("cublas", "libcublas", ("libcublas.so.13", "libcublas.so.12", "libcublas.so.11"), "cublas"),
    LibrarySpec("cublasLt", "libcublasLt", ("libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so.11"), "cublas"),
    LibrarySpec("cufft", "libcufft", ("libcufft.so.12", "libcufft.so.11", "libcufft.so.10"), "cufft"),
    LibrarySpec("curand", "libcurand", ("libcurand.so.10",), "curand"),
    LibrarySpec("cusolver", "libcusolver", ("libcusolver.so.12", "libcusolver.so.11"), "cusolver"),
    LibrarySpec("cusparse", "libcusparse", ("libcusparse.so.12", "libcusparse.so.11"), "cusparse"),
    LibrarySpec("cudnn", "libcudnn", ("libcudnn.so.9", "libcudnn.so.8"), "cudnn"),
    LibrarySpec("nccl", "libnccl", ("libnccl.so.2",), "nccl"),
    LibrarySpec("nvrtc", "libnvrtc", ("libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2"), "cuda_nvrtc"),
    LibrarySpec("nvJitLink", "libnvJitLink", ("libnvJitLink.so.13", "libnvJitLink.so.12"), "nvjitlink"),
)
SPECS_BY_STEM: Dict[str, LibrarySpec] = {s.stem: s for s in LIBRARIES}
# libcublas.so.12.4.5.8, libcudart.so.11.0: a stem we know, ".so", at least one version number.
_LIB_NAME = re.compile(r"^(%s)\.so((?:\.\d+)+)$" % "|".join(re.escape(s.stem) for s in LIBRARIES))
# Dependencies first, so a plain dlopen of each soname sees what a program loading only it sees.
_RESOLVE_ORDER = ("cudart", "nvJitLink", "nvrtc", "cublasLt", "cublas", "cusparse", "cusolver", "cufft",
                  "curand", "cudnn", "nccl")


# -- names and versions ------------------------------------------------------------------------------

def parse_lib_name(name: str) -> Optional[Tuple[LibrarySpec, str]]:
    """'libcudart.so.12.4.127' -> (cudart spec, '12.4.127'); None for anything else."""
    m = _LIB_NAME.match(name)
    if not m:
        return None
    return SPECS_BY_STEM[m.group(1)], m.group(2)[1:]


def cuda_major_of(family: str, soname: str) -> Optional[int]:
    """The CUDA major a soname belongs to, only where the soname alone proves it.

    cudart, cuBLAS, NVRTC and nvJitLink carry the CUDA major in their soname; cuFFT is one ahead
    from CUDA 12 (libcufft.so.11 = CUDA 12, .12 = CUDA 13; .10 was CUDA 10 and 11). curand,
    cusolver, cusparse, cuDNN and NCCL sonames span several CUDA majors: None.
    """
    parsed = parse_lib_name(soname)
    if parsed is None:
        return None
    major = int(parsed[1].split(".")[0])
    if family in ("cudart", "cublas", "cublasLt", "nvrtc", "nvJitLink"):
        return major
    if family == "cufft" and major >= 11:
        return major + 1
    return None


# -- search steps ----------------------------------------------------------------------------------

def cuda_lib_dirs(root: str) -> List[str]:
    """The library folders of a CUDA installation (toolkit, conda env or CUDA 13 wheel root)."""
    return [os.path.join(root, "lib64"), os.path.join(root, "lib")] + sorted(
        glob.glob(os.path.join(root, "targets", "*", "lib")))


def site_packages_dirs(site_packages: Sequence[str]) -> List[Tuple[str, str]]:
    """The wheel folders, then torch/lib: where torch's loader looks. libtorch_cuda.so's RUNPATH is
    $ORIGIN/../../nvidia/<lib>/lib for each CUDA wheel and then $ORIGIN (torch/lib, where wheels up to
    1.12 bundled cuDNN); torch/__init__.py's _preload_cuda_deps falls back to <sys.path>/nvidia/<lib>/lib."""
    dirs: List[Tuple[str, str]] = []
    for sp in site_packages:
        cu13 = os.path.join(sp, "nvidia", "cu13", "lib")
        wheel_libs = sorted(glob.glob(os.path.join(sp, "nvidia", "*", "lib")))
        for d in ([cu13] if cu13 in wheel_libs else []) + [d for d in wheel_libs if d != cu13]:
            dirs.append((d, "site-packages"))
    for sp in site_packages:
        torch_lib = os.path.join(sp, "torch", "lib")
        if os.path.isdir(torch_lib):
            dirs.append((torch_lib, "site-packages"))
    return dirs


def conda_prefixes(env: Mapping[str, str], target_prefix: Optional[str]) -> List[str]:
    """The target interpreter's prefix when it is a conda env (its python's RPATH), then $CONDA_PREFIX."""
    prefixes = []
    if target_prefix and os.path.isdir(os.path.join(target_prefix, "conda-meta")):
        prefixes.append(target_prefix)
    if env.get("CONDA_PREFIX") and env["CONDA_PREFIX"] not in prefixes:
        prefixes.append(env["CONDA_PREFIX"])
    return prefixes


def conda_dirs(env: Mapping[str, str], target_prefix: Optional[str]) -> List[Tuple[str, str]]:
    dirs: List[Tuple[str, str]] = []
    for prefix in conda_prefixes(env, target_prefix):
        dirs.append((os.path.join(prefix, "lib"), "conda"))
        dirs.extend((d, "conda") for d in sorted(glob.glob(os.path.join(prefix, "targets", "*", "lib"))))
    return dirs


def ld_library_path_dirs(env: Mapping[str, str]) -> List[Tuple[str, str]]:
    return [(d, "LD_LIBRARY_PATH") for d in env.get("LD_LIBRARY_PATH", "").split(":") if d]


def cuda_home_dirs(env: Mapping[str, str]) -> List[Tuple[str, str]]:
    dirs: List[Tuple[str, str]] = []
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if env.get(var):
            dirs.extend((d, "CUDA_HOME") for d in cuda_lib_dirs(env[var]))
    return dirs


def default_cuda_roots(pattern: str = "/usr/local/cuda*") -> List[str]:
    roots = sorted(glob.glob(pattern))
    plain = [r for r in roots if os.path.basename(r) == "cuda"]  # the symlink people mean first
    return plain + [r for r in roots if r not in plain]


def default_dirs(roots: Iterable[str]) -> List[Tuple[str, str]]:
    return [(d, "default") for root in roots for d in cuda_lib_dirs(root)]


def _ldconfig_binary(env: Mapping[str, str]) -> Optional[str]:
    found = shutil.which("ldconfig", path=env.get("PATH") or os.defpath)
    if found:
        return found
    for path in ("/sbin/ldconfig", "/usr/sbin/ldconfig"):
        if os.access(path, os.X_OK):
            return path
    return None


def parse_ldconfig(text: str, machine_64bit: bool = True) -> List[Tuple[str, str]]:
    """`ldconfig -p` lines '\tlibcudart.so.12 (libc6,x86-64) => /path' -> [(name, path)]."""
    entries: List[Tuple[str, str]] = []
    for line in text.splitlines():
        m = re.match(r"^\s*(\S+)\s+\(([^)]*)\)\s+=>\s+(\S.*)$", line)
        if not m or parse_lib_name(m.group(1)) is None:
            continue
        flags = m.group(2).split(",")
        if machine_64bit and flags == ["libc6"]:  # a 32-bit library: a 64-bit process never loads it
            continue
        entries.append((m.group(1), m.group(3).strip()))
    return entries


def ldconfig_entries(env: Mapping[str, str], timeout: float = 5.0) -> List[Tuple[str, str]]:
    binary = _ldconfig_binary(env)
    if binary is None:
        return []
    try:
        out = subprocess.run([binary, "-p"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             timeout=timeout, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return parse_ldconfig(out.decode("utf-8", "replace"), sys.maxsize > 2 ** 32)


# -- scanning folders into copies ------------------------------------------------------------------

@dataclass
class Candidate:
    spec: LibrarySpec
    soname: str
    path: str
    real_path: str
    version_from_name: Optional[str]
    found_via: str


def _version_from_real_name(real_path: str, names: Sequence[str]) -> Optional[str]:
    parsed = parse_lib_name(os.path.basename(real_path))
    if parsed:
        return parsed[1]
    versions = [parse_lib_name(n)[1] for n in names if parse_lib_name(n)]  # type: ignore[index]
    return max(versions, key=lambda v: len(v.split("."))) if versions else None


def pick_soname(names: Sequence[str], real_name: str) -> str:
    """Of the names one file has in a folder, the one frameworks dlopen: the shortest link
    (libcudart.so.11.0 -> libcudart.so.11.8.89), or the file's own name when it has no link."""
    links = [n for n in names if n != real_name]
    return min(links or list(names), key=lambda n: (len(n), n))


def scan_dir(directory: str, found_via: str) -> List[Candidate]:
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    groups: Dict[Tuple[str, str], List[str]] = {}
    for name in names:
        parsed = parse_lib_name(name)
        if parsed is None:
            continue
        path = os.path.join(directory, name)
        real = os.path.realpath(path)
        if os.path.isfile(real):  # a dangling link is no library
            groups.setdefault((parsed[0].stem, real), []).append(name)
    found = []
    for (stem, real), group in groups.items():
        soname = pick_soname(group, os.path.basename(real))
        found.append(Candidate(SPECS_BY_STEM[stem], soname, os.path.join(directory, soname), real,
                               _version_from_real_name(real, group), found_via))
    return sorted(found, key=lambda c: (c.spec.name, c.soname))


def candidates_from_ldconfig(entries: Sequence[Tuple[str, str]]) -> List[Candidate]:
    found = []
    for name, path in entries:
        real = os.path.realpath(path)
        if not os.path.isfile(real):
            continue
        spec = parse_lib_name(name)[0]  # type: ignore[index]
        found.append(Candidate(spec, name, path, real, _version_from_real_name(real, [name]), "ldconfig"))
    return found


def merge_candidates(candidates: Iterable[Candidate]) -> Dict[str, List[LibraryCopy]]:
    """family -> copies, merged by real path, in the order first found."""
    by_real: Dict[str, Tuple[str, LibraryCopy]] = {}
    for c in candidates:
        entry = by_real.get(c.real_path)
        if entry is None:
            copy = LibraryCopy(path=c.path, real_path=c.real_path, soname=c.soname,
                               version_from_name=c.version_from_name,
                               cuda_major=cuda_major_of(c.spec.name, c.soname))
            entry = by_real[c.real_path] = (c.spec.name, copy)
        copy = entry[1]
        if c.found_via not in copy.found_via:
            copy.found_via.append(c.found_via)
        if [c.found_via, c.path] not in copy.found_at:
            copy.found_at.append([c.found_via, c.path])
    families: Dict[str, List[LibraryCopy]] = {}
    for family, copy in by_real.values():
        families.setdefault(family, []).append(copy)
    return families


# -- static version sources: cudnn_version.h, wheel dist-info ------------------------------------

def read_cudnn_header(include_dir: str) -> Optional[str]:
    values = {}
    try:
        with open(os.path.join(include_dir, "cudnn_version.h"), errors="replace") as f:
            for m in re.finditer(r"#define\s+CUDNN_(MAJOR|MINOR|PATCHLEVEL)\s+(\d+)", f.read()):
                values[m.group(1)] = m.group(2)
    except OSError:
        return None
    if {"MAJOR", "MINOR", "PATCHLEVEL"} <= set(values):
        return "%s.%s.%s" % (values["MAJOR"], values["MINOR"], values["PATCHLEVEL"])
    return None


def wheel_package(copy: LibraryCopy, family: str, site_packages: Sequence[str]) -> Optional[Tuple[str, str]]:
    """(distribution, version) of the nvidia-* wheel a site-packages copy came from, by dist-info name."""
    for sp in site_packages:
        prefix = os.path.join(sp, "nvidia") + os.sep
        if not copy.path.startswith(prefix):
            continue
        folder = copy.path[len(prefix):].split(os.sep)[0]
        base = next(s.wheel for s in LIBRARIES if s.name == family) if folder == "cu13" else folder
        pattern = re.compile(r"^nvidia_%s(_cu(\d+))?-([^-]+)\.dist-info$" % re.escape(base), re.I)
        matches = []
        try:
            for name in os.listdir(sp):
                m = pattern.match(name)
                if m:
                    matches.append((m.group(2), name[:m.start(3) - 1].replace("_", "-"), m.group(3)))
        except OSError:
            return None
        want = str(copy.cuda_major or ("13" if folder == "cu13" else ""))
        matches.sort(key=lambda t: (t[0] != want, t[1]))
        return (matches[0][1], matches[0][2]) if matches else None
    return None


def fill_static_versions(families: Dict[str, List[LibraryCopy]], site_packages: Sequence[str]) -> None:
    """Versions without loading anything: file name, cudnn_version.h next to the lib, dist-info."""
    for family, copies in families.items():
        for copy in copies:
            package = wheel_package(copy, family, site_packages)
            if package:
                copy.package = "%s %s" % package
            soname_version = parse_lib_name(copy.soname)[1] if parse_lib_name(copy.soname) else ""
            name_version = copy.version_from_name
            if name_version and len(name_version.split(".")) > len(soname_version.split(".")):
                copy.version, copy.version_source = name_version, "file-name"  # libcudart.so.12.4.127
                continue
            header = read_cudnn_header(os.path.join(os.path.dirname(os.path.dirname(copy.real_path)), "include")) \
                if family == "cudnn" else None
            if header:
                copy.version, copy.version_source = header, "header"
            elif package:
                copy.version, copy.version_source = package[1], "dist-info"
            else:
                copy.version, copy.version_source = name_version, "file-name"


# -- the dlopen child --------------------------------------------------------------------------------

def resolve_request(families: Dict[str, List[LibraryCopy]]) -> Dict[str, list]:
    resolve, copies = [], []
    for family in _RESOLVE_ORDER:
        spec = next(s for s in LIBRARIES if s.name == family)
        found = families.get(family, [])
        for soname in list(spec.sonames) + sorted({c.soname for c in found} - set(spec.sonames)):
            resolve.append([family, soname])
        copies.extend([family, c.soname, c.real_path] for c in found)
    return {"resolve": resolve, "copies": copies}


_NOT_FOUND = "cannot open shared object file: No such file or directory"


def apply_child_records(families: Dict[str, List[LibraryCopy]], records: Mapping[str, dict]
                        ) -> Dict[str, List[LoaderResolution]]:
    """Merge the child's answers into the copies; return family -> loader resolutions."""
    by_real = {c.real_path: c for copies in families.values() for c in copies}
    resolutions: Dict[str, List[LoaderResolution]] = {}
    for key, rec in records.items():
        if not isinstance(rec, dict) or ":" not in key:
            continue
        family, real = rec.get("family"), rec.get("real_path")
        copy = by_real.get(real) if real else None
        if real and copy is None:  # only the loader found it (RPATH of the interpreter, /usr/lib64, ...)
            copy = LibraryCopy(path=real, real_path=real, soname=rec.get("soname", ""), found_via=["dlopen"],
                               found_at=[["dlopen", real]], version_from_name=_version_from_real_name(real, []),
                               cuda_major=cuda_major_of(family, rec.get("soname", "")))
            copy.version, copy.version_source = copy.version_from_name, "file-name"
            by_real[real] = copy
            families.setdefault(family, []).append(copy)
        if copy is not None and rec.get("version"):
            copy.version, copy.version_source = rec["version"], "library"
            copy.version_code = rec.get("version_code")
        elif copy is not None and rec.get("version_error"):
            copy.version_error = rec["version_error"]
        if key.startswith("copy:") and rec.get("error") and copy is None:
            copy = by_real.get(key[len("copy:"):])
            if copy is not None:
                copy.load_error = rec["error"]
        if key.startswith("resolve:"):
            has_copies = any(c.soname == rec.get("soname") for c in families.get(family, []))
            if real or has_copies or (rec.get("error") and _NOT_FOUND not in rec["error"]):
                resolutions.setdefault(family, []).append(LoaderResolution(
                    soname=rec.get("soname", ""), real_path=real, version=copy.version if copy else None,
                    error=rec.get("error"), found_via=list(copy.found_via) if copy else []))
    return resolutions


# -- tools: nvcc, ptxas, libdevice -------------------------------------------------------------------

def _tool_candidates(name: str, env: Mapping[str, str], site_packages: Sequence[str],
                     conda: Sequence[str], roots: Sequence[str]) -> List[Tuple[str, str]]:
    found: List[Tuple[str, str]] = []
    on_path = shutil.which(name, path=env.get("PATH") or os.defpath)
    if on_path:
        found.append((on_path, "PATH"))
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if env.get(var):
            found.append((os.path.join(env[var], "bin", name), "CUDA_HOME"))
    for sp in site_packages:
        for sub in ("cu13", "cuda_nvcc"):
            found.append((os.path.join(sp, "nvidia", sub, "bin", name), "site-packages"))
    found += [(os.path.join(p, "bin", name), "conda") for p in conda]
    found += [(os.path.join(r, "bin", name), "default") for r in roots]
    return [(p, via) for p, via in found if os.path.isfile(p) and os.access(p, os.X_OK)]


def parse_tool_version(text: str) -> Optional[str]:
    """'Cuda compilation tools, release 13.0, V13.0.88' -> 13.0.88."""
    m = re.search(r"release [\d.]+, V([\d.]+)", text) or re.search(r"release ([\d.]+)", text)
    return m.group(1) if m else None


def run_tool_version(path: str, env: Mapping[str, str], timeout: float) -> Tuple[Optional[str], Optional[str]]:
    try:
        proc = subprocess.run([path, "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              env=dict(env), timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return None, "no answer within %g s" % timeout
    except OSError as exc:
        return None, str(exc)
    text = proc.stdout.decode("utf-8", "replace")
    version = parse_tool_version(text)
    return version, None if version else "unexpected output: %s" % text.strip()[-200:]


def static_tool_version(path: str) -> Optional[str]:
    """A toolkit's version.json / version.txt next to its bin/ (quick mode runs nothing)."""
    root = os.path.dirname(os.path.dirname(os.path.realpath(path)))
    try:
        with open(os.path.join(root, "version.json")) as f:
            data = json.load(f)
        return data.get("cuda_nvcc", data.get("cuda", {})).get("version")
    except (OSError, ValueError, AttributeError):
        pass
    try:
        with open(os.path.join(root, "version.txt")) as f:
            m = re.search(r"CUDA Version ([\d.]+)", f.read())
            return m.group(1) if m else None
    except OSError:
        return None


def find_tools(env: Mapping[str, str], site_packages: Sequence[str], conda: Sequence[str],
               roots: Sequence[str], run_versions: bool, timeout: float) -> List[ToolFacts]:
    tools = []
    for name in ("nvcc", "ptxas", "nvlink"):
        found = _tool_candidates(name, env, site_packages, conda, roots)
        if not found:
            tools.append(ToolFacts(name=name, error="not found on PATH, in CUDA_HOME, the nvidia-cuda-nvcc "
                                                    "wheel, the conda env or /usr/local/cuda*"))
            continue
        path, via = found[0]
        tool = ToolFacts(name=name, path=path, found_via=via)
        if run_versions:
            tool.version, tool.error = run_tool_version(path, env, timeout)
        else:
            tool.version = static_tool_version(path)
        tools.append(tool)
    return tools


def find_libdevice(env: Mapping[str, str], site_packages: Sequence[str], conda: Sequence[str],
                   roots: Sequence[str]) -> List[str]:
    bases = [env[v] for v in ("CUDA_HOME", "CUDA_PATH") if env.get(v)] + list(conda) + list(roots)
    bases += [os.path.join(sp, "nvidia", sub) for sp in site_packages for sub in ("cu13", "cuda_nvcc")]
    found, seen = [], set()
    for base in bases:
        path = os.path.join(base, "nvvm", "libdevice", "libdevice.10.bc")
        real = os.path.realpath(path)
        if os.path.isfile(path) and real not in seen:
            seen.add(real)
            found.append(path)
    return found


# -- the target interpreter ---------------------------------------------------------------------------

def target_paths(ctx: ProbeContext) -> Tuple[List[str], Optional[str], Optional[ProbeStatus]]:
    """(site-packages, prefix, status) of ctx.python; in process when it is gpudoctor's own."""
    if ctx.python == sys.executable:
        return site_packages(), sys.prefix, None
    result = run_child(ChildSpec("libraries-site", "site_paths_child.py", ctx.python, ctx.env,
                                 min(ctx.timeout, 15.0)))
    status = None if result.ok else _status(result)
    return list(result.records.get("site_packages") or []), result.records.get("prefix"), status


def _status(result: ChildResult) -> ProbeStatus:
    return ProbeStatus(result.name, result.status, result.duration_s, result.error, result.stderr_tail)


# -- GPU architectures of the math libraries ------------------------------------------------------------

ARCH_FAMILIES = ("cublasLt", "cublas", "cudnn")  # the libraries that carry most kernels a framework runs


def arch_files(copy: LibraryCopy, family: str) -> List[str]:
    """The files holding a library's kernels: itself, and for cuDNN (8 and 9 are a small dispatcher)
    the sub-libraries next to it: libcudnn_ops*.so.9, libcudnn_engines_precompiled.so.9, ..."""
    files = [copy.real_path]
    if family == "cudnn":
        major = copy.soname.rsplit(".so.", 1)[-1]
        folder = os.path.dirname(copy.path)
        files += sorted({os.path.realpath(p) for p in glob.glob(os.path.join(folder, "libcudnn_*.so.%s*" % major))})
    return files


def fill_archs(families: Dict[str, List[LibraryCopy]], deadline: float) -> None:
    """Each math library copy's fat binary architectures (headers only), within one overall deadline."""
    from .frameworks.fatbin import cc_key, read_fatbin_archs

    for family in ARCH_FAMILIES:
        for copy in families.get(family, []):
            sass: List[str] = []
            ptx: List[str] = []
            for path in arch_files(copy, family):
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                found = read_fatbin_archs(path, deadline_s=min(left, 2.0))
                if not found.complete:
                    return  # out of time: a partial list could miss an architecture, so claim none
                if found.error is None and (found.sass or found.ptx):
                    copy.archs_from.append(path)
                    sass += [c for c in found.sass if c not in sass]
                    ptx += [c for c in found.ptx if c not in ptx]
            copy.archs = ["sm_" + c.replace(".", "") for c in sorted(sass, key=cc_key)] + \
                ["compute_" + c.replace(".", "") for c in sorted(ptx, key=cc_key)]


# -- the probe ----------------------------------------------------------------------------------------

def search_dirs(ctx: ProbeContext, site_packages: Sequence[str], prefix: Optional[str],
                roots: Sequence[str]) -> List[Tuple[str, str]]:
    """Existing folders in search order; a folder reached twice by one step is kept once
    (/usr/local/cuda/lib64 -> lib, /usr/local/cuda -> cuda-13.0)."""
    dirs = (site_packages_dirs(site_packages) + conda_dirs(ctx.env, prefix) + ld_library_path_dirs(ctx.env)
            + cuda_home_dirs(ctx.env) + default_dirs(roots))
    kept, seen = [], set()
    for d, via in dirs:
        key = (os.path.realpath(d), via)
        if key not in seen and os.path.isdir(d):
            seen.add(key)
            kept.append((d, via))
    return kept


def collect_copies(dirs: Sequence[Tuple[str, str]], ldconfig: Sequence[Tuple[str, str]]
                   ) -> Dict[str, List[LibraryCopy]]:
    """Scan the folders in search order; ldconfig's entries slot in before CUDA_HOME."""
    candidates: List[Candidate] = []
    for d, via in dirs:
        if via == "CUDA_HOME" or via == "default":
            break
        candidates += scan_dir(d, via)
    candidates += candidates_from_ldconfig(ldconfig)
    for d, via in dirs:
        if via in ("CUDA_HOME", "default"):
            candidates += scan_dir(d, via)
    return merge_candidates(candidates)


def probe_toolchain(env: Mapping[str, str], python: Optional[str], timeout: float) -> ToolchainFacts:
    from .toolchain import probe_toolchain as probe  # toolchain.py builds on this module's tool helpers
    return probe(env, python, timeout)


def probe_libraries(ctx: ProbeContext) -> Tuple[LibrariesFacts, List[ProbeStatus]]:
    started = time.monotonic()
    statuses: List[ProbeStatus] = []
    site_packages, prefix, site_status = target_paths(ctx)
    if site_status:
        statuses.append(site_status)
    roots = default_cuda_roots()
    dirs = search_dirs(ctx, site_packages, prefix, roots)
    families = collect_copies(dirs, ldconfig_entries(ctx.env))
    fill_static_versions(families, site_packages)
    conda = conda_prefixes(ctx.env, prefix)
    listed = [[d, via] for d, via in dirs if via not in ("CUDA_HOME", "default")] + [[LDCONFIG_CACHE, "ldconfig"]] \
        + [[d, via] for d, via in dirs if via in ("CUDA_HOME", "default")]
    facts = LibrariesFacts(search_dirs=listed, site_packages=list(site_packages))

    resolutions: Dict[str, List[LoaderResolution]] = {}
    if ctx.quick:
        facts.dlopen_skipped_reason = ("quick mode: nothing was loaded; versions come from file names, "
                                       "cudnn_version.h and wheel metadata")
        facts.tools = find_tools(ctx.env, site_packages, conda, roots, False, ctx.timeout)
        statuses.append(ProbeStatus("libraries-dlopen", "skipped", 0.0, "quick mode"))
    else:
        spec = ChildSpec("libraries-dlopen", "libraries_child.py", ctx.python, ctx.env, ctx.timeout,
                         args=(json.dumps(resolve_request(families)),), python_flags=("-S",))
        with ThreadPoolExecutor(max_workers=1) as pool:  # the child runs while nvcc and ptxas answer here
            child = pool.submit(run_child, spec)
            facts.tools = find_tools(ctx.env, site_packages, conda, roots, True, min(ctx.timeout, 10.0))
            facts.toolchain = probe_toolchain(ctx.env, ctx.python, min(ctx.timeout, 10.0))
            result = child.result()
        resolutions = apply_child_records(families, result.records)
        facts.dlopen_checked = bool(result.records.get("done"))
        if not facts.dlopen_checked:
            facts.dlopen_skipped_reason = "the dlopen child %s: %s" % (result.status, result.error or "no answer")
        statuses.append(_status(result))
        fill_archs(families, deadline=time.monotonic() + min(ctx.timeout, 4.0))
    facts.libdevice = find_libdevice(ctx.env, site_packages, conda, roots)
    facts.libraries = [LibraryFacts(name=s.name, copies=families.get(s.name, []),
                                    loader_resolution=resolutions.get(s.name, [])) for s in LIBRARIES]
    statuses.insert(0, ProbeStatus("libraries", "ok", round(time.monotonic() - started, 3)))
    return facts, statuses
