"""Installed distributions of the TARGET interpreter, read from metadata by a stdlib child.

The child (children/packages_child.py) runs on `ctx.python`, so `check --python` sees the other
env's sys.path, .pth files and user site exactly as that interpreter does; nothing is imported.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Mapping, Optional, Tuple

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion

from ...facts.frameworks import CondaPackage, Distribution, FrameworksFacts, PinCheck, normalize_name
from ...facts.probe_status import ProbeStatus
from ..context import ProbeContext
from ..runner import ChildSpec, run_child

PACKAGES_PROBE = "framework-packages"
# Whose nvidia-* requirements are compared with what is installed.
PINNING_FRAMEWORKS = ("torch", "tensorflow", "tensorflow-gpu", "tf-nightly", "jax-cuda12-plugin",
                      "jax-cuda11-plugin", "jax-cuda13-plugin")
_EXTRA = re.compile(r"""extra\s*==\s*['"]([^'"]+)['"]""")


def child_env(ctx: ProbeContext, extra: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    env = dict(ctx.env)
    # The children live in gpudoctor's own folder: an older target interpreter must not write
    # its bytecode there.
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(extra or {})
    return env


def probe_packages(ctx: ProbeContext) -> Tuple[FrameworksFacts, ProbeStatus, Dict[str, str]]:
    """FrameworksFacts with packages filled in, the child's status, and the framework folders."""
    timeout = min(ctx.timeout, 20.0)
    result = run_child(ChildSpec(PACKAGES_PROBE, "packages_child.py", ctx.python, child_env(ctx), timeout))
    facts = packages_from_records(result.records)
    facts.python = facts.python or ctx.python
    if not result.ok or "distributions" not in result.records:
        facts.error = result.error or "the package listing child reported nothing"
    status_name = "failed" if result.ok and "distributions" not in result.records else result.status
    status = ProbeStatus(PACKAGES_PROBE, status_name, result.duration_s, facts.error, result.stderr_tail[-2000:])
    return facts, status, dict(result.records.get("framework_dirs") or {})


def packages_from_records(records: Mapping[str, Any]) -> FrameworksFacts:
    facts = FrameworksFacts()
    python = records.get("python") or {}
    facts.python = python.get("executable")
    facts.marker_environment = dict(records.get("marker_environment") or {})
    for record in records.get("distributions") or []:
        facts.packages.setdefault(record["name"], record.get("version", ""))  # first on sys.path wins
        if record.get("detail"):
            facts.distributions.append(Distribution(
                name=record["name"], version=record.get("version", ""), location=record.get("location", ""),
                installer=record.get("installer"), requires=list(record.get("requires") or []),
                metadata_dir=record.get("metadata_dir")))
    conda = records.get("conda") or {}
    if conda:
        facts.conda_prefix = conda.get("prefix")
        facts.conda_packages = [CondaPackage(p["name"], p["version"], p.get("build", ""))
                                for p in conda.get("packages") or []]
    facts.pins = pin_checks(facts.distributions, facts.marker_environment)
    return facts


def pin_checks(distributions: List[Distribution], marker_env: Mapping[str, str]) -> List[PinCheck]:
    """Each nvidia-* Requires-Dist of a framework that applies here, with what is installed."""

    installed: Dict[str, str] = {}
    for dist in distributions:
        installed.setdefault(dist.key, dist.version)
    checks: List[PinCheck] = []
    for dist in distributions:
        if dist.key not in PINNING_FRAMEWORKS:
            continue
        for line in dist.requires:
            try:
                req = Requirement(line)
            except InvalidRequirement:
                continue
            key = normalize_name(req.name)
            if not key.startswith("nvidia-"):
                continue
            extra = None
            if req.marker is not None:
                found = _EXTRA.search(str(req.marker))
                extra = found.group(1) if found else None
                env = dict(marker_env)
                env["extra"] = extra or ""
                try:
                    if marker_env and not req.marker.evaluate(env):
                        continue  # e.g. a Linux x86_64-only pin on another platform
                except Exception:  # an unknown marker variable: keep the pin, undecided
                    pass
            have = installed.get(key)
            satisfied: Optional[bool] = None
            if have is not None and str(req.specifier):
                try:
                    satisfied = req.specifier.contains(have, prereleases=True)
                except InvalidVersion:
                    satisfied = None
            checks.append(PinCheck(framework=dist.name, requirement=line, package=req.name,
                                   specifier=str(req.specifier), extra=extra, installed=have, satisfied=satisfied))
    return checks
