"""The conda hook's logic, without conda: triggers, target interpreter, silence, timeout, never raising."""

from __future__ import annotations

import io
import json
import stat
import sys
import time
from pathlib import Path
from typing import List, Tuple

import pytest

from gpudoctor.conda_plugin import hook
from gpudoctor.conda_plugin.hook import CheckOutcome, Context

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "reports"


def load(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text())


def make_env(tmp_path: Path, packages: List[str], python: bool = True) -> Path:
    prefix = tmp_path / "envs" / "ml"
    (prefix / "conda-meta").mkdir(parents=True)
    for spec in packages:  # name-version-build
        (prefix / "conda-meta" / f"{spec}.json").write_text("{}")
    if python:
        (prefix / "bin").mkdir()
        exe = prefix / "bin" / "python"
        exe.write_text("#!/bin/sh\n")
        exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return prefix


def cpu_sysroot(tmp_path: Path) -> str:
    """A machine with a PCI bus and no NVIDIA device, no driver."""
    dev = tmp_path / "root" / "sys" / "bus" / "pci" / "devices" / "0000:00:01.0"
    dev.mkdir(parents=True, exist_ok=True)
    (dev / "vendor").write_text("0x8086\n")
    (dev / "class").write_text("0x030000\n")
    return str(tmp_path / "root")


def gpu_sysroot(tmp_path: Path) -> str:
    root = Path(cpu_sysroot(tmp_path))
    dev = root / "sys" / "bus" / "pci" / "devices" / "0000:07:00.0"
    dev.mkdir(parents=True, exist_ok=True)
    (dev / "vendor").write_text("0x10de\n")
    (dev / "class").write_text("0x030200\n")
    return str(root)


class FakeRunner:
    def __init__(self, outcome: CheckOutcome) -> None:
        self.outcome = outcome
        self.calls: List[Tuple[List[str], float]] = []

    def __call__(self, argv: List[str], timeout: float) -> CheckOutcome:
        self.calls.append((argv, timeout))
        return self.outcome


def run_hook(ctx: Context, runner, sysroot: str) -> str:
    out = io.StringIO()
    hook.post_command(ctx, out=out, runner=runner, sysroot=sysroot)
    return out.getvalue()


@pytest.mark.parametrize("command", ["install", "create", "update", "remove", "env_create", "env_update"])
def test_conda_commands_that_change_an_env_trigger_the_check(tmp_path, command):
    prefix = make_env(tmp_path, ["pytorch-cuda-12.1-ha16c6d3_5", "python-3.11.9-h955ad1f_0"])
    runner = FakeRunner(CheckOutcome(report=load("healthy_4gpu.json")))
    out = run_hook(Context(command, str(prefix), environ={}), runner, gpu_sysroot(tmp_path))
    assert len(runner.calls) == 1
    assert "quick GPU check passed" in out


@pytest.mark.parametrize("command", ["list", "info", "search", "config", "activate", "clean", "doctor"])
def test_commands_that_change_nothing_do_not(tmp_path, command):
    prefix = make_env(tmp_path, ["pytorch-cuda-12.1-ha16c6d3_5"])
    runner = FakeRunner(CheckOutcome(report=load("driver_too_old.json")))
    assert run_hook(Context(command, str(prefix), environ={}), runner, gpu_sysroot(tmp_path)) == ""
    assert runner.calls == []


def test_the_check_runs_the_target_envs_interpreter_in_quick_json_mode(tmp_path):
    prefix = make_env(tmp_path, ["pytorch-cuda-12.1-ha16c6d3_5"])
    runner = FakeRunner(CheckOutcome(report=load("healthy_4gpu.json")))
    run_hook(Context("install", str(prefix), environ={}), runner, gpu_sysroot(tmp_path))
    argv, timeout = runner.calls[0]
    assert argv[0] == sys.executable  # conda's own interpreter runs gpudoctor
    assert argv[argv.index("--python") + 1] == str(prefix / "bin" / "python")
    assert {"check", "--quick", "--json"} <= set(argv)
    assert timeout == hook.HOOK_TIMEOUT_S
    assert float(argv[argv.index("--timeout") + 1]) < timeout


def test_a_problem_is_printed_with_its_fix_root_cause_first(tmp_path):
    prefix = make_env(tmp_path, ["pytorch-cuda-12.1-ha16c6d3_5"])
    runner = FakeRunner(CheckOutcome(report=load("driver_too_old.json")))
    out = run_hook(Context("install", str(prefix), environ={}), runner, gpu_sysroot(tmp_path))
    lines = out.strip().splitlines()
    assert "2 problems" in lines[0]
    assert "driver-too-old" in lines[1]
    assert "fix: Upgrade the NVIDIA driver" in lines[2]
    assert "framework-gpu-not-detected" in lines[3]
    assert "gpudoctor check --python" in lines[-1]


