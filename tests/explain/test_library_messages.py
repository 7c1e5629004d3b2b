"""Readings of messages that libraries beside torch and TensorFlow print themselves, taken from their sources and
documentation (stop 22): DGL's and XGBoost's CPU builds, tiny-cuda-nn's setup without a CUDA torch, apex's CUDA
check, an extension built without CUDA ("Not compiled with GPU support"), TensorRT's CUDA start-up error and its
engines built on another GPU, `import tensorrt` without libnvinfer, torch.distributed without NCCL, and OpenMMLab's
mmcv range. Each reading is checked next to the log that must not get it."""

from __future__ import annotations

from gpudoctor.explain import explain_text
from gpudoctor.model import Severity
from tests.explain.readings import errors, first


def test_dgl_without_its_cuda_device_api_is_its_cpu_build():
    f = first("dgl._ffi.base.DGLError: [10:21:33] /opt/dgl/src/runtime/c_runtime_api.cc:82: Check failed: "
              "allow_missing: Device API cuda is not enabled. Please install the cuda version of dgl.")
    assert f.code == "cpu-only-build" and "DGL" in f.title


def test_gradient_boosting_libraries_built_without_gpu_are_cpu_builds():
    f = first("xgboost.core.XGBoostError: [10:00:00] ../src/gbm/../common/common.h:239: XGBoost version not "
              "compiled with GPU support.")
    assert f.code == "cpu-only-build" and "XGBoost" in f.title
    f = first("lightgbm.basic.LightGBMError: GPU Tree Learner was not enabled in this build.")
    assert f.code == "cpu-only-build" and "LightGBM" in f.title


def test_an_extension_not_compiled_with_gpu_support_was_built_without_cuda():
    f = first("  File \"/home/user/detectron2/detectron2/layers/roi_align.py\", line 58, in forward\n"
              "RuntimeError: Not compiled with GPU support")
    assert f.code == "cpu-only-build" and "extension" in f.title  # an extension without its CUDA kernels
    assert any("CUDA_HOME" in step for step in f.fix)
    # XGBoost's wording is its own CPU build, not an extension's
    assert first("XGBoostError: XGBoost version not compiled with GPU support.").code == "cpu-only-build"


def test_tcnn_setup_without_a_cuda_torch_names_its_variable():
    f = first("OSError: Unknown compute capability. Specify the target compute capabilities in the "
              "TCNN_CUDA_ARCHITECTURES environment variable or install PyTorch with the CUDA backend to detect it "
              "automatically.")
    assert f.code == "cpu-only-build"
    assert any("TCNN_CUDA_ARCHITECTURES" in step for step in f.fix)


def test_apex_refusing_the_nvcc_names_torchs_cuda():
    f = first("RuntimeError: Cuda extensions are being compiled with a version of Cuda that does not match the version "
              "used to compile Pytorch binaries.  Pytorch binaries were compiled with Cuda 11.8.\n"
              "In some cases, a minor-version mismatch will not cause later errors:  "
              "https://github.com/NVIDIA/apex/pull/323#discussion_r287021798.  You can try commenting out this check "
              "(at your own risk).")
    assert f.code == "extension-cuda-mismatch" and "11.8" in f.title


def test_tensorrts_cuda_start_up_error_reads_its_number():
    line = ("[TRT] [W] CUDA initialization failure with error: {n}. Please check your CUDA installation:  "
            "http://docs.nvidia.com/cuda/cuda-installation-guide-linux/index.html")
    assert first(line.format(n=35)).code == "driver-too-old"
    assert first(line.format(n=100)).code == "no-visible-gpu"
    # a number the error table does not hold stays CUDA failing to start
    assert first(line.format(n=2)).code == "cuda-init-failed"


def test_a_tensorrt_engine_built_on_another_gpu_is_the_architecture():
    f = first("[03/01/2024-10:00:00] [TRT] [E] 6: The engine plan file is generated on an incompatible device, "
              "expecting compute 8.6 got compute 7.5, please rebuild.")
    assert f.code == "gpu-arch-unsupported" and "8.6" in f.title
    assert any("trtexec" in step for step in f.fix)


def test_import_tensorrt_without_libnvinfer_fails_where_tensorflow_only_notes_it():
    f = first("  File \"/usr/lib/python3.10/dist-packages/tensorrt/__init__.py\", line 68, in <module>\n"
              "    from .tensorrt import *\n"
              "ImportError: libnvinfer.so.8: cannot open shared object file: No such file or directory")
    assert f.code == "cuda-library-missing" and f.severity == Severity.ERROR
    # TensorFlow's TF-TRT probe for the same library is harmless
    tf = explain_text("2021-01-01 10:00:00.000000: W tensorflow/stream_executor/platform/default/dso_loader.cc:60] "
                      "Could not load dynamic library 'libnvinfer.so.7'; dlerror: libnvinfer.so.7: cannot open shared "
                      "object file: No such file or directory")
    assert not [f for f in tf.findings if f.severity == Severity.ERROR]


