"""Readings added from the blind and training sets of stop 19: a compiled package built for another CUDA
than the torch beside it, bitsandbytes without a CUDA library for this CUDA or platform, TensorFlow's CUDA
warnings on an AMD ROCm machine, torch's '(from versions: none)' on Windows with no Python in the log, a
container in which CUDA is not available, NVRTC's builtins DLL, PaddlePaddle's old cuDNN loader, an extension
built with the distribution's nvcc, cuDNN majors from `ldconfig -p`, tensorflow-gpu after 2.10, an install
said to bring the CPU build. Each reading is checked next to the log that must not get it."""

from __future__ import annotations

from gpudoctor.explain import explain_text
from gpudoctor.model import Severity
from tests.explain.readings import errors, first


CUDART_11 = "ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory"
CU121_INSTALL = ("pip install torch==2.2.2 torchvision==0.17.2 --index-url https://example.invalid/whl/cu121\n"
                 "pip install flash-attn\n")


def test_a_cuda_11_runtime_missing_beside_a_cu121_torch_is_a_package_built_for_cuda_11():
    f = first(CU121_INSTALL + "RuntimeError: Failed to import transformers.models.mistral.modeling_mistral because "
              "of the following error (look up to see its traceback):\n" + CUDART_11)
    assert f.code == "conflicting-packages" and f.severity == Severity.ERROR
    assert "CUDA 11" in f.title and "CUDA 12" in f.title
    assert f.evidence["torch_cuda_major"] == "12"
    assert any("Do not install the CUDA 11 runtime" in step for step in f.fix)


def test_the_same_missing_runtime_with_a_cu11_torch_is_the_library_itself():
    log = CU121_INSTALL.replace("cu121", "cu118") + CUDART_11
    assert first(log).code == "cuda-library-missing"


def test_the_same_missing_runtime_beside_tensorflow_is_tensorflows():
    log = CU121_INSTALL + "TensorFlow version: 2.10.0\n" + CUDART_11
    assert "conflicting-packages" not in errors(log)


def test_a_cuda_extension_module_asking_for_another_runtime_names_the_package():
    log = "---> 10 import flash_attn_2_cuda as flash_attn_cuda\n" + CUDART_11
    f = first(log)
    assert f.code == "conflicting-packages" and "flash_attn" in f.title


def test_the_runtime_missing_with_no_extension_in_the_log_is_the_library():
    assert first("import torch\n" + CUDART_11).code == "cuda-library-missing"


BNB_SETUP = """RuntimeError:
CUDA Setup failed despite GPU being available. Please run the following command to get more information:
python -m bitsandbytes
bin D:\\gpt\\venv\\lib\\site-packages\\bitsandbytes\\libbitsandbytes_cuda123.dll
CUDA SETUP: Detected CUDA version 123
"""


def test_bitsandbytes_without_a_cuda_library_of_its_own_is_its_release():
    f = first(BNB_SETUP)
    assert f.code == "conflicting-packages" and "bitsandbytes" in f.title
    assert any("pip install -U bitsandbytes" in step for step in f.fix)


def test_bitsandbytes_naming_the_missing_library():
    f = first("CUDA SETUP: Required library version not found: libbitsandbytes_cuda118.so. Maybe you need to compile "
              "it from source?")
    assert f.code == "conflicting-packages" and "libbitsandbytes_cuda118.so" in f.title


def test_bitsandbytes_setup_failure_after_a_missing_driver_library_is_its_symptom():
    log = ("CUDA SETUP: WARNING! libcuda.so not found! Do you have a CUDA driver installed?\n" + BNB_SETUP)
    findings = explain_text(log).findings
    assert findings[0].code == "libcuda-missing"
    assert next(f for f in findings if f.code == "conflicting-packages").caused_by == "libcuda-missing"


TF_DSO = ("2023-04-26 14:43:08.125994: W tensorflow/compiler/xla/stream_executor/platform/default/dso_loader.cc:64] "
          "Could not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object "
          "file: No such file or directory; LD_LIBRARY_PATH: {path}")