def test_silent_on_a_cpu_only_machine_with_no_gpu_packages_and_no_subprocess(tmp_path):
    prefix = make_env(tmp_path, ["numpy-1.26.4-py311h08b1b3b_0", "pytorch-2.3.1-cpu_py311h3e8ad7e_0"])
    runner = FakeRunner(CheckOutcome(report=load("driver_too_old.json")))
    assert run_hook(Context("install", str(prefix), environ={}), runner, cpu_sysroot(tmp_path)) == ""
    assert runner.calls == []


def test_gpu_packages_on_a_machine_without_gpu_say_so_in_one_line(tmp_path):
    prefix = make_env(tmp_path, ["pytorch-cuda-12.1-ha16c6d3_5"])
    report = {"verdict": "ok", "facts": {}, "findings": [
        {"code": "no-nvidia-gpu", "severity": "info", "layer": "hardware", "title": "No NVIDIA GPU", "fix": []}]}
    out = run_hook(Context("install", str(prefix), environ={}), FakeRunner(CheckOutcome(report=report)),
                   cpu_sysroot(tmp_path))
    assert out.strip().count("\n") == 0 and "no NVIDIA GPU" in out and "pytorch-cuda" in out


def test_a_healthy_gpu_machine_with_no_gpu_packages_stays_silent(tmp_path):
    prefix = make_env(tmp_path, ["requests-2.32.3-py311h06a4308_0"])
    report = {"verdict": "ok", "facts": {"gpus": [{"index": 0}]}, "findings": []}
    out = run_hook(Context("install", str(prefix), environ={}), FakeRunner(CheckOutcome(report=report)),
                   gpu_sysroot(tmp_path))
    assert out == ""


def test_quiet_conda_only_hears_about_problems(tmp_path):
    prefix = make_env(tmp_path, ["pytorch-cuda-12.1-ha16c6d3_5"])
    ok = FakeRunner(CheckOutcome(report=load("healthy_4gpu.json")))
    assert run_hook(Context("install", str(prefix), environ={}, quiet=True), ok, gpu_sysroot(tmp_path)) == ""
    bad = FakeRunner(CheckOutcome(report=load("driver_too_old.json")))
    assert "driver-too-old" in run_hook(Context("install", str(prefix), environ={}, quiet=True), bad,
                                        gpu_sysroot(tmp_path))


@pytest.mark.parametrize("ctx_kwargs", [{"json_mode": True}, {"dry_run": True}])
def test_json_and_dry_run_modes_are_left_alone(tmp_path, ctx_kwargs):
    prefix = make_env(tmp_path, ["pytorch-cuda-12.1-ha16c6d3_5"])
    runner = FakeRunner(CheckOutcome(report=load("driver_too_old.json")))
    assert run_hook(Context("install", str(prefix), environ={}, **ctx_kwargs), runner, gpu_sysroot(tmp_path)) == ""
    assert runner.calls == []


@pytest.mark.parametrize("value", ["0", "false", "off", "NO"])
def test_the_env_var_turns_the_hook_off(tmp_path, value):
    prefix = make_env(tmp_path, ["pytorch-cuda-12.1-ha16c6d3_5"])
    runner = FakeRunner(CheckOutcome(report=load("driver_too_old.json")))
    ctx = Context("install", str(prefix), environ={"GPUDOCTOR_CONDA_HOOK": value})
    assert run_hook(ctx, runner, gpu_sysroot(tmp_path)) == "" and runner.calls == []


def test_the_conda_setting_turns_the_hook_off(tmp_path):
    prefix = make_env(tmp_path, ["pytorch-cuda-12.1-ha16c6d3_5"])
    runner = FakeRunner(CheckOutcome(report=load("driver_too_old.json")))
    assert run_hook(Context("install", str(prefix), environ={}, setting=False), runner, gpu_sysroot(tmp_path)) == ""
    assert hook.hook_enabled({}, None) and hook.hook_enabled({"GPUDOCTOR_CONDA_HOOK": "1"}, True)


def test_an_env_without_python_or_removed_is_skipped(tmp_path):
    prefix = make_env(tmp_path, ["cudatoolkit-11.8.0-h6a678d5_0"], python=False)
    runner = FakeRunner(CheckOutcome(report=load("driver_too_old.json")))
    assert run_hook(Context("install", str(prefix), environ={}), runner, gpu_sysroot(tmp_path)) == ""
    assert run_hook(Context("remove", str(tmp_path / "gone"), environ={}), runner, gpu_sysroot(tmp_path)) == ""
    assert runner.calls == []


def test_a_timeout_is_one_line(tmp_path):
    prefix = make_env(tmp_path, ["pytorch-cuda-12.1-ha16c6d3_5"])
    out = run_hook(Context("install", str(prefix), environ={}), FakeRunner(CheckOutcome(timed_out=True)),
                   gpu_sysroot(tmp_path))
    assert out.strip().count("\n") == 0 and "did not finish within 3 s" in out


def test_a_crashing_check_never_raises(tmp_path):
    prefix = make_env(tmp_path, ["pytorch-cuda-12.1-ha16c6d3_5"])

    def explode(argv, timeout):
        raise RuntimeError("boom")

    for runner in (explode, lambda a, t: (_ for _ in ()).throw(KeyboardInterrupt()),
                   lambda a, t: (_ for _ in ()).throw(SystemExit(3))):
        run_hook(Context("install", str(prefix), environ={}), runner, gpu_sysroot(tmp_path))  # no exception


