"""Readings added in stop 24 from the blind sets independent54-59 (TensorFlow 1.x apps, other frameworks, cloud
and clusters, desktop AI apps, GPUs left unused, threads not in English): a dso_loader line quoted without its
dlerror, the CUDA a reporter says they have ("my cuda is 11.0"), a build's minimum compute capability in
DeepFaceLab's words, a checkpoint whose shapes do not fit in TensorFlow, DGL's device check, LightGBM's CPU build,
XGBoost's prediction fallback, a container asking for a GPU index the host lacks, RVC's no-GPU message on Windows,
vLLM's KV cache, torch's +cpu version printed alone, and torch's own operator without a CUDA kernel; and from
independent60-63 (torch 1.x apps, TensorFlow 2.x apps, 3D-vision extensions, JAX apps): an old torch's missing CUDA
binding, the tensorflow-gpu placeholder as the package index words it, TensorFlow's and Flax's shape checks, Open3D's
framework pin, tiny-cuda-nn without an extension for the GPU, and JAX's INFO lines about other backends. Each reading
is checked next to the log that must not get it."""

from __future__ import annotations

from gpudoctor.explain import explain_text
from gpudoctor.model import Severity
from tests.explain.readings import errors, first

QUOTED_DSO = "I'm getting this error \"Could not load dynamic library 'libcudart.so.10.0'\".\n"


def test_a_quoted_dso_loader_line_is_a_missing_library_and_the_stated_cuda_makes_it_a_mismatch():
    alone = first(QUOTED_DSO)
    assert alone.code == "cuda-library-missing" and "libcudart.so.10.0" in alone.evidence["soname"]
    # the dlerror cut short in a paste is the same quote
    cut = first("the bug is \"dso_loader.cc:55] Could not load dynamic library 'libcudart.so.10.0'; dlerror: "
                "libcudart.so.10.0\"\n")
    assert cut.code == "cuda-library-missing"
    # an issue form's "Cuda Version : 10.2" (a space before the colon) is the CUDA installed
    stated = first(QUOTED_DSO + "Cuda driver_version : 440\nCuda Version : 10.2\n")
    assert stated.code == "cuda-version-mismatch" and "CUDA 10.2" in stated.title and "CUDA 10.0" in stated.title


def test_the_cuda_a_reporter_calls_theirs_is_the_installed_one():
    line = "error while loading shared libraries: libcudart.so.10.0: cannot open shared object file: No such file\n"
    for said, version in (("but my system is libcudart.so.9.0", "9.0"), ("my libcudart.so is libcudart.so.11.0", "11.0"),
                          ("my cuda is 11.0 but it need libcudart.so.10.0", "11.0")):
        f = first(line + said + "\n")
        assert f.code == "cuda-version-mismatch" and f"CUDA {version}" in f.title, said
    # a system named without a CUDA is not a CUDA version
    assert first(line + "my system is 18.04 LTS\n").code == "cuda-library-missing"
    # the full dso_loader line is read once, by its own signature
    full = ("W dso_loader.cc:55] Could not load dynamic library 'libcudart.so.10.1'; dlerror: libcudart.so.10.1: "
            "cannot open shared object file: No such file or directory\n")
    assert [f.evidence.get("signature") for f in explain_text(full).findings] == ["tf-dso-loader-missing"]


def test_a_build_minimum_compute_capability_in_deepfacelabs_words():
    f = first("Tesla K40m does not meet minimum required compute capability: 3.7. Falling back to CPU mode.")
    assert f.code == "gpu-arch-unsupported" and "3.7" in f.title


def test_tensorflow_checkpoint_shapes_are_the_program():
    f = first("tensorflow.python.framework.errors_impl.InvalidArgumentError: Assign requires shapes of both tensors "
              "to match. lhs shape= [54] rhs shape= [810]")
    assert f.code == "not-environment" and not errors("Assign requires shapes of both tensors to match. lhs shape= [1]")
    keras = first("ValueError: Layer weight shape (3, 3, 3, 32) not compatible with provided weight shape (3, 3, 1, 32)")
    assert keras.code == "not-environment"


def test_dgl_features_and_graphs_on_different_devices_are_the_program():
    f = first('dgl._ffi.base.DGLError: Cannot assign node feature "h" on device cuda:0 to a graph on device cpu. '
              'Call DGLGraph.to() to copy the graph to the same device.')
    assert f.code == "not-environment" and f.evidence["signature"] == "tensors-on-different-devices"


def test_lightgbm_asking_for_a_rebuild_with_gpu_is_a_cpu_build():
    f = first("it asked to \"Recompile with CMake option -DUSE_GPU=1'\" while calling LightGBM in python 3.5.")
    assert f.code == "cpu-only-build" and "USE_GPU" in f.title


def test_xgboosts_prediction_fallback_is_harmless():
    log = ("Falling back to prediction using DMatrix due to mismatched devices. This might lead to higher memory usage "
           "and slower performance. XGBoost is running on: cuda:0, while the input data is on: cpu.\n"
           "  warnings.warn(smsg, UserWarning)\n")
    assert not [f for f in explain_text(log).findings if f.severity in (Severity.ERROR, Severity.WARNING)]


