"""TensorFlow's and JAX's own log lines, parsed into facts."""

from __future__ import annotations

from gpudoctor.probes.frameworks.logparse import missing_libraries, parse_framework_log

from .fakes import TF_115_LOG

TF_221_NO_DRIVER = """WARNING: All log messages before absl::InitializeLog() is called are written to STDERR
I0000 00:00:1795251278.340384   18843 cudart_stub.cc:31] Could not find cuda drivers on your machine, GPU will not be used.
I0000 00:00:1795251281.396924   18843 dso_loader.cc:144] Could not load dynamic library 'libcuda.so.1'; dlerror: libcuda.so.1: cannot open shared object file: No such file or directory
E0000 00:00:1795251281.396983   18843 cuda_platform.cc:52] failed call to cuInit: INTERNAL: CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)
"""


def test_tf_115_dso_loader_failure():
    lines = parse_framework_log(TF_115_LOG)
    assert missing_libraries(lines) == ["libcudart.so.10.0", "libcudnn.so.7"]
    assert lines[0].source == "tensorflow/stream_executor/platform/default/dso_loader.cc:55"
    assert lines[0].level == "W"
    assert lines[-1].kind == "cannot-dlopen-gpu-libs"


def test_absl_prefixed_lines_of_recent_tensorflow_without_driver():
    lines = parse_framework_log(TF_221_NO_DRIVER)
    assert [ln.kind for ln in lines] == ["no-cuda-drivers", "dlopen-failed", "cuinit-failed"]
    assert lines[2].error == "INTERNAL: CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)"
    assert lines[1].source == "dso_loader.cc:144"


def test_cudnn_runtime_older_than_compiled():
    text = ("2022-06-01 12:00:00.000000: E tensorflow/stream_executor/cuda/cuda_dnn.cc:377] Loaded runtime "
            "CuDNN library: 8.1.0 but source was compiled with: 8.6.0.  CuDNN library needs to have matching "
            "major version and equal or higher minor version.")
    (line,) = parse_framework_log(text)
    assert (line.kind, line.runtime_version, line.compiled_version) == ("cudnn-version-mismatch", "8.1.0", "8.6.0")


def test_repeated_lines_are_kept_once_and_noise_is_dropped():
    text = TF_221_NO_DRIVER + TF_221_NO_DRIVER + "I0000 00:00:1.0 1 cpu_feature_guard.cc:227] This TensorFlow binary"
    assert len(parse_framework_log(text)) == 3
