"""Static framework facts: what a framework's own files say, read without importing it.

These feed `check --quick`, so everything here is a file read: torch/version.py and
tensorflow/python/platform/build_info.py are parsed with `ast` (never executed), torch's CUDA
sonames come from the DT_NEEDED entries of its own shared objects, TensorFlow's from the rule its
dso_loader follows, JAX's and CuPy's builds from their distribution names.
"""

from __future__ import annotations

import ast
import os
import re
from typing import Any, Dict, List, Optional, Tuple

from ...facts.frameworks import Distribution, FrameworkFacts, FrameworksFacts, FrameworkStatic, SonameNeed
from .elf import read_dynamic
from .fatbin import framework_archs

TF_DISTRIBUTIONS = ("tensorflow-cpu", "tensorflow-gpu", "tf-nightly-cpu", "tf-nightly-gpu", "tf-nightly",
                    "tensorflow", "tensorflow-intel", "tensorflow-macos", "tensorflow-aarch64")
# torch's shared objects that link CUDA libraries (DT_NEEDED): the sonames this build loads.
TORCH_CUDA_OBJECTS = ("libtorch_global_deps.so", "libtorch_cuda.so", "libc10_cuda.so", "libcaffe2_nvrtc.so")
_CUDA_SONAME = re.compile(r"^lib(cudart|cublas|cublasLt|cudnn|cufft|curand|cusolver|cusparse|cusparseLt|nccl|"
                          r"nvrtc|nvJitLink|nvToolsExt|cupti|cufile|nvshmem_host|cuda)\.so(\.[\d.]+)?$")


def read_static(facts: FrameworksFacts, dirs: Dict[str, str], fatbin_deadline_s: float = 2.0) -> Dict[str, FrameworkFacts]:
    """One FrameworkFacts per installed framework (by package folder or distribution). Reading a build's
    fat binaries stops after `fatbin_deadline_s` (then no arch list is claimed from them)."""
    readers = (("torch", torch_static), ("tensorflow", tensorflow_static), ("jax", jax_static),
               ("cupy", cupy_static))
    out: Dict[str, FrameworkFacts] = {}
    for name, reader in readers:
        try:
            static = reader(facts, dirs.get(name))
        except Exception as exc:  # a malformed file is a fact about the install, not our crash
            static = FrameworkStatic(name=name, installed=True, package_dir=dirs.get(name),
                                     error="cannot read build facts: %r" % (exc,))
        if static is not None:
            try:
                _fatbin_archs(static, fatbin_deadline_s)
            except Exception as exc:  # an odd library file is a fact, not our crash
                static.details["fatbin"] = {"error": "cannot read the fat binaries: %r" % (exc,)}
            out[name] = FrameworkFacts(name=name, static=static)
    return out


def _fatbin_archs(static: FrameworkStatic, deadline_s: float = 2.0) -> None:
    """The architectures the installed CUDA library really carries: the build's own answer to "does
    it have kernels for this GPU", read from its fat binaries (headers only)."""
    if static.build != "cuda" or static.cuda_compute_capabilities:
        return  # TensorFlow's build_info already lists them: no need to walk a gigabyte library
    archs = framework_archs(static.name, static.package_dir, deadline_s)
    if archs is None:
        return
    static.details["fatbin"] = {"path": archs.path, "arch_list": archs.arch_list(), "complete": archs.complete}
    if archs.complete:  # a walk cut short by its deadline may miss an architecture: no claim from a part
        static.cuda_compute_capabilities = archs.arch_list()
        static.details["arch_source"] = "fat binaries of " + archs.path


