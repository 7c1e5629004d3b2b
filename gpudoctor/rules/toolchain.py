"""Building CUDA extensions and compiling kernels: nvcc, the host compiler, ninja, ptxas, nvlink.

These only bite people who build (torch.utils.cpp_extension, pip packages with CUDA code) or whose
framework compiles kernels itself (XLA in JAX and TensorFlow), so they are warnings, and they speak
only where the machine shows such a toolchain: no toolkit at all is not a finding.
"""

from __future__ import annotations

from typing import Iterable, List, Optional

from packaging.version import InvalidVersion, Version

from ..codes import make_finding
from ..compat.host_compilers import host_compiler_bounds
from ..facts import Facts
from ..facts.frameworks import FrameworkFacts
from ..facts.libraries import ToolFacts
from ..model import Finding, Severity
from .base import Prior, Rule
from .libraries import _xla_users
from .situation import pip


def _major_minor(version: Optional[str]) -> Optional[str]:
    return ".".join(version.split(".")[:2]) if version else None


def _cuda_torch(facts: Facts) -> Optional[FrameworkFacts]:
    torch = facts.frameworks.framework("torch")
    if torch and torch.static.installed and torch.static.build == "cuda" and torch.static.cuda_version:
        return torch
    return None


def _toolkit_route(facts: Facts, cuda: str) -> List[str]:
    """How to get nvcc for CUDA `cuda` ("12.4"): a toolkit already here, else an installer."""
    here = [path for path, version in facts.libraries.toolchain.toolkits.items() if _major_minor(version) == cuda]
    if here:
        return [f"export CUDA_HOME={here[0]}"]
    route = [f"Install the CUDA {cuda} toolkit (NVIDIA's installer from the CUDA Toolkit archive), then "
             f"`export CUDA_HOME=/usr/local/cuda-{cuda}`"]
    if facts.system.env_kind == "conda" and int(cuda.split(".")[0]) >= 12:
        route.append(f"or, in this conda environment: conda install -c conda-forge cuda-nvcc cuda-version={cuda}")
    return route


def extension_cuda_mismatch(facts: Facts, prior: Prior) -> Iterable[Finding]:
    torch, nvcc = _cuda_torch(facts), facts.libraries.toolchain.extension_nvcc
    if torch is None or nvcc is None:
        return
    built = _major_minor(torch.static.cuda_version) or ""
    where = f"{nvcc.path} (from {nvcc.found_via})"
    if not nvcc.version:
        if nvcc.found_via in ("CUDA_HOME", "CUDA_PATH"):
            yield make_finding(
                "extension-cuda-mismatch",
                f"{nvcc.found_via} is set, but {nvcc.path} does not exist: building a CUDA extension for "
                f"PyTorch {torch.static.version} stops with \"nvcc not found\".",
                title=f"{nvcc.found_via} points at a folder without bin/nvcc",
                evidence={"nvcc": nvcc.path, "found_via": nvcc.found_via, "torch_cuda": built},
                fix=_toolkit_route(facts, built))
        return
    found = _major_minor(nvcc.version) or ""
    if found == built:
        return
    major_differs = found.split(".")[0] != built.split(".")[0]
    consequence = ("torch.utils.cpp_extension refuses to build with it (a different CUDA major)" if major_differs
                   else "torch.utils.cpp_extension builds with it but warns (a different CUDA minor)")
    yield make_finding(
        "extension-cuda-mismatch",
        f"PyTorch {torch.static.version} was built with CUDA {built}, but the nvcc that building a CUDA "
        f"extension would use is CUDA {nvcc.version}: {where}. {consequence}.",
        title=f"nvcc is CUDA {found}, PyTorch was built with CUDA {built}",
        severity=None if major_differs else Severity.INFO,
        evidence={"nvcc": nvcc.path, "nvcc_version": nvcc.version, "found_via": nvcc.found_via, "torch_cuda": built,
                  "torch": torch.static.version},
        fix=_toolkit_route(facts, built))


def host_compiler_unsupported(facts: Facts, prior: Prior) -> Iterable[Finding]:
    chain = facts.libraries.toolchain
    nvcc, compiler = chain.extension_nvcc, chain.host_compiler
    if _cuda_torch(facts) is None or not nvcc or not nvcc.version or not compiler or not compiler.version:
        return
    bounds = host_compiler_bounds(compiler.name, nvcc.version)
    if bounds is None or bounds.accepts(compiler.version) is not False:
        return
    newest = bounds.newest_major
    tools = ("gcc", "g++") if compiler.name == "gcc" else ("clang", "clang++")
    yield make_finding(
        "host-compiler-unsupported",
        f"The host compiler {compiler.path} is {compiler.name} {compiler.version}; nvcc {nvcc.version} accepts "
        f"{compiler.name} >= {bounds.minimum} and < {bounds.max_excl} ({bounds.source}), so building a CUDA "
        f"extension stops with \"unsupported GNU version\" or PyTorch's compiler check.",
        title=f"{compiler.name} {compiler.version} is outside what nvcc {_major_minor(nvcc.version)} accepts",
        evidence={"compiler": compiler.name, "compiler_version": compiler.version, "compiler_path": compiler.path,
                  "nvcc_version": nvcc.version, "accepted": f">={bounds.minimum},<{bounds.max_excl}",
                  "source": bounds.source},
        fix=[f"sudo apt-get install {tools[0]}-{newest} {tools[1]}-{newest}  (Debian/Ubuntu; or your "
             f"distribution's {compiler.name} {newest} packages)",
             f"export CC={tools[0]}-{newest} CXX={tools[1]}-{newest} NVCC_CCBIN={tools[1]}-{newest}"])