def test_tensorflows_cuda_warnings_on_a_rocm_machine_are_not_an_error():
    log = TF_DSO.format(path="/opt/rocm/lib64:/opt/rocm/lib:/opt/rocm/hip/lib")
    assert errors(log) == []
    assert first(log).severity == Severity.INFO and "ROCm" in first(log).title


def test_the_same_warning_with_cuda_paths_is_still_the_missing_library():
    assert errors(TF_DSO.format(path="/usr/lib/x86_64-linux-gnu")) == ["cuda-library-missing"]


def test_a_rocm_path_beside_an_nvidia_gpu_does_not_silence_cuda():
    log = TF_DSO.format(path="/opt/rocm/lib") + "\n|   0  NVIDIA GeForce RTX 3090    Off |"
    assert "cuda-library-missing" in errors(log)


WINDOWS_NONE = """(env) C:\\Users\\user>pip3 install torch torchvision torchaudio --index-url https://example.invalid/whl/cu121
ERROR: Could not find a version that satisfies the requirement torch (from versions: none)
ERROR: No matching distribution found for torch
"""


def test_torch_from_versions_none_on_windows_with_no_python_stated_is_the_python():
    f = first(WINDOWS_NONE)
    assert f.code == "python-unsupported"
    assert "every torch release publishes 64-bit wheels" in f.detail and "32" in f.detail


def test_the_same_on_a_32_bit_python_stays_no_matching_build():
    log = "Python 3.8.10 (tags/v3.8.10) [MSC v.1928 32 bit (Intel)] on win32\n" + WINDOWS_NONE
    assert first(log).code == "no-matching-build"


def test_the_same_from_a_cuda_index_with_no_sign_of_windows_may_be_a_mac():
    log = WINDOWS_NONE.replace("(env) C:\\Users\\user>", "$ ")
    assert first(log).code == "no-matching-build"


PLAIN_NONE = ("ERROR: Could not find a version that satisfies the requirement torch>=1.10.0 (from versions: none)\n"
              "ERROR: No matching distribution found for torch>=1.10.0\n")


def test_torch_from_versions_none_with_nothing_else_is_the_python():
    assert first(PLAIN_NONE).code == "python-unsupported"


def test_the_same_under_pypy_is_the_interpreter():
    assert first("$ pypy3 -m venv my_venv\n" + PLAIN_NONE).code == "no-matching-build"


def test_only_the_old_placeholder_offered_is_not_read_as_the_python():
    log = PLAIN_NONE.replace("(from versions: none)", "(from versions: 0.1.2, 0.1.2.post1, 0.1.2.post2)")
    assert first(log).code == "no-matching-build"


def test_the_same_on_a_windows_arm64_machine_is_its_architecture_not_the_python():
    log = '"platform_machine": "ARM64",\n' + WINDOWS_NONE
    assert first(log).code == "no-matching-build"


def test_cuda_not_available_inside_a_docker_image_is_the_containers_gpu_access():
    log = ("CUDA not found in docker image\nI pulled the official docker image but after installing all the "
           "dependencies, I'm getting torch.cuda.is_available() = False.")
    f = first(log)
    assert f.code == "container-no-gpu-access" and any("--gpus all" in step for step in f.fix)


def test_cuda_not_available_with_no_container_in_the_log_is_not_a_container():
    assert "container-no-gpu-access" not in errors("I'm getting torch.cuda.is_available() = False on my laptop.")


def test_cuda_not_available_in_a_container_started_with_gpus_is_not_its_gpu_access():
    log = ("$ docker run --gpus all -it myimage\ninside the docker container torch.cuda.is_available() = False")
    assert "container-no-gpu-access" not in errors(log)


def test_nvrtcs_builtins_dll_names_its_cuda_release():
    f = first("nvrtc: error: failed to open nvrtc-builtins64_116.dll.\n"
              "  Make sure that nvrtc-builtins64_116.dll is installed correctly.")
    assert f.code == "dll-load-failed" and "CUDA 11.6" in f.detail
    assert any("nvidia-cuda-nvrtc-cu11" in step for step in f.fix)


def test_nvrtcs_builtins_on_linux_stays_the_missing_library():
    assert first("RuntimeError: nvrtc: error: failed to open libnvrtc-builtins.so.11.1.").code == "cuda-library-missing"


