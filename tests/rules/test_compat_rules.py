"""Compatibility rules on the scenarios of issue 4, from facts (the tables answer, the rules ask)."""

from gpudoctor.facts.frameworks import FrameworkFacts, FrameworkLive, FrameworkStatic, SonameNeed
from gpudoctor.facts.libraries import LibraryCopy, LibraryFacts
from gpudoctor.model import Severity
from tests.factories import finding, gpu_machine, problems

TF_114_SONAMES = [("cudart", "libcudart.so.10.0"), ("cublas", "libcublas.so.10.0"), ("cufft", "libcufft.so.10.0"),
                  ("curand", "libcurand.so.10.0"), ("cusolver", "libcusolver.so.10.0"),
                  ("cusparse", "libcusparse.so.10.0"), ("cudnn", "libcudnn.so.7")]


def with_framework(facts, name, version, build="cuda", cuda=None, cudnn=None, sonames=(), archs=(), live=None):
    static = FrameworkStatic(name=name, installed=True, distribution=name, version=version, build=build,
                             cuda_version=cuda, cudnn_version=cudnn, cuda_compute_capabilities=list(archs),
                             sonames=[SonameNeed(lib, so, "build-info") for lib, so in sonames])
    facts.frameworks.frameworks[name] = FrameworkFacts(name, static, live)
    return facts


def with_library(facts, name, soname, version, folder, via="LD_LIBRARY_PATH"):
    lib = facts.libraries.library(name)
    if lib is None:
        lib = LibraryFacts(name=name)
        facts.libraries.libraries.append(lib)
    real = f"{folder}/{soname.split('.so')[0]}.so.{version}"
    lib.copies.append(LibraryCopy(path=f"{folder}/{soname}", real_path=real, soname=soname, found_via=[via],
                                  version_from_name=version, version=version))
    facts.libraries.search_dirs = [[folder, via]]
    return facts


def test_tensorflow_114_with_only_cuda_101_on_ld_library_path():
    facts = with_framework(gpu_machine(driver="418.87.01", cuda=10010), "tensorflow", "1.14.0", cuda="10.0", cudnn="7",
                           sonames=TF_114_SONAMES)
    facts.system.python_version = "3.7.3"
    for lib in ("cudart", "cublas", "cufft", "curand", "cusolver", "cusparse"):
        with_library(facts, lib, f"lib{lib}.so.10.1" if lib == "cudart" else f"lib{lib}.so.10", "10.1.243",
                     "/usr/local/cuda-10.1/lib64")
    with_library(facts, "cudnn", "libcudnn.so.7", "7.6.5", "/usr/local/cuda-10.1/lib64")
    found = finding(facts, "cuda-version-mismatch")
    assert "built for CUDA 10.0" in found.detail and "libcudart.so.10.0" in found.detail
    assert "libcudart.so.10.1" in found.detail and "/usr/local/cuda-10.1/lib64" in found.detail
    fix = " ".join(found.fix)
    assert "CUDA 10.0 and cuDNN 7.4" in fix  # what TF 1.14 was tested with, from the table
    assert "tensorflow" in fix and "(tested with cuDNN 7.6)" in fix  # the release tested with CUDA 10.1
    assert "cudnn-missing" not in problems(facts)


def test_tensorflow_215_with_cudnn_86_when_89_is_required():
    facts = with_framework(gpu_machine(), "tensorflow", "2.15.0", cuda="12.2", cudnn="8",
                           sonames=[("cudart", "libcudart.so.12"), ("cudnn", "libcudnn.so.8")])
    with_library(facts, "cudart", "libcudart.so.12", "12.2.140", "/env/nvidia/cuda_runtime/lib", "site-packages")
    with_library(facts, "cudnn", "libcudnn.so.8", "8.6.0", "/usr/lib/x86_64-linux-gnu", "ldconfig")
    found = finding(facts, "cudnn-version-mismatch")
    assert "compiled with cuDNN 8.9" in found.detail and "8.6.0" in found.detail
    assert any("nvidia-cudnn-cu12==8.9" in step for step in found.fix)


def test_tensorflow_log_line_names_the_exact_versions():
    live = FrameworkLive(name="tensorflow", probe="framework-tensorflow")
    from gpudoctor.facts.frameworks import FrameworkLogLine
    live.log_lines = [FrameworkLogLine("cudnn-version-mismatch", "Loaded runtime CuDNN library: 8.1.0 but source "
                                       "was compiled with: 8.6.0.", runtime_version="8.1.0", compiled_version="8.6.0")]
    facts = with_framework(gpu_machine(), "tensorflow", "2.12.0", cuda="11.8", cudnn="8",
                           sonames=[("cudnn", "libcudnn.so.8")], live=live)
    with_library(facts, "cudnn", "libcudnn.so.8", "8.1.0", "/usr/lib/x86_64-linux-gnu", "ldconfig")
    assert "8.1.0" in finding(facts, "cudnn-version-mismatch").detail


