"""Releases newer than the compat tables: an info finding naming the table's last release, and no
compatibility verdict guessed for them (rules from facts)."""

from __future__ import annotations

from gpudoctor import compat
from gpudoctor.facts.frameworks import FrameworkFacts, FrameworksFacts, FrameworkStatic
from gpudoctor.rules import diagnose

from ..factories import gpu_machine


def torch(version: str, cuda: str) -> FrameworkFacts:
    return FrameworkFacts("torch", FrameworkStatic("torch", True, "torch", version, "/site/torch", "cuda", cuda))


def machine_with(*frameworks: FrameworkFacts, cc: str = "7.5", driver: str = "595.45.04", cuda: int = 13020,
                 python: str = "3.12.3"):
    facts = gpu_machine(count=1, cc=cc, driver=driver, cuda=cuda)
    facts.system.python_version = python
    fw = FrameworksFacts(python="/usr/bin/python3")
    fw.frameworks = {f.name: f for f in frameworks}
    facts.frameworks = fw
    return facts


def findings_of(facts):
    return diagnose(facts)


def test_torch_newer_than_the_table_is_named_with_the_tables_last_release():
    newest = compat.newest_covered("torch").newest
    found = [f for f in findings_of(machine_with(torch("2.16.0+cu132", "13.2"))) if f.code == "newer-than-tables"]
    assert len(found) == 1 and found[0].severity.value == "info"
    assert "PyTorch 2.16.0+cu132" in found[0].detail and f"up to {newest}" in found[0].detail
    assert found[0].evidence["table"] == "pytorch.toml" and found[0].evidence["read"]


def test_no_compatibility_verdict_is_guessed_for_a_newer_torch():
    # A Python 3.9 machine: torch 2.15.0's row would say "Python unsupported"; for 2.16.0, which the
    # tables do not know, nothing may be inferred from the torch table.
    facts = machine_with(torch("2.16.0+cu132", "13.2"), cc="8.6", python="3.9.18")
    codes = [f.code for f in findings_of(facts)]
    assert "newer-than-tables" in codes
    assert "python-unsupported" not in codes and "gpu-arch-unsupported" not in codes
    rec = [f for f in findings_of(facts) if f.code == "recommendation"]
    assert all("PyTorch" not in step for f in rec for step in f.fix)  # no older release called its newest


def test_a_newer_torch_still_meets_the_cuda_toolkits_own_limits():
    # NVIDIA's architecture matrix, not the torch table: no CUDA 13 build has Kepler kernels.
    facts = machine_with(torch("2.16.0+cu132", "13.2"), cc="3.7", python="3.12.3")
    arch = [f for f in findings_of(facts) if f.code == "gpu-arch-unsupported"]
    assert len(arch) == 1 and arch[0].evidence["built_for_cuda"] == "13.2" and arch[0].evidence["architecture"] == "Kepler"


def test_the_same_machine_with_the_newest_known_torch_gets_the_verdicts():
    facts = machine_with(torch("2.15.0", "13.2"), cc="3.7", python="3.9.18")
    codes = [f.code for f in findings_of(facts)]
    assert "newer-than-tables" not in codes
    assert "python-unsupported" in codes and "gpu-arch-unsupported" in codes


def test_driver_newer_than_the_tables_says_at_least_and_names_the_newest_driver():
    facts = machine_with(driver="610.10.01", cuda=13040)
    found = {(f.evidence["subject"], f.evidence["newest"]) for f in findings_of(facts) if f.code == "newer-than-tables"}
    assert ("driver", compat.newest_covered("driver").newest) in found
    assert ("cuda", compat.newest_covered("cuda").newest) in found  # the driver's CUDA 13.4
    rec = next(f for f in findings_of(facts) if f.code == "recommendation")
    assert "up to at least 13.2" in rec.detail


def test_a_release_the_tables_cover_gets_no_such_finding():
    facts = machine_with(torch("2.14.1", "13.0"), driver="595.45.04", cuda=13020)
    assert "newer-than-tables" not in [f.code for f in findings_of(facts)]


def test_the_driver_of_cuda_132_update_2_is_within_the_tables():
    # CUDA 13.2 Update 2's own driver (Table 3 of its release notes) is the newest the tables know.
    facts = machine_with(driver="595.71.05", cuda=13020)
    assert "newer-than-tables" not in [f.code for f in findings_of(facts)]
    later = {f.evidence["subject"] for f in findings_of(machine_with(driver="595.80.01", cuda=13020))
             if f.code == "newer-than-tables"}
    assert later == {"driver"}  # a later 595 build: the driver is past the tables, its CUDA 13.2 is not


def test_a_series_row_covers_its_patch_releases():
    assert compat.newer_than_tables("tensorflow", "2.21.4") is None
    assert compat.newer_than_tables("tensorflow", "2.22.0").newest == "2.21"
    assert compat.newer_than_tables("torch", "2.15.1").newest == "2.15.0"
    assert compat.newer_than_tables("torch", "not a version") is None
