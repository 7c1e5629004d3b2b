"""Readings added from the blind sets of 2026-11-24: tools' own GPU discovery (Ollama, vLLM, the web UI),
conda's Python conflict report, the Mac a pip list comes from, and the context that turns a failure into
its cause (a compose file without a GPU reservation, graphics that are not NVIDIA, WSL 2's plain libcuda.so,
an optional library's missing dependency). Each reading is checked next to the log that must not get it."""

from __future__ import annotations

import pytest

from gpudoctor.explain import explain_text
from gpudoctor.model import Severity
from tests.explain.readings import first


def causes(text: str):
    """(code, severity) of each root cause, the order explain gives them."""
    return [(f.code, f.severity) for f in explain_text(text).findings if f.caused_by is None]


OLLAMA_SYMBOL = ('time=2024-07-04T17:13:20.135+08:00 level=DEBUG source=gpu.go:385 msg="Unable to load nvcuda" '
                 'library=/usr/lib64/libcuda.so.418.74 error="symbol lookup for cuCtxCreate_v3 failed: '
                 '/usr/lib64/libcuda.so.418.74: undefined symbol: cuCtxCreate_v3"')


def test_a_libcuda_without_a_versioned_entry_point_is_a_driver_too_old():
    f = first(OLLAMA_SYMBOL)
    assert f.code == "driver-too-old" and f.severity == Severity.ERROR
    assert "cuCtxCreate_v3" in f.title and "libcuda.so.418.74" in f.detail


def test_the_same_words_about_another_library_are_not_the_driver():
    log = "OSError: /opt/app/libfoo.so: undefined symbol: cuCtxCreate_v3"
    assert ("driver-too-old", Severity.ERROR) not in causes(log)


def test_ollama_windows_symbol_and_cudart_lines_are_one_driver_finding():
    log = ('msg="unable to load cuda driver library" library=C:\\WINDOWS\\system32\\nvcuda.dll '
           'error="symbol lookup for cuCtxCreate_v3 failed: The specified procedure could not be found."\n'
           'msg="Unable to load cudart" library=C:\\Users\\user\\AppData\\Local\\Programs\\Ollama\\lib\\ollama\\'
           'cudart64_12.dll error="your nvidia driver is too old or missing.  If you have a CUDA GPU please '
           'upgrade to run ollama"')
    assert [code for code, _ in causes(log)] == ["driver-too-old"]


@pytest.mark.parametrize("number, code", [("3", "cuda-init-failed"), ("999", "uvm-not-loaded"),
                                          ("35", "driver-too-old"), ("100", "no-visible-gpu")])
def test_ollamas_init_failure_number_is_read_as_that_cuda_error(number, code):
    log = (f'msg="Unable to load cudart library /usr/lib/x86_64-linux-gnu/libcuda.so.575.57.08: '
           f'cuda driver library init failure: {number}"')
    assert first(log).code == code


COMPOSE = """services:
  llm:
    image: 'ollama/ollama:0.1.30'
{gpu}
msg="Unable to load cudart CUDA management library /tmp/ollama/runners/cuda_v11/libcudart.so.11.0: cudart init failure: 35"
"""
RESERVATION = """    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              count: all
              capabilities: [gpu]"""


def test_a_compose_service_without_a_gpu_reservation_is_the_container():
    f = first(COMPOSE.format(gpu=""))
    assert f.code == "container-no-gpu-access"
    assert any("capabilities: [gpu]" in step for step in f.fix)


def test_a_compose_service_that_reserves_the_gpu_is_not_blamed():
    assert first(COMPOSE.format(gpu=RESERVATION)).code == "driver-too-old"


DOCKER_NO_DRIVER = 'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].'


@pytest.mark.parametrize("graphics", ["Graphics Mesa Intel® Xe Graphics (TGL GT2)",
                                      "00:02.0 VGA compatible controller [0300]: VMware SVGA II Adapter [15ad:0405]",
                                      "GPU: AMD Radeon RX 6800 XT"])
def test_graphics_that_are_not_nvidia_are_the_cause(graphics):
    f = first(DOCKER_NO_DRIVER + "\n" + graphics)
    assert f.code == "no-nvidia-gpu" and f.severity == Severity.ERROR


def test_intel_graphics_next_to_a_named_nvidia_gpu_are_a_laptop_not_the_cause():
    log = DOCKER_NO_DRIVER + "\nGraphics: Intel UHD Graphics 630\nGPU 1: NVIDIA GeForce GTX 1650"
    assert first(log).code == "container-no-gpu-access"