def test_cudnn_of_another_major_is_a_mismatch_and_none_is_missing():
    facts = with_framework(gpu_machine(), "tensorflow", "2.15.0", cuda="12.2", cudnn="8",
                           sonames=[("cudart", "libcudart.so.12"), ("cudnn", "libcudnn.so.8")])
    with_library(facts, "cudart", "libcudart.so.12", "12.2.140", "/env/lib", "conda")
    assert "cudnn-missing" in problems(facts)
    with_library(facts, "cudnn", "libcudnn.so.9", "9.1.0", "/env/lib", "conda")
    found = finding(facts, "cudnn-version-mismatch")
    assert "libcudnn.so.8" in found.detail and "libcudnn.so.9" in found.detail


def test_cu124_torch_on_driver_470_names_the_driver_it_needs_and_what_470_runs():
    facts = with_framework(gpu_machine(driver="470.82.01", cuda=11040), "torch", "2.5.1+cu124", cuda="12.4")
    facts.system.python_version = "3.10.12"
    found = finding(facts, "driver-too-old")
    assert found.severity == Severity.ERROR and "CUDA 12.4" in found.detail and "470.82.01" in found.detail
    assert "525.60.13" in found.fix[0]  # minor-version compatibility minimum of CUDA 12.x, from the table
    assert any("--index-url" in s and "cu11" in s for s in found.fix)


def rtx_5090_with_torch_to_sm_90(driver, cuda):
    live = FrameworkLive(name="torch", probe="framework-torch", arch_list=["sm_50", "sm_60", "sm_70", "sm_75", "sm_80",
                                                                            "sm_86", "sm_90"])
    facts = with_framework(gpu_machine(count=1, name="NVIDIA GeForce RTX 5090", cc="12.0", driver=driver, cuda=cuda),
                           "torch", "2.5.1+cu124", cuda="12.4", live=live)
    facts.system.python_version = "3.11.7"
    return finding(facts, "gpu-arch-unsupported")


def test_rtx_5090_with_a_torch_build_that_stops_at_sm_90():
    found = rtx_5090_with_torch_to_sm_90("580.65.06", 13000)
    assert "compute capability 12.0" in found.detail and "sm_90" in found.detail
    assert "cu13" in found.fix[0] and "pip install torch==" in found.fix[0]  # a build whose arch list covers 12.0


def test_rtx_5090_on_driver_570_gets_the_newest_cu128_build_whose_wheel_carries_sm_120():
    # Driver 570 runs CUDA 12.8; the cu128 wheels' fat binaries carry 12.0 (compat/pytorch.toml arch_source).
    step = rtx_5090_with_torch_to_sm_90("570.86.15", 12080).fix[0]
    assert "(cu128)" in step and "pip install torch==" in step


def test_k80_with_a_current_torch_is_offered_the_newest_build_with_kepler_kernels():
    live = FrameworkLive(name="torch", probe="framework-torch", arch_list=["sm_50", "sm_80", "sm_86", "sm_90"])
    facts = with_framework(gpu_machine(count=1, name="Tesla K80", cc="3.7", driver="470.82.01", cuda=11040),
                           "torch", "2.7.1+cu118", cuda="11.8", live=live)
    found = finding(facts, "gpu-arch-unsupported")
    assert "compute capability 3.7" in found.detail
    # pytorch/builder's release/2.5 script keeps 3.7 for CUDA 11.8; 470 runs cu118 (minor version compatibility)
    assert "PyTorch 2.5.1 (cu118)" in found.fix[0] and "whl/cu118" in found.fix[0]


def test_the_installed_build_is_never_its_own_fix():
    # The machine (live arch list) contradicts the table row of the installed build: the table loses.
    live = FrameworkLive(name="torch", probe="framework-torch", arch_list=["sm_50", "sm_80", "sm_86", "sm_90"])
    facts = with_framework(gpu_machine(count=1, name="Tesla K80", cc="3.7", driver="470.82.01", cuda=11040),
                           "torch", "2.5.1+cu118", cuda="11.8", live=live)
    found = finding(facts, "gpu-arch-unsupported")
    assert not any("torch==2.5.1" in step for step in found.fix)
    assert "No PyTorch build in gpudoctor's tables is known to support compute capability 3.7" in found.fix[0]


def test_python_313_with_tensorflow_215():
    facts = with_framework(gpu_machine(), "tensorflow", "2.15.0", cuda="12.2", cudnn="8")
    facts.system.python_version = "3.13.1"
    found = finding(facts, "python-unsupported")
    assert "3.9, 3.10, 3.11" in found.detail and "3.13.1" in found.detail
    assert any("tensorflow==" in step or "tensorflow[and-cuda]==" in step for step in found.fix)


