"""What explain reads from the numbers and versions in a log, not only from its wording: pip's
version lists against the Python, TensorFlow's driver diagnostics, PyTorch's OOM arithmetic."""

from __future__ import annotations

import pytest

from gpudoctor.explain import explain_text
from gpudoctor.model import Severity
from tests.explain.readings import first

NOT_FOUND = ("ERROR: Could not find a version that satisfies the requirement {req} (from versions: {versions})\n"
             "ERROR: No matching distribution found for {req}\n")


def test_a_python_too_new_for_the_pinned_torch_is_named_with_the_pythons_that_have_wheels():
    log = ("Python 3.12.6 (tags/v3.12.6:a4a2d2b, Sep  6 2024, 20:11:23) [MSC v.1940 64 bit (AMD64)]\n"
           + NOT_FOUND.format(req="torch==2.1.2", versions="2.2.0, 2.2.0+cu121, 2.3.1, 2.4.1+cu121"))
    f = first(log)
    assert f.code == "python-unsupported" and f.severity == Severity.ERROR
    assert "3.8 to 3.11" in f.detail and "3.12.6" in f.detail
    assert any("torch==2.1.2" in step for step in f.fix)


def test_only_older_releases_offered_means_the_python_is_too_old_even_without_its_version():
    f = first(NOT_FOUND.format(req="torch==2.5.1", versions="2.4.0+cu124, 2.4.1+cu124"))
    assert f.code == "python-unsupported" and "older than 2.5.1 supports" in f.detail


@pytest.mark.parametrize("log", [
    NOT_FOUND.format(req="torch==2.3.0", versions="2.2.0, 2.4.0"),  # a gap in one index says nothing of the Python
    "Python version: 3.7 (32-bit runtime)\n" + NOT_FOUND.format(req="torch==1.5.1", versions="none"),
    NOT_FOUND.format(req="torch===1.4.0", versions="0.1.2, 0.1.2.post1, 0.1.2.post2"),  # the old placeholder sdist
    NOT_FOUND.format(req="paddlepaddle-gpu==2.5.1", versions="none"),  # no Python in the log
    "Python 3.6.8 |Anaconda, Inc.| (default, Feb 21 2019, 18:30:04) [MSC v.1916 64 bit (AMD64)] on win32\n"
    + NOT_FOUND.format(req="jaxlib", versions=""),  # jaxlib had no Windows wheels: the OS, not the Python
])
def test_no_python_verdict_where_the_log_does_not_show_it(log):
    assert first(log).code == "no-matching-build"


def test_from_versions_none_with_the_python_stated_names_the_python():
    log = NOT_FOUND.format(req="paddlepaddle-gpu==2.5.1.post120", versions="none") + "\nPython: 3.12\n"
    f = first(log)
    assert f.code == "python-unsupported" and "Python 3.12" in f.detail


def test_a_python_the_tables_list_for_that_torch_is_not_blamed():
    log = "Python 3.10.6\n" + NOT_FOUND.format(req="torch==2.1.2", versions="none")
    assert first(log).code == "no-matching-build"


NO_DEVICE = "E tensorflow/stream_executor/cuda/cuda_driver.cc:406] failed call to cuInit: CUDA_ERROR_NO_DEVICE\n"


# TensorFlow's verdict line, or (when a paste stops before it) the two versions it prints on lines of their own
@pytest.mark.parametrize("versions", [
    "E tensorflow/stream_executor/cuda/cuda_diagnostics.cc:303] kernel version 384.130.0 does not match DSO version "
    "375.66.0 -- cannot find working devices in this configuration\n",
    "I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:189] libcuda reported version is: 375.66.0\n"
    "I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:193] kernel reported version is: 384.130.0\n",
])
def test_tensorflow_kernel_and_dso_versions_differ(versions):
    findings = explain_text(NO_DEVICE + versions).findings
    assert findings[0].code == "nvml-driver-mismatch"
    assert "375.66.0" in findings[0].title and "384.130.0" in findings[0].title
    assert findings[1:] and all(f.caused_by == "nvml-driver-mismatch" for f in findings[1:])


