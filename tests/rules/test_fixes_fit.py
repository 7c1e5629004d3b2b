"""Fixes fit the machine: the driver a CUDA runtime needs, named from the tables."""

from gpudoctor.facts.libraries import LibraryCopy, LibraryFacts
from tests.factories import finding, gpu_machine


def _cu12_runtime_in_env(facts):
    folder = "/env/lib/python3.11/site-packages/nvidia/cuda_runtime/lib"
    lib = LibraryFacts(name="cudart")
    lib.copies.append(LibraryCopy(path=f"{folder}/libcudart.so.12", real_path=f"{folder}/libcudart.so.12",
                                  soname="libcudart.so.12", found_via=["site-packages"], version="12.4.127",
                                  cuda_major=12))
    facts.libraries.libraries.append(lib)
    return facts


def test_a_turing_gpu_is_told_which_driver_runs_cuda_12_4():
    facts = _cu12_runtime_in_env(gpu_machine(count=1, driver="470.82.01", cuda=11040))
    f = finding(facts, "driver-too-old")
    assert f.fix[0].startswith("Upgrade the NVIDIA driver to ") and "CUDA 12.4" in f.fix[0]
