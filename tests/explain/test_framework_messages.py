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
    # the wheel's own libnvJitLink sits beside it: the older one that answered is another copy found first
    assert f.code == "multiple-cuda-installs"
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


# ---- read from the blind sets independent31-33 (stop 21) ----

def test_a_flash_attn_style_setup_refusing_the_nvcc_is_the_extension_toolkit():
    f = first("      RuntimeError: mamba_ssm is only supported on CUDA 11.6 and above.  Note: make sure nvcc has a "
              "supported version by running nvcc -V.\n      torch.__version__  = 1.13.1\n      CUDA_HOME = /usr\n")
    assert f.code == "extension-cuda-mismatch"
    assert "mamba_ssm" in f.title and "CUDA_HOME = /usr" in f.title
    # the generic wording names no package: the title does not invent one
    assert "package needs" not in first("RuntimeError: package is only supported on CUDA 11.6 and above.").title


def test_tensorflow_gpu_211_beside_the_212_placeholder_is_the_ended_package():
    f = first("ERROR: Could not find a version that satisfies the requirement tensorflow-gpu==2.11 (from versions: "
              "2.9.0, 2.10.0, 2.10.1, 2.12.0)\nERROR: No matching distribution found for tensorflow-gpu==2.11")
    assert f.code == "package-removed" and "up to 2.10.1" in f.detail
    # a release that exists but not for this interpreter stays an install failure of the Python or platform
    assert first("ERROR: Could not find a version that satisfies the requirement tensorflow-gpu==2.10.0 (from "
                 "versions: 2.12.0)").code != "package-removed"


def test_paddles_own_arch_warning_is_the_wheel_without_the_gpu():
    f = first("W0831 17:08:58.996548 1851646 gpu_resources.cc:96] The GPU architecture in your current machine is "
              "Pascal, which is not compatible with Paddle installation with arch: 70 75 80 86 , it is recommended to "
              "install the corresponding wheel package")
    assert f.code == "gpu-arch-unsupported" and "Pascal" in f.title and "70 75 80 86" in f.title


def test_a_cudnn_dll_of_another_major_than_the_stated_cudnn_is_the_version():
    log = ("CUDA：11.3\nCUDNN：8.9.1\nRuntimeError: (PreconditionNotMet) The third-party dynamic library "
           "(cudnn64_7.dll) that Paddle depends on is not configured correctly. (error code is 126)")
    f = first(log)
    assert f.code == "cudnn-version-mismatch" and "cudnn64_7.dll" in f.detail and ".so." not in f.detail
    # without a stated cuDNN it stays the DLL that cannot be loaded
    assert first(log.split("\n", 2)[2]).code == "dll-load-failed"


def test_an_attribute_missing_on_a_plain_value_is_the_program():
    f = first("  File \"tools/../ppocr/data/rec/dataset_traversal.py\", line 241, in get_device_num\n"
              "    gpu_num = len(gpus.split(','))\nAttributeError: 'int' object has no attribute 'split'")
    assert f.code == "not-environment" and ".split" in f.title
    # h5py 3 under an old Keras prints the same shape for str.decode: not read as the program's bug
    assert "not-environment" not in [g.code for g in explain_text(
        "AttributeError: 'str' object has no attribute 'decode'").findings]


def test_paddlepaddle_with_no_wheel_for_the_platform_is_an_install_failure():
    f = first("ERROR: Could not find a version that satisfies the requirement paddlepaddle==2.0.2 (from versions: "
              "none)\nERROR: No matching distribution found for paddlepaddle==2.0.2")
    assert f.code == "no-matching-build"


def test_a_machine_said_to_have_no_gpu_is_the_hardware():
    docker = 'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].\n'
    assert first(docker + "但我是Linux服务器，没有GPU，只有CPU\n").code == "no-nvidia-gpu"
    assert first(docker + "My server has no GPU, only a CPU.\n").code == "no-nvidia-gpu"
    # a log that names an NVIDIA GPU keeps the container's own cause
    assert first(docker + "I don't have a GPU here... wait, nvidia-smi shows NVIDIA GeForce RTX 3090\n"
                 ).code == "container-no-gpu-access"
    # "No CUDA GPUs are available" is the program's symptom, not a statement about the machine
    assert first("CUDA_VISIBLE_DEVICES=1 python train.py\nRuntimeError: No CUDA GPUs are available").code != \
        "no-nvidia-gpu"


# ---- other tools' own messages (stop 21) ----

def test_nvcc_failing_on_gcc_11_headers_is_the_host_compiler():
    f = first("/usr/include/c++/11/bits/std_function.h:435:145: error: parameter packs not expanded with '...':\n"
              "  435 |         function(_Functor&& __f)")
    assert f.code == "host-compiler-unsupported" and "GCC 11" in f.title
    assert any("g++-10" in step for step in f.fix)


def test_nccl_out_of_memory_is_the_gpu_memory():
    f = first("ncclUnhandledCudaError: Call to CUDA function failed.\nLast error:\nCuda failure 'out of memory'")
    assert f.code == "gpu-memory-full" and any("set_device" in step for step in f.fix)
    assert first("[rank0]: Cuda failure 2 'out of memory'").code == "gpu-memory-full"


