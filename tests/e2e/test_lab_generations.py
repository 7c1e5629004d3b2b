"""GPU generations and the builds they can run, through the installed command (issue 10, classes 1-2).

A Tesla K80 (Kepler, compute capability 3.7) stops at driver branch R470 and CUDA 11.x: a CUDA 12
torch can never run on it, and "upgrade the driver to 525" is a fix nobody can carry out.
"""

import json
import os
import subprocess
import sys

import pytest

from tests.e2e.test_lab_frameworks import fake_torch, findings_of
from tests.frameworks.fatbin_elf import write_cuda_library
from tests.lab.scenario import LabGpu, Scenario


def k80_driver_470() -> Scenario:
    """A Tesla K80 board (two GK210 GPUs, cc 3.7) on the last Kepler driver, 470.256.02 (CUDA 11.4)."""
    gpus = [LabGpu(name="Tesla K80", uuid=f"GPU-7c0e5d2a-4b1f-4e8a-9d3c-2f6b8a1e5c{i}0", pci_bus_id=f"00000000:0{i + 4}:00.0",
                   compute_capability=(3, 7), memory_total_mib=11441, pci_device_id=0x102D, pci_class=0x030200,
                   pci_subsystem_id=0x106C10DE, multiprocessor_count=13) for i in range(2)]
    return Scenario(name="k80_driver_470", gpus=gpus, driver_version="470.256.02", cuda_driver_version=11040)


def no_driver_upgrade_asked(report):
    for finding in report["findings"]:
        for step in finding["fix"]:
            assert "Upgrade the NVIDIA driver" not in step and "525" not in step, (finding["code"], step)


def test_kepler_k80_with_cuda_12_torch(lab, tmp_path):
    fake_torch(tmp_path / "site", "2.4.1+cu121", "12.1")
    rc, report, stderr = lab.run_check(k80_driver_470(), "--quick", env_extra={"PYTHONPATH": str(tmp_path / "site")})
    assert rc == 1, stderr
    found = findings_of(report)
    arch = found["gpu-arch-unsupported"]
    assert arch["severity"] == "error" and report["findings"][0]["code"] == "gpu-arch-unsupported"  # root cause first
    assert "PyTorch 2.4.1+cu121" in arch["detail"] and "Tesla K80" in arch["detail"]
    assert "Kepler" in arch["detail"] and "R470" in arch["detail"]
    assert arch["evidence"]["source"].startswith("https://docs.nvidia.com/")
    # the fix is something that can be done on this machine: a build, or the honest statement
    assert arch["fix"] and ("(cu118)" in arch["fix"][0] or "CUDA 11" in arch["fix"][0])
    # one cause, one finding: no driver makes a CUDA 12 build run here, so no driver-too-old about torch
    assert not [f for f in report["findings"] if f["code"] == "driver-too-old" and f["evidence"].get("framework")]
    no_driver_upgrade_asked(report)


def test_kepler_k80_torch_whose_library_has_no_sm37(lab, tmp_path):
    """A CUDA 11.8 torch (its driver is fine under minor version compatibility) whose libtorch_cuda.so
    carries no Kepler kernels: the fat binary says so, whatever the version string suggests."""
    site = tmp_path / "site"
    fake_torch(site, "2.0.1+cu118", "11.8")
    write_cuda_library(site / "torch" / "lib" / "libtorch_cuda.so", sass=[50, 60, 70, 75, 80, 86, 90], ptx=[90])
    rc, report, stderr = lab.run_check(k80_driver_470(), "--quick", env_extra={"PYTHONPATH": str(site)})
    assert rc == 1, stderr
    arch = findings_of(report)["gpu-arch-unsupported"]
    assert "sm_50" in arch["detail"] and "fat binaries of" in arch["detail"] and "libtorch_cuda.so" in arch["detail"]
    assert arch["evidence"]["arch_list"][0] == "sm_50"
    no_driver_upgrade_asked(report)


def test_kepler_library_with_sm37_is_fine(lab, tmp_path):
    site = tmp_path / "site"
    fake_torch(site, "2.0.1+cu118", "11.8")
    write_cuda_library(site / "torch" / "lib" / "libtorch_cuda.so", sass=[37, 50, 60, 70, 75, 80, 86], ptx=[86])
    rc, report, stderr = lab.run_check(k80_driver_470(), "--quick", env_extra={"PYTHONPATH": str(site)})
    assert "gpu-arch-unsupported" not in findings_of(report), report["findings"]


def gpudoctor(*argv):
    exe = os.path.join(os.path.dirname(sys.executable), "gpudoctor")
    proc = subprocess.run([exe, *argv], capture_output=True, text=True, timeout=60)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize("old, new", [("Tesla K80", "NVIDIA Tesla K80"),
                                      ("GeForce GTX 1080 Ti", "NVIDIA GeForce GTX 1080 Ti"),
                                      ("GeForce RTX 2080 Ti", "NVIDIA GeForce RTX 2080 Ti"),
                                      ("Tesla V100-SXM2-16GB", "NVIDIA V100-SXM2-16GB"),
                                      ("Tesla K40m", "Tesla K40"), ("Tesla K20c", "Tesla K20")])
def test_compat_gpu_resolves_old_and_new_driver_spellings(old, new):
    answers = []
    for name in (old, new):
        rc, out, err = gpudoctor("compat", "gpu", name, "--json")
        assert rc == 0, err
        answers.append(json.loads(out))
    assert answers[0]["matched"] == answers[1]["matched"]
    assert answers[0]["compute_capability"] == answers[1]["compute_capability"]


def test_an_upper_case_m_is_another_gpu_not_a_board_suffix():
    rc, out, err = gpudoctor("compat", "gpu", "Quadro M2000M")
    assert rc != 0 and "not in the tables" in err


def test_compat_gpu_says_how_far_a_kepler_gpu_goes():
    rc, out, err = gpudoctor("compat", "gpu", "Tesla K80")
    assert rc == 0, err
    assert "3.7" in out and "Kepler" in out and "R470" in out and "11.4" in out
    rc, out, err = gpudoctor("compat", "gpu", "NVIDIA GeForce GTX 1080 Ti", "--json")
    support = json.loads(out)["support"]
    assert support["last_driver_branch"] == 580 and support["last_cuda_major"] == 12


def test_kepler_k80_with_cuda_12_torch_and_its_wheels(lab, tmp_path):
    """The real install: torch cu121 with its nvidia-*-cu12 wheels. The CUDA 12 runtime is there because of
    the torch build, so it is one finding (the build), whose fix also removes the wheels."""
    from tests.e2e.test_lab_torch_libraries import torch_241
    from tests.e2e.test_lab_frameworks import write

    site = tmp_path / "site"
    torch_241(site)
    for name, version in (("nvidia-cuda-runtime-cu12", "12.1.105"), ("nvidia-cudnn-cu12", "9.1.0.70")):
        write(site / f"{name.replace('-', '_')}-{version}.dist-info" / "METADATA",
              f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    rc, report, stderr = lab.run_check(k80_driver_470(), "--quick", env_extra={"PYTHONPATH": str(site)})
    assert rc == 1, stderr
    errors = [f for f in report["findings"] if f["severity"] == "error"]
    assert [f["code"] for f in errors] == ["gpu-arch-unsupported"], errors
    assert errors[0]["fix"][-1] == "Remove the CUDA 12 libraries this build brought (no driver for this GPU runs them): " \
                                   "`pip uninstall -y nvidia-cuda-runtime-cu12 nvidia-cudnn-cu12`"
    no_driver_upgrade_asked(report)
