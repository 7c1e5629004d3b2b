"""GPU generations, arch support and independent root causes, from facts (issue 10, classes 1, 2, 8)."""

from __future__ import annotations

from gpudoctor import compat
from gpudoctor.facts.frameworks import FrameworkFacts, FrameworkLive, FrameworkStatic
from gpudoctor.rules import diagnose
from gpudoctor.rules.base import Prior
from gpudoctor.codes import make_finding

from tests.factories import gpu_machine


def with_framework(facts, name, version, cuda, build="cuda", arch=(), live=None):
    static = FrameworkStatic(name=name, installed=True, version=version, build=build, cuda_version=cuda,
                             distribution=name, cuda_compute_capabilities=list(arch))
    if arch:
        static.details["arch_source"] = "fat binaries of /site/torch/lib/libtorch_cuda.so"
    facts.frameworks.frameworks[name] = FrameworkFacts(name=name, static=static, live=live)
    return facts


def k80(driver="470.256.02", cuda=11040):
    return gpu_machine(count=2, name="Tesla K80", cc="3.7", memory_mib=11441, driver=driver, cuda=cuda)


def by_code(findings):
    out = {}
    for f in findings:
        out.setdefault(f.code, []).append(f)
    return out


def test_generation_table_matches_nvidia_matrix():
    kepler = compat.gpu_ceiling("3.7")
    assert (kepler.architecture, kepler.last_driver_branch, kepler.last_cuda_major) == ("Kepler", 470, 11)
    assert kepler.newest_cuda_full == "11.4"  # CUDA 11.4's own driver (470.42.01) is the last in R470
    assert compat.gpu_ceiling("6.1").last_driver_branch == 580
    assert compat.gpu_ceiling("8.0") is None or not compat.gpu_ceiling("8.0").retired
    assert compat.cuda_runs_on_gpu("12.1", "3.7") is False and compat.cuda_runs_on_gpu("11.8", "3.7") is True
    assert compat.cuda_runs_on_gpu("13.0", "7.0") is False and compat.cuda_runs_on_gpu("12.8", "7.0") is True
    for row in compat.gpu_generations():
        assert row.source.startswith("https://docs.nvidia.com/")


def test_cuda_12_torch_on_k80_is_an_arch_problem_not_a_driver_to_upgrade():
    facts = with_framework(k80(), "torch", "2.4.1+cu121", "12.1")
    found = by_code(diagnose(facts))
    [arch] = found["gpu-arch-unsupported"]
    assert arch.caused_by is None and "R470" in arch.detail and "Tesla K80" in arch.detail
    assert not [f for f in found.get("driver-too-old", []) if f.evidence.get("framework") == "torch"]
    for f in diagnose(facts):
        assert not any("Upgrade the NVIDIA driver" in step for step in f.fix), f


def test_driver_too_old_never_asks_for_a_driver_a_gpu_cannot_take():
    """A K80 next to a newer GPU (a CUDA 12 build runs on the newer one): the upgrade would drop the K80."""
    facts = gpu_machine(count=2, names=["Tesla K80", "Tesla T4"], cc="7.5", driver="470.256.02", cuda=11040)
    facts.gpus[0].compute_capability = "3.7"
    with_framework(facts, "torch", "2.4.1+cu121", "12.1")
    found = by_code(diagnose(facts))
    [too_old] = [f for f in found["driver-too-old"] if f.evidence.get("framework") == "torch"]
    assert not any(step.startswith("Upgrade the NVIDIA driver") for step in too_old.fix)
    assert any("Do not upgrade the driver" in step and "R470" in step for step in too_old.fix)


def test_fat_binary_arch_list_decides_over_the_version_string():
    facts = with_framework(k80(), "torch", "2.0.1+cu118", "11.8",
                           arch=["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90", "compute_90"])
    [arch] = by_code(diagnose(facts))["gpu-arch-unsupported"]
    assert "fat binaries of /site/torch/lib/libtorch_cuda.so" in arch.detail
    facts = with_framework(k80(), "torch", "2.0.1+cu118", "11.8", arch=["sm_37", "sm_50", "compute_50"])
    assert "gpu-arch-unsupported" not in by_code(diagnose(facts))