def test_torch_distributed_without_nccl_is_the_platform_unless_torch_is_a_cpu_build():
    windows = ("  File \"C:\\Users\\user\\miniconda3\\envs\\x\\lib\\site-packages\\torch\\distributed\\"
               "distributed_c10d.py\", line 1268, in _new_process_group_helper\n"
               "RuntimeError: Distributed package doesn't have NCCL built in")
    f = first(windows)
    assert f.code == "platform-unsupported" and any("gloo" in step for step in f.fix)
    # on Linux with a +cpu torch the CPU build is the cause
    assert errors("torch==2.1.0+cpu\nRuntimeError: Distributed package doesn't have NCCL built in")[0] \
        == "cpu-only-build"


def test_openmmlab_refusing_the_mmcv_version_names_the_range():
    f = first("AssertionError: MMCV==2.2.0 is used but incompatible. Please install mmcv>=2.0.0rc4, <2.2.0.")
    assert f.code == "conflicting-packages"
    assert "2.2.0" in f.title and ">=2.0.0rc4, <2.2.0" in f.title


def test_cudnns_own_could_not_locate_is_cudnn_of_that_major_missing():
    f = first("Could not locate cudnn_ops_infer64_8.dll. Please make sure it is in your library path!")
    assert f.code == "cudnn-missing" and "cuDNN 8" in f.title
    # cuBLAS's DLL in the same words stays the Windows DLL search
    assert first("Could not locate cublasLt64_12.dll. Please make sure it is in your library path!").code \
        == "dll-load-failed"


def test_wrong_argument_types_to_c_or_opencv_are_the_program():
    assert first("ctypes.ArgumentError: argument 2: <class 'TypeError'>: wrong type").code == "not-environment"
    f = first("    mask = cv2.inRange(hsv, red_lower, red_upper)\n"
              "TypeError: lowerb is not a numpy array, neither a scalar")
    assert f.code == "not-environment" and "lowerb" in f.detail


def test_a_module_built_for_numpy_1_under_numpy_2_is_the_packages():
    f = first("A module that was compiled using NumPy 1.x cannot be run in\nNumPy 2.0.0 as it may crash. To support "
              "both 1.x and 2.x\nUserWarning: Failed to initialize NumPy: _ARRAY_API not found")
    assert f.code == "conflicting-packages" and f.severity == Severity.ERROR


def test_a_reporter_running_on_amd_has_no_nvidia_gpu():
    device = ("ValueError: Invalid CUDA 'device=0' requested. Use 'device=cpu' or pass valid CUDA device(s) if "
              "available, i.e. 'device=0' or 'device=0,1,2,3' for Multi-GPU.\n\ntorch.cuda.is_available(): False\n"
              "torch.cuda.device_count(): 0\n")
    assert first(device).code == "framework-gpu-not-detected"  # nothing says why torch sees none
    assert first("как запустить на amd, что скачать нужно\n" + device).code == "no-nvidia-gpu"
    assert first("I have an AMD Radeon card.\n" + device).code == "no-nvidia-gpu"
    # an AMD processor is not the graphics
    assert first("I run it on AMD Ryzen 9 5900X\n" + device).code == "framework-gpu-not-detected"
    # with a +cpu torch in the log, the CPU build is why torch sees none
    f = first("torch==2.1.0+cpu\n" + device)
    assert f.code == "cpu-only-build" and f.severity == Severity.ERROR
    assert [x.code for x in explain_text("torch==2.1.0+cpu\n" + device).findings].count("cpu-only-build") == 1


def test_a_reporters_sentence_announcing_an_error_is_not_the_failure():
    from gpudoctor.explain.similar import unexplained_failure
    log = "When I try to run it on the GPU, I get the following error:\nRuntimeError: CUDA error: unknown error\n"
    assert unexplained_failure(log, lambda line: False) == "RuntimeError: CUDA error: unknown error"


