"""Issue 9's classes through the installed `gpudoctor explain` command, as a user meets them:
the root cause first, the fix for that platform, the exit status, and healthy logs stay healthy."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpudoctor.explain import explain_stream

CORPUS = Path(__file__).parent / "corpus"
GPUDOCTOR = shutil.which("gpudoctor") or os.path.join(os.path.dirname(sys.executable), "gpudoctor")


def explain_json(log: Path):
    p = subprocess.run([GPUDOCTOR, "explain", "--json", str(log)], capture_output=True, timeout=60)
    assert b"Traceback" not in p.stderr
    return p.returncode, json.loads(p.stdout)


def test_container_started_without_gpus_is_one_root_cause_with_the_docker_fix():
    rc, report = explain_json(CORPUS / "containers" / "ngc-no-gpus-facepoke12.log")
    assert rc == 1 and report["verdict"] == "error"
    first = report["findings"][0]
    assert first["code"] == "container-no-gpu-access" and first["layer"] == "kernel-driver"
    assert any("--gpus all" in step for step in first["fix"])


def test_windows_dll_missing_names_the_cuda_version_and_add_dll_directory():
    rc, report = explain_json(CORPUS / "windows" / "cudart110-tf291-tf57103.log")
    first = report["findings"][0]
    assert rc == 1 and first["code"] == "dll-load-failed"
    assert "cudart64_110.dll" in first["title"] and "CUDA 11 runtime" in first["title"]
    assert any("os.add_dll_directory" in step for step in first["fix"])


def test_python_too_new_for_every_release_says_which_python():
    rc, report = explain_json(CORPUS / "install" / "py3121-tf62777.log")
    first = report["findings"][0]
    assert rc == 1 and first["code"] == "python-unsupported"
    assert "Python 3.12.1" in first["detail"] and "(unknown)" not in first["detail"]
    # the first release with wheels for 3.12, from the compat tables: the log predates it
    assert "from 2.16.1 on" in first["detail"]


def test_tensorflow_gpu_placeholder_is_package_removed():
    rc, report = explain_json(CORPUS / "install" / "tfgpu-removed-luminoth317.log")
    assert rc == 1 and report["findings"][0]["code"] == "package-removed"
    assert any("tensorflow[and-cuda]" in step for step in report["findings"][0]["fix"])


def test_wsl_gpu_access_blocked_gives_the_wsl_steps():
    rc, report = explain_json(CORPUS / "wsl" / "nvml-blocked-l40s-wsl14339.log")
    first = report["findings"][0]
    assert rc == 1 and first["code"] == "wsl-driver-misconfigured"
    assert "6.6.87.2-microsoft-standard-WSL2" in first["detail"]
    assert any("Windows only" in step for step in first["fix"])


def test_hard_coded_visible_devices_is_named_instead_of_a_generic_failure():
    rc, report = explain_json(CORPUS / "visibility" / "hardcoded-7-ptqd13.log")
    first = report["findings"][0]
    assert rc == 1 and first["code"] == "no-visible-gpu"
    assert "7" in first["detail"]


def test_conda_cpuonly_plan_names_the_cpu_build():
    rc, report = explain_json(CORPUS / "cpu-only" / "conda-plan-cpuonly-conda11001.log")
    codes = [f["code"] for f in report["findings"]]
    assert rc == 1 and codes == ["cpu-only-build"]  # cpuonly, the cpu build strings: one finding
    assert any("conda remove cpuonly" in step for step in report["findings"][0]["fix"])


@pytest.mark.parametrize("name", ["factory-gpu-listed-agentlab27.log", "numa-arm64-jetson-tf2264.log",
                                  "trt-during-training-sovits38.log"])
def test_a_log_of_benign_messages_is_healthy(name):
    rc, report = explain_json(CORPUS / "benign" / name)
    assert rc == 0 and report["verdict"] == "ok" and report["findings"] == []
    assert report["source"]["notes"], "the harmless messages are named as such"


def test_every_issue9_finding_reads_without_unknown_values():
    """Templates drop what a log did not show ([[ ]]); no fix or detail says '(unknown)'."""
    for log in sorted(CORPUS.glob("*/*.log")):
        with open(log, "rb") as fh:
            for f in explain_stream(fh, name=log.name).findings:
                text = " ".join([f.title, f.detail, *f.fix])
                assert "(unknown)" not in text, (log.name, f.code)


def test_a_cpu_wheel_pip_could_not_find_is_not_reported_as_installed():
    rc, report = explain_json(CORPUS / "install" / "win32-collect-env-pytorch47354.log")
    assert [f["code"] for f in report["findings"]] == ["no-matching-build"]
    assert "32-bit Python" in report["findings"][0]["detail"]