def test_paddles_old_cudnn_loader_message_is_cudnn_missing():
    f = first("Error: Cannot load cudnn shared library. Cannot invoke method cudnnGetVersion at "
              "(/paddle/paddle/fluid/platform/dynload/cudnn.cc:63)")
    assert f.code == "cudnn-missing" and "cudnnGetVersion" in f.detail


def test_an_extension_built_with_the_distributions_nvcc_is_the_toolkit():
    f = first("No CUDA runtime is found, using CUDA_HOME='/usr'")
    assert f.code == "extension-cuda-mismatch" and any("export CUDA_HOME=/usr/local/cuda-" in s for s in f.fix)


def test_no_cuda_runtime_with_a_real_toolkit_is_only_a_warning():
    assert errors("No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'") == []
    assert first("No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'").severity == Severity.WARNING


LDCONFIG_9 = """Could not load library libcudnn_ops_infer.so.8. Error: libcudnn_ops_infer.so.8: cannot open shared object file: No such file or directory
ldconfig -p | grep libcudnn
        libcudnn_ops.so.9 (libc6,x86-64) => /lib/x86_64-linux-gnu/libcudnn_ops.so.9
        libcudnn_cnn.so.9 (libc6,x86-64) => /lib/x86_64-linux-gnu/libcudnn_cnn.so.9
"""


def test_a_cudnn_8_library_missing_where_ldconfig_lists_only_cudnn_9_is_the_major():
    f = first(LDCONFIG_9)
    assert f.code == "cudnn-version-mismatch" and "ldconfig -p" in f.detail and "cuDNN 9" in f.detail


def test_the_same_where_ldconfig_also_lists_cudnn_8_is_not_the_major():
    log = LDCONFIG_9 + "        libcudnn.so.8 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcudnn.so.8\n"
    assert first(log).code == "cudnn-missing"


TF_GPU_211 = ("ERROR: Could not find a version that satisfies the requirement {pkg}==2.11 (from versions: 2.9.3, "
              "2.10.0rc0, 2.10.0, 2.10.1)\nERROR: No matching distribution found for {pkg}==2.11")


def test_tensorflow_gpu_211_not_found_is_the_ended_package():
    f = first(TF_GPU_211.format(pkg="tensorflow-gpu"))
    assert f.code == "package-removed" and "2.10.1" in f.detail and "tensorflow[and-cuda]" in f.fix[0]


def test_tensorflow_211_with_the_same_list_is_not_the_ended_package():
    assert first(TF_GPU_211.format(pkg="tensorflow")).code != "package-removed"


def test_an_install_said_to_bring_the_cpu_version_is_a_cpu_build():
    f = first('Even if I already have tensorflow-gpu installed, running "pip install -e ." will install CPU version '
              'and override existing installation.')
    assert f.code == "cpu-only-build" and "--no-deps" in f.fix[0]


def test_installing_the_gpu_version_is_not_a_cpu_build():
    assert "cpu-only-build" not in errors("I installed the GPU version of torch with the cu121 command.")


def test_jax_finding_an_older_cudnn_is_a_cudnn_mismatch():
    f = first("CUDA backend failed to initialize: Found cuDNN version 8600, but JAX was built against version 8906, "
              "which is newer.")
    assert f.code == "cudnn-version-mismatch" and "8.6.0" in f.detail and "8.9.6" in f.detail


def test_jax_finding_an_older_cuda_runtime_stays_a_cuda_mismatch():
    f = first("CUDA backend failed to initialize: Found CUDA version 12010, but JAX was built against version 12020, "
              "which is newer.")
    assert f.code == "cuda-version-mismatch"


GCC_REFUSED = ("/opt/lib/cuda-8.0/bin/..//include/host_config.h:115:2 #error -- unsupported GNU version! gcc versions "
               "later than 5.3 are not supported!")