def test_one_driver_release_written_two_ways_is_no_mismatch():
    log = (NO_DEVICE + "I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:189] libcuda reported version is: 384.111.0\n"
           "I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:193] kernel reported version is: 384.111\n")
    assert "nvml-driver-mismatch" not in [f.code for f in explain_text(log).findings]


def test_an_oom_where_most_memory_is_held_outside_the_process_is_the_environment():
    old = ("RuntimeError: CUDA out of memory. Tried to allocate 60.00 MiB (GPU 0; 11.17 GiB total capacity; "
           "505.96 MiB already allocated; 12.50 MiB free; 530.00 MiB reserved in total by PyTorch)")
    new = ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 32.00 MiB. GPU 0 has a total capacty "
           "of 23.65 GiB of which 41.56 MiB is free. Process 4242 has 20.10 GiB memory in use. Including non-PyTorch "
           "memory, this process has 3.44 GiB memory in use.")
    for log in (old, new):
        f = first(log)
        assert f.code == "gpu-memory-full" and f.severity == Severity.ERROR
        assert "held outside this process" in f.detail


def test_the_oom_wording_of_pytorch_before_1_4_is_read_too():
    # "X already allocated; Y free; Z cached)": the process holds X + Z, the rest of the GPU is elsewhere
    elsewhere = ("RuntimeError: CUDA out of memory. Tried to allocate 338.00 MiB (GPU 0; 3.95 GiB total capacity; "
                 "1.62 GiB already allocated; 23.00 MiB free; 9.10 MiB cached)")
    f = first(elsewhere)
    assert f.code == "gpu-memory-full" and f.evidence["own_mib"] == "1668"
    own = elsewhere.replace("1.62 GiB already allocated", "3.62 GiB already allocated")
    assert [f.code for f in explain_text(own).findings] == ["not-environment"]


def test_an_oom_of_the_program_itself_stays_a_program_problem():
    log = ("RuntimeError: CUDA out of memory. Tried to allocate 752.00 MiB (GPU 0; 14.76 GiB total capacity; "
           "9.84 GiB already allocated; 53.94 MiB free; 10.03 GiB reserved in total by PyTorch)")
    findings = explain_text(log).findings
    assert [f.code for f in findings] == ["not-environment"]


def test_onnxruntime_with_cpu_providers_only():
    assert first("Available providers: ['AzureExecutionProvider', 'CPUExecutionProvider']").code == "cpu-only-build"
    wrapped = ("UserWarning: Specified provider 'CUDAExecutionProvider' is not in available provider\n"
               "names.Available providers: 'AzureExecutionProvider, CPUExecutionProvider'\n")
    assert first(wrapped).code == "conflicting-packages"


@pytest.mark.parametrize("line", [
    "RuntimeError: mat1 and mat2 shapes cannot be multiplied (1x2 and 6x64)",
    "RuntimeError: shape '[-1, 400]' is invalid for input of size 3200",
    "RuntimeError: The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1",
    "RuntimeError: Given groups=1, weight of size [64, 3, 7, 7], expected input[1, 4, 224, 224] to have 3 channels",
    "RuntimeError: expected scalar type Float but found Double",
])
def test_shape_and_type_errors_are_program_bugs(line):
    findings = explain_text(line).findings
    assert [f.code for f in findings] == ["not-environment"]


def test_a_cpu_torch_requested_on_purpose_does_not_hide_the_companion_that_breaks():
    log = ("pip install torch==2.7.0+cpu torchvision==0.22.0\n"
           "RuntimeError: operator torchvision::nms does not exist\n")
    assert first(log).code == "conflicting-packages"


