"""What a pasted `python -m torch.utils.collect_env` shows as a whole.

Its lines are facts, not errors: "CUDA used to build PyTorch: 10.1", "Nvidia driver version: 410.104",
"Is CUDA available: No". Read together with the compat tables they name the cause when no line does:
a driver too old for the CUDA the build was made with (the tables know each CUDA's minimum driver).
"""

from __future__ import annotations

from typing import Any, Dict, List

from ..codes import make_finding
from ..compat.queries import driver_supports_cuda, min_driver_for_cuda, newest_cuda_for_driver
from ..model import Finding, Severity

NOT_AVAILABLE = ("no", "false")


def _names_a_cause(findings: List[Finding]) -> bool:
    return any(f.severity == Severity.ERROR and "inferred_from" not in f.evidence for f in findings)


def read_collect_env(findings: List[Finding], facts: Dict[str, Any]) -> List[Finding]:
    if _names_a_cause(findings) or str(facts.get("cuda_available", "")).lower() not in NOT_AVAILABLE:
        return findings
    built, driver = str(facts.get("torch_cuda", "")), str(facts.get("driver_version", ""))
    if not built[:1].isdigit() or not driver[:1].isdigit() or driver_supports_cuda(driver, built) is not False:
        return findings
    need = min_driver_for_cuda(built)
    least = (need.minor_version_compat_driver or need.toolkit_driver) if need else None
    newest = newest_cuda_for_driver(driver)
    detail = (f"torch reports CUDA is not available; it was built with CUDA {built}, and the NVIDIA driver is {driver}"
              f"{f', which runs CUDA {newest} at most' if newest else ''}. A CUDA {built} build needs driver "
              f"{least or 'newer than this one'} or newer on Linux (NVIDIA's CUDA toolkit release notes).")
    fix = [f"Update the NVIDIA driver to {least} or newer (`nvidia-smi` shows the version afterwards)." if least else
           "Update the NVIDIA driver.",
           f"Or install a torch built for a CUDA this driver runs ({newest or 'an older CUDA'}): `gpudoctor compat "
           f"--driver {driver}` lists the builds that work with it."]
    finding = make_finding("driver-too-old", detail, fix=fix, title=f"The NVIDIA driver {driver} is too old for this "
                           f"torch's CUDA {built}", evidence={"source": "log", "torch_cuda": built,
                                                             "driver_version": driver, "read_from": "collect_env"})
    return [finding, *findings]
