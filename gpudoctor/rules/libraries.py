"""Rules of the CUDA-libraries layer, and the one compatibility check the version numbers alone prove.

Pure functions of the facts (no I/O). Conservative on purpose: a library counts as missing only
where something in use needs it, and never on a machine with no NVIDIA GPU; copies count as
shadowing each other only when their versions provably differ.
"""

from __future__ import annotations

import os
import re
from typing import Dict, Iterable, List, Optional, Tuple

from .. import compat
from ..codes import make_finding
from ..facts import Facts
from ..facts.libraries import LibraryCopy, LibraryFacts
from ..model import Finding, Severity
from .base import Prior, Rule
from ..versions import cuda_version_parts, version_parts
from ..fixes import conda_cuda_command, pip_wheel
from .gpu_generations import driver_upgrade_steps, runtime_beyond_gpus, wheel_of_blocked_build
from .situation import any_gpu as gpu_present, driver_cuda_version, pip

Version = Tuple[int, Optional[int]]  # (major, minor); minor None when only the major is known

WHERE = {  # found_via, in a user's words
    "site-packages": "a pip wheel in your Python environment",
    "conda": "your conda environment",
    "LD_LIBRARY_PATH": "LD_LIBRARY_PATH",
    "ldconfig": "the system library cache (ldconfig)",
    "CUDA_HOME": "CUDA_HOME",
    "default": "a CUDA toolkit under /usr/local",
    "dlopen": "the dynamic loader's own search path",
}
_ENV_VIAS = ("site-packages", "conda")  # frameworks preload these by path, whatever dlopen finds
_DEPENDENCY_MISSING = re.compile(r"(lib[\w.+-]+\.so[\d.]*): cannot open shared object file")


# -- facts helpers ---------------------------------------------------------------------------------

def _where(copy: LibraryCopy) -> str:
    return " and ".join(WHERE.get(v, v) for v in copy.found_via) or "unknown"


def describe_copy(copy: LibraryCopy) -> str:
    """Where a copy is, what version, and how it was found: for a finding's detail."""
    version = f"{copy.version}" if copy.version else "version unknown"
    return f"{copy.real_path} ({version}, from {_where(copy)})"


def resolved_copy(lib: LibraryFacts, soname: str) -> Optional[LibraryCopy]:
    """The copy a plain dlopen(soname) loaded in the user's environment, if the child ran."""
    for res in lib.loader_resolution:
        if res.soname == soname and res.real_path:
            return next((c for c in lib.copies if c.real_path == res.real_path), None)
    return None


def copy_in_use(lib: LibraryFacts, copy: LibraryCopy, dlopen_checked: bool) -> bool:
    """Would a program or framework in this environment load this copy?

    Yes for the environment's own copies (pip wheels, conda), which frameworks load by path, and
    for the one a plain dlopen resolves. A copy on LD_LIBRARY_PATH or in the ldconfig cache is
    what dlopen reaches too, unless the dlopen check saw the soname resolve to another copy
    (when dlopen failed, e.g. on a missing dependency, the copy still is the one it tried).
    """
    if any(v in _ENV_VIAS for v in copy.found_via):
        return True
    res = next((r for r in lib.loader_resolution if r.soname == copy.soname), None)
    if res is not None and res.real_path == copy.real_path:
        return True
    if not any(v in ("LD_LIBRARY_PATH", "ldconfig") for v in copy.found_via):
        return False
    return not dlopen_checked or res is None or res.real_path is None


def chosen_by_environment(copy: LibraryCopy) -> bool:
    """The user's environment picks this copy on purpose: its own wheels or conda packages, or a
    folder put on LD_LIBRARY_PATH. A system toolkit (ldconfig, CUDA_HOME, /usr/local/cuda) is only
    a candidate: frameworks that bring their own libraries never load it."""
    return any(v in _ENV_VIAS or v == "LD_LIBRARY_PATH" for v in copy.found_via)


def versions_differ(a: Optional[str], b: Optional[str]) -> bool:
    """Provably different: both known and neither a prefix of the other ('12' vs '12.4.127' is not)."""
    pa, pb = version_parts(a), version_parts(b)
    if not pa or not pb:
        return False
    n = min(len(pa), len(pb))
    return pa[:n] != pb[:n]


# -- driver too old for a CUDA runtime -------------------------------------------------------------

