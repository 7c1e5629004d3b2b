"""Compatibility rules: the facts joined with the compat/ tables.

The tables answer, the rules only ask: every version and command in these findings comes from
gpudoctor.compat (and so from a sourced row), never from this file.
"""

from __future__ import annotations

from typing import Iterable, List, Optional

from .. import compat
from ..codes import make_finding
from ..facts import Facts
from ..model import Finding
from .base import Prior
from .framework_facts import installed_frameworks
from .situation import any_gpu, cuda_version_text, driver_cuda_version, driver_version, with_target_pip
from .table_coverage import beyond_tables


def _beyond_tables(facts: Facts, name: str) -> bool:
    """An installed `name` newer than its table: an older release must not be called its newest build."""
    return any(fw.name == name and beyond_tables(name, fw.static.version) for fw in installed_frameworks(facts))


def _common_compute_capability(facts: Facts) -> Optional[str]:
    capabilities = {g.compute_capability for g in facts.gpus if g.compute_capability}
    return capabilities.pop() if len(capabilities) == 1 else None


def recommendation(facts: Facts, prior: Prior) -> Iterable[Finding]:
    version = driver_version(facts)
    if not any_gpu(facts) or not version or prior.first_error("driver-not-loaded", "nvml-driver-mismatch"):
        return
    try:
        newest = compat.newest_builds_for_driver(version, python=facts.system.python_version,
                                                 compute_capability=_common_compute_capability(facts))
    except compat.CompatDataError:
        return
    lines: List[str] = []
    newest = _only_builds_with_kernels(newest, version, facts)
    if newest.torch and not _beyond_tables(facts, "torch"):
        lines.append(f"PyTorch {newest.torch.version} ({newest.torch.variant}): "
                     f"{with_target_pip(facts, newest.torch.command)}")
    if newest.tensorflow and not _beyond_tables(facts, "tensorflow"):
        unconfirmed = _unconfirmed_gpus(facts, newest.tensorflow.cuda)
        lines.append(f"TensorFlow {newest.tensorflow.version} (CUDA {newest.tensorflow.cuda}): "
                     f"{with_target_pip(facts, newest.tensorflow.command)}"
                     + (f"  # kernels for compute capability {', '.join(unconfirmed)} not confirmed: check "
                        "tf.sysconfig.get_build_info()['cuda_compute_capabilities']" if unconfirmed else ""))
    if not lines and not newest.cuda:
        return
    cuda = cuda_version_text(driver_cuda_version(facts))
    detail = f"Driver {version}" + (f" (CUDA {cuda})" if cuda else "")
    if newest.cuda:
        at_least = "at least " if beyond_tables("driver", version) else ""  # newer CUDA is not in the tables
        detail += f" runs CUDA runtimes up to {at_least}{newest.cuda} (toolkit features up to {at_least}{newest.cuda_full or newest.cuda})"
    detail += "; the newest builds for this machine"
    if facts.system.python_version:
        detail += f" and Python {facts.system.python_version}"
    detail += " are listed in the fix." if lines else \
        ": gpudoctor's tables list no PyTorch or TensorFlow build that fits them (driver, Python and GPU)."
    yield make_finding("recommendation", detail, fix=lines, evidence={
        "driver": version, "python": facts.system.python_version, "newest_cuda": newest.cuda,
        "newest_cuda_full": newest.cuda_full})


def _unconfirmed_gpus(facts: Facts, cuda: str) -> List[str]:
    return sorted({g.compute_capability for g in facts.gpus
                   if g.compute_capability and compat.needs_known_arch(cuda, g.compute_capability)})


def _only_builds_with_kernels(newest: compat.NewestBuilds, driver: str, facts: Facts) -> compat.NewestBuilds:
    """For a GPU of a retired architecture, or one the build's CUDA deprecates (a Kepler GPU and a CUDA 11
    build), only a sourced arch list can promise kernels. TensorFlow's rows have none: a TensorFlow build
    is dropped only when its CUDA cannot have kernels for the GPU at all, else flagged as unconfirmed."""
    gpus = [g.compute_capability for g in facts.gpus if g.compute_capability]
    torch, tf = newest.torch, newest.tensorflow
    risky = [cc for cc in gpus if torch and compat.needs_known_arch(torch.cuda, cc)]
    if torch and risky and not torch.arch_checked:
        torch = compat.newest_torch_with_kernels(driver, risky[0], facts.system.python_version)
        if torch and not all(compat.arch_entries_run_on(_variant_arch_list(torch), cc) for cc in gpus):
            torch = None
    if tf and any(compat.cuda_runs_on_gpu(tf.cuda, cc) is False for cc in gpus):
        tf = None
    return compat.NewestBuilds(newest.driver_version, newest.cuda, newest.cuda_full, torch, tf)


def _variant_arch_list(build: compat.TorchBuild) -> List[str]:
    release = compat.torch_release(build.version)
    variant = release.variant(build.variant) if release else None
    return list(variant.arch_list) if variant else []


RULES = [recommendation]
