"""Readings added in stop 25. Before the blind sets: a CUDA failure inside a desktop virtual machine (VMware
Workstation, VirtualBox, Parallels), whose guest has no NVIDIA GPU; the package named tensorflow up to 2.0 (the CPU
build; GPU support was the separate tensorflow-gpu). From the blind sets independent64-69 (speech, vision toolkits,
LLM libraries, simulation, science, generative training): CTranslate2's libraries read against the CUDA a list item,
an image tag or a conda pin shows; the cuDNN a torch build bundles; PaddlePaddle's device and version checks; vLLM
without a platform; advice that names a CUDA error; bitsandbytes' banner; Omniverse's driver check; JAX's plugin
failures; TensorFlow's cudart note before a program error; RAPIDS on an old GPU; an Intel GPU the reporter names;
xformers on Windows conda; CTranslate2's default CPU device; StyleGAN's gradfix fallback. From independent70-75
(Jetson, distributed training, inference runtimes, environments, rented GPUs, compilers): any wheel pip refuses, the
framework on a Jetson, NGC's, NVML's, NVENC's and Triton's driver checks, OpenCV's and torchcodec's CPU builds, TF-TRT,
NCCL on Windows and of another release, ranks on one GPU, CUDA in forked workers, Triton's kernel rules and releases,
a missing framework module, peer access notes, training metrics. Each reading is checked next to the log that must
not get it."""

from __future__ import annotations

from gpudoctor.explain import explain_text
from gpudoctor.model import Severity
from tests.explain.readings import errors, first

ERROR_100 = "RuntimeError: cuda runtime error (100) : no CUDA-capable device is detected at THCGeneral.cpp:47\n"


def test_cuda_failing_inside_a_desktop_vm_is_a_guest_without_an_nvidia_gpu():
    for said in ("I use VMware ubuntu 16.04.  I got error:", "Running Ubuntu 20.04 in VirtualBox on Windows 10",
                 "macOS host, Ubuntu guest in Parallels Desktop"):
        f = first(said + "\n" + ERROR_100)
        assert f.code == "no-nvidia-gpu" and "virtual machine" in f.title, said
    # alone, error 100 stays the visibility reading
    assert first(ERROR_100).code == "no-visible-gpu"


def test_a_vm_with_the_gpu_passed_through_or_a_working_nvidia_smi_is_read_as_it_is():
    # passthrough and vGPU set-ups do give the guest a GPU
    assert first("VMware ESXi 7 VM with the GPU in passthrough (DirectPath)\n" + ERROR_100).code == "no-visible-gpu"
    smi = "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |\n"
    assert first("Ubuntu guest in VMware Workstation\n" + smi + ERROR_100).code != "no-nvidia-gpu"
    # a word that merely contains the name is not a VM
    assert first("see notvmware-tools/readme\n" + ERROR_100).code == "no-visible-gpu"


CHECK = ">>> tf.test.is_gpu_available()\nFalse\n"


def test_the_tensorflow_package_up_to_2_0_checked_for_a_gpu_is_the_cpu_build():
    for installed in ("$ pip install tensorflow==1.14.0", "tensorflow                         1.13.1",
                      "Successfully installed keras-2.2.4 tensorflow-1.12.0", "tensorflow==2.0.0"):
        f = first(installed + "\n" + CHECK)
        assert f.code == "cpu-only-build" and "tensorflow-gpu" in f.title, installed
    said = first("pip install tensorflow==1.15\nmy code does not use the GPU at all\n")
    assert said.code == "cpu-only-build"


def test_a_tensorflow_gpu_package_a_gpu_build_at_work_or_a_newer_release_keeps_the_cpu_reading_away():
    for log in ("pip install tensorflow-gpu==1.14.0\n" + CHECK,  # the GPU package
                "tensorflow 1.14.0\ntensorflow-gpu 1.14.0\n" + CHECK,  # both installed: another reading
                "tensorflow==2.4.1\n" + CHECK,  # from 2.1 the package has GPU support
                "tensorflow     1.14.0     gpu_py37h74c33d7_0\n" + CHECK,  # Anaconda's GPU variant
                "tensorflow==1.14.0\nI tensorflow/stream_executor/platform/default/dso_loader.cc:42] Successfully "
                "opened dynamic library libcudart.so.10.0\n" + CHECK,  # TensorFlow's CUDA stack ran
                "tensorflow 1.14 is what I use\n" + CHECK):  # prose, not a listing
        findings = explain_text(log).findings
        assert not any(f.evidence.get("context_rule", "").startswith("tensorflow-cpu-package") for f in findings), log