@pytest.mark.parametrize("line, code", [
    ("ERROR: Package 'torch' requires a different Python: 3.7.3 not in '>=3.8.0'", "python-unsupported"),
    ("Warning  FailedScheduling  0/3 nodes are available: 3 Insufficient nvidia.com/gpu.", "container-no-gpu-access"),
    ("RuntimeError: FlashAttention only supports Ampere GPUs or newer.", "gpu-arch-unsupported"),
    ("RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable", "gpu-unavailable"),
    ("UserWarning: The installed version of bitsandbytes was compiled without GPU support. 8-bit optimizers, 8-bit "
     "multiplication, and GPU quantization are unavailable.", "cpu-only-build"),
    ("RuntimeError: Library cublas64_12.dll is not found or cannot be loaded", "dll-load-failed"),
    ("RuntimeError: Library libcublas.so.12 is not found or cannot be loaded", "cuda-library-missing"),
    ("ValueError: libnvrtc.so.*[0-9].*[0-9] not found in the system path", "cuda-library-missing"),
    ("RuntimeError: nvrtc: error: failed to open libnvrtc-builtins.so.11.1.", "cuda-library-missing"),
    ("RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (8, 3, 2) but linked against "
     "(8, 0, 3)", "cudnn-unacceptable"),
    ('docker: Error response from daemon: error gathering device information while adding custom device '
     '"/dev/nvidia-uvm": lstat /dev/nvidia-uvm: no such file or directory.', "uvm-not-loaded"),
    ("Oct 14 07:35:56 pop-os nvidia-settings-autostart.desktop[2905]: ERROR: NVIDIA driver is not loaded",
     "driver-not-loaded"),
])
def test_each_class_is_read_in_its_tools_own_words(line, code):
    findings = explain_text(line).findings
    assert findings[0].code == code
    assert "inferred_from" not in findings[0].evidence  # a signature, not the last resort


def test_the_paging_file_is_one_finding_with_its_own_fix():
    line = ('OSError: [WinError 1455] The paging file is too small for this operation to complete. Error loading '
            '"C:\\Python310\\lib\\site-packages\\torch\\lib\\cudnn_adv_infer64_8.dll" or one of its dependencies.')
    findings = explain_text(line).findings
    assert len(findings) == 1 and findings[0].code == "dll-load-failed"
    assert "paging file" in findings[0].title and any("Virtual memory" in step for step in findings[0].fix)


def test_warnings_that_slow_a_start_are_warnings():
    ptx = ("W tensorflow/core/common_runtime/gpu/gpu_device.cc:2052] TensorFlow was not built with CUDA kernel "
           "binaries compatible with compute capability 9.0. CUDA kernels will be jit-compiled from PTX")
    xla = ("W external/xla/xla/service/gpu/nvptx_compiler.cc:744] The NVIDIA driver's CUDA version is 12.2 which is "
           "older than the ptxas CUDA version (12.3.107). Because the driver is older than the ptxas version")
    for line, code in ((ptx, "gpu-arch-unsupported"), (xla, "driver-too-old")):
        f = first(line)
        assert f.code == code and f.severity == Severity.WARNING


def test_a_program_that_says_no_gpu_under_a_visible_devices_index_the_machine_lacks():
    log = ("in search.sh line 1 you set\n   CUDA_VISIBLE_DEVICES=1\n"
           "Exception: No GPU found, please run without --cuda\n")
    f = first(log)
    assert f.code == "no-visible-gpu" and '"1"' in f.title
    zero = first("CUDA_VISIBLE_DEVICES=0\nException: No GPU found, please run without --cuda\n")
    assert zero.evidence.get("context_rule") != "visible-devices-selects-nothing-then-no-gpu"  # 0 exists anywhere


