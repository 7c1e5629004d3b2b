"""Readings added in stop 25: a CUDA failure inside a desktop virtual machine (VMware Workstation, VirtualBox,
Parallels), whose guest has no NVIDIA GPU. Each reading is checked next to the log that must not get it."""

from __future__ import annotations

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