def runtime_cuda_version(copy: LibraryCopy) -> Optional[Version]:
    """The CUDA version of a libcudart copy: 12090 -> (12, 9); '11.8.89' -> (11, 8); '12' -> (12, None)."""
    if copy.version_source == "library" and copy.version_code:
        return cuda_version_parts(copy.version_code)
    parts = version_parts(copy.version or copy.version_from_name)
    if not parts:
        return (copy.cuda_major, None) if copy.cuda_major else None
    return parts[0], (parts[1] if len(parts) > 1 else None)


def runtime_vs_driver(runtime: Version, driver: Version) -> str:
    """What the version numbers alone prove: 'too-old' | 'minor-compat' | 'ok'.

    A runtime of a newer CUDA major than the driver's can never run (error 35,
    cudaErrorInsufficientDriver). From CUDA 11 on, a newer minor of the same major runs under
    minor-version compatibility (except PTX JIT of newer PTX); before 11 it could not.
    The compat tables (gpudoctor/compat) may replace this with the minimum driver per CUDA version.
    """
    (r_major, r_minor), (d_major, d_minor) = runtime, driver
    if r_major > d_major:
        return "too-old"
    if r_major < d_major or r_minor is None or d_minor is None or r_minor <= d_minor:
        return "ok"
    return "minor-compat" if r_major >= 11 else "too-old"


def _fmt(v: Version) -> str:
    return f"{v[0]}.{v[1]}" if v[1] is not None else f"{v[0]}.x"


def driver_too_old(facts: Facts, prior: Prior) -> Iterable[Finding]:
    code = driver_cuda_version(facts)
    cudart = facts.libraries.library("cudart")
    if not code or cudart is None or not gpu_present(facts):
        return  # with no GPU, a toolkit the driver libraries could not run costs nothing
    driver = cuda_version_parts(code)
    too_new: List[Tuple[LibraryCopy, Version, bool]] = []
    minor: List[Tuple[LibraryCopy, Version]] = []
    for copy in cudart.copies:
        runtime = runtime_cuda_version(copy)
        if runtime is None:
            continue
        verdict = runtime_vs_driver(runtime, driver)
        if verdict == "too-old" and wheel_of_blocked_build(facts, copy, runtime[0]):
            continue  # gpu-arch-unsupported names the framework build that brought it: one cause, one finding
        if verdict == "too-old":
            too_new.append((copy, runtime, chosen_by_environment(copy)))
        elif verdict == "minor-compat" and copy_in_use(cudart, copy, facts.libraries.dlopen_checked):
            minor.append((copy, runtime))
    base = {"driver_cuda_version": code, "driver_version": facts.driver.nvml.driver_version}
    if too_new:
        yield _too_old_finding(facts, too_new, driver, dict(base, runtimes=[
            {"path": c.real_path, "cuda": _fmt(v), "found_via": c.found_via} for c, v, _ in too_new]))
    evidence = dict(base, runtimes=[{"path": c.real_path, "cuda": _fmt(v), "found_via": c.found_via} for c, v in minor])
    if minor:
        newest = max((v for _, v in minor), key=lambda v: (v[0], v[1] or 0))
        yield make_finding(
            "driver-too-old", severity=Severity.INFO,
            title="CUDA runtime newer than the driver: runs under minor-version compatibility",
            detail=(f"The driver supports CUDA {_fmt(driver)}; the CUDA {_fmt(newest)} runtime "
                    f"({', '.join(c.real_path for c, _ in minor)}) runs on it through CUDA minor-version "
                    f"compatibility. Code that JIT-compiles PTX newer than CUDA {_fmt(driver)} (or calls APIs "
                    f"added since) fails with 'the provided PTX was compiled with an unsupported toolchain'."),
            evidence=evidence,
            fix=_minor_compat_fix(facts, newest))


def _minor_compat_fix(facts: Facts, newest: Version) -> List[str]:
    needed = compat.min_driver_for_cuda(_fmt(newest)) if newest[1] is not None else None
    step = f"Nothing to do unless PTX JIT fails; then upgrade the driver to one for CUDA {_fmt(newest)} or newer."
    if needed is None or not needed.toolkit_driver:
        return [step]
    steps = driver_upgrade_steps(facts, needed.toolkit_driver, step)
    return steps if steps == [step] else ["Nothing to do unless PTX JIT fails. " + steps[0]]