def test_recommendation_for_a_kepler_gpu_names_no_build_without_its_kernels():
    import re

    [rec] = by_code(diagnose(k80()))["recommendation"]
    for step in rec.fix:  # a PyTorch build named must be one whose sourced arch list covers sm_37
        if step.startswith("TensorFlow"):  # TensorFlow rows carry no arch lists: said so, and CUDA 11 at most
            assert "(CUDA 11." in step and "not confirmed" in step and "3.7" in step, step
        named = re.match(r"PyTorch (\S+) \((cu\d+)\)", step)
        if named:
            variant = compat.torch_release(named.group(1)).variant(named.group(2))
            assert compat.arch_entries_run_on(variant.arch_list, "3.7") is True, step
    # before this rule, a K80 was told to install torch 2.7.1 (cu118), which has no Kepler kernels
    assert not any("2.7.1" in step for step in rec.fix)


def test_symptom_of_one_framework_is_not_caused_by_another_frameworks_build():
    prior = Prior()
    prior.add(make_finding("gpu-arch-unsupported", "torch lacks sm_37", evidence={"framework": "torch"}))
    prior.add(make_finding("cuda-library-missing", "libcudart.so.11.0 missing", evidence={"library": "cudart"}))
    assert prior.first_error_for("tensorflow", "gpu-arch-unsupported", "cuda-library-missing") == "cuda-library-missing"
    assert prior.first_error_for("torch", "gpu-arch-unsupported", "cuda-library-missing") == "gpu-arch-unsupported"


def test_import_failure_on_an_unsupported_python_is_caused_by_the_python():
    facts = gpu_machine(count=1)
    facts.system.python_version = "3.11.7"
    live = FrameworkLive(name="tensorflow", probe="framework-tensorflow", status="import-failed", phase="import",
                         import_error="ImportError: cannot import name 'pywrap_tensorflow'")
    with_framework(facts, "tensorflow", "1.14.0", "10.0", live=live)
    found = by_code(diagnose(facts))
    [python] = found["python-unsupported"]
    [failed] = found["framework-import-failed"]
    assert python.caused_by is None and failed.caused_by == "python-unsupported"


def test_cublas_without_kernels_for_the_gpu_is_named():
    """torch's own build covers sm_37, but the libcublas.so.11 it loads (read from its fat binaries) does not."""
    from gpudoctor.facts.frameworks import SonameNeed
    from gpudoctor.facts.libraries import LibraryCopy, LibraryFacts

    facts = with_framework(k80(), "torch", "1.12.1+cu113", "11.3", arch=["sm_37", "sm_50", "sm_60", "sm_70"])
    facts.frameworks.frameworks["torch"].static.sonames = [SonameNeed("cublas", "libcublas.so.11", "elf-needed")]
    copy = LibraryCopy(path="/opt/cuda/lib64/libcublas.so.11", real_path="/opt/cuda/lib64/libcublas.so.11.11.3.6",
                       soname="libcublas.so.11", found_via=["LD_LIBRARY_PATH"], version="11.11.3.6",
                       archs=["sm_50", "sm_60", "sm_70", "compute_70"], archs_from=["/opt/cuda/lib64/libcublas.so.11.11.3.6"])
    facts.libraries.libraries = [LibraryFacts(name="cublas", copies=[copy])]
    [arch] = by_code(diagnose(facts))["gpu-arch-unsupported"]
    assert "/opt/cuda/lib64/libcublas.so.11.11.3.6" in arch.detail and "sm_50" in arch.detail
    assert arch.evidence["library"] == copy.real_path
    assert "LD_LIBRARY_PATH" in arch.fix[0]
    copy.archs = ["sm_35", "sm_50", "compute_50"]  # cuBLAS 11's real list starts at sm_35: runs on sm_37
    assert "gpu-arch-unsupported" not in by_code(diagnose(facts))