# -- round C: speech, vision toolkits, LLM libraries, simulation, science, generative training ----------------

CT2_CUBLAS11 = "RuntimeError: Library libcublas.so.11 is not found or cannot be loaded\n"
CT2_CUBLAS12 = "RuntimeError: Library libcublas.so.12 is not found or cannot be loaded\n"


def test_a_library_ctranslate2_cannot_load_is_read_against_the_cuda_the_log_shows():
    assert first(CT2_CUBLAS11).code == "cuda-library-missing"
    listed = first("OS: Arch Linux x86_64, python-numpy-1.24.2, CUDA v12.1, all other packages\n" + CT2_CUBLAS11)
    assert listed.code == "cuda-version-mismatch" and "12.1" in listed.title
    image = first("Using the image `nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04`\n" + CT2_CUBLAS12)
    assert image.code == "cuda-version-mismatch" and "11.8" in image.title
    # prose after a comma is not a version listed
    assert first("I tried everything, CUDA 11 kernels are slow\n" + CT2_CUBLAS12).code == "cuda-library-missing"


def test_a_conda_cuda_pin_is_the_environments_cuda():
    missing = "libcublasLt.so.12: cannot open shared object file: No such file or directory\n"
    pinned = first("conda install pytorch==2.0.0 pytorch-cuda=11.7 -c pytorch -c nvidia\n" + missing)
    assert pinned.code == "cuda-version-mismatch" and "11.7" in pinned.title
    # a pin that is not in a conda command is not read
    assert first("my notes: pytorch-cuda=11.7\n" + missing).code == "cuda-library-missing"


def test_the_cudnn_a_torch_build_bundles_is_read_against_a_library_that_wants_another_major():
    cudnn9 = "Unable to load any of {libcudnn_ops.so.9.1.0, libcudnn_ops.so.9.1, libcudnn_ops.so.9, libcudnn_ops.so}\n"
    old = first("!pip install torch==2.0.0+cu118 torchvision==0.15.1+cu118\n" + cudnn9)
    assert old.code == "cudnn-version-mismatch" and "torch 2.0.0+cu118 brings cuDNN 8" in old.title
    # without a torch build, or with one whose cuDNN is the same major, cuDNN is missing
    assert first(cudnn9).code == "cudnn-missing"
    assert first("pip install torch==2.4.1+cu121\n" + cudnn9).code == "cudnn-missing"


def test_paddles_gpu_build_without_a_device_and_its_version_checks():
    no_device = ("UserWarning: You are using GPU version Paddle, but your CUDA device is not set properly. "
                 "CPU device will be used by default.\n")
    assert first(no_device).code == "framework-gpu-not-detected"
    assert first("nvidia-docker pull paddlepaddle/paddle:2.1.3-gpu-cuda11.2-cudnn8\n" + no_device).code == \
        "container-no-gpu-access"
    cudnn = first("W0112 gpu_resources.cc:217] WARNING: device: . The installed Paddle is compiled with CUDNN 8.4, but "
                  "CUDNN version in your machine is 8.0, which may cause serious incompatible bug.\n")
    assert cudnn.code == "cudnn-version-mismatch" and cudnn.severity == Severity.WARNING and "8.4" in cudnn.title


def test_vllm_without_a_platform_in_a_container_started_without_gpus():
    line = "INFO 08-02 02:39:50 [__init__.py:248] No platform detected, vLLM is running on UnspecifiedPlatform\n"
    assert first(line).code == "framework-gpu-not-detected"
    assert first("root@host:~# docker run -p 8000:8000 vllm/vllm-openai:v0.9.1\n" + line).code == \
        "container-no-gpu-access"


def test_advice_that_names_a_cuda_error_is_not_that_error_and_bitsandbytes_banner_is_harmless():
    banner = ("===================================BUG REPORT===================================\n"
              "Welcome to bitsandbytes. For bug reports, please run\n"
              "Either way, this might cause trouble in the future:\n"
              "If you get `CUDA error: invalid device function` errors, the above might be the cause and the solution "
              "is to make sure only one ['libcudart.so'] in the paths that we search based on your env.\n")
    assert errors(banner) == []
    assert first("RuntimeError: CUDA error: invalid device function\n").code == "gpu-arch-unsupported"


