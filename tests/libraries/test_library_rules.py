"""The CUDA-libraries rules on hand-written facts: what a user sees, and when nothing is said."""

from __future__ import annotations

import pytest

from gpudoctor.facts import Facts
from gpudoctor.facts.driver import PciDevice
from gpudoctor.facts.libraries import LibrariesFacts, LibraryCopy, LibraryFacts, LoaderResolution, ToolFacts
from gpudoctor.rules import RULES, libraries as R
from gpudoctor.rules.base import Prior


def copy(real_path, soname, version, *vias, source="file-name", code=None, major=None):
    return LibraryCopy(path=real_path, real_path=real_path, soname=soname, found_via=list(vias),
                       found_at=[[v, real_path] for v in vias], version=version, version_source=source,
                       version_code=code, cuda_major=major)


def machine(*libs, gpu=True, driver=None, checked=True, packages=None, tools=(), libdevice=()):
    facts = Facts(libraries=LibrariesFacts(libraries=list(libs), tools=list(tools), libdevice=list(libdevice),
                                           dlopen_checked=checked))
    if gpu:
        facts.driver.pci_devices = [PciDevice("0000:01:00.0", "0x10de", "0x2204", "0x030000")]
    facts.driver.libcuda.driver_version = driver
    facts.frameworks.packages = dict(packages or {})
    return facts


def findings(facts, rule=None):
    return [f for r in ([rule] if rule else R.RULES) for f in r(facts, Prior())]


@pytest.mark.parametrize("runtime, driver, verdict", [
    ((12, 9), (11, 4), "too-old"), ((13, 0), (12, 8), "too-old"), ((12, None), (11, 8), "too-old"),
    ((12, 9), (12, 2), "minor-compat"), ((11, 8), (11, 4), "minor-compat"), ((10, 2), (10, 1), "too-old"),
    ((12, 2), (12, 2), "ok"), ((11, 8), (12, 2), "ok"), ((12, None), (12, 0), "ok"),
])
def test_what_the_version_numbers_alone_prove(runtime, driver, verdict):
    assert R.runtime_vs_driver(runtime, driver) == verdict


def test_driver_418_with_a_cuda12_wheel_is_an_error_and_names_both_versions():
    wheel = copy("/env/sp/nvidia/cuda_runtime/lib/libcudart.so.12", "libcudart.so.12", "12.1", "site-packages",
                 source="library", code=12010, major=12)
    (f,) = findings(machine(LibraryFacts("cudart", [wheel]), driver=10010), R.driver_too_old)
    assert (f.code, f.severity.value) == ("driver-too-old", "error")
    assert "CUDA up to 10.1" in f.detail and "CUDA 12.1 runtime" in f.detail
    assert any("*-cu10 wheels" in step for step in f.fix)


def test_a_leftover_toolkit_too_new_for_the_driver_is_only_a_warning():
    toolkit = copy("/usr/local/cuda-13.0/lib/libcudart.so.13", "libcudart.so.13", "13", "ldconfig", "default", major=13)
    (f,) = findings(machine(LibraryFacts("cudart", [toolkit]), driver=12020), R.driver_too_old)
    assert f.severity.value == "warning" and "/usr/local/cuda-13.0/lib" in f.fix[-1]


def test_no_driver_no_comparison():
    wheel = copy("/sp/libcudart.so.12", "libcudart.so.12", "12.9", "site-packages", major=12)
    assert findings(machine(LibraryFacts("cudart", [wheel]), driver=None)) == []


def test_same_version_twice_is_not_worth_a_warning():
    a = copy("/a/libcudnn.so.8.9.2", "libcudnn.so.8", "8.9.2", "conda")
    b = copy("/b/libcudnn.so.8", "libcudnn.so.8", "8", "ldconfig")  # '8' may well be 8.9.2
    assert findings(machine(LibraryFacts("cudnn", [a, b])), R.multiple_cuda_installs) == []


def test_cudnn8_on_ld_library_path_shadows_the_one_in_the_conda_env():
    env = copy("/conda/envs/tf/lib/libcudnn.so.8.6.0", "libcudnn.so.8", "8.6.0", "conda", source="library")
    old = copy("/opt/cudnn-8.1/lib/libcudnn.so.8.1.0", "libcudnn.so.8", "8.1.0", "LD_LIBRARY_PATH", source="library")
    old.found_at = [["LD_LIBRARY_PATH", "/opt/cudnn-8.1/lib/libcudnn.so.8"]]
    lib = LibraryFacts("cudnn", [env, old], [LoaderResolution("libcudnn.so.8", old.real_path, "8.1.0")])
    facts = machine(lib)
    facts.libraries.search_dirs = [["/opt/cudnn-8.1/lib", "LD_LIBRARY_PATH"], ["/usr/local/lib", "LD_LIBRARY_PATH"]]
    (f,) = findings(facts, R.multiple_cuda_installs)
    assert (f.code, f.severity.value) == ("multiple-cuda-installs", "warning")
    assert "loads /opt/cudnn-8.1/lib/libcudnn.so.8.1.0 (from LD_LIBRARY_PATH): it shadows the one from your conda " \
           "environment (8.6.0)" in f.detail
    assert f.fix[0] == "Take /opt/cudnn-8.1/lib off LD_LIBRARY_PATH: `export LD_LIBRARY_PATH=/usr/local/lib`"


def test_cublas_whose_cublaslt_is_missing_on_a_cpu_machine_is_not_reported():
    cublas = copy("/sp/nvidia/cublas/lib/libcublas.so.12", "libcublas.so.12", "12", "site-packages", major=12)
    assert findings(machine(LibraryFacts("cublas", [cublas]), gpu=False, checked=False)) == []
    (f,) = findings(machine(LibraryFacts("cublas", [cublas]), checked=False), R.cuda_library_missing)
    assert f.evidence["needs"] == "libcublasLt.so.12" and f.fix[0] == "pip install nvidia-cublas-cu12"


def test_a_dependency_named_by_dlerror_is_missing():
    cusolver = copy("/sp/nvidia/cusolver/lib/libcusolver.so.11", "libcusolver.so.11", "11.4.5", "site-packages")
    cusolver.load_error = "libnvJitLink.so.12: cannot open shared object file: No such file or directory"
    (f,) = findings(machine(LibraryFacts("cusolver", [cusolver])), R.cuda_library_missing)
    assert f.evidence["needs"] == "libnvJitLink.so.12" and "needs libnvJitLink.so.12" in f.detail


def test_ptxas_and_libdevice_matter_only_to_jax_on_a_gpu_machine():
    no_ptxas = ToolFacts("ptxas", error="not found")
    jax = {"jax-cuda12-plugin": "0.6.0"}
    codes = [f.code for f in findings(machine(tools=[no_ptxas], packages=jax))]
    assert codes == ["ptxas-missing", "libdevice-missing"]
    assert findings(machine(tools=[no_ptxas], packages={"torch": "2.5.0"})) == []
    assert findings(machine(tools=[no_ptxas], packages=jax, gpu=False)) == []
    assert findings(machine(tools=[ToolFacts("ptxas", path="/usr/local/cuda/bin/ptxas")], packages=jax,
                            libdevice=["/usr/local/cuda/nvvm/libdevice/libdevice.10.bc"])) == []


def test_the_rules_are_registered():
    assert all(rule in RULES for rule in R.RULES)


def test_an_empty_machine_says_nothing():
    assert findings(Facts()) == []
