"""Readings added in stop 25: a CUDA failure inside a desktop virtual machine (VMware Workstation, VirtualBox,
Parallels), whose guest has no NVIDIA GPU; the package named tensorflow up to 2.0 (the CPU build; GPU support was
the separate tensorflow-gpu). Each reading is checked next to the log that must not get it."""

from __future__ import annotations

from gpudoctor.explain import explain_text
from tests.explain.readings import first

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