def test_the_omniverse_driver_check_is_a_driver_too_old():
    f = first("[Error] [gpu.foundation.plugin] The currently installed NVIDIA graphics driver is unsupported or has "
              "known issues. Reason for failure: The minimum Omniverse RTX requirement on Linux Installed driver: "
              "535.5 The unsupported driver range: [0.0, 535.129) The recommended driver\n")
    assert f.code == "driver-too-old" and "535.5" in f.title


def test_jax_plugin_failures_come_before_the_cpu_fallback_they_cause():
    fallback = ("WARNING - An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed. "
                "Falling back to cpu.\n")
    plugin = first("RuntimeError: Unable to load cuSPARSE. Is it installed?\n" + fallback)
    assert plugin.code == "cuda-library-missing" and "cuSPARSE" in plugin.title
    assert first("RuntimeError: Unable to load cuDNN. Is it installed?\n" + fallback).code == "cudnn-missing"
    # the cuda backend failing with JAX's own CPU-jaxlib warning: that warning names the cause
    assert first("INFO - Unable to initialize backend 'cuda': \n" + fallback).code == "cpu-only-build"
    # JAX's fallback while PyTorch Lightning trains on the GPU: harmless
    quiet = explain_text("No GPU/TPU found, falling back to CPU. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more "
                         "info.)\nGPU available: True (cuda), used: True\n").findings
    assert [f.severity for f in quiet] == [Severity.INFO]


def test_tensorflows_cudart_note_before_the_programs_own_error():
    dll = ("W tensorflow/stream_executor/platform/default/dso_loader.cc:55] Could not load dynamic library "
           "'cudart64_101.dll'; dlerror: cudart64_101.dll not found\n")
    stub = ("I tensorflow/stream_executor/cuda/cudart_stub.cc:29] Ignore above cudart dlerror if you do not have a GPU "
            "set up on your machine.\n")
    program = ("Error: Your environment contains multiple teams, but PPOTrainer doesn't support adversarial games. "
               "Enable self-play to train adversarial games.\n")
    assert first(dll + stub + program).code == "not-environment"
    # without TensorFlow's note the missing runtime stays the error
    assert first(dll + program).code == "dll-load-failed"


def test_rapids_without_code_for_an_old_gpu():
    f = first("RuntimeError: This cuDF installation is missing the necessary PTX files that are <=50.\n")
    assert f.code == "gpu-arch-unsupported" and "sm_50" in f.title


def test_an_intel_gpu_the_reporter_names_is_not_an_nvidia_one():
    error35 = "Error CUDA driver version is insufficient for CUDA runtime version at line 167 in file ops.cu\n"
    said = first(error35 + "I'm using a integrated Intel GPU(iris xe graphics). os is win 11\n")
    assert said.code == "no-nvidia-gpu"
    assert first(error35 + "laptop with Intel UHD Graphics and a GeForce GTX 1650\n").code == "driver-too-old"


def test_conda_has_no_xformers_for_windows():
    log = "(base) C:\\AnimateDiff>conda env create -f environment.yaml\nResolvePackageNotFound:\n  - xformers\n"
    f = first(log)
    assert f.code == "no-matching-build" and "xformers" in f.title
    linux = explain_text("(base) user@host:~$ conda env create -f environment.yaml\n"
                         "ResolvePackageNotFound:\n  - xformers\n")
    assert not any(f.evidence.get("context_rule") == "conda-has-no-xformers-for-windows" for f in linux.findings)


def test_ctranslate2s_float16_notice_is_harmless_alone_and_the_default_cpu_device_with_a_cpu_run():
    notice = ("[ctranslate2] [warning] The compute type inferred from the saved model is float16, but the target "
              "device or backend do not support efficient float16 computation. The model weights have been "
              "automatically converted to use the float32 compute type instead.\n")
    assert errors(notice) == [] and not any(f.code == "not-environment" for f in explain_text(notice).findings)
    f = first(notice + "Then inference runs on CPU only.\n")
    assert f.code == "not-environment" and 'device="cuda"' in f.title


def test_stylegans_gradfix_fallback_is_harmless():
    line = ("conv2d_gradfix.py:88: UserWarning: conv2d_gradfix not supported on PyTorch 2.0.1. Falling back to "
            "torch.nn.functional.conv2d().\n")
    result = explain_text(line)
    assert result.findings == [] and [n.id for n in result.notes] == ["benign-stylegan-gradfix-fallback"]


# -- round D: Jetson and ARM64, distributed training, inference runtimes, environments, rented GPUs, compilers -----

