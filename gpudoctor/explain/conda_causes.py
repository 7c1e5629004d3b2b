"""Why conda found no set of builds: the Python, when its conflict report shows it; a package name the
channel no longer publishes (pytorch-cpu), when its not-found report names one.

conda's classic solver answers an impossible environment with UnsatisfiableError and, under
"Package python conflicts for:", the Python each requested package's builds need
("pytorch -> python[version='>=3.10,<3.11.0a0|>=3.8,<3.9.0a0']"). Where the environment asks for a
Python (python==3.11.0 in the report or on the conda command) that is in none of those ranges, the
unsolvable environment is python-unsupported, with the Pythons that do have builds.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Dict, List, Optional

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from ..codes import make_finding
from ..model import Finding

CONDA_CONFLICT_SIGNATURE = "conda-unsatisfiable-framework"


def _in_any_range(python: str, ranges: str) -> Optional[bool]:
    """Whether a Python is inside one of conda's '|'-separated ranges ('>=3.10,<3.11.0a0|>=3.8,<3.9.0a0');
    None when a range cannot be read."""
    try:
        version = Version(python)
        return any(version in SpecifierSet(r.strip()) for r in ranges.split("|") if r.strip())
    except (InvalidSpecifier, InvalidVersion):
        return None


def _pythons_in(ranges: str) -> str:
    """conda's ranges as the Pythons they name: '>=3.10,<3.11.0a0|>=3.8,<3.9.0a0' is '3.8, 3.10'."""
    names = []
    for r in dict.fromkeys(r.strip() for r in ranges.split("|") if r.strip()):
        one = re.fullmatch(r">=(\d+)\.(\d+),<(\d+)\.(\d+)\.0a0", r)
        exact = one and one.group(1) == one.group(3) and int(one.group(4)) == int(one.group(2)) + 1
        names.append(f"{one.group(1)}.{one.group(2)}" if one and exact else r)
    return ", ".join(sorted(names, key=lambda n: [int(x) if x.isdigit() else 0 for x in re.split(r"[.,<>=]+", n) if x]))


def reread_conda_python_conflicts(findings: List[Finding], facts: Dict[str, Any]) -> List[Finding]:
    """conda's unsolvable environment, re-read as python-unsupported where its conflict report shows that
    the framework's builds need other Pythons than the one the environment asks for."""
    requested = facts.get("conda_requested_python")
    pkg, ranges = facts.get("conda_conflict_pkg"), facts.get("conda_conflict_pythons")
    if not (requested and pkg and ranges) or _in_any_range(str(requested), str(ranges)) is not False:
        return findings
    out = []
    for f in findings:
        if f.code != "no-matching-build" or f.evidence.get("signature") != CONDA_CONFLICT_SIGNATURE:
            out.append(f)
            continue
        detail = (f"conda found no {pkg} build for Python {requested}: the solver's conflict report lists the Pythons "
                  f"{pkg}'s builds in these channels need ({_pythons_in(str(ranges))}), and {requested} is in none of them.")
        fix = [f"Create the environment with a Python from that list (e.g. `conda create -n gpu python=3.X {pkg}` "
               f"with a 3.X the report names), or wait for (or pin) a {pkg} release built for Python {requested}."]
        out.append(replace(make_finding("python-unsupported", detail, fix=fix,
                                        evidence={**f.evidence, "reread_from": f.code},
                                        title=f"conda has no {pkg} build for Python {requested}"),
                           caused_by=f.caused_by))
    return out


def reread_removed_cpu_packages(findings: List[Finding], facts: Dict[str, Any]) -> List[Finding]:
    """pytorch-cpu named in conda's not-found report (ResolvePackageNotFound, PackagesNotFoundError): not a
    CPU build that was installed, but an old package name no channel in use has for this platform."""
    if not facts.get("conda_not_found"):
        return findings
    out = []
    for f in findings:
        if f.code == "cpu-only-build" and f.evidence.get("signature") == "conda-pytorch-cpu-package":
            detail = ("conda found no pytorch-cpu (or torchvision-cpu) for this environment: those were the pytorch "
                      "channel's CPU packages for Linux and Windows up to PyTorch 1.1.0. From 1.2.0 its CPU build is "
                      "`pytorch` with the `cpuonly` package, and on macOS plain `pytorch` always was; an environment "
                      "file written for the old names no longer resolves.")
            fix = ["In the environment file or command, replace `pytorch-cpu` by `pytorch` and `torchvision-cpu` by "
                   "`torchvision`, and add `cpuonly` on Linux/Windows for a CPU-only build (macOS needs nothing more), "
                   "e.g. `conda install pytorch torchvision cpuonly -c pytorch`.",
                   "Or take the CPU build from conda-forge, whose pytorch recipe still has a pytorch-cpu output: "
                   "`conda install -c conda-forge pytorch-cpu`."]
            f = replace(make_finding("package-removed", detail, fix=fix, severity=f.severity,
                                     evidence={**f.evidence, "reread_from": f.code},
                                     title="pytorch-cpu is an old package name conda cannot find here"),
                        caused_by=f.caused_by)
        out.append(f)
    return out