def test_a_container_asking_for_a_gpu_index_the_host_lacks():
    index = explain_text("docker: Error response from daemon: ... stderr: nvidia-container-cli: device error: 1: "
                         "unknown device: unknown.").findings
    assert [f.code for f in index] == ["invalid-device-ordinal"] and "GPU 1" in index[0].title
    # a name that was never expanded is the variable, as before
    named = first("nvidia-container-cli: device error: {MASKANYONE_GPU_ID:-0}: unknown device: unknown")
    assert named.code == "invalid-visible-devices"


def test_rvcs_no_gpu_message_on_windows_is_the_cpu_torch():
    windows = first("(myenv) H:\\RVC-beta>python infer-web.py\nUse Language: en_US\n没有发现支持的N卡, 使用CPU进行推理\n")
    assert windows.code == "cpu-only-build" and windows.severity == Severity.ERROR
    # on Linux the same message only says torch sees no GPU
    linux = first("(venv) user@host:~/RVC$ python infer-web.py\n没有发现支持的N卡，使用CPU进行推理\n")
    assert linux.code == "framework-gpu-not-detected"


def test_vllms_kv_cache_smaller_than_the_context_is_a_setting():
    f = first("ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be "
              "stored in KV cache (7344). Try increasing `gpu_memory_utilization` or decreasing `max_model_len`")
    assert f.code == "not-environment" and any("--max-model-len 7344" in step for step in f.fix)


def test_torch_version_printed_alone_as_cpu():
    quoted = first('in the "System Info" section it says "2.0.0+cpu Autocast half" and an empty "GPU".')
    assert quoted.code == "cpu-only-build" and "2.0.0+cpu" in quoted.title
    assert first(">>> torch.__version__\n'2.1.0+cpu'\n").code == "cpu-only-build"
    # a version in pip's list of what exists is not what is installed
    offered = ("ERROR: Could not find a version that satisfies the requirement torch==2.0.0+cu117 (from versions: "
               "1.13.1+cpu, 2.0.0+cpu)\n")
    assert not [f for f in explain_text(offered).findings if f.code == "cpu-only-build"]


def test_torchs_own_operator_without_a_cuda_kernel_is_a_cpu_build():
    f = first("Exception: Could not run 'aten::empty_strided' with arguments from the 'CUDA' backend. This could be "
              "because the operator doesn't exist for this backend")
    assert f.code == "cpu-only-build" and "aten::empty_strided" in f.title
    # torchvision's operators are the companion's build, as before
    nms = first("NotImplementedError: Could not run 'torchvision::nms' with arguments from the 'CUDA' backend.")
    assert nms.code == "conflicting-packages"


def test_an_old_torchs_missing_cuda_binding_is_a_cpu_build_and_on_a_mac_the_platform():
    trace = ("  File \"/{home}/anaconda2/lib/python2.7/site-packages/torch/cuda/__init__.py\", line 262, in set_device\n"
             "    torch._C._cuda_setDevice(device)\n"
             "AttributeError: 'module' object has no attribute '_cuda_setDevice'\n")
    assert first(trace.format(home="home/user")).code == "cpu-only-build"
    assert first(trace.format(home="Users/user")).code == "platform-unsupported"
    assert first("AttributeError: module 'torch._C' has no attribute '_cuda_getDeviceCount'").code == "cpu-only-build"


def test_the_tensorflow_gpu_placeholder_in_the_package_indexs_words():
    for line in ("> tensorflow-gpu has been removed. Please install tensorflow instead.",
                 "setup.py installation error: `tensorflow-gpu` package has been removed.",
                 'The "tensorflow-gpu" package has been removed!'):
        assert first(line).code == "package-removed", line


def test_tensorflow_and_flax_shape_checks_are_the_program():
    for line in ("InvalidArgumentError: logits and labels must have the same first dimension, got logits shape "
                 "[250,10] and labels shape [2500]",
                 'ScopeParamShapeError: Inconsistent shapes between value and initializer for parameter "kernel" in '
                 '"/Dense_0": (5, 1), (3, 1).'):
        f = first(line)
        assert f.code == "not-environment" and not errors(line), line


def test_open3d_ops_built_for_another_framework_release():
    f = first("Exception: Version mismatch: Open3D needs PyTorch version 1.7.*, but version 1.8.2 is installed!")
    assert f.code == "conflicting-packages" and "1.7.*" in f.title and "1.8.2" in f.title


def test_tiny_cuda_nn_without_an_extension_for_the_gpu():
    f = first("OSError: Could not find compatible tinycudann extension for compute capability 75.")
    assert f.code == "gpu-arch-unsupported" and any("TCNN_CUDA_ARCHITECTURES=75" in step for step in f.fix)


def test_jax_info_lines_about_other_backends_on_a_cuda_machine_are_harmless():
    log = ("I0423 20:06:11.665900 140285023629312 xla_bridge.py:440] Unable to initialize backend 'rocm': NOT_FOUND: "
           "Could not find registered platform with name: \"rocm\". Available platform names are: Interpreter Host "
           "CUDA\n"
           "I0423 20:06:11.666139 140285023629312 xla_bridge.py:440] Unable to initialize backend 'tpu': module "
           "'jaxlib.xla_extension' has no attribute 'get_tpu_client'\n")
    assert not [f for f in explain_text(log).findings if f.severity in (Severity.ERROR, Severity.WARNING)]
    # JAX falling back to the CPU is still read
    fallback = log + "W0423 20:06:11.7 xla_bridge.py:463] No GPU/TPU found, falling back to CPU.\n"
    assert [f for f in explain_text(fallback).findings if f.severity in (Severity.ERROR, Severity.WARNING)]