def test_a_wheel_pip_refuses_is_read_whatever_the_package():
    f = first("pip install h2o4gpu-0.3.2-cp36-cp36m-linux_x86_64.whl\nh2o4gpu-0.3.2-cp36-cp36m-linux_x86_64.whl is "
              "not a supported wheel on this platform.\n")
    assert f.code == "no-matching-build" and "h2o4gpu" in f.title


def test_the_framework_without_the_gpu_on_a_jetson_is_a_build_without_cuda():
    torch_check = ">>> import torch\n>>> torch.cuda.is_available()\nFalse\n"
    on_jetson = first("root@jetsonxavier:~/myenv/bin# python3\n" + torch_check)
    assert on_jetson.code == "cpu-only-build" and "Jetson" in on_jetson.title
    tf = first(">>> tf.config.list_physical_devices('GPU')\n[]\nit doesn't use GPU for calculations. I'm using "
               "NVIDIA's Jetson Nano device.\n")
    assert tf.code == "cpu-only-build" and "Jetson" in tf.title
    # the same check on a machine that is not a Jetson is not this reading
    elsewhere = explain_text("user@workstation:~$ python3\n" + torch_check).findings
    assert not any("Jetson" in f.title for f in elsewhere)


def test_ngc_containers_and_nvml_say_the_driver_is_too_old():
    banner = ("ERROR: This container was built for NVIDIA Driver Release 450.36 or later, but\n"
              "       version 440.100 was detected and compatibility mode is UNAVAILABLE.\n")
    f = first(banner)
    assert f.code == "driver-too-old" and "450.36" in f.title
    nvml = first("AttributeError: /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1: undefined symbol: "
                 "nvmlDeviceGetMemoryInfo_v2\n")
    assert nvml.code == "driver-too-old" and "nvmlDeviceGetMemoryInfo_v2" in nvml.title
    nvenc = first("[hevc_nvenc @ 0x55] Driver does not support the required nvenc API version. Required: 11.1 "
                  "Found: 11.0\n")
    assert nvenc.code == "driver-too-old"
    triton = first("ImportError: ~/.triton/cache/c6/cuda_utils.so: undefined symbol: cuTensorMapEncodeTiled\n")
    assert triton.code == "driver-too-old"


def test_opencv_and_torchcodec_builds_without_cuda():
    arch = first("cv2.error: OpenCV(4.5.3) dnn.cpp:2385: error: (-216:No CUDA support) OpenCV was not built to work "
                 "with the selected device. Please check CUDA_ARCH_PTX or CUDA_ARCH_BIN in your build configuration.\n")
    assert arch.code == "gpu-arch-unsupported"
    assert first("setUpNet DNN module was not built with CUDA backend; switching to CPU\n").code == "cpu-only-build"
    decoder = first("    video = VideoDecoder(video_file, device=\"cuda\")\nRuntimeError: Unsupported device: cuda\n")
    assert decoder.code == "cpu-only-build"


def test_tf_trt_without_tensorrt_and_a_program_that_cannot_start_without_an_optional_library():
    assert first("F tensorflow/compiler/tf2tensorrt/stub/nvinfer_stub.cc:49] getInferLibVersion symbol not found.\n"
                 ).code == "cuda-library-missing"
    # TensorRT is optional to TensorFlow, but not to a program the loader cannot start without it
    assert first("tritonserver: error while loading shared libraries: libnvinfer.so.7: cannot open shared object file: "
                 "No such file or directory\n").code == "cuda-library-missing"
    optional = explain_text("W dso_loader.cc:64] Could not load dynamic library 'libnvinfer.so.7'; dlerror: "
                            "libnvinfer.so.7: cannot open shared object file: No such file or directory\n")
    assert errors("W dso_loader.cc:64] Could not load dynamic library 'libnvinfer.so.7'; dlerror: libnvinfer.so.7: "
                  "cannot open shared object file\n") == [] and optional.notes


def test_distributed_training_readings():
    assert first('raise RuntimeError("Distributed package doesn\'t have NCCL " "built in")\n').code == \
        "platform-unsupported"
    assert first("No OpKernel was registered to support Op 'NcclAllReduce' used by {{node NcclAllReduce}}\n").code == \
        "platform-unsupported"
    nccl = first("ImportError: ~/.local/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: "
                 "ncclMemFree\n")
    assert nccl.code == "conflicting-packages" and "ncclMemFree" in nccl.title
    assert first("Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 2000\n").code == "not-environment"
    horovod = first("ImportError: horovod/torch/mpi_lib_v2.cpython-36m-x86_64-linux-gnu.so: undefined symbol: "
                    "_ZTIN3c1021AutogradMetaInterfaceE\n")
    assert horovod.code == "conflicting-packages"
    peer = explain_text("W0821 server.cc:208] failed to enable peer access for some device pairs\n"
                        "warning: p2p 1 <-> 0 is impossible\n")
    assert peer.findings == [] and len(peer.notes) == 1


