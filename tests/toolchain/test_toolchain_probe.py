"""The toolchain probe finds nvcc, the host compiler and ninja as torch.utils.cpp_extension does,
and the installed command turns them into findings (issue 10: nvcc 12.x next to a cu118 torch)."""

from __future__ import annotations

import os
import stat
import textwrap

from gpudoctor.probes.toolchain import extension_cuda_home, probe_toolchain
from tests.e2e.test_lab_frameworks import fake_torch, findings_of
from tests.lab import scenarios


def script(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + textwrap.dedent(text))
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def fake_toolkit(root, release, build):
    script(root / "bin" / "nvcc", f"""\
        echo "nvcc: NVIDIA (R) Cuda compiler driver"
        echo "Cuda compilation tools, release {release}, V{build}"
        """)
    return root


def fake_gcc(folder, version):
    return script(folder / "g++", f"""\
        case "$1" in
          --version) echo "g++ (GCC) {version}"; echo "Copyright (C) 2023 Free Software Foundation, Inc.";;
          *) echo "{version}";;
        esac
        """)


def test_cuda_home_wins_then_path_then_the_default(tmp_path):
    toolkit = fake_toolkit(tmp_path / "cuda-12.4", "12.4", "12.4.131")
    assert extension_cuda_home({"CUDA_HOME": str(toolkit), "PATH": ""}) == (str(toolkit), "CUDA_HOME")
    assert extension_cuda_home({"PATH": str(toolkit / "bin")}) == (str(toolkit), "PATH")
    assert extension_cuda_home({"PATH": ""}, default=str(tmp_path / "none")) == (None, "none")


def test_the_probe_reads_versions_and_never_raises(tmp_path):
    toolkit = fake_toolkit(tmp_path / "cuda-12.4", "12.4", "12.4.131")
    gxx = fake_gcc(tmp_path / "bin", "13.2.0")
    env = {"CUDA_HOME": str(toolkit), "CXX": str(gxx), "PATH": str(tmp_path / "empty")}
    facts = probe_toolchain(env, None, 5)
    assert (facts.extension_nvcc.version, facts.extension_nvcc.found_via) == ("12.4.131", "CUDA_HOME")
    assert (facts.host_compiler.name, facts.host_compiler.version) == ("gcc", "13.2.0")
    assert facts.ninja.path is None
    broken = probe_toolchain({"CUDA_HOME": str(tmp_path / "nowhere"), "CXX": "/no/such/c++", "PATH": ""}, None, 5)
    assert broken.extension_nvcc.error.endswith("does not exist")
    assert broken.host_compiler.version is None and broken.host_compiler.error


def test_nvcc_12_next_to_a_cu118_torch_through_the_installed_command(lab, tmp_path):
    site = tmp_path / "site"
    fake_torch(site, "2.5.1+cu118", "11.8")
    toolkit = fake_toolkit(tmp_path / "cuda-12.4", "12.4", "12.4.131")
    gxx = fake_gcc(tmp_path / "bin", "12.2.0")
    env = {"PYTHONPATH": str(site), "CUDA_HOME": str(toolkit), "CXX": str(gxx),
           "PATH": os.pathsep.join([str(tmp_path / "bin"), os.path.dirname(os.path.realpath("/bin/sh")), "/usr/bin"])}
    rc, report, stderr = lab.run_check(scenarios.rtx2080ti_x4(), "--timeout", "20", env_extra=env)
    assert report is not None, stderr
    found = findings_of(report)
    f = found["extension-cuda-mismatch"]
    assert f["severity"] == "warning" and "CUDA 11.8" in f["detail"] and "12.4.131" in f["detail"]
    assert f["evidence"]["found_via"] == "CUDA_HOME"
