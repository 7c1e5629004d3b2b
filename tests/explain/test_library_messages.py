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
    assert f.code == "extension-cuda-mismatch"
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