def test_the_headers_of_an_older_toolkit_than_the_cuda_in_use_are_the_toolkit_picked():
    f = first(GCC_REFUSED + "\nthe environment is:\ngcc 5.4.0\npytorch 1.7.1\ncuda-10.2\n")
    assert f.code == "extension-cuda-mismatch" and f.severity == Severity.ERROR
    assert "CUDA 8.0" in f.title and "CUDA 10.2" in f.title


def test_the_same_refusal_with_no_other_cuda_in_the_log_is_the_compiler():
    assert first(GCC_REFUSED).code == "host-compiler-unsupported"


def test_the_same_refusal_from_the_toolkit_in_use_is_the_compiler():
    assert first(GCC_REFUSED + "\ncuda-8.0\n").code == "host-compiler-unsupported"


CONDA_NOT_FOUND = "ResolvePackageNotFound: \n  - torchvision-cpu -> pytorch-cpu[version='>=1.0.0']\n  - pytorch-cpu\n"


def test_pytorch_cpu_that_conda_cannot_find_is_the_old_package_name():
    f = first(CONDA_NOT_FOUND)
    assert f.code == "package-removed" and "1.1.0" in f.detail and "cpuonly" in f.fix[0]


def test_pytorch_cpu_that_conda_installed_is_still_a_cpu_build():
    assert first("it shows that I installed `pytorch_cpu` rather than `pytorch_cuda`.").code == "cpu-only-build"


CPU_INDEX = ("uv pip install torch==2.6.0 torchvision==0.21.0 torchaudio==2.6.0 --index-url "
             "https://example.invalid/whl/{tag}\nAudited 3 packages in 3ms\n")


def test_torch_installed_from_the_cpu_index_is_a_cpu_build_warning():
    f = first(CPU_INDEX.format(tag="cpu"))
    assert f.code == "cpu-only-build" and f.severity == Severity.WARNING and "2.6.0" in f.detail


def test_torch_installed_from_a_cuda_index_is_not():
    assert "cpu-only-build" not in [f.code for f in explain_text(CPU_INDEX.format(tag="cu124")).findings]


def test_an_extension_asking_for_the_split_libtorch_cuda_is_built_for_another_torch():
    f = first("Exception has occurred: OSError\nlibtorch_cuda_cu.so: cannot open shared object file: No such file or "
              "directory")
    assert f.code == "conflicting-packages" and "libtorch_cuda_cu.so" in f.title


def test_plain_libtorch_cuda_missing_stays_a_cpu_torch():
    assert first("ImportError: libtorch_cuda.so: cannot open shared object file: No such file or directory").code \
        == "cpu-only-build"


def test_the_drivers_jit_refusing_newer_ptx_is_the_driver():
    log = ("LinkerError: [222] Call to cuLinkAddData results in CUDA_ERROR_UNSUPPORTED_PTX_VERSION\n"
           "ptxas application ptx input, line 9; fatal   : Unsupported .version 8.5; current version is '8.4'")
    f = first(log)
    assert f.code == "driver-too-old" and "PTX 8.5" in f.title and "8.4" in f.detail


def test_ptxas_itself_refusing_newer_ptx_is_still_ptxas():
    log = "ptxas /tmp/tempfile-x.ptx, line 5; fatal   : Unsupported .version 8.5; current version is '8.4'"
    assert first(log).code == "ptxas-too-old"


def test_jax_unable_to_load_cudnn_is_cudnn_missing():
    f = first("CUDA backend failed to initialize: Unable to load cuDNN. Is it installed? (Set TF_CPP_MIN_LOG_LEVEL=0 "
              "and rerun for more info.)")
    assert f.code == "cudnn-missing" and "jax[cuda12]" in f.fix[0]


INSUFFICIENT = ("RuntimeError: CUDA failed with error CUDA driver version is insufficient for CUDA runtime version\n"
                "Windows 11 Pro 64 bit\nGPU: Radeon RX 580 Series\n")


def test_an_insufficient_driver_on_a_radeon_only_machine_is_no_nvidia_gpu():
    assert first(INSUFFICIENT).code == "no-nvidia-gpu"


def test_the_same_with_an_nvidia_driver_version_in_the_log_is_the_driver():
    assert first(INSUFFICIENT + "Driver Version: 470.82.01\n").code == "driver-too-old"