def _too_old_finding(facts: Facts, too_new: List[Tuple[LibraryCopy, Version, bool]], driver: Version,
                     evidence: Dict[str, object]) -> Finding:
    in_use = [(c, v) for c, v, used in too_new if used]
    shown = in_use or [(c, v) for c, v, _ in too_new]
    newest = max((v for _, v in shown), key=lambda v: (v[0], v[1] or 0))
    listing = "; ".join(f"{c.real_path} (CUDA {_fmt(v)}, from {_where(c)})" for c, v in shown)
    if in_use:
        detail = (f"The NVIDIA driver supports CUDA up to {_fmt(driver)}, but this environment loads a CUDA "
                  f"{_fmt(newest)} runtime: {listing}. Every CUDA call fails with error 35, 'CUDA driver "
                  f"version is insufficient for CUDA runtime version'.")
    else:
        detail = (f"The NVIDIA driver supports CUDA up to {_fmt(driver)}; the CUDA {_fmt(newest)} runtime "
                  f"installed here cannot run on it: {listing}. Programs that use it (built with that "
                  f"toolkit, or loading its libcudart) get error 35; frameworks that bring their own CUDA "
                  f"runtime are not affected.")
    fix = [_upgrade_step(newest) if not runtime_beyond_gpus(facts, _fmt(newest)) else
           "No driver can run it here: " + runtime_beyond_gpus(facts, _fmt(newest)) + ".",
           f"Or keep this driver and install builds for CUDA {driver[0]} (e.g. the *-cu{driver[0]} wheels "
           f"of your framework) instead of CUDA {newest[0]}."]
    if not in_use:
        fix.append("Or remove the toolkit you do not use: " + ", ".join(sorted({os.path.dirname(c.real_path) for c, _ in shown})))
    return make_finding("driver-too-old", detail, evidence=evidence, fix=fix,
                        severity=Severity.ERROR if in_use else Severity.WARNING)


def _upgrade_step(runtime: Version) -> str:
    """The driver to install, from the compat tables when they know this CUDA version."""
    needed = compat.min_driver_for_cuda(_fmt(runtime)) if runtime[1] is not None else None
    if needed is None:
        return (f"Upgrade the NVIDIA driver to a branch that supports CUDA {_fmt(runtime)} "
                "(`nvidia-smi` shows the highest CUDA version a driver supports), then reboot.")
    step = f"Upgrade the NVIDIA driver to {needed.toolkit_driver} or newer (CUDA {_fmt(runtime)}'s own driver"
    if needed.minor_version_compat_driver:
        step += f"; {needed.minor_version_compat_driver} or newer is enough under minor-version compatibility"
    return step + "), then reboot."


# -- several copies of one soname ------------------------------------------------------------------

def multiple_cuda_installs(facts: Facts, prior: Prior) -> Iterable[Finding]:
    lld = [d for d, via in facts.libraries.search_dirs if via == "LD_LIBRARY_PATH"]
    for lib in facts.libraries.libraries:
        by_soname: Dict[str, List[LibraryCopy]] = {}
        for copy in lib.copies:
            by_soname.setdefault(copy.soname, []).append(copy)
        for soname, copies in by_soname.items():
            if len(copies) < 2 or not any(versions_differ(a.version, b.version)
                                          for i, a in enumerate(copies) for b in copies[i + 1:]):
                continue
            yield _shadow_finding(lib, soname, copies, lld)