def test_program_bugs_and_missing_modules():
    assert first("RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you "
                 "must use the 'spawn' start method\n").code == "not-environment"
    assert first("ValueError: arange's range must be a power of 2\n").code == "not-environment"
    module = first("    import torch\nModuleNotFoundError: No module named 'torch'\n")
    assert module.code == "framework-import-failed" and "torch" in module.title
    # a torch submodule that is missing is not this reading
    assert not any(f.evidence.get("signature") == "framework-module-not-installed"
                   for f in explain_text("ModuleNotFoundError: No module named 'torchvision'\n").findings)


def test_triton_missing_or_of_another_release():
    assert first("RuntimeError: Cannot find a working triton installation. Either the package is not installed or it "
                 "is too old.\n").code == "conflicting-packages"
    assert first("ModuleNotFoundError: No module named 'triton. common'\n").code == "conflicting-packages"


def test_what_the_reporter_says_of_the_machine():
    no_gpu = first("CUDA Error (yaksuri_cuda_init_hook): no CUDA-capable device is detected\n"
                   "the CPU only nodes do not have a GPU attached.\n")
    assert no_gpu.code == "no-nvidia-gpu"
    mac = first("I have tried the example on my Macbook M1 pro but got this error:\n"
                "AssertionError: Torch not compiled with CUDA enabled\n")
    assert mac.code == "platform-unsupported"
    # a training metric is a number the program prints, not a failure for the last resort to explain
    assert explain_text("Initialized!\nMinibatch loss: 8.334\nMinibatch error: 85.9%\nValidation error: 84.6%\n"
                        "I tensorflow/core/common_runtime/gpu/gpu_device.cc] Found device 0 with properties:\n"
                        ).findings == []


# -- round E: Blackwell-era apps, driver installs, Windows DLLs, Chinese projects, NLP libraries, Keras 3 --------

def test_library_releases_that_do_not_fit_each_other():
    keras = first("ValueError: Your currently installed version of Keras is Keras 3, but this is not yet supported in "
                  "Transformers. Please install the backwards-compatible tf-keras package with "
                  "`pip install tf-keras`.\n")
    assert keras.code == "conflicting-packages" and any("tf-keras" in step for step in keras.fix)
    assert first("AttributeError: module 'cupy' has no attribute 'scatter_add'\n").code == "conflicting-packages"
    faiss = first("AttributeError: module 'faiss' has no attribute 'StandardGpuResources'\n")
    assert faiss.code == "cpu-only-build" and "StandardGpuResources" in faiss.title
    quiet = explain_text("Failed to load GPU Faiss: No module named 'swigfaiss_gpu'. Will not load constructor refs "
                         "for GPU indexes.\n")
    assert quiet.findings == [] and [n.id for n in quiet.notes] == ["benign-faiss-gpu-loader-note"]


def test_gpu_generations_in_attention_kernels_and_dtypes():
    assert first("ValueError: Unsupported CUDA architecture: sm60\n").code == "gpu-arch-unsupported"
    built = first('    assert SM89_ENABLED, "SM89 kernel is not available. Make sure you GPUs with compute '
                  'capability 8.9."\n')
    assert built.code == "gpu-arch-unsupported" and "SM89" in built.title
    amd = first("Created device /device:GPU:0 with 15089 MB memory:  -> device: 0, name: Vega 20, pci bus id: 0000:26\n"
                "2024 E tensorflow/core/common_runtime/gpu/gpu_device.cc] no CUDA-capable device is detected\n")
    assert amd.code == "no-nvidia-gpu" and "Vega 20" in amd.title


def test_kernel_module_refused_or_not_probing_the_gpu():
    assert first("Kernel module load error: Operation not permitted\n").code == "driver-not-loaded"
    probe = first("[  166.261422] nvidia: probe of 0000:01:00.0 failed with error -1\n"
                  "[  166.261517] NVRM: The NVIDIA probe routine failed for 1 device(s).\n")
    assert probe.code == "driver-not-loaded" and "probe" in probe.title


def test_an_index_beyond_an_embedding_is_the_programs_data():
    f = first("InvalidArgumentError: indices[127,2] = 5388 is not in [0, 5388) "
              "[[{{node embedding_1/embedding_lookup}}]]\n")
    assert f.code == "not-environment"
