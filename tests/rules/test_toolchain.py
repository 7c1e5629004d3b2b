"""Building CUDA extensions and compiling kernels: what a person who builds meets, from facts."""

from __future__ import annotations

from gpudoctor.facts.frameworks import FrameworkFacts, FrameworkStatic, PinCheck
from gpudoctor.facts.libraries import ToolchainFacts, ToolFacts
from tests.factories import codes, finding, gpu_machine


def with_torch(facts, version="2.5.1+cu118", cuda="11.8"):
    facts.frameworks.frameworks["torch"] = FrameworkFacts(
        "torch", FrameworkStatic("torch", True, "torch", version, "/site/torch", "cuda", cuda))
    return facts


def toolchain(nvcc_version="12.4.131", via="PATH", compiler=("gcc", "12.2.0"), ninja=True, toolkits=None):
    return ToolchainFacts(
        extension_nvcc=ToolFacts("nvcc", "/usr/local/cuda-12.4/bin/nvcc", nvcc_version, None, via)
        if nvcc_version else ToolFacts("nvcc", "/opt/cuda/bin/nvcc", None, "/opt/cuda/bin/nvcc does not exist", via),
        cuda_home="/usr/local/cuda-12.4", host_compiler=ToolFacts(compiler[0], "/usr/bin/c++", compiler[1], None, "PATH"),
        ninja=ToolFacts("ninja", "/usr/bin/ninja", None, None, "PATH") if ninja else ToolFacts("ninja", error="not on PATH"),
        toolkits=toolkits or {}, checked=True)


def test_nvcc_12_next_to_a_cu118_torch_is_a_warning_naming_both_versions():
    facts = with_torch(gpu_machine(1))
    facts.libraries.toolchain = toolchain()
    f = finding(facts, "extension-cuda-mismatch")
    assert f.severity.value == "warning"
    assert "CUDA 11.8" in f.detail and "12.4.131" in f.detail and "refuses" in f.detail
    assert f.title == "nvcc is CUDA 12.4, PyTorch was built with CUDA 11.8"
    assert any("CUDA 11.8 toolkit" in step for step in f.fix)


def test_a_matching_toolkit_already_installed_is_the_fix():
    facts = with_torch(gpu_machine(1))
    facts.libraries.toolchain = toolchain(toolkits={"/usr/local/cuda-11.8": "11.8.89", "/usr/local/cuda-12.4": "12.4.131"})
    assert finding(facts, "extension-cuda-mismatch").fix == ["export CUDA_HOME=/usr/local/cuda-11.8"]


def test_a_minor_difference_is_only_information():
    facts = with_torch(gpu_machine(1), "2.5.1+cu124", "12.4")
    facts.libraries.toolchain = toolchain("12.6.85")
    assert finding(facts, "extension-cuda-mismatch").severity.value == "info"


def test_the_same_cuda_is_silent_and_no_toolkit_is_not_a_finding():
    facts = with_torch(gpu_machine(1), "2.5.1+cu124", "12.4")
    facts.libraries.toolchain = toolchain("12.4.131")
    assert "extension-cuda-mismatch" not in codes(facts)
    facts.libraries.toolchain = ToolchainFacts(checked=True)
    assert not {"extension-cuda-mismatch", "ninja-missing", "host-compiler-unsupported"} & set(codes(facts))


def test_cuda_home_without_bin_nvcc():
    facts = with_torch(gpu_machine(1))
    facts.libraries.toolchain = toolchain(None, via="CUDA_HOME")
    f = finding(facts, "extension-cuda-mismatch")
    assert f.title == "CUDA_HOME points at a folder without bin/nvcc" and "/opt/cuda/bin/nvcc" in f.detail


def test_gcc_13_with_nvcc_12_1_is_refused_and_the_fix_names_gcc_12():
    facts = with_torch(gpu_machine(1), "2.1.2+cu121", "12.1")
    facts.libraries.toolchain = toolchain("12.1.105", compiler=("gcc", "13.2.0"))
    f = finding(facts, "host-compiler-unsupported")
    assert "gcc 13.2.0" in f.detail and "< 13.0" in f.detail
    assert f.fix[-1] == "export CC=gcc-12 CXX=g++-12 NVCC_CCBIN=g++-12"


def test_a_compiler_inside_the_range_or_an_unknown_cuda_is_silent():
    facts = with_torch(gpu_machine(1), "2.1.2+cu121", "12.1")
    facts.libraries.toolchain = toolchain("12.1.105", compiler=("gcc", "12.2.0"))
    assert "host-compiler-unsupported" not in codes(facts)
    facts.libraries.toolchain = toolchain("10.2.89", compiler=("gcc", "13.2.0"))  # not in the table: no guess
    assert "host-compiler-unsupported" not in codes(facts)


def test_ninja_missing_where_extensions_can_be_built():
    facts = with_torch(gpu_machine(1), "2.5.1+cu124", "12.4")
    facts.libraries.toolchain = toolchain("12.4.131", ninja=False)
    assert finding(facts, "ninja-missing").fix == ["pip install ninja"]


def jax_with_ptxas(ptxas_version, pin_satisfied=False, via="PATH"):
    facts = gpu_machine(1)
    facts.frameworks.packages = {"jax": "0.4.30", "jax-cuda12-plugin": "0.4.30"}
    facts.frameworks.pins = [PinCheck("jax-cuda12-plugin", "nvidia-cuda-nvcc-cu12>=12.1.105; extra == 'with-cuda'",
                                      "nvidia-cuda-nvcc-cu12", ">=12.1.105", "with-cuda",
                                      "12.6.77" if pin_satisfied else None, True if pin_satisfied else None)]
    facts.libraries.tools = [ToolFacts("ptxas", "/usr/local/cuda-11.8/bin/ptxas", ptxas_version, None, via),
                             ToolFacts("nvlink", "/usr/local/cuda-11.8/bin/nvlink", ptxas_version, None, via)]
    return facts


def test_a_ptxas_older_than_the_jax_pin_is_too_old():
    f = finding(jax_with_ptxas("11.8.89"), "ptxas-too-old")
    assert "12.1.105" in f.detail and "11.8.89" in f.detail
    assert f.fix[0] == 'pip install "nvidia-cuda-nvcc-cu12>=12.1.105"'


def test_a_satisfying_nvcc_wheel_or_a_new_ptxas_is_silent():
    assert "ptxas-too-old" not in codes(jax_with_ptxas("11.8.89", pin_satisfied=True))
    assert "ptxas-too-old" not in codes(jax_with_ptxas("12.4.131"))


def test_nvlink_missing_from_a_partial_toolkit_only():
    facts = jax_with_ptxas("12.4.131")
    facts.libraries.tools[1] = ToolFacts("nvlink", error="not found")
    assert "nvlink-missing" in codes(facts)
    facts.libraries.tools[0].found_via = "site-packages"  # the wheel carries ptxas alone: not a finding
    assert "nvlink-missing" not in codes(facts)
