"""Why pip found no build: the Python, when the log and the tables can show it.

pip's "Could not find a version that satisfies the requirement torch==2.1.2 (from versions: 2.2.0,
2.2.1, ...)" is matched as no-matching-build. Two things in the same log often say more:
- the versions pip saw: when the index has releases of the package for this interpreter, only
  none of the one asked for, that release has no wheel for this Python. All offered releases
  newer than the one asked for means the Python is too new for it; all older, too old;
- the Python version the log prints, checked against the compat tables' Python list of the
  release asked for (or of every release, when none was named).
- "(from versions: none)" for tensorflow with one of the newest Pythons stated in the log: the log
  predates the first release with wheels for it;
- "(from versions: none)" for a package the tables do not cover, with the Python stated in the log
  (and not a 32-bit Python or another OS): no file fits the interpreter, and its version is what
  the maintainers of such packages name first.
Any of them makes the finding python-unsupported, with the Pythons that do have builds where the tables
know them. A mixed list (releases on both sides of the one asked for) stays no-matching-build: an
index without that one file says nothing about the Python.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Dict, List, Optional, Tuple

from packaging.version import InvalidVersion, Version

from ..codes import make_finding
from ..compat.loader import tables
from ..compat.queries import tensorflow_release, torch_release
from ..compat.versions import major_minor
from ..model import Finding

SIGNATURE = "pip-no-matching-framework"
# Poetry's "Unable to find installation candidates for torch (2.5.1+cu124)": a locked release none of whose
# files fits the interpreter, which is pip's "torch==2.5.1+cu124 (from versions: none)" in other words
POETRY_SIGNATURE = "poetry-no-installation-candidates"
# PyTorch 2.2.0's release notes: "PyTorch 2.2.x will be the last version that supports macOS x64"
# (RFC https://github.com/pytorch/pytorch/issues/114602)
INTEL_MAC_LAST = (2, 2)
# Packages long published for Linux (and macOS) only: on Windows "from versions: none" is the OS.
LINUX_FIRST = ("jax", "vllm", "triton", "deepspeed", "flash-attn", "flash_attn")
# Packages published as Linux wheels only (no sdist either), so "from versions: none" for them says the platform
# whatever the Python: triton's README ("Supported Platforms: Linux"), FBGEMM's install guide (Linux builds of
# fbgemm-gpu and fbgemm-gpu-cpu), qiskit-aer's README (the GPU simulator ships for x86_64 Linux only), vllm's
# installation guide (Linux only).
LINUX_ONLY = ("triton", "fbgemm-gpu", "qiskit-aer-gpu", "vllm")  # names as pip normalises them (fbgemm-gpu-cpu too)
# CUDA builds published under their own name (onnxruntime-gpu, paddlepaddle-gpu, cupy-cuda12x, nvidia-*): NVIDIA has
# published no CUDA for macOS since 10.2, so on a Mac none of them has a file whatever the Python
CUDA_ONLY_PACKAGE_RE = re.compile(r"[-_]gpu$|cuda|^nvidia-")
# ==X, or an upper bound (<=X, <X): the release asked for is X or older
PINNED_RE = re.compile(r"^(?:===?|<=?)\s*(?P<version>\d+(?:\.\d+)*)")


def _version(text: str) -> Optional[Version]:
    try:
        return Version(text.strip().split("+", 1)[0])
    except InvalidVersion:
        return None


def _pythons_of(pkg: str, version: Optional[str]) -> Optional[Tuple[str, ...]]:
    """The Pythons the tables list for a release (or for every release when version is None)."""
    base = pkg.replace("_", "-")
    if base == "torch":
        if version:
            rel = torch_release(version)
            return rel.python if rel and rel.python else None
        return tuple(sorted({p for r in tables().torch for p in r.python}))
    if base in ("tensorflow", "tensorflow-gpu", "tensorflow-cpu"):
        if version:
            rel = tensorflow_release(version)
            return rel.python if rel and rel.python else None
        return tuple(sorted({p for r in tables().tf_tested for p in r.python}))
    return None


def _first_tensorflow_for(python: str, newest: int = 3) -> Optional[str]:
    """The first TensorFlow release the tables list with wheels for this Python, when it is one of the `newest`
    Python minors they list (a Python that came out after most releases)."""
    rows = tables().tf_tested
    minors = sorted({p for r in rows for p in r.python}, key=lambda p: tuple(int(x) for x in p.split(".")))
    wanted = major_minor(python)
    if wanted not in minors[-newest:]:
        return None
    versions = [v for v in (_version(r.version) for r in rows if wanted in r.python) if v is not None]
    return str(min(versions)) if versions else None


def _span(pythons: Tuple[str, ...]) -> str:
    ordered = sorted(pythons, key=lambda p: tuple(int(x) for x in p.split(".")))
    return ordered[0] if len(ordered) == 1 else f"{ordered[0]} to {ordered[-1]}"


def python_from_paths(facts: Dict[str, Any]) -> Optional[str]:
    """The Python version an install path shows: ...\\Python313\\ or .../lib/python3.10/."""
    win = str(facts.get("python_dir_win", "") or ("3" + str(facts["python_wheel_tag"]) if facts.get("python_wheel_tag") else ""))
    if win:
        return f"{win[0]}.{win[1:]}"
    return str(facts["python_dir_lib"]) if facts.get("python_dir_lib") else None


def _outside(python: str, pythons: Tuple[str, ...]) -> bool:
    """A Python newer than the newest (or older than the oldest) the tables list for any release: at the
    time of a log, no release had a wheel for it yet (or any more)."""
    keys = sorted(tuple(int(x) for x in p.split(".")) for p in pythons)
    mine = tuple(int(x) for x in major_minor(python).split("."))
    return mine >= keys[-1] or mine < keys[0]


def _reason(pkg: str, requested: Optional[str], offered: List[Version], python: Optional[str],
            other_platform: bool = False, stated: bool = True, saw: str = "pip saw no file at all (from versions: none)",
            wheel_platform: str = "") -> Optional[Dict[str, str]]:
    """Why no build fits, when the Python is it; `saw` says what the installer saw ("pip saw no torch file ...")."""
    if python:
        pythons = _pythons_of(pkg, requested)
        if pythons and major_minor(python) not in pythons:
            what = f"{pkg} {requested}" if requested else f"any {pkg} release in gpudoctor's tables"
            return {"why": f"{what} has wheels for Python {_span(pythons)} only, and this is Python {python}",
                    "pythons": _span(pythons)}
    wanted = _version(requested) if requested else None
    every = _pythons_of(pkg, None)
    if not offered and python and not requested and every and _outside(python, every) and not other_platform:
        # "(from versions: none)" for a table package: only a Python at the edge of what its releases
        # cover explains that no release at all offers a file (the newest minor had no wheel yet then)
        return {"why": f"{saw}, and the log shows "
                       f"Python {python}, at or past the edge of the Pythons {pkg} releases publish wheels for "
                       f"({_span(every)}; the newest is supported only by the newest releases)", "pythons": ""}
    if not offered and python and stated and pkg == "torch" and wheel_platform and not other_platform:
        # torch publishes wheels for every release on 64-bit Linux x86-64/aarch64, Windows x64 and macOS
        # arm64: on such an interpreter "(from versions: none)" leaves only its Python version
        return {"why": f"{saw}, on a 64-bit interpreter of a platform torch publishes wheels for "
                       f"({wheel_platform}), and the log shows Python {python}: no torch release on this index has "
                       f"a wheel for that Python version (too new for the releases then, or too old)",
                "pythons": ""}
    first_tf = _first_tensorflow_for(python) if python and pkg.replace("_", "-") == "tensorflow" else None
    if not offered and stated and not requested and first_tf and not other_platform:
        # the tables' first release with wheels for it: "(from versions: none)" dates the log before that release
        return {"why": f"{saw}, and the log shows Python {python}, which TensorFlow publishes wheels for "
                       f"only from {first_tf} on: before that release no TensorFlow had a wheel for it (the Python was "
                       "newer than every release then)", "pythons": ""}
    if not offered and python and stated and _pythons_of(pkg, requested) is None and not other_platform:
        # "(from versions: none)": no file fits this interpreter at all. The log states the Python
        # (and no 32-bit Python or other OS): the Python's version is what the release lacks.
        return {"why": f"{saw}, and the log shows "
                       f"Python {python}: {pkg} publishes wheels only for a list of Python versions, and this one is "
                       f"not on it", "pythons": ""}
    if wanted is None or not offered or wanted in offered or other_platform:
        # on an OS a package came to late (jaxlib, triton on Windows), the releases offered say what was
        # built for the OS, not for the Python
        return None
    pythons = _pythons_of(pkg, requested)
    if python and pythons and major_minor(python) in pythons and pkg.replace("_", "-").startswith("tensorflow"):
        # the release asked for has wheels for this very Python: the versions on offer say what TensorFlow built
        # for this OS or CPU (tensorflow-gpu's macOS wheels ended at 1.1, Apple silicon's began at 2.13). torch
        # publishes every release for every 64-bit platform it supports, so there the offer stays the Python's.
        return None
    known = f" ({pkg} {requested} has wheels for Python {_span(pythons)})" if pythons else ""
    if all(v > wanted for v in offered):
        return {"why": f"the index has only newer {pkg} releases for this Python, none of {requested}: this Python "
                       f"is newer than {requested} supports{known}", "pythons": _span(pythons) if pythons else ""}
    if all(v < wanted for v in offered):
        return {"why": f"the index has only older {pkg} releases for this Python, none of {requested}: this Python "
                       f"is older than {requested} supports{known}", "pythons": _span(pythons) if pythons else ""}
    return None


def _torch_none_found(pkg: str, offered: List[Version], python: Any, facts: Dict[str, Any],
                     saw: str, requested: Optional[str] = None) -> Optional[Dict[str, str]]:
    """torch's "(from versions: none)" with nothing that points at another platform, whatever Python (if any) the
    log states: every torch release has wheels for 64-bit Linux x86-64, Windows and macOS, so the interpreter is
    what none fits, most often a Python newer than the releases on that index (a pin does not change the list
    pip shows)."""
    # another interpreter or platform in sight: PyPy, an ARM or Mac machine, a CUDA index seen from a machine
    # the log does not show to be Windows (macOS has no CUDA wheels)
    elsewhere = ("arm_machine", "apple_silicon", "macos_platform", "pypy_interpreter")
    if pkg != "torch" or offered or any(facts.get(k) for k in elsewhere) \
            or (facts.get("torch_index_cuda") and "windows_platform" not in facts and "linux_x86_64" not in facts):
        return None
    pythons = _pythons_of(pkg, requested) if python and requested else None
    if pythons and major_minor(str(python)) in pythons:
        return None  # the release asked for has wheels for this Python: something else is why
    where = "on Windows, " if "windows_platform" in facts else ""
    which = f"Python {python}" if python else "this interpreter"
    return {"why": f"{saw}, {where}where every torch release publishes 64-bit wheels: {which} is "
                   "what no wheel fits, most often a Python newer than the releases on this index support (or a "
                   "32-bit Python: `python -c \"import struct; print(struct.calcsize('P') * 8)\"` prints 32)",
            "pythons": ""}


def _tensorflow_gpu_ended(f: Finding, requested: str, offered: List[Version]) -> Finding:
    """tensorflow-gpu==2.11 or newer not found: the package ended (its index page: 2.10.1 the last with Windows
    wheels, 2.11.0 Linux-only, 2.12.0 a source-only placeholder that raises)."""
    real = [v for v in offered if v.release[:2] != (2, 12)]  # 2.12.0 is the placeholder
    newest = f" (pip offers real releases up to {max(real)})" if real else ""
    detail = (f"pip found no tensorflow-gpu {requested} for this interpreter{newest}: the tensorflow-gpu package ended. "
              "Its last release with Windows wheels is 2.10.1 (TensorFlow 2.10 was the last GPU release for native "
              "Windows), 2.11.0 has Linux wheels only, and 2.12.0 is an empty placeholder whose setup raises. GPU "
              "support is in the tensorflow package itself.")
    fix = ["On Linux or WSL2: install tensorflow instead of tensorflow-gpu, with its CUDA libraries: "
           "`pip install 'tensorflow[and-cuda]'` (TensorFlow >= 2.14).",
           "On native Windows: the last GPU build is TensorFlow 2.10 (CUDA 11.2, cuDNN 8.1, Python 3.7-3.10): "
           "`pip install \"tensorflow<2.11\"`; anything newer runs on the GPU only in WSL2."]
    return replace(make_finding("package-removed", detail, evidence={**f.evidence, "reread_from": f.code}, fix=fix,
                                title=f"tensorflow-gpu {requested} does not exist: the package ended at 2.11"),
                   caused_by=f.caused_by)


def _intel_mac(f: Finding, newest: Version) -> Finding:
    """torch's releases stop at 2.2.x for this interpreter: the one platform where they do is macOS on Intel."""
    detail = (f"pip found torch releases up to {newest} for this interpreter and nothing newer: PyTorch 2.2 was the "
              f"last release with wheels for macOS on Intel (x86_64) CPUs, so this is an Intel Mac (or an x86_64 "
              f"Python running under Rosetta on Apple silicon).")
    fix = [f"On an Intel Mac: pin torch {newest} (`pip install torch=={newest}` with the torchvision/torchaudio of "
           "that release), or build a newer torch from source.",
           "On Apple silicon: install a native arm64 Python (`python -c \"import platform; print(platform.machine())\"` "
           "must print arm64), then install torch again."]
    return replace(f, detail=detail, fix=fix, title="No torch wheel newer than 2.2 for macOS on Intel",
                   evidence={**f.evidence, "newest_offered": str(newest)})