def test_training_tools_finding_no_gpu_name_torch_not_seeing_one():
    for line in ["lightning_fabric.utilities.exceptions.MisconfigurationException: No supported gpu backend found!",
                 "RuntimeError: No GPU found. A GPU is needed for quantization.",
                 "NotImplementedError: Unsloth: No NVIDIA GPU found? Unsloth currently only supports GPUs!",
                 "ValueError: fp16 mixed precision requires a GPU (not 'cpu')."]:
        assert first(line).code == "framework-gpu-not-detected", line
    # on a Mac the device is Apple's, not a missing CUDA GPU
    assert first("ValueError: fp16 mixed precision requires a GPU (not 'mps').").code == "platform-unsupported"
    # a CPU torch in the same log is why
    assert errors("PyTorch version: 2.3.0+cpu\nRuntimeError: No GPU found. A GPU is needed for quantization.")[0] \
        == "cpu-only-build"


def test_lightnings_banner_and_device_list():
    banner = ("GPU available: True (cuda), used: True\nTPU available: False, using: 0 TPU cores\n"
              "IPU available: False, using: 0 IPUs\nHPU available: False, using: 0 HPUs\n"
              "LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [0]\n")
    assert not [f for f in explain_text(banner).findings if f.severity in (Severity.ERROR, Severity.WARNING)]
    assert first("GPU available: False, used: False\nTPU available: False, using: 0 TPU cores").code \
        == "framework-gpu-not-detected"
    assert first("MisconfigurationException: You requested gpu: [1]\n But your machine only has: [0]").code \
        == "invalid-device-ordinal"
    assert first("MisconfigurationException: You requested gpu: [0]\n But your machine only has: []").code \
        == "framework-gpu-not-detected"
    assert first("RuntimeError: Lightning can't create new processes if CUDA is already initialized. Did you manually "
                 "call `torch.cuda.*` functions").code == "not-environment"


def test_taichi_and_warp_without_libcuda_name_the_driver_library():
    assert first("[W 11/24/23 10:00:00.000 1234] [cuda_driver.cpp:load_lib@36] libcuda.so lib not found.").code \
        == "libcuda-missing"
    assert first("Warp CUDA error: Could not open libcuda.so.").code == "libcuda-missing"


def test_the_trainers_bf16_refusal_is_the_runs_precision_setting():
    f = first("ValueError: Your setup doesn't support bf16/gpu. You need torch>=1.10, using Ampere GPU with cuda>=11.0")
    assert f.code == "not-environment" and any("fp16=True" in step for step in f.fix)


def test_an_old_pin_asked_through_another_package_is_the_python():
    f = first("ERROR: Could not find a version that satisfies the requirement onnxruntime<=1.8.0,==1.8.0 (from kobert) "
              "(from versions: 1.12.0, 1.12.1, 1.13.1, 1.14.0, 1.14.1)")
    assert f.code == "python-unsupported"


def test_a_cuda_build_pinned_where_the_index_offers_none_is_the_platform():
    f = first("ERROR: Could not find a version that satisfies the requirement jaxlib==0.4.7+cuda11.cudnn82 "
              "(from jax[cuda11-cudnn82]) (from versions: 0.4.13, 0.4.14, 0.4.16)")
    assert f.code == "no-matching-build"
    # with CUDA builds among the versions offered, the Python is why
    assert first("ERROR: Could not find a version that satisfies the requirement torch==2.1.0+cu121 (from versions: "
                 "2.2.0, 2.2.0+cpu, 2.2.0+cu118, 2.2.0+cu121)").code == "python-unsupported"


def test_a_radeon_named_in_russian_is_no_nvidia_gpu():
    f = first("Не запускается на видеокарте Radeon\n"
              "AssertionError: Torch is not able to use GPU; add --skip-torch-cuda-test to COMMANDLINE_ARGS variable "
              "to disable this check")
    assert f.code == "no-nvidia-gpu"


def test_the_old_conda_cpu_selector_is_the_cpu_build():
    f = first("            You requested GPUs: [0]\n            But your machine only has: []\n"
              "_pytorch_select           0.1                       cpu_0")
    assert f.code == "cpu-only-build"


def test_a_name_missing_from_an_installed_package_is_a_version_skew():
    f = first("ImportError: cannot import name 'ConvFwdAndBwdInput' from 'cumm.conv.main'")
    assert f.code == "conflicting-packages" and "cumm.conv.main" in f.title
    f = first("ImportError: cannot import name 'cached_download' from 'huggingface_hub' "
              "(/usr/lib/python3/site-packages/huggingface_hub/__init__.py)")
    assert f.code == "conflicting-packages"
    # the program's own module is not an installed package; a circular import is the program's too
    assert "conflicting-packages" not in errors("ImportError: cannot import name 'load' from 'utils' "
                                                "(/home/user/project/utils.py)")
    assert "conflicting-packages" not in errors("ImportError: cannot import name 'a' from partially initialized "
                                                "module 'b' (most likely due to a circular import)")