def _shadow_finding(lib: LibraryFacts, soname: str, copies: List[LibraryCopy], lld: List[str]) -> Finding:
    winner = resolved_copy(lib, soname)
    lines = [f"{soname} is installed {len(copies)} times with different versions: "
             + "; ".join(describe_copy(c) for c in copies) + "."]
    fix: List[str] = []
    if winner is not None:
        others = [c for c in copies if c is not winner]
        lines.append(f"A plain dlopen('{soname}') in your environment loads {winner.real_path} "
                     f"(from {_where(winner)}): it shadows " + "; ".join(
                         f"the one from {_where(c)} ({c.version or 'version unknown'})" for c in others) + ".")
        env_copies = [c for c in others if any(v in _ENV_VIAS for v in c.found_via)]
        if env_copies:
            lines.append("Frameworks that preload their pip/conda libraries by path still get those; "
                         "other programs and libraries that dlopen the soname get the shadowing one.")
        if "LD_LIBRARY_PATH" in winner.found_via:
            bad = [d for via, p in winner.found_at if via == "LD_LIBRARY_PATH" for d in [os.path.dirname(p)]]
            keep = [d for d in lld if d not in bad]
            fix.append(f"Take {', '.join(bad)} off LD_LIBRARY_PATH: "
                       + (f"`export LD_LIBRARY_PATH={':'.join(keep)}`" if keep else "`unset LD_LIBRARY_PATH`"))
    else:
        lines.append("Which one a program gets depends on RPATH, LD_LIBRARY_PATH and load order "
                     "(the dlopen check did not run, e.g. in quick mode).")
    fix.append("Remove the copies you do not need, so that every program loads the same version: "
               + ", ".join(c.real_path for c in copies if c is not winner))
    evidence = {"soname": soname, "library": lib.name,
                "resolved": winner.real_path if winner else None,
                "copies": [{"path": c.real_path, "version": c.version, "found_via": c.found_via} for c in copies]}
    return make_finding("multiple-cuda-installs", " ".join(lines), evidence=evidence, fix=fix)


# -- a CUDA library that something in use needs is missing -----------------------------------------

# Hard (DT_NEEDED) dependencies that hold for every CUDA major: libcublas.so.N needs libcublasLt.so.N.
# Others (cusolver -> cublas/cusparse/nvJitLink, cusparse -> nvJitLink) vary by release: the dlopen
# child's dlerror reports them exactly, so they are not guessed here.
STATIC_NEEDS = {"cublas": "cublasLt"}


# soname stem -> the component key of gpudoctor.fixes (whose routes know each CUDA era's packages)
_COMPONENT = {"libcublasLt": "cublasLt", "libcublas": "cublas", "libcudart": "cudart", "libcufft": "cufft",
              "libcurand": "curand", "libcusolver": "cusolver", "libcusparse": "cusparse", "libcudnn": "cudnn",
              "libnccl": "nccl", "libnvrtc": "nvrtc", "libnvJitLink": "nvJitLink"}


def _install_step(facts: Facts, needed: str, copies: List[LibraryCopy]) -> Optional[str]:
    """The command that installs `needed` where the copies needing it came from (wheel or conda env)."""
    component = _COMPONENT.get(needed.split(".so")[0])
    major = next((c.cuda_major for c in copies if c.cuda_major), None)
    if component is None or major is None:
        return None
    vias = {v for c in copies for v in c.found_via}
    if "conda" in vias:
        conda = conda_cuda_command([component], str(major))
        if conda:
            return f"{conda}  # the CUDA {major} package that provides {needed}"
    wheel = pip_wheel(component, major)
    if wheel is None:
        return None
    command = f"{pip(facts)} install " + (f'"{wheel}"' if "*" in wheel else wheel)
    if "site-packages" in vias:
        return command
    return (f"Install {needed} from the same CUDA {major} toolkit as {', '.join(sorted({c.soname for c in copies}))} "
            f"(or `{command}`), and put its folder on the loader's path.")


def _missing_dependencies(facts: Facts) -> List[Tuple[LibraryFacts, LibraryCopy, str, str]]:
    """(library, copy in use, the soname it needs, how we know) for every missing dependency."""
    found: List[Tuple[LibraryFacts, LibraryCopy, str, str]] = []
    checked = facts.libraries.dlopen_checked
    all_sonames = {c.soname for lib in facts.libraries.libraries for c in lib.copies}
    for lib in facts.libraries.libraries:
        for copy in lib.copies:
            if not copy_in_use(lib, copy, checked):
                continue
            errors = [copy.load_error] + [r.error for r in lib.loader_resolution if r.soname == copy.soname]
            for err in filter(None, errors):
                m = _DEPENDENCY_MISSING.search(err)
                if m and m.group(1) != copy.soname:
                    found.append((lib, copy, m.group(1), f"dlopen: {err}"))
                    break
            else:
                need = STATIC_NEEDS.get(lib.name)
                if not checked and need and copy.cuda_major:
                    wanted = f"lib{need}.so.{copy.soname.rsplit('.so.', 1)[1]}"
                    if wanted not in all_sonames:
                        found.append((lib, copy, wanted, f"{copy.soname} always needs {wanted}"))
    return found


