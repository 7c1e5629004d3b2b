"""Readings of messages the frameworks and tools print themselves, taken from their sources (stop 21): TensorFlow's
own native-Windows warning, PyTorch's OOM numbers when NVML lists this process under another PID, JAX's plugin
check in its short wording, a CPU torch under a CUDA torchvision (libc10_cuda.so), an older libnvJitLink, NVRTC
without the GPU's architecture, the CUTLASS attention kernels' own arch guard, XLA's 'requires ptxas version',
Python's None printed for CUDA_VISIBLE_DEVICES, and Ultralytics' device check. Each reading is checked next to the
log that must not get it."""

from __future__ import annotations

from gpudoctor.explain import explain_text
from gpudoctor.model import Severity
from tests.explain.readings import errors, first


def test_tensorflows_own_native_windows_warning_is_the_platform():
    f = first("WARNING:tensorflow:TensorFlow GPU support is not available on native Windows for TensorFlow >= 2.11. "
              "Even if CUDA/cuDNN are installed, GPU will not be used. Please use WSL2 or the TensorFlow-DirectML "
              "plugin.\n[]")
    assert f.code == "platform-unsupported" and f.severity == Severity.ERROR
    assert any("WSL2" in step for step in f.fix)


def test_a_torch_oom_where_pytorch_holds_nothing_is_another_process():
    f = first("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of "
              "23.64 GiB of which 3.56 MiB is free. Process 1234 has 23.62 GiB memory in use. Of the allocated memory "
              "0 bytes is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated.")
    assert f.code == "gpu-memory-full"
    assert "24207 MiB" in f.detail  # 23.64 GiB held outside the process, in the detail's numbers


def test_a_torch_oom_where_pytorch_holds_the_memory_stays_the_program():
    f = first("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 MiB. GPU 0 has a total capacity of "
              "8.00 GiB of which 0 bytes is free. Process 1234 has 7.90 GiB memory in use. Of the allocated memory "
              "7.40 GiB is allocated by PyTorch, and 3.16 MiB is reserved by PyTorch but unallocated.")
    assert f.code == "not-environment"


def test_jax_plugin_check_in_its_short_wording_names_both_versions():
    f = first("RuntimeError: Unable to initialize backend 'cuda': JAX plugin jax_cuda12_plugin version 0.7.2 is not "
              "compatible with jaxlib version 0.8.1")
    assert f.code == "conflicting-packages"
    assert "0.7.2" in f.title + f.detail and "0.8.1" in f.title + f.detail


def test_a_cuda_torchvision_on_a_cpu_torch_misses_libc10_cuda():
    f = first("UserWarning: Failed to load image Python extension: libc10_cuda.so: cannot open shared object file: "
              "No such file or directory")
    assert f.code == "cpu-only-build" and "libc10_cuda.so" in f.title
    # torchvision's image extension built for another torch is the companion, not a CPU build
    assert first("UserWarning: Failed to load image Python extension: /usr/lib/python3/site-packages/torchvision/"
                 "image.so: undefined symbol: _ZN3c106detail19maybe_wrap_dim_slowEllb").code == "conflicting-packages"


def test_an_older_nvjitlink_loaded_first_is_the_cuda_on_the_path():
    f = first("ImportError: /usr/local/lib/python3.10/dist-packages/torch/lib/../../nvidia/cusparse/lib/"
              "libcusparse.so.12: undefined symbol: __nvJitLinkAddData_12_1, version libnvJitLink.so.12")
    assert f.code == "cuda-version-mismatch"
    assert "12.1" in f.detail and any("nvidia.nvjitlink.lib" in step for step in f.fix)
    # a missing libnvJitLink is a missing library, not an older one
    assert first("ImportError: libnvJitLink.so.12: cannot open shared object file: No such file or "
                 "directory").code == "cuda-library-missing"


def test_nvrtc_without_the_gpus_architecture_is_a_build_older_than_the_gpu():
    f = first("RuntimeError: nvrtc: error: invalid value for --gpu-architecture (-arch)")
    assert f.code == "gpu-arch-unsupported"
    # NVRTC unable to find its builtins library is a missing file, not the architecture
    assert first("RuntimeError: nvrtc: error: failed to open libnvrtc-builtins.so.11.1.").code == "cuda-library-missing"


def test_the_attention_kernels_arch_guard_is_a_build_without_the_gpus_architecture():
    f = first("FATAL: kernel `fmha_cutlassF_f32_aligned_64x64_rf_sm80` is for sm80-sm100, but was built for sm37")
    assert f.code == "gpu-arch-unsupported"
    assert "sm80-sm100" in f.title and "sm37" in f.title


def test_xla_requiring_a_newer_ptxas_is_an_old_ptxas_first_on_the_path():
    f = first("jaxlib.xla_extension.XlaRuntimeError: INTERNAL: XLA requires ptxas version 11.8 or higher")
    assert f.code == "ptxas-too-old" and "11.8" in f.title
    assert first("jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Couldn't get ptxas version string: INTERNAL: "
                 "Couldn't invoke ptxas --version").code == "ptxas-missing"


ULTRALYTICS = ("ValueError: Invalid CUDA 'device=1' requested. Use 'device=cpu' or pass valid CUDA device(s) if "
               "available, i.e. 'device=0' or 'device=0,1,2,3' for Multi-GPU.\n\n"
               "torch.cuda.is_available(): {available}\ntorch.cuda.device_count(): {count}\n"
               "os.environ['CUDA_VISIBLE_DEVICES']: None\n")


def test_pythons_none_for_cuda_visible_devices_is_unset_not_the_word_none():
    assert "invalid-visible-devices" not in [f.code for f in explain_text(ULTRALYTICS.format(
        available="True", count=1)).findings]
    assert first("CUDA_VISIBLE_DEVICES=none python train.py\nRuntimeError: No CUDA GPUs are "
                 "available").code == "invalid-visible-devices"


def test_ultralytics_asking_for_a_device_beyond_the_count_is_the_ordinal():
    f = first(ULTRALYTICS.format(available="True", count=1))
    assert f.code == "invalid-device-ordinal" and "device 1" in f.title and "1 GPU" in f.title
    # no GPU seen at all: the index is not the cause, and no ordinal is named
    assert "invalid-device-ordinal" not in errors(ULTRALYTICS.format(available="False", count=0)
                                                  + "Ultralytics YOLOv8.1.3 Python-3.10.11 torch-2.1.0+cpu\n")
