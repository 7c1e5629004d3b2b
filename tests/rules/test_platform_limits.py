"""Native Windows and macOS: the Linux-only layers are 'not examined', never reported as faults, and
what can be examined still is (issue 9, class 2). The platform is faked; the rules and the renderer
are the real ones."""

from __future__ import annotations

import io
import platform

from rich.console import Console

from gpudoctor.facts.driver import NvmlGpu
from gpudoctor.rules import diagnose
from gpudoctor.renderers.terminal import render_terminal
from gpudoctor.model import Severity

from tests.factories import no_gpu_machine
from tests.rules.test_compat_rules import with_framework


def windows_machine_with_tensorflow_215():
    """What the probes see on native Windows: no /proc, /sys or /dev, no libcuda.so.1, but NVML (nvml.dll)
    lists the GPU, and TensorFlow 2.15 is installed."""
    facts = no_gpu_machine()
    facts.system.os = "Windows"
    facts.driver.nvml.initialized, facts.driver.nvml.error = True, None
    facts.driver.nvml.driver_version, facts.driver.nvml.cuda_driver_version = "551.86", 12040
    facts.driver.nvml.gpus = [NvmlGpu(index=0, name="NVIDIA GeForce RTX 3080", compute_capability="8.6",
                                      memory_total=10240 << 20, memory_used=512 << 20, memory_free=9728 << 20)]
    return with_framework(facts, "tensorflow", "2.15.0", cuda="12.2", cudnn="8")


def test_windows_gets_no_linux_driver_fault_and_says_what_it_did_not_examine():
    findings = diagnose(windows_machine_with_tensorflow_215())
    codes = [f.code for f in findings]
    assert not {"driver-not-loaded", "libcuda-missing", "device-nodes-missing", "no-nvidia-gpu",
                "cuda-library-missing"} & set(codes), codes
    limited = next(f for f in findings if f.code == "platform-limited")
    assert limited.severity == Severity.INFO and "native Windows" in limited.detail and "WSL 2" in limited.fix[0]
    # what can be examined still is: TensorFlow >= 2.11 has no GPU build on native Windows
    assert "platform-unsupported" in codes


def test_the_terminal_report_marks_the_unexamined_layers():
    facts = windows_machine_with_tensorflow_215()
    findings = diagnose(facts)
    console = Console(file=io.StringIO(), width=100, record=True)
    render_terminal(console, facts, findings, "error")
    text = console.export_text()
    assert "not examined on native Windows" in text and "Traceback" not in text
    assert "Kernel driver      —" in text


def test_macos_says_there_is_no_cuda():
    facts = no_gpu_machine()
    facts.system.os = "Darwin"
    limited = next(f for f in diagnose(facts) if f.code == "platform-limited")
    assert "macOS" in limited.detail and "MPS" in limited.detail


def test_linux_is_examined_as_always():
    assert "platform-limited" not in [f.code for f in diagnose(no_gpu_machine())]


def test_the_whole_check_runs_on_a_faked_windows(monkeypatch, tmp_path):
    """The real pipeline with platform.uname() answering Windows and an empty sysroot: a report, no exception."""
    from gpudoctor.pipeline import CheckOptions, run_check

    real = platform.uname()
    monkeypatch.setattr(platform, "uname", lambda: real._replace(system="Windows", release="10"))
    env = {"PATH": "/usr/bin:/bin", "GPUDOCTOR_SYSROOT": str(tmp_path), "LD_LIBRARY_PATH": str(tmp_path)}
    report = run_check(CheckOptions(quick=True, timeout=10, env=env))
    codes = [f.code for f in report.findings]
    assert "platform-limited" in codes and "driver-not-loaded" not in codes
    assert report.to_json()["facts"]["system"]["os"] == "Windows"


def test_no_finding_points_at_a_layer_that_was_not_examined():
    findings = diagnose(windows_machine_with_tensorflow_215())
    codes = {f.code for f in findings}
    assert all(f.caused_by is None or f.caused_by in codes for f in findings), \
        [(f.code, f.caused_by) for f in findings]