def test_a_garbage_report_never_raises(tmp_path):
    prefix = make_env(tmp_path, ["pytorch-cuda-12.1-ha16c6d3_5"])
    report = {"findings": [None, 3, {"severity": "error"}], "facts": {"gpus": "nonsense"}}
    run_hook(Context("install", str(prefix), environ={}), FakeRunner(CheckOutcome(report=report)),
             gpu_sysroot(tmp_path))


def test_a_failed_check_says_so_in_one_line(tmp_path):
    prefix = make_env(tmp_path, ["pytorch-cuda-12.1-ha16c6d3_5"])
    out = run_hook(Context("install", str(prefix), environ={}),
                   FakeRunner(CheckOutcome(error="the check failed (exit 2): ImportError: x")), gpu_sysroot(tmp_path))
    assert out.strip().count("\n") == 0 and "GPUDOCTOR_CONDA_HOOK=0" in out


# -- the real subprocess runner -----------------------------------------------------------------

def script(tmp_path: Path, body: str) -> List[str]:
    path = tmp_path / "fake_check.py"
    path.write_text(body)
    return [sys.executable, str(path)]


def test_run_subprocess_reads_the_json_report(tmp_path):
    report = load("healthy_4gpu.json")
    (tmp_path / "r.json").write_text(json.dumps(report))
    argv = script(tmp_path, f"import sys; sys.stdout.write(open({str(tmp_path / 'r.json')!r}).read()); sys.exit(0)")
    outcome = hook.run_subprocess(argv, 10)
    assert outcome.report == report and not outcome.timed_out and outcome.error is None


def test_run_subprocess_kills_a_hung_check_and_its_children_within_the_bound(tmp_path):
    # The check's own probe children inherit its pipes; killing only the check would leave us
    # waiting for them. A grandchild that sleeps proves the whole group is killed.
    argv = script(tmp_path, "import subprocess, sys, time\n"
                            "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
                            "time.sleep(60)\n")
    started = time.monotonic()
    outcome = hook.run_subprocess(argv, 1.0)
    assert outcome.timed_out
    assert time.monotonic() - started < 5


def test_run_subprocess_reports_a_crash_by_its_last_stderr_line(tmp_path):
    argv = script(tmp_path, "raise ImportError('No module named gpudoctor.cli')")
    outcome = hook.run_subprocess(argv, 10)
    assert outcome.report is None and "No module named gpudoctor.cli" in (outcome.error or "")


def test_run_subprocess_of_a_missing_interpreter(tmp_path):
    outcome = hook.run_subprocess([str(tmp_path / "nope")], 10)
    assert outcome.error and "cannot start" in outcome.error


# -- conda doctor -------------------------------------------------------------------------------

def doctor(prefix: Path, runner, verbose: bool = False) -> str:
    out = io.StringIO()
    hook.health_check(str(prefix), verbose, out=out, runner=runner)
    return out.getvalue()


def test_doctor_reports_ok(tmp_path):
    prefix = make_env(tmp_path, ["pytorch-cuda-12.1-ha16c6d3_5"])
    out = doctor(prefix, FakeRunner(CheckOutcome(report=load("healthy_4gpu.json"))))
    assert out.strip().startswith("✅") and "550.54.15" in out


def test_doctor_reports_problems_and_verbose_gives_details(tmp_path):
    prefix = make_env(tmp_path, ["pytorch-cuda-12.1-ha16c6d3_5"])
    runner = FakeRunner(CheckOutcome(report=load("driver_too_old.json")))
    short, long = doctor(prefix, runner), doctor(prefix, runner, verbose=True)
    assert short.strip().startswith("❌") and "driver-too-old" in short
    assert "Or install a PyTorch built for CUDA 11.8" in long and "Or install" not in short
    assert runner.calls[0][0][runner.calls[0][0].index("--python") + 1] == str(prefix / "bin" / "python")


def test_doctor_never_raises(tmp_path):
    prefix = make_env(tmp_path, ["pytorch-cuda-12.1-ha16c6d3_5"])

    def explode(argv, timeout):
        raise OSError("boom")

    doctor(prefix, explode)
    assert "did not finish" in doctor(prefix, FakeRunner(CheckOutcome(timed_out=True)))


def test_conda_meta_file_names_give_the_gpu_packages(tmp_path):
    prefix = make_env(tmp_path, ["pytorch-2.3.1-py3.11_cuda12.1_cudnn8.9.2_0", "pytorch-2.3.1-cpu_py311h0_0",
                                 "libcurl-8.7.1-h251f7ec_0", "libcublas-12.1.3.1-0", "cuda-version-12.1-h1d6eff3_3",
                                 "numpy-1.26.4-py311h08b1b3b_0"])
    assert hook.gpu_packages_in_prefix(str(prefix)) == ["cuda-version", "libcublas", "pytorch"]