def cuda_library_missing(facts: Facts, prior: Prior) -> Iterable[Finding]:
    """One finding per missing library, listing every installed library that needs it (one cause)."""
    if not gpu_present(facts):
        return  # a CPU machine: nothing here needs CUDA libraries
    by_needed: Dict[str, List[Tuple[LibraryFacts, LibraryCopy, str]]] = {}
    for lib, copy, needed, how in _missing_dependencies(facts):
        users = by_needed.setdefault(needed, [])
        if all(c.real_path != copy.real_path for _, c, _ in users):
            users.append((lib, copy, how))
    for needed, users in by_needed.items():
        copies = [c for _, c, _ in users]
        fix = [step for step in [_install_step(facts, needed, copies)] if step]
        fix += [f"Check with: python -c \"import ctypes; ctypes.CDLL('{c.soname}')\"" for c in copies[:1]]
        listing = "; ".join(f"{c.real_path} ({c.soname}, from {_where(c)})" for c in copies)
        verb = "is" if len(copies) == 1 else "are"
        yield make_finding(
            "cuda-library-missing",
            f"{listing} {verb} installed but cannot be loaded: "
            f"{'it needs' if len(copies) == 1 else 'they all need'} {needed}, which is not found on the loader's path.",
            evidence={"library": users[0][0].name, "soname": copies[0].soname, "path": copies[0].real_path,
                      "needs": needed, "how": users[0][2],
                      "needed_by": [{"library": lib.name, "soname": c.soname, "path": c.real_path, "how": how}
                                    for lib, c, how in users]},
            fix=fix)


# -- ptxas and libdevice, only where something compiles PTX ----------------------------------------

# JAX compiles its kernels with XLA, which runs ptxas and links libdevice; its pip CUDA extra
# ships both in the nvidia-cuda-nvcc wheel. (TensorFlow only needs them for XLA JIT: left to the
# framework rules, which know whether XLA is in use.)
XLA_PACKAGES = ("jax-cuda12-plugin", "jax-cuda13-plugin", "jax-cuda12-pjrt", "jax-cuda13-pjrt")


def _xla_users(facts: Facts) -> List[str]:
    names = {k.lower().replace("_", "-"): k for k in facts.frameworks.packages}
    return [names[p] for p in XLA_PACKAGES if p in names]


def ptxas_missing(facts: Facts, prior: Prior) -> Iterable[Finding]:
    users = _xla_users(facts)
    ptxas = next((t for t in facts.libraries.tools if t.name == "ptxas"), None)
    if not users or not gpu_present(facts) or ptxas is None or ptxas.path:
        return
    cu = "13" if any("13" in u for u in users) else "12"
    yield make_finding(
        "ptxas-missing",
        f"{', '.join(users)} is installed and compiles GPU kernels with ptxas, but no ptxas was found "
        f"(PATH, CUDA_HOME/bin, the nvidia-cuda-nvcc wheel, /usr/local/cuda*/bin).",
        evidence={"packages": users, "searched": ptxas.error},
        fix=[f"{pip(facts)} install {'nvidia-cuda-nvcc' if cu == '13' else 'nvidia-cuda-nvcc-cu12'}",
             "or put the bin folder of a CUDA toolkit on PATH: `export PATH=/usr/local/cuda/bin:$PATH`"])


def libdevice_missing(facts: Facts, prior: Prior) -> Iterable[Finding]:
    users = _xla_users(facts)
    if not users or not gpu_present(facts) or facts.libraries.libdevice:
        return
    yield make_finding(
        "libdevice-missing",
        f"{', '.join(users)} is installed and XLA links libdevice.10.bc into its kernels, but no "
        f"nvvm/libdevice/libdevice.10.bc was found (CUDA_HOME, conda env, nvidia-cuda-nvcc wheel, /usr/local/cuda*).",
        evidence={"packages": users},
        fix=[f"{pip(facts)} install {'nvidia-cuda-nvcc' if any('13' in u for u in users) else 'nvidia-cuda-nvcc-cu12'}",
             "or point XLA at a toolkit: `export XLA_FLAGS=--xla_gpu_cuda_data_dir=/usr/local/cuda`"])


RULES: List[Rule] = [cuda_library_missing, multiple_cuda_installs, ptxas_missing, libdevice_missing, driver_too_old]
