"""Findings re-read in the context the whole log gives (gpudoctor/explain/context.toml)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from gpudoctor.explain import explain_text
from gpudoctor.explain.context import load_rules

NO_DEVICE = "E external/xla/xla/stream_executor/cuda/cuda_driver.cc:152] failed call to cuInit: CUDA_ERROR_NO_DEVICE"
NO_LIBCUDA = "OSError: libcuda.so: cannot open shared object file: No such file or directory"


def codes(text):
    return [(f.code, f.caused_by) for f in explain_text(text).findings]


def test_every_rule_is_sourced_and_names_catalogued_codes():
    rules = load_rules()
    assert {r.becomes for r in rules} == {"wsl-driver-misconfigured", "container-no-gpu-access", "no-visible-gpu",
                                          "cuda-init-failed", "platform-unsupported", "no-matching-build",
                                          "gpu-memory-preallocated", "libcuda-missing", "conflicting-packages",
                                          "cpu-only-build", "no-nvidia-gpu", "driver-too-old", "cuda-library-missing",
                                          "gpu-memory-full", "invalid-device-ordinal", "framework-gpu-not-detected",
                                          "invalid-visible-devices", "gpu-arch-unsupported", "not-environment",
                                          "device-nodes-missing"}
    assert all(r.source.startswith(("https://docs.nvidia.com/", "https://www.tensorflow.org/", "https://pytorch.org/",
                                    "https://docs.jax.dev/", "https://docs.docker.com/", "https://rocm.docs.amd.com/",
                                    "https://docs.python.org/", "https://pve.proxmox.com/pve-docs/",
                                    "https://github.com/facebookresearch/xformers#", "https://opennmt.net/CTranslate2/",
                                    "https://github.com/huggingface/accelerate/blob/main/docs/"))
               for r in rules)


def test_a_driver_failure_in_a_wsl_log_is_the_wsl_setup():
    log = "Linux version 5.15.133.1-microsoft-standard-WSL2 (root@1c602f52c2e4)\n" + NO_LIBCUDA + "\n" + NO_DEVICE
    result = explain_text(log)
    first = result.findings[0]
    assert first.code == "wsl-driver-misconfigured" and first.caused_by is None
    assert first.evidence["context"] == {"wsl_kernel": "5.15.133.1-microsoft-standard-WSL2"}
    assert any("/usr/lib/wsl/lib" in step for step in first.fix)
    assert [f.code for f in result.findings if f.caused_by is None] == ["wsl-driver-misconfigured"]


def test_no_device_alone_names_visibility_as_the_likely_cause():
    # Issue 9, class 5: from a log, "no CUDA-capable device" points at CUDA_VISIBLE_DEVICES first,
    # and the finding still names the other readings (no GPU in this process, the driver).
    first = explain_text(NO_DEVICE).findings[0]
    assert first.code == "no-visible-gpu"
    assert "CUDA_VISIBLE_DEVICES" in first.fix[0] and "container" in first.detail and "nvidia-smi" in first.detail


def test_a_container_started_without_gpus():
    log = "$ docker run -it --rm pytorch/pytorch:2.1.0-cuda12.1-cudnn8-runtime python train.py\n" + NO_LIBCUDA
    first = explain_text(log).findings[0]
    assert first.code == "container-no-gpu-access" and "--gpus all" in first.fix[0]


def test_a_container_started_with_gpus_is_not_blamed():
    log = "$ docker run --gpus all -it pytorch/pytorch python train.py\n" + NO_LIBCUDA
    assert "container-no-gpu-access" not in [c for c, _ in codes(log)]


@pytest.mark.parametrize("setting, blamed", [
    ('os.environ["CUDA_VISIBLE_DEVICES"] = "1"', True), ("export CUDA_VISIBLE_DEVICES=-1", True),
    ("CUDA_VISIBLE_DEVICES=$GPU python train.py", True), ('os.environ["CUDA_VISIBLE_DEVICES"] = ""', True),
    ("export CUDA_VISIBLE_DEVICES=0", False), ("export CUDA_VISIBLE_DEVICES=0,1", False),
])
def test_a_visible_devices_value_that_selects_nothing(setting, blamed):
    first = explain_text(setting + "\n" + NO_DEVICE).findings[0]
    assert (first.code == "no-visible-gpu") is blamed, first
    if not blamed:  # a value that selects GPU 0: the process has no GPU at all
        assert first.code == "cuda-init-failed" and "not the cause" in first.title


def test_through_the_installed_command(tmp_path):
    log = tmp_path / "wsl.log"
    log.write_text("I run it in WSL2 Ubuntu 22.04\n" + NO_DEVICE + "\n")
    out = subprocess.run([sys.executable, "-m", "gpudoctor", "explain", "--json", str(log)], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 1, out.stderr
    report = json.loads(out.stdout)
    assert report["findings"][0]["code"] == "wsl-driver-misconfigured"
    assert report["findings"][0]["evidence"]["reread_from"] == "no-visible-gpu"


def test_a_container_started_without_gpus_in_which_cuda_is_checked():
    # No error line at all: the facts (a docker run without --gpus, then a CUDA check inside) are the cause.
    log = "$ sudo docker run -t -i floydhub/pytorch:latest-gpu-py3 ipython\nIn [2]: torch.cuda.is_available()\nOut[2]: False\n"
    first = explain_text(log).findings[0]
    assert first.code == "container-no-gpu-access" and first.evidence["context_rule"] == "container-without-gpus-then-cuda-checked"
    assert "--gpus all" in first.fix[0]


def test_a_docker_run_without_a_cuda_check_is_not_blamed():
    assert explain_text("$ docker run -p 8080:8080 myapp\nserver started\n").findings == []


@pytest.mark.parametrize("log, code", [
    ("My system is Windows 11. My tensorflow version is 2.12.0.\nprint(tf.config.list_physical_devices('GPU'))\n[]\n",
     "platform-unsupported"),
    ("Windows 10\nTensorFlow version: 2.10.1\nprint(tf.config.list_physical_devices('GPU'))\n[]\n", None),  # last GPU release
    ("WSL2 on Windows 11\nTensorFlow version: 2.15.0\nprint(tf.config.list_physical_devices('GPU'))\n[]\n", None),
    ("on win11\nTensorFlow version: 2.12.0\nprint(tf.config.list_physical_devices('GPU'))\n[]\n", "platform-unsupported"),
    ("(tf) C:\\projects\\app>python check.py\nTensorFlow version: 2.12.0\nprint(tf.config.list_physical_devices('GPU'))\n[]\n",
     "platform-unsupported"),
])
def test_tensorflow_211_and_newer_on_native_windows(log, code):
    findings = explain_text(log).findings
    assert (findings[0].code if findings else None) == code
    if code:
        assert "2.12.0" in findings[0].title and any("WSL2" in step for step in findings[0].fix)


def test_no_device_in_a_container_prompt_is_the_container():
    log = "root@00921839c781:/app# nvidia-smi\nbash: nvidia-smi: command not found\n"
    first = explain_text(log).findings[0]
    assert first.code == "container-no-gpu-access" and "00921839c781" in first.detail


@pytest.mark.parametrize("said", ["nvidia-smi works on the host but not inside the docker container",
                                  "DOCKER_FROM: nvidia/cuda:12.8.1-cudnn-devel-ubuntu24.04"])
def test_a_log_that_says_it_comes_from_a_container(said):
    first = explain_text(f"{said}\n!! ERROR: nvidia-smi not found\n").findings[0]
    assert first.code == "container-no-gpu-access"
    # without the container, the same line is the driver
    assert explain_text("!! ERROR: nvidia-smi not found\n").findings[0].code == "driver-not-loaded"


def test_jax_cuda_install_on_native_windows():
    log = 'C:\\Users\\me>pip install -U "jax[cuda12]"\nWARNING: jax 0.4.14 does not provide the extra \'cuda12\'\n'
    first = explain_text(log).findings[0]
    assert first.code == "platform-unsupported" and any("WSL2" in step for step in first.fix)
    # the same warning on Linux is the Python (pip fell back to an old release)
    assert explain_text(log.split("\n", 1)[1]).findings[0].code == "python-unsupported"


def test_a_cuda_package_conda_cannot_find_on_a_mac():
    log = "PackagesNotFoundError: The following packages are not available from current channels:\n  - cudatoolkit=11.3\n"
    assert explain_text(log).findings[0].code == "no-matching-build"
    first = explain_text(log + 'MacBook Pro M1 14" - MacOS 12.5.1\n').findings[0]
    assert first.code == "platform-unsupported" and "macOS" in first.title


def test_a_misspelt_visible_devices_the_shell_echoes():
    log = "-bash-4.1$ echo $CUDA_VISIBLE_DEVICES\n\n-bash-4.1$ echo $CUDA_VISABLE_DEVICES\n0\n"
    findings = explain_text(log).findings
    assert [(f.code, f.evidence["misspelled_var"]) for f in findings] == [("misspelled-env-var", "CUDA_VISABLE_DEVICES")]


def test_torch_warning_on_a_cpu_machine_is_not_an_error():
    log = ("UserWarning: CUDA initialization: Found no NVIDIA driver on your system. Please check that you have an "
           "NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx\n")
    findings = explain_text(log).findings
    assert [f.severity.value for f in findings] == ["info"]


def test_conda_without_a_cuda_package_for_this_platform():
    log = ("conda install pytorch==2.2.2 pytorch-cuda=12.1 -c pytorch -c nvidia\n"
           "PackagesNotFoundError: The following packages are not available from current channels:\n\n"
           "  - pytorch-cuda=12.1*\n")
    findings = explain_text(log).findings
    assert findings[0].code == "no-matching-build" and "pytorch-cuda=12.1*" in findings[0].title
    assert any("MPS" in step for step in findings[0].fix)
    # the same list item in an environment file, without conda's error, is nothing
    assert not explain_text("dependencies:\n  - pytorch-cuda=12.1\n").findings


def test_nvidia_smi_and_driver_versions_that_differ_mean_wsl():
    header = "| NVIDIA-SMI 545.46                 Driver Version: 546.80       CUDA Version: ERR!     |\n"
    first = explain_text(header).findings[0]
    assert first.code == "wsl-driver-misconfigured" and "NVIDIA-SMI 545.46" in first.detail
    native = header.replace("545.46", "546.80")  # one package on Linux and Windows: the same version
    assert explain_text(native).findings[0].code == "libcuda-missing"


def test_a_companion_extension_built_for_another_cuda():
    log = ("  File \"site-packages/pytorch3d/renderer/blending.py\", line 9, in <module>\n"
           "    from pytorch3d import _C\n"
           "ImportError: libcudart.so.10.1: cannot open shared object file: No such file or directory\n")
    first = explain_text(log).findings[0]
    assert first.code == "conflicting-packages" and "pytorch3d" in first.title
    # the same missing runtime for torch itself is the CUDA runtime
    assert explain_text(log.replace("from pytorch3d import _C", "import torch")).findings[0].code != "conflicting-packages"