def _cuda_pin_where_no_cuda_build_is_offered(f: Finding, pkg: str, offered: List[Version],
                                             wanted: Optional[Version]) -> bool:
    """A CUDA build pinned (+cu118, +cuda11.cudnn82) where the index offers no CUDA build at all: that platform has
    none (jaxlib's CUDA wheels on Windows, torch's on a Jetson), whatever the Python. An offer of only releases newer
    than the pin says instead that the Python is newer than the pin (except for Linux-first packages)."""
    if not (re.search(r"\+cu(?:da)?\d", str(f.evidence.get("spec", ""))) and offered
            and "+cu" not in str(f.evidence.get("versions", ""))):
        return False
    only_newer = wanted is not None and all(v > wanted for v in offered)
    return not only_newer or pkg.startswith(LINUX_FIRST)


def reread_pip_failures(findings: List[Finding], facts: Dict[str, Any]) -> List[Finding]:
    """no-matching-build from pip, re-read as python-unsupported where the log shows the Python is why."""
    out = []
    for f in findings:
        if f.code != "no-matching-build" or f.evidence.get("signature") not in (SIGNATURE, POETRY_SIGNATURE):
            out.append(f)
            continue
        poetry = f.evidence.get("signature") == POETRY_SIGNATURE
        installer = "Poetry" if poetry else "pip"
        if poetry:
            f = replace(f, evidence={**f.evidence, "spec": f"=={f.evidence.get('poetry_version', '')}",
                                     "versions": "none"})
        elif f.evidence.get("versions_empty"):
            f = replace(f, evidence={**f.evidence, "versions": "none"})  # pip before 20 printed "(from versions: )"
        pkg = str(f.evidence.get("pkg", ""))
        pinned = PINNED_RE.match(str(f.evidence.get("spec", "")))
        requested = pinned.group("version") if pinned else None
        offered = [v for v in (_version(x) for x in str(f.evidence.get("versions", "")).split(",") if x.strip())
                   if v is not None]
        saw = (f"Poetry saw no file of the locked {pkg} release that fits this interpreter" if poetry
               else f"pip saw no {pkg} file at all for this interpreter (from versions: none)")
        if pkg == "torch":  # torch 0.1.2 is the old placeholder sdist every platform without wheels sees
            # a list the paste cut off ("... 0.1.2post2") still shows that only the placeholder was offered
            cut = [v for v in (_version(x) for x in str(f.evidence.get("versions_cut", "")).split(",") if x.strip())
                   if v is not None]
            if (offered or cut) and all(v < Version("1.0") for v in offered + cut):
                saw = "pip saw only torch's old 0.1.2 placeholder (no real release) for this interpreter"
            offered = [v for v in offered if v >= Version("1.0")]
        wanted_version = _version(requested) if requested else None
        if pkg == "torch" and offered and max(offered).release[:2] == INTEL_MAC_LAST and (
                wanted_version is None or wanted_version > max(offered)) and not facts.get("apple_silicon"):
            out.append(_intel_mac(f, max(offered)))
            continue
        # (2.12.0, an empty placeholder, is offered beside the 2.10.x that are the last real ones)
        if pkg.replace("_", "-") == "tensorflow-gpu" and wanted_version and wanted_version >= Version("2.11") \
                and wanted_version not in offered:
            out.append(_tensorflow_gpu_ended(f, requested or "", offered))
            continue
        if _cuda_pin_where_no_cuda_build_is_offered(f, pkg, offered, wanted_version):
            out.append(f)
            continue
        stated = facts.get("python_version")
        python = stated or python_from_paths(facts)
        if facts.get("python_bits") or facts.get("python_dir_bits"):  # a 32-bit Python gets no framework wheel at all
            out.append(f)
            continue
        name = pkg.lower().replace("_", "-")
        linux_only = name in LINUX_ONLY or name.startswith("fbgemm-gpu-")
        other_platform = (str(facts.get("conda_platform", "")).startswith("osx") or "macos" in pkg
                          or ("macos_platform" in facts and (bool(CUDA_ONLY_PACKAGE_RE.search(pkg)) or linux_only))
                          or ("windows_platform" in facts and (pkg.startswith(LINUX_FIRST) or linux_only))
                          # a Linux-only package that pip sees nothing of, with nothing that says Linux: the platform
                          or (linux_only and "linux_x86_64" not in facts
                              and str(f.evidence.get("versions", "")).strip() == "none"))
        wheel_platform = ("macOS on Apple silicon" if facts.get("apple_silicon")
                          else "Windows, 64-bit runtime" if facts.get("python_runtime_bits") and "windows_platform" in facts
                          else "Linux x86-64, 64-bit runtime" if facts.get("python_runtime_bits") and "linux_x86_64" in facts
                          else "")
        reason = _reason(pkg, requested, offered, str(python) if python else None, other_platform, bool(stated), saw,
                         wheel_platform)
        if reason is None and not other_platform and str(f.evidence.get("versions", "")).strip() == "none":
            reason = _torch_none_found(pkg, offered, python, facts, saw, requested)
        if reason is None:
            out.append(f)
            continue
        # the reason's Pythons, else those the tables list for the release asked for: the fix names them either way
        listed = _pythons_of(pkg, requested) if requested else None
        known = reason["pythons"] or (_span(listed) if listed else "")
        target = f"Python {known}" if known else "a Python the release supports"
        spec = str(f.evidence.get("spec", "")).strip()
        wanted = f"{pkg}{spec}" if requested and spec else pkg
        fix = [f"Create an environment with {target} and install {wanted} there, e.g. `conda create -n gpu python=3.X` "
               f"or `uv venv --python 3.X` with a 3.X from that list."]
        fix += (["Or keep this Python and let Poetry lock a release that supports it: loosen the pin in pyproject.toml, "
                 "then `poetry lock` (Poetry 2: `poetry lock --regenerate`).",
                 "Check the Python of the project's environment: `poetry env info` (`poetry env use 3.X` switches it)."]
                if poetry else
                [f"Or keep this Python and ask for a {pkg} release that supports it (the versions pip saw are the ones "
                 f"with a wheel for it).",
                 "Check which Python pip runs for: `python -m pip --version`."])
        detail = f"{installer} found no {wanted} for this interpreter: {reason['why']}."
        out.append(replace(make_finding("python-unsupported", detail, evidence={**f.evidence, "reread_from": f.code},
                                        fix=fix, title=f"{wanted} has no wheel for this Python"),
                           caused_by=f.caused_by))
    return out