CUDNN_PLAIN = ("Could not load library libcudnn_cnn_infer.so.8. Error: libcuda.so: cannot open shared object file: "
               "No such file or directory")


def test_cudnns_plain_libcuda_failure_alone_is_read_as_wsl():
    f = first(CUDNN_PLAIN)
    assert f.code == "wsl-driver-misconfigured"
    assert any("/usr/lib/wsl/lib" in step for step in f.fix)


def test_cudnns_plain_libcuda_failure_in_a_container_is_the_container():
    assert first("docker run -it myimage python train.py\n" + CUDNN_PLAIN).code == "container-no-gpu-access"


def test_a_missing_dependency_of_an_optional_library_is_a_note():
    log = ("W tensorflow/stream_executor/platform/default/dso_loader.cc:55] Could not load dynamic library "
           "'libnvinfer_plugin.so.6'; dlerror: libnvrtc.so.10.1: cannot open shared object file: No such file "
           "or directory")
    result = explain_text(log)
    assert not [f for f in result.findings if f.severity == Severity.ERROR]
    assert any("optional libnvinfer_plugin.so.6" in n.meaning for n in result.notes)


def test_the_same_missing_library_for_a_needed_one_is_an_error():
    log = ("W tensorflow/stream_executor/platform/default/dso_loader.cc:55] Could not load dynamic library "
           "'libcudart.so.10.1'; dlerror: libcudart.so.10.1: cannot open shared object file: No such file or directory")
    f = first(log)
    assert f.code == "cuda-library-missing" and f.severity == Severity.ERROR


CONDA_PYTHON_CONFLICT = """conda create -n nightly -c pytorch-nightly python==3.11.0 pytorch
UnsatisfiableError: The following specifications were found to be incompatible with each other:

Package python conflicts for:
python==3.11.0
pytorch -> python[version='>=3.10,<3.11.0a0|>=3.8,<3.9.0a0|>=3.9,<3.10.0a0',build=*_cpython]
"""


def test_condas_python_conflict_names_the_pythons_the_builds_need():
    f = first(CONDA_PYTHON_CONFLICT)
    assert f.code == "python-unsupported"
    assert "3.8, 3.9, 3.10" in f.detail and "3.11.0" in f.title


def test_a_python_inside_the_conflict_ranges_stays_an_unsolvable_environment():
    log = CONDA_PYTHON_CONFLICT.replace("python==3.11.0", "python==3.10.4")
    assert first(log).code == "no-matching-build"


NOT_FOUND = ("ERROR: Could not find a version that satisfies the requirement {req} (from versions: {versions})\n"
             "ERROR: No matching distribution found for {req}\n")


def test_torch_releases_that_stop_at_2_2_are_an_intel_mac():
    f = first(NOT_FOUND.format(req="torch==2.3.1", versions="2.0.1, 2.1.0, 2.1.2, 2.2.0, 2.2.1, 2.2.2"))
    assert f.code == "no-matching-build" and "Intel" in f.title
    assert any("torch==2.2.2" in step for step in f.fix)


def test_no_torch_at_all_on_apple_silicon_is_the_python():
    log = NOT_FOUND.format(req="torch", versions="none") + (
        "OS: macOS 15.1.1 (arm64)\nPython version: 3.13.0 (main, Oct  7 2024, 05:02:14) [Clang 16.0.0] (64-bit runtime)")
    assert first(log).code == "python-unsupported"


def test_no_torch_at_all_on_a_mac_seen_through_a_cuda_index_is_not_blamed_on_the_python():
    # stop 19 reads a bare '(from versions: none)' for torch as the Python (the blind sets' confirmed cause of
    # it, test_companions_and_platforms.py); a CUDA index with no sign of Windows may be a Mac, which has none
    log = "(env) me@MY-MBP app % pip install torch --index-url https://example.invalid/whl/cu118\n"
    assert first(log + NOT_FOUND.format(req="torch", versions="none")).code == "no-matching-build"


def test_vllms_start_up_memory_check_is_memory_held_elsewhere():
    log = ("ValueError: Free memory on device cuda:0 (0.49/79.32 GiB) on startup is less than desired GPU memory "
           "utilization (0.6, 47.59 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.")
    f = first(log)
    assert f.code == "gpu-memory-full" and "0.49" in f.title