def test_numbas_driver_and_nvvm_messages_name_the_missing_library():
    assert first("numba.cuda.cudadrv.error.CudaSupportError: Error at driver init: CUDA driver library cannot be "
                 "found. If you are sure that a CUDA driver is installed, try setting environment variable "
                 "NUMBA_CUDA_DRIVER").code == "libcuda-missing"
    assert first("numba.cuda.cudadrv.error.NvvmSupportError: libNVVM cannot be found. Do `conda install "
                 "cudatoolkit`:\nlibrary nvvm not found").code == "cuda-library-missing"


def test_several_cupy_packages_are_named():
    f = first("UserWarning: ----\n\n  CuPy may not function correctly because multiple CuPy packages are installed\n"
              "  in your environment:\n\n    cupy-cuda11x, cupy-cuda12x\n")
    assert f.code == "conflicting-packages" and "cupy-cuda11x, cupy-cuda12x" in f.title


def test_deepspeed_without_cuda_home_is_the_extension_toolkit():
    assert first("deepspeed.ops.op_builder.builder.MissingCUDAException: CUDA_HOME does not exist, unable to compile "
                 "CUDA op(s)").code == "extension-cuda-mismatch"


def test_gpus_too_old_for_triton_are_the_generation_and_bfloat16_on_them_is_the_programs_dtype():
    f = first("RuntimeError: Found Tesla P100-PCIE-16GB which is too old to be supported by the triton GPU compiler, "
              "which is used as the backend. Triton only supports devices of CUDA Capability >= 7.0, but your device "
              "is of CUDA capability 6.0")
    assert f.code == "gpu-arch-unsupported" and "Tesla P100-PCIE-16GB" in f.title and "6.0" in f.title
    g = first("ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 "
              "GPU has compute capability 7.5. You can use float16 instead by explicitly setting the`dtype` flag")
    # the install is sound and the GPU runs the model in float16: the dtype the program asks for is the fix (stop 25:
    # a blind set labels vLLM's bfloat16 check on a V100 the program's setting)
    assert g.code == "not-environment" and any("--dtype half" in step for step in g.fix)


def test_a_missing_nvcuda_dll_is_the_driver_not_a_dll_search_path():
    f = first("FileNotFoundError: Could not find module 'C:\\Windows\\System32\\nvcuda.dll' (or one of its "
              "dependencies). Try using the full path with constructor syntax.")
    assert f.code == "libcuda-missing"
    assert errors("FileNotFoundError: Could not find module 'nvcuda.dll' (or one of its dependencies).") == \
        ["libcuda-missing"]
    # any other DLL keeps the DLL search-path reading
    assert first("FileNotFoundError: Could not find module 'C:\\venv\\Lib\\site-packages\\llama_cpp\\lib\\llama.dll' "
                 "(or one of its dependencies).").code == "dll-load-failed"


# ---- read from the blind sets independent34-35 (stop 21) ----

def test_torch_seeing_no_gpu_on_native_windows_is_pips_cpu_build():
    log = ("Python 3.10.11 (tags/v3.10.11:7d4cc5a, Apr  5 2023, 00:38:17) [MSC v.1929 64 bit (AMD64)] on win32\n"
           ">>> import torch\n>>> print(torch.cuda.is_available())\nFalse\n")
    f = first(log)
    assert f.code == "cpu-only-build" and any("--index-url" in step for step in f.fix)
    # a True answer is no failure at all, and a CUDA index in the log is another story
    assert errors(log.replace("False", "True")) == []
    assert "native Windows" not in " ".join(
        f.title for f in explain_text(log + "pip install torch --index-url https://download.pytorch.org/whl/cu121\n").findings)


def test_torchs_min_max_capability_warning_is_the_generation():
    f = first("Found GPU0 NVIDIA GeForce GTX 1070 which is of cuda capability 6.1.\n"
              "Minimum and Maximum cuda capability supported by this version of PyTorch is\n(7.0) - (12.0)\n")
    assert f.code == "gpu-arch-unsupported" and "GTX 1070" in f.title and "6.1" in f.title


def test_a_shell_that_cannot_find_cuda_homes_nvcc_is_the_extension_toolkit():
    f = first("/bin/sh: 1: :/usr/local/cuda-10.2/bin/nvcc: not found")
    assert f.code == "extension-cuda-mismatch" and ":/usr/local/cuda-10.2/bin/nvcc" in f.title


def test_compilers_newer_than_the_toolkit_are_the_host_compiler():
    f = first("RuntimeError: The current installed version of x86_64-linux-gnu-g++ (11.3.0) is greater than the maximum "
              "required version by CUDA 11.3 (10.0.0). Please make sure to use an adequate version of "
              "x86_64-linux-gnu-g++ (>=5.0.0, <=10.0.0).")
    assert f.code == "host-compiler-unsupported" and "11.3.0" in f.title and "10.0.0" in f.title
    assert first("/usr/include/string.h:652:42: error: ‘memcpy’ was not declared in this scope").code == \
        "host-compiler-unsupported"
    # the same C++ error in the program's own file is not the toolchain
    assert "host-compiler-unsupported" not in errors("src/model.cpp:12:5: error: ‘memcpy’ was not declared in this "
                                                     "scope")


def test_tensorflows_peer_access_note_is_harmless():
    assert errors("tensorflow/core/common_runtime/gpu/gpu_init.cc:45] cannot enable peer access from device ordinal "
                  "0 to device ordinal 2") == []