def ninja_missing(facts: Facts, prior: Prior) -> Iterable[Finding]:
    chain = facts.libraries.toolchain
    nvcc, ninja = chain.extension_nvcc, chain.ninja
    if _cuda_torch(facts) is None or not nvcc or not nvcc.version or ninja is None:
        return
    if ninja.path and ninja.found_via == "PATH":
        return
    detail = ("PyTorch with a CUDA toolkit is here, so CUDA extensions may be built, but ninja "
              + ("is installed in the environment and not on PATH" if ninja.path else "is not installed")
              + ": torch.utils.cpp_extension's load() stops with \"Ninja is required to load C++ extensions\".")
    fix = ["Activate the environment (so its bin folder is on PATH)"] if ninja.path else [f"{pip(facts)} install ninja"]
    yield make_finding("ninja-missing", detail, evidence={"ninja": ninja.path, "searched": ninja.error}, fix=fix)


def _version(text: Optional[str]) -> Optional[Version]:
    try:
        return Version(text) if text else None
    except InvalidVersion:
        return None


def _needed_ptxas(facts: Facts) -> Optional[Version]:
    """The oldest ptxas the installed XLA users ask for through their nvidia-cuda-nvcc pin, when no
    installed wheel satisfies it (an installed one is where XLA looks first)."""
    needed: Optional[Version] = None
    for pin in facts.frameworks.pins:
        if not pin.package.startswith("nvidia-cuda-nvcc") or pin.satisfied:
            continue
        for clause in pin.specifier.split(","):
            clause = clause.strip()
            if clause.startswith(">=") or clause.startswith("=="):
                v = _version(clause[2:].strip().rstrip(".*"))
                if v and (needed is None or v > needed):
                    needed = v
    return needed


def _tool(facts: Facts, name: str) -> Optional[ToolFacts]:
    return next((t for t in facts.libraries.tools if t.name == name), None)


def ptxas_too_old(facts: Facts, prior: Prior) -> Iterable[Finding]:
    users, ptxas = _xla_users(facts), _tool(facts, "ptxas")
    if not users or ptxas is None or not ptxas.path:
        return
    have, needed = _version(ptxas.version), _needed_ptxas(facts)
    if have is None or needed is None or have >= needed:
        return
    cu = "13" if needed.major >= 13 else "12"
    wheel = "nvidia-cuda-nvcc" if cu == "13" else "nvidia-cuda-nvcc-cu12"
    yield make_finding(
        "ptxas-too-old",
        f"{', '.join(users)} compiles its kernels with ptxas and asks for CUDA {needed} or newer, but the "
        f"ptxas found is {ptxas.version} ({ptxas.path}, from {ptxas.found_via}) and no nvidia-cuda-nvcc wheel "
        f"that satisfies the pin is installed.",
        evidence={"ptxas": ptxas.path, "ptxas_version": ptxas.version, "needed": str(needed), "packages": users},
        fix=[f"{pip(facts)} install \"{wheel}>={needed}\"",
             "or put a newer CUDA toolkit's bin folder first on PATH"])


def nvlink_missing(facts: Facts, prior: Prior) -> Iterable[Finding]:
    """A toolkit whose ptxas is here but nvlink is not: a partial install. (The nvidia-cuda-nvcc wheels
    carry ptxas alone, and XLA links through the nvidia-nvjitlink library when that is installed, so
    neither is a finding.)"""
    users, ptxas, nvlink = _xla_users(facts), _tool(facts, "ptxas"), _tool(facts, "nvlink")
    if not users or ptxas is None or not ptxas.path or ptxas.found_via == "site-packages":
        return
    if nvlink is None or nvlink.path or any(d.key.startswith("nvidia-nvjitlink") for d in facts.frameworks.distributions):
        return
    yield make_finding(
        "nvlink-missing",
        f"{', '.join(users)} is installed and XLA links its kernels with nvlink, but the toolkit that gives "
        f"ptxas ({ptxas.path}, from {ptxas.found_via}) has no nvlink beside it; XLA falls back to the driver.",
        evidence={"ptxas": ptxas.path, "packages": users},
        fix=["Install the toolkit's nvcc component completely, or put a complete CUDA toolkit's bin folder "
             "(with ptxas and nvlink) first on PATH"])


RULES: List[Rule] = [extension_cuda_mismatch, host_compiler_unsupported, ninja_missing, ptxas_too_old,
                     nvlink_missing]