def literal_assignments(path: str) -> Dict[str, Any]:
    """Module-level `name = literal`, `name: T = literal`, `d['k'] = literal` and
    `d = OrderedDict([...])` of a Python file, without running it."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        tree = ast.parse(fh.read(), filename=path)
    values: Dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        ok, literal = _literal(value)
        if not ok:
            continue
        if isinstance(target, ast.Name):
            values[target.id] = literal
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            ok_key, key = _literal(target.slice)
            if ok_key and isinstance(values.get(target.value.id), dict):
                values[target.value.id][key] = literal
    return values


def _literal(node: ast.AST) -> Tuple[bool, Any]:
    if isinstance(node, ast.Call):  # collections.OrderedDict() / OrderedDict([(k, v), ...]) / dict(...)
        name = getattr(node.func, "attr", None) or getattr(node.func, "id", None)
        if name in ("OrderedDict", "dict") and not node.keywords and len(node.args) <= 1:
            if not node.args:
                return True, {}
            ok, items = _literal(node.args[0])
            return (True, dict(items)) if ok else (False, None)
        return False, None
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError):
        return False, None


def _first_installed(facts: FrameworksFacts, names: Tuple[str, ...]) -> Optional[Distribution]:
    for name in names:
        found = facts.installed(name)
        if found:
            return found[0]
    return None


# -- PyTorch ------------------------------------------------------------------------------------

def torch_static(facts: FrameworksFacts, package_dir: Optional[str]) -> Optional[FrameworkStatic]:
    dist = _first_installed(facts, ("torch",))
    if dist is None and package_dir is None:
        return None
    static = FrameworkStatic(name="torch", installed=True, package_dir=package_dir,
                             distribution=dist.name if dist else None, version=dist.version if dist else None)
    if package_dir is None:
        static.error = "the torch distribution is installed but no torch package folder is on sys.path"
        return static
    version_py = os.path.join(package_dir, "version.py")
    try:
        values = literal_assignments(version_py)
    except (OSError, SyntaxError) as exc:
        static.error = "cannot read %s: %s" % (version_py, exc)
        values = {}
    static.details = {k: v for k, v in values.items() if k in ("__version__", "cuda", "hip", "rocm", "xpu",
                                                                "git_version", "debug")}
    static.version = values.get("__version__") or static.version
    static.cuda_version = values.get("cuda")
    static.hip_version = values.get("hip")
    if static.hip_version:
        static.build = "rocm"
    elif static.cuda_version:
        static.build = "cuda"
    elif "__version__" in values:
        static.build = "cpu"
    _torch_sonames(static, os.path.join(package_dir, "lib"))
    return static


def _torch_sonames(static: FrameworkStatic, lib_dir: str) -> None:
    for obj in TORCH_CUDA_OBJECTS:
        dynamic = read_dynamic(os.path.join(lib_dir, obj))
        if dynamic is None:
            continue
        for soname in dynamic.needed:
            match = _CUDA_SONAME.match(soname)
            if match and soname not in [s.soname for s in static.sonames]:
                static.sonames.append(SonameNeed(match.group(1), soname, "elf-needed"))
        for entry in dynamic.runpath:
            if entry not in static.library_runpath:
                static.library_runpath.append(entry)


# -- TensorFlow ---------------------------------------------------------------------------------

def tensorflow_static(facts: FrameworksFacts, package_dir: Optional[str]) -> Optional[FrameworkStatic]:
    dists = [d for name in TF_DISTRIBUTIONS for d in facts.installed(name)]
    if not dists and package_dir is None:
        return None
    dist = dists[0] if dists else None
    static = FrameworkStatic(name="tensorflow", installed=True, package_dir=package_dir,
                             distribution=dist.name if dist else None, version=dist.version if dist else None)
    static.details["distributions"] = ["%s==%s" % (d.name, d.version) for d in dists]
    if package_dir is None:
        static.error = "a tensorflow distribution is installed but no tensorflow package folder is on sys.path"
        return static
    build_info_py = os.path.join(package_dir, "python", "platform", "build_info.py")
    try:
        values = literal_assignments(build_info_py)
    except (OSError, SyntaxError) as exc:
        static.error = "cannot read %s: %s" % (build_info_py, exc)
        return static
    info = dict(values.get("build_info") or {})
    for old, new in (("cuda_version_number", "cuda_version"), ("cudnn_version_number", "cudnn_version"),
                     ("is_cuda_build", "is_cuda_build"), ("is_rocm_build", "is_rocm_build")):
        if old in values and new not in info:  # TF <= 2.2 wrote module-level names
            info[new] = values[old]
    static.details["build_info"] = info
    static.cuda_version = _text(info.get("cuda_version"))
    static.cudnn_version = _text(info.get("cudnn_version"))
    static.cuda_compute_capabilities = [str(c) for c in info.get("cuda_compute_capabilities") or []]
    if info.get("is_rocm_build"):
        static.build = "rocm"
    elif info.get("is_cuda_build") or (info.get("is_cuda_build") is None and static.cuda_version):
        static.build = "cuda"
    elif "is_cuda_build" in info:
        static.build = "cpu"
    if static.build == "cuda":
        static.sonames = tensorflow_sonames(static.cuda_version, static.cudnn_version)
    return static


def _text(value: Any) -> Optional[str]:
    return None if value in (None, "") else str(value)


def tensorflow_sonames(cuda_version: Optional[str], cudnn_version: Optional[str]) -> List[SonameNeed]:
    """The sonames TensorFlow's dso_loader dlopens for a build.

    dso_loader.cc opens lib<name>.so.<version> with versions fixed at build time by
    cuda_configure.bzl: up to CUDA 10.0 every library carries the full toolkit version
    (libcublas.so.10.0); CUDA 10.1/10.2 keep it for cudart only and use "10" for the math
    libraries; from CUDA 11 each library carries its own soname major, and libcudart is
    ".so.11.0" throughout CUDA 11 but ".so.12" from CUDA 12. The math-library majors below are the
    sonames the CUDA toolkits ship (cuSOLVER became .so.11 in CUDA 11.1). Only toolkits whose
    sonames are known are answered; others give cudart and cuDNN alone.
    """
    parsed = _major_minor(cuda_version)
    needs: List[SonameNeed] = []
    if parsed is None:
        return needs
    major, minor = parsed
    libs: Dict[str, str] = {}
    if major <= 9 or (major, minor) == (10, 0):
        short = "%d.%d" % (major, minor)
        libs = {k: short for k in ("cudart", "cublas", "cufft", "curand", "cusolver", "cusparse")}
    elif major == 10:
        libs = {"cudart": "%d.%d" % (major, minor), "cublas": "10", "cufft": "10", "curand": "10",
                "cusolver": "10", "cusparse": "10"}
    elif major == 11:
        libs = {"cudart": "11.0", "cublas": "11", "cublasLt": "11", "cufft": "10", "curand": "10",
                "cusolver": "10" if minor == 0 else "11", "cusparse": "11"}
    elif major == 12:
        libs = {"cudart": "12", "cublas": "12", "cublasLt": "12", "cufft": "11", "curand": "10",
                "cusolver": "11", "cusparse": "12"}
    else:
        libs = {"cudart": str(major)}
    for lib, version in libs.items():
        needs.append(SonameNeed(lib, "lib%s.so.%s" % (lib, version), "build-info"))
    cudnn_major = (cudnn_version or "").split(".")[0]
    if cudnn_major.isdigit():
        needs.append(SonameNeed("cudnn", "libcudnn.so.%s" % cudnn_major, "build-info"))
    return needs


def _major_minor(version: Optional[str]) -> Optional[Tuple[int, int]]:
    match = re.match(r"^(\d+)(?:\.(\d+))?", version or "")
    if not match:
        return None
    return int(match.group(1)), int(match.group(2) or 0)


# -- JAX and CuPy: the build is in the distribution name ----------------------------------------

_JAX_PLUGIN = re.compile(r"^jax-cuda(\d+)-(plugin|pjrt)$")
_JAXLIB_LOCAL = re.compile(r"\+cuda(\d+)(?:\.cudnn(\d)(\d+))?")


def jax_static(facts: FrameworksFacts, package_dir: Optional[str]) -> Optional[FrameworkStatic]:
    jax = _first_installed(facts, ("jax",))
    if jax is None and package_dir is None:
        return None
    static = FrameworkStatic(name="jax", installed=True, package_dir=package_dir, distribution="jax",
                             version=jax.version if jax else None, build="cpu")
    jaxlib = _first_installed(facts, ("jaxlib",))
    plugins = [d for d in facts.distributions if _JAX_PLUGIN.match(d.key)]
    static.details = {"jaxlib": jaxlib.version if jaxlib else None,
                      "plugins": {d.name: d.version for d in plugins}}
    for plugin in plugins:
        static.build = "cuda"
        static.cuda_version = _JAX_PLUGIN.match(plugin.key).group(1)  # type: ignore[union-attr]
    local = _JAXLIB_LOCAL.search(jaxlib.version) if jaxlib else None
    if local:  # jaxlib 0.4.x CUDA wheels: 0.4.7+cuda11.cudnn86
        static.build = "cuda"
        static.cuda_version = local.group(1)
        if local.group(2):
            static.cudnn_version = "%s.%s" % (local.group(2), local.group(3))
    if jaxlib is None:
        static.error = "jax is installed without jaxlib"
    return static


_CUPY = re.compile(r"^cupy-(cuda|rocm-)(\d+)(x?)$")


def cupy_static(facts: FrameworksFacts, package_dir: Optional[str]) -> Optional[FrameworkStatic]:
    dists = [d for d in facts.distributions if d.key == "cupy" or d.key.startswith("cupy-")]
    if not dists and package_dir is None:
        return None
    dist = dists[0] if dists else None
    static = FrameworkStatic(name="cupy", installed=True, package_dir=package_dir,
                             distribution=dist.name if dist else None, version=dist.version if dist else None)
    static.details["distributions"] = ["%s==%s" % (d.name, d.version) for d in dists]
    match = _CUPY.match(dist.key) if dist else None
    if match and match.group(1) == "cuda":
        static.build = "cuda"
        digits = match.group(2)  # cupy-cuda12x: any 12.x; cupy-cuda112: exactly 11.2
        static.cuda_version = digits[:-1] + "." + digits[-1] if not match.group(3) and len(digits) > 2 \
            else digits + (".x" if match.group(3) else "")
    elif match:
        static.build = "rocm"
    return static