def test_tensorflow_211_gpu_on_native_windows():
    facts = with_framework(gpu_machine(), "tensorflow", "2.15.0", build="cpu")
    facts.system.os = "Windows"
    assert "WSL2" in finding(facts, "platform-unsupported").fix[0]


def test_a_matching_healthy_stack_has_no_compat_problem():
    live = FrameworkLive(name="torch", probe="framework-torch", arch_list=["sm_75", "sm_80", "sm_86", "sm_90"])
    facts = with_framework(gpu_machine(), "torch", "2.5.1+cu121", cuda="12.1", live=live)
    facts.system.python_version = "3.11.7"
    assert not {"driver-too-old", "gpu-arch-unsupported", "python-unsupported"} & set(problems(facts))


def test_modern_tensorflow_missing_its_wheels_gets_one_finding_with_the_and_cuda_command():
    facts = with_framework(gpu_machine(), "tensorflow", "2.21.0", cuda="12.5.1", cudnn="9",
                           sonames=[("cudart", "libcudart.so.12"), ("cublas", "libcublas.so.12"), ("cudnn", "libcudnn.so.9")])
    with_library(facts, "cudart", "libcudart.so.13", "13.0", "/usr/local/cuda-13.0/lib", "ldconfig")
    soname_findings = [f for f in problems(facts) if f in ("cuda-version-mismatch", "cuda-library-missing", "cudnn-missing")]
    assert soname_findings == ["cuda-version-mismatch"]
    found = finding(facts, "cuda-version-mismatch")
    assert "libcudnn.so.9" in found.detail and found.fix[0].endswith('`pip install "tensorflow[and-cuda]==2.21.0"`.')


def test_recommendations_never_offer_a_release_whose_python_support_is_unknown():
    # Driver 418 runs CUDA 10.1 at most; torch 1.8.1 cu101 is the newest such build, but its Python
    # list is not in the tables (it has no 3.11 wheels): no torch command beats a wrong one.
    facts = gpu_machine(count=1, name="Tesla V100-SXM2-16GB", cc="7.0", driver="418.87.01", cuda=10010)
    facts.system.python_version = "3.11.7"
    assert not any("torch" in step for step in finding(facts, "recommendation").fix)


def test_fixes_for_another_interpreter_install_with_that_interpreters_pip():
    facts = with_framework(gpu_machine(driver="470.82.01", cuda=11040), "torch", "2.5.1+cu124", cuda="12.4")
    facts.system.python_version = "3.10.12"
    facts.system.python_executable, facts.system.gpudoctor_python = "/envs/train/bin/python", "/usr/bin/python3"
    commands = [step for code in ("driver-too-old", "recommendation") for step in finding(facts, code).fix
                if "install torch" in step]
    assert commands and all("/envs/train/bin/python -m pip install torch" in step for step in commands)


def gtx_1070_with(torch_version, cuda, driver="580.65.06", driver_cuda=13000):
    # No live arch list and no fat binaries read: only the compat table can say what the build carries.
    facts = with_framework(gpu_machine(count=1, name="NVIDIA GeForce GTX 1070", cc="6.1", driver=driver,
                                       cuda=driver_cuda), "torch", torch_version, cuda=cuda)
    facts.system.python_version = "3.12.3"
    return facts


def test_pascal_gpu_below_the_supported_range_of_a_variant_with_no_sourced_arch_list():
    # torch 2.8.0's own torch/cuda/__init__.py: CUDA_ARCHES_SUPPORTED "12.9": {"min": 70, "max": 120}
    found = finding(gtx_1070_with("2.8.0+cu129", "12.9"), "gpu-arch-unsupported")
    assert "supports compute capability 7.0 to 12.0 only" in found.detail
    assert "GTX 1070 (compute capability 6.1) is below it" in found.detail
    assert "CUDA_ARCHES_SUPPORTED" in found.detail and found.evidence["capability_range"] == ["7.0", "12.0"]
    assert "torch-2.8.0-cp312-cp312-manylinux_2_28_x86_64.whl" in found.evidence["source"]
    # the fix is a build whose sourced arch list has Pascal kernels (6.0 SASS runs on 6.1), never a range-only one
    assert "(cu126)" in found.fix[0] and "pip install torch==" in found.fix[0]
    assert "torch==2.8.0 " not in found.fix[0]


def test_a_gpu_inside_the_supported_range_is_not_called_unsupported_without_a_list():
    # 2.8.0 cu126 supports 5.0 to 9.0 by its own table, but no list is sourced: no verdict either way
    assert "gpu-arch-unsupported" not in problems(gtx_1070_with("2.8.0+cu126", "12.6"))