def test_jax_tracing_errors_are_the_program():
    assert first("Array boolean indices must be concrete; got ShapedArray(bool[2097152])").code == "not-environment"
    assert first("jax.errors.TracerBoolConversionError: Attempted boolean conversion of traced array").code \
        == "not-environment"


def test_triton_without_warp_shuffles_for_the_gpu_is_the_architecture():
    f = first("LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.shfl.sync.bfly.i32")
    assert f.code == "gpu-arch-unsupported" and any("7.0" in step for step in f.fix)


def test_conda_without_cudatoolkit_dev_for_windows_is_the_platform():
    f = first("D:\\project>conda env create -f environment.yml\nSolving environment: failed\n"
              "ResolvePackageNotFound:\n  - cudatoolkit-dev=11.3.1\n")
    assert f.code == "no-matching-build"


def test_isaac_gyms_physx_without_libcuda_is_the_driver_library():
    result = explain_text("internal error : libcuda.so!\n[Warning] [carb.gym.plugin] Failed to create a PhysX CUDA Context "
                          "Manager. Falling back to CPU.\nPhysics Device: cpu\n")
    assert [(f.code, f.caused_by) for f in result.findings] == [("libcuda-missing", None),
                                                                ("cuda-init-failed", "libcuda-missing")]


def test_a_missing_soname_beside_another_stated_cuda_is_the_version():
    f = first("ImportError: libcublas.so.9.0: cannot open shared object file: No such file or directory\n\n"
              "- TensorFlow: tensorflow-gpu-1.5.0\n- CUDA: 8.0\n")
    assert f.code == "cuda-version-mismatch" and "8.0" in f.title
    f = first(" I installed cuda 9.1 and set the path as suggested.\n"
              "ImportError: libcublas.so.8.0: cannot open shared object file: No such file or directory")
    assert f.code == "cuda-version-mismatch"
    # nvidia-smi's header is the driver's CUDA, not an installed toolkit
    assert first("| NVIDIA-SMI 535.54.03    Driver Version: 535.54.03    CUDA Version: 12.2 |\n"
                 "ImportError: libcublas.so.9.0: cannot open shared object file: No such file or directory").code \
        == "cuda-library-missing"


def test_a_word_for_cuda_visible_devices_hides_every_gpu():
    f = first("# CUDA_VISIBLE_DEVICES=RR JINA_MP_START_METHOD=spawn python test_flow.py\n"
              "RuntimeError('No CUDA GPUs are available')")
    assert f.code == "invalid-visible-devices" and f.severity == Severity.ERROR and "RR" in f.title
    # an index the machine lacks stays the visibility reading
    assert first("CUDA_VISIBLE_DEVICES=1 python x.py\nRuntimeError: No CUDA GPUs are available").code \
        == "no-visible-gpu"


def test_a_name_error_is_the_program_unless_a_build_step_lacked_nvcc():
    assert first("NameError: name 'torch_CPU' is not defined").code == "not-environment"
    f = first("<string>:119: UserWarning: causal_conv1d was requested, but nvcc was not found.\n"
              "NameError: name 'bare_metal_version' is not defined")
    assert f.code == "extension-cuda-mismatch"


def test_older_stacks_own_messages():
    assert first("tensorpack.utils.nvml.NvmlException: NVML_ERROR_LIB_RM_VERSION_MISMATCH").code \
        == "nvml-driver-mismatch"
    assert first("ERROR (theano.sandbox.cuda): ERROR: Not using GPU. Initialisation of device gpu failed:\n"
                 "initCnmem: cnmemInit call failed! Reason=CNMEM_STATUS_OUT_OF_MEMORY. numdev=1").code \
        == "gpu-memory-preallocated"
    assert first("VX3_SimulationManager.cu(413): CUDA Function Error: invalid device function").code \
        == "gpu-arch-unsupported"


def test_container_and_solver_messages_of_newer_tools():
    f = first("nvidia-container-cli: device error: {MASKANYONE_GPU_ID:-0}: unknown device: unknown")
    assert f.code == "invalid-visible-devices" and "MASKANYONE_GPU_ID" in f.title
    assert first("  ╰─▶ Virtual package '__cuda' does not match any of the available virtual packages on your "
                 "machine: [__archspec=1=zen2, __glibc=2.39=0]").code == "no-matching-build"
    assert first("Warp CUDA error: Failed to get driver entry point 'cuInit' (CUDA error 34)").code == "libcuda-missing"