def test_issue_form_fields_give_the_versions_no_line_names():
    from gpudoctor.explain.template_fields import template_facts

    form = ("### TensorFlow version\n\n2.18.0\n\n### OS platform and distribution\n\nWindows 11 24h2\n\n"
            "### Python version\n\n3.12\n")
    assert template_facts(form) == {"tf_version": "2.18.0", "windows_platform": "Windows 11", "python_version": "3.12"}
    assert template_facts("TensorFlow version\nnot sure, the latest\n") == {}  # a value of another shape is not one
    log = form + ("import tensorflow as tf\nprint(tf.config.list_physical_devices())\n"
                  "[PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')]\n")
    assert first(log).code == "platform-unsupported"


def test_an_upper_bound_pin_and_a_wheel_tag_name_the_python():
    log = ("  Using cached opencv_python-4.5.1.48-cp38-cp38-win_amd64.whl (34.9 MB)\n"
           + NOT_FOUND.format(req="tensorflow-gpu<=1.12.0", versions="2.2.0rc1, 2.2.0, 2.3.0, 2.4.0"))
    f = first(log)
    assert f.code == "python-unsupported" and "tensorflow-gpu<=1.12.0" in f.title and "Python 3.8" in f.detail


def test_wsl_without_dev_dxg_and_bitsandbytes_without_libcuda():
    dxg = ("Linux host 4.19.104-microsoft-standard #1 SMP x86_64 GNU/Linux\n"
           "ls: cannot access '/dev/dxg': No such file or directory\n")
    assert first(dxg).code == "wsl-driver-misconfigured"
    bnb = ("CUDA SETUP: WARNING! libcuda.so not found! Do you have a CUDA driver installed?\n"
           "UserWarning: The installed version of bitsandbytes was compiled without GPU support. 8-bit optimizers "
           "and GPU quantization are unavailable.\n")
    findings = explain_text(bnb).findings
    assert findings[0].code == "libcuda-missing" and findings[1].caused_by == "libcuda-missing"
    assert first(bnb + "Linux host 5.15.90.1-microsoft-standard-WSL2\n").code == "wsl-driver-misconfigured"


def test_torch_without_a_driver_is_harmless_until_the_program_needs_the_gpu():
    warn = ("UserWarning: CUDA initialization: Found no NVIDIA driver on your system. Please check that you have an "
            "NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx\n")
    assert all(f.severity == Severity.INFO for f in explain_text(warn).findings)
    f = first(warn + 'RuntimeError: Unable to proceed, no GPU resources available\n')
    assert f.code == "libcuda-missing" and f.severity == Severity.ERROR


def test_lsmod_without_nvidia_uvm_matters_only_where_cuda_failed_or_it_was_looked_for():
    modules = "nvidia_drm            122880  1\nnvidia_modeset       1916928  1 nvidia_drm\n"
    assert explain_text(modules).findings == []  # nvidia_uvm loads on demand: nothing failed
    looked = "$ lsmod | grep nvidia_uvm\n$ lsmod | grep nvidia\n" + modules
    assert [f.code for f in explain_text(looked).findings] == ["uvm-not-loaded"]
    loaded = looked + "nvidia_uvm           1310720  0\n"
    assert explain_text(loaded).findings == []


def test_cuda_out_of_memory_inside_the_training_step_is_the_program():
    log = ("  File \"train.py\", line 409, in <module>\n    loss.backward()\n"
           "RuntimeError: CUDA error: out of memory\n")
    assert [f.code for f in explain_text(log).findings] == ["not-environment"]
    # at start-up (no training frame) it is memory held elsewhere
    assert explain_text("RuntimeError: CUDA error: out of memory\n").findings[0].code == "gpu-memory-full"


def test_cuda_errors_of_workers_spawned_without_a_main_guard_are_the_program():
    log = ("RuntimeError: cuda runtime error (30) : unknown error at C:/pytorch/aten/src/THC/THCTensorRandom.cu:25\n"
           "RuntimeError:\n        An attempt has been made to start a new process before the\n"
           "        current process has finished its bootstrapping phase.\n")
    findings = explain_text(log).findings
    assert findings[0].code == "not-environment"
    assert all(f.severity != Severity.ERROR for f in findings)