@pytest.mark.parametrize("line, code", [
    ("RuntimeError: Torch is not able to use GPU; add --skip-torch-cuda-test to COMMANDLINE_ARGS variable to disable "
     "this check", "framework-gpu-not-detected"),
    ("RuntimeError: Failed to infer device type", "framework-gpu-not-detected"),
    ("warning : CUDA driver version is 11020, expected at least 11040.", "driver-too-old"),
    ("AttributeError: /opt/cuda-12.1/lib64/stubs/libcuda.so: undefined symbol: _undef", "libcuda-missing"),
    ("Device mapping: no known devices.", "cpu-only-build"),
    ("NameError: name '_C' is not defined", "extension-cuda-mismatch"),
    ("luajit: .../share/lua/5.1/fairseq/clib/init.lua:43: assertion failed!", "not-environment"),
])
def test_each_tools_own_words(line, code):
    assert first(line).code == code


def test_jax_cpu_fallback_while_the_program_trains_is_harmless():
    log = ('"An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed. Falling back '
           'to cpu."\nHowever, I am able to train despite "falling back to the CPU".')
    assert not [f for f in explain_text(log).findings if f.severity in (Severity.ERROR, Severity.WARNING)]


def test_jax_cpu_fallback_alone_is_still_a_cpu_only_build():
    log = "An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed. Falling back to cpu."
    assert first(log).code == "cpu-only-build"


def test_the_drivers_ptx_jit_refusing_newer_ptx_is_the_driver_not_ptxas():
    log = ("unknown CUDA error when building module for bounds program kernel CUDA_ERROR_UNSUPPORTED_PTX_VERSION log: "
           "ptxas application ptx input, line 9; fatal   : Unsupported .version 8.5; current version is '8.4'")
    assert [code for code, _ in causes(log)] == ["driver-too-old"]


def test_a_standalone_ptxas_refusing_newer_ptx_is_ptxas():
    assert first("ptxas fatal   : Unsupported .version 8.5; current version is '8.4'").code == "ptxas-too-old"


XLA_SERIAL = ("W external/xla/xla/service/gpu/nvptx_compiler.cc:744] The NVIDIA driver's CUDA version is 12.2 which is "
              "older than the ptxas CUDA version (12.3.107). Because the driver is older than the ptxas version, XLA is "
              "disabling parallel compilation, which may slow down compilation.")


def test_xla_serial_compilation_is_a_warning_until_jax_shows_it_uses_the_gpu():
    assert (first(XLA_SERIAL).code, first(XLA_SERIAL).severity) == ("driver-too-old", Severity.WARNING)
    working = XLA_SERIAL + "\njax.devices (1 total, 1 local): [cuda(id=0)]"
    assert not [f for f in explain_text(working).findings if f.severity in (Severity.ERROR, Severity.WARNING)]


MISSING_CUDNN8 = ("Could not load library libcudnn_ops_infer.so.8. Error: libcudnn_ops_infer.so.8: cannot open shared "
                  "object file: No such file or directory")


def test_a_missing_cudnn_of_one_major_with_another_installed_is_a_mismatch():
    f = first(MISSING_CUDNN8 + "\nI have installed cudnn-9.2 as per Nvidia's official instructions.")
    assert f.code == "cudnn-version-mismatch" and "9.2" in f.title


def test_a_missing_cudnn_with_the_same_major_installed_stays_missing():
    assert first(MISSING_CUDNN8 + "\nI have installed cudnn 8.9.7").code == "cudnn-missing"


TF_UNNAMED = ("W tensorflow/core/common_runtime/gpu/gpu_device.cc:2251] Cannot dlopen some GPU libraries. Please make "
              "sure the missing libraries mentioned above are installed properly if you would like to use GPU.")


def test_tensorflows_unnamed_missing_libraries_alone_are_the_cause():
    f = first(TF_UNNAMED)
    assert f.code == "cuda-library-missing" and f.caused_by is None


def test_tensorflows_unnamed_missing_libraries_follow_a_named_cause():
    log = ("Could not load dynamic library 'libcudnn.so.8'; dlerror: libcudnn.so.8: cannot open shared object file: "
           "No such file or directory\n" + TF_UNNAMED)
    result = explain_text(log)
    assert [f.code for f in result.findings if f.caused_by is None and f.severity == Severity.ERROR] == ["cudnn-missing"]
