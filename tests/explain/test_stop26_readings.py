"""Readings added in stop 26. Before the blind sets: torch's capability-range warning for a GPU one minor above the
newest architecture of its build's major (a GB10, 12.1, against a build up to 12.0), whose kernels run there by CUDA's
binary compatibility rule. Each reading is checked next to the log that must not get it."""

from __future__ import annotations

from gpudoctor.model import Severity
from tests.explain.readings import first

RANGE = ("UserWarning:\n    Found GPU0 {name} which is of cuda capability {cc}.\n"
         "    Minimum and Maximum cuda capability supported by this version of PyTorch is\n    ({low}) - ({high})\n")


def test_a_later_minor_of_the_builds_newest_major_is_harmless():
    for name, cc, low, high in (("NVIDIA GB10", "12.1", "8.0", "12.0"), ("NVIDIA Thor", "11.0", "8.0", "11.0")):
        f = first(RANGE.format(name=name, cc=cc, low=low, high=high))
        assert f.code == "gpu-arch-unsupported" and f.severity == Severity.INFO, (name, f.title)
        assert "kernels run there" in f.title


def test_a_gpu_outside_the_range_by_major_or_below_its_minimum_is_still_an_error():
    for cc, low, high in (("6.1", "7.5", "12.0"), ("12.0", "5.0", "9.0"), ("8.0", "8.6", "12.0"),
                          ("3.7", "5.0", "9.0")):
        f = first(RANGE.format(name="NVIDIA GPU", cc=cc, low=low, high=high))
        assert f.code == "gpu-arch-unsupported" and f.severity == Severity.ERROR, (cc, low, high)
    # a range without a device capability to compare is read as it reads
    bare = "Minimum and Maximum cuda capability supported by this version of PyTorch is\n    (8.0) - (12.0)\n"
    assert first(bare).severity == Severity.ERROR
