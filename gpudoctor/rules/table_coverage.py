"""Releases newer than the compat tables: say so, once per release, and let no rule guess about them.

Each table declares the newest release it covers ([[coverage]] rows). A framework, driver or CUDA
past that is unknown to gpudoctor: an info finding names the table's last release and the date it
was read. The other compatibility rules ask `beyond_tables()` and stay silent for such a release
(their lookups already return "unknown" for it; this keeps it that way when a series row could
otherwise seem to apply).
"""

from __future__ import annotations

from typing import Iterable, List, Optional, Tuple

from .. import compat
from ..codes import make_finding
from ..facts import Facts
from ..model import Finding
from ..versions import cuda_version_text
from .base import Prior
from .framework_facts import installed_frameworks, label
from .situation import driver_cuda_version, driver_version

# framework name in the facts -> coverage subject of its table (cupy has no release table to outgrow)
FRAMEWORK_SUBJECTS = {"torch": "torch", "tensorflow": "tensorflow", "jax": "jax"}
TABLE_NAMES = {"torch": "PyTorch", "tensorflow": "TensorFlow", "jax": "JAX", "driver": "driver", "cuda": "CUDA"}


def beyond_tables(subject: str, version: Optional[str]) -> Optional[compat.Coverage]:
    """The coverage row `version` is past, or None (also when the tables cannot be read)."""
    if not version:
        return None
    try:
        return compat.newer_than_tables(subject, version)
    except compat.CompatDataError:
        return None


def _subjects(facts: Facts) -> List[Tuple[str, str, str]]:
    """(subject, version, what the user has) for everything installed that a table covers."""
    out = [(FRAMEWORK_SUBJECTS[fw.name], fw.static.version, label(fw))
           for fw in installed_frameworks(facts) if fw.name in FRAMEWORK_SUBJECTS]
    driver = driver_version(facts)
    if driver:
        out.append(("driver", driver, f"NVIDIA driver {driver}"))
    cuda = cuda_version_text(driver_cuda_version(facts))
    if cuda:
        out.append(("cuda", cuda, f"the driver's CUDA {cuda}"))
    return out


def newer_than_tables(facts: Facts, prior: Prior) -> Iterable[Finding]:
    for subject, version, what in _subjects(facts):
        cov = beyond_tables(subject, version)
        if cov is None:
            continue
        table = TABLE_NAMES[subject]
        detail = (f"{what} is newer than gpudoctor's {table} table, which covers releases up to {cov.newest} "
                  f"(compat/{cov.table}, read {cov.read}). gpudoctor infers no compatibility fact for it: "
                  "no Python, driver or GPU-architecture verdict here rests on a guess.")
        if subject == "driver":
            detail = (f"{what} is newer than the newest driver in gpudoctor's tables ({cov.newest}, compat/{cov.table}, "
                      f"read {cov.read}). It runs every CUDA release the tables list; whether it runs newer CUDA "
                      "releases is not inferred.")
        yield make_finding("newer-than-tables", detail, fix=[
            f"Update gpudoctor (each release refreshes its tables); until then, read the release notes of {what} "
            "for the Python, driver and GPUs it supports."], evidence={
            "subject": subject, "version": version, "table": cov.table, "newest": cov.newest, "read": cov.read})


RULES = [newer_than_tables]
