"""What building a CUDA extension would use, found the way torch.utils.cpp_extension finds it.

cpp_extension takes CUDA_HOME, else CUDA_PATH, else the folder above the first `nvcc` on PATH, else
/usr/local/cuda (torch 2.13.0, `_find_cuda_home`); it runs `<CUDA_HOME>/bin/nvcc --version`, checks
the host compiler named by $CXX (default `c++`) against nvcc's accepted range, and builds with
`ninja` from PATH. This probe records each of those, and never judges.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from typing import Mapping, Optional, Sequence, Tuple

from ..facts.libraries import ToolchainFacts, ToolFacts
from .libraries import default_cuda_roots, run_tool_version, static_tool_version

DEFAULT_CUDA_HOME = "/usr/local/cuda"


def extension_cuda_home(env: Mapping[str, str], default: str = DEFAULT_CUDA_HOME) -> Tuple[Optional[str], str]:
    """(folder, how it was chosen) as cpp_extension's `_find_cuda_home` chooses it."""
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if env.get(var):
            return env[var], var
    nvcc = shutil.which("nvcc", path=env.get("PATH") or os.defpath)
    if nvcc:
        return os.path.dirname(os.path.dirname(nvcc)), "PATH"
    return (default, "default") if os.path.exists(default) else (None, "none")


def _run(argv: Sequence[str], env: Mapping[str, str], timeout: float) -> Tuple[Optional[str], Optional[str]]:
    try:
        done = subprocess.run(list(argv), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=dict(env),
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return None, "no answer within %g s" % timeout
    except OSError as exc:
        return None, str(exc)
    return done.stdout.decode("utf-8", "replace"), None


def host_compiler(env: Mapping[str, str], timeout: float) -> ToolFacts:
    """$CXX (else c++): gcc or clang, and its full version."""
    given = (env.get("CXX") or "c++").split()[0]
    path = given if os.sep in given else shutil.which(given, path=env.get("PATH") or os.defpath)
    if not path:
        return ToolFacts(name=given, error=f"{given} not found on PATH")
    banner, error = _run([path, "--version"], env, timeout)
    if banner is None:
        return ToolFacts(name=given, path=path, error=error)
    low = banner.lower()
    name = "clang" if "clang" in low else "gcc" if ("free software foundation" in low or "gcc" in low) else given
    raw, error = _run([path, "-dumpfullversion", "-dumpversion"], env, timeout)
    version = (raw or "").strip().splitlines()[0] if raw and re.match(r"\d+(\.\d+)*\s*$", raw.strip()) else None
    return ToolFacts(name=name, path=path, version=version, found_via="CXX" if env.get("CXX") else "PATH",
                     error=None if version else error or "no version in: %s" % (raw or "").strip()[:120])


def find_ninja(env: Mapping[str, str], python: Optional[str]) -> ToolFacts:
    path = shutil.which("ninja", path=env.get("PATH") or os.defpath)
    if path:
        return ToolFacts(name="ninja", path=path, found_via="PATH")
    if python:  # the pip package installs the binary beside the interpreter, which PATH may not hold
        beside = os.path.join(os.path.dirname(python), "ninja")
        if os.access(beside, os.X_OK):
            return ToolFacts(name="ninja", path=beside, found_via="environment",
                             error="installed in the environment but not on PATH: activate the environment")
    return ToolFacts(name="ninja", error="not on PATH")


def probe_toolchain(env: Mapping[str, str], python: Optional[str], timeout: float) -> ToolchainFacts:
    home, via = extension_cuda_home(env)
    facts = ToolchainFacts(cuda_home=home, checked=True)
    if home:
        nvcc = os.path.join(home, "bin", "nvcc")
        if os.path.isfile(nvcc) and os.access(nvcc, os.X_OK):
            version, error = run_tool_version(nvcc, env, timeout)
            facts.extension_nvcc = ToolFacts(name="nvcc", path=nvcc, version=version or static_tool_version(nvcc),
                                             error=error, found_via=via)
        else:
            facts.extension_nvcc = ToolFacts(name="nvcc", path=nvcc, found_via=via, error=f"{nvcc} does not exist")
    for root in default_cuda_roots():
        nvcc = os.path.join(root, "bin", "nvcc")
        version = static_tool_version(nvcc) if os.path.isfile(nvcc) else None
        if version and os.path.realpath(root) not in {os.path.realpath(r) for r in facts.toolkits}:
            facts.toolkits[root] = version
    facts.host_compiler = host_compiler(env, timeout)
    facts.ninja = find_ninja(env, python)
    return facts
