"""`gpudoctor health [--drain]` on lab machines (the real Slurm drain is in test_slurm.py)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests.lab import scenarios
from tests.lab.fixtures import Lab, gpudoctor_command

FAKE_SCONTROL = """#!/bin/sh
printf '%s\\n' "$@" > "{log}"
exit {status}
"""


def _scontrol(tmp_path: Path, status: int = 0) -> Path:
    folder = tmp_path / "bin"
    folder.mkdir()
    script = folder / "scontrol"
    script.write_text(FAKE_SCONTROL.format(log=tmp_path / "scontrol.args", status=status))
    script.chmod(0o755)
    return folder


def test_a_healthy_node_prints_ok_and_drains_nothing(lab: Lab, tmp_path: Path):
    path = f"{_scontrol(tmp_path)}:{os.environ['PATH']}"
    started = time.monotonic()
    proc = lab.run(scenarios.rtx2080ti_x4(), gpudoctor_command() + ["health", "--drain"], env_extra={"PATH": path})
    assert time.monotonic() - started < 60  # Slurm's limit for a HealthCheckProgram
    assert (proc.returncode, proc.stdout) == (0, "OK\n")
    assert not (tmp_path / "scontrol.args").exists()


def test_a_broken_node_prints_its_root_cause_and_is_drained(lab: Lab, tmp_path: Path):
    path = f"{_scontrol(tmp_path)}:{os.environ['PATH']}"
    proc = lab.run(scenarios.nvml_mismatch(), gpudoctor_command() + ["health", "--drain"],
                   env_extra={"PATH": path, "SLURMD_NODENAME": "gpu17"})
    assert proc.returncode == 1
    assert proc.stdout == "nvml-driver-mismatch: Driver/library version mismatch (upgrade without reboot)\n"
    assert (tmp_path / "scontrol.args").read_text().splitlines() == [
        "update", "NodeName=gpu17", "State=DRAIN", "Reason=gpudoctor: nvml-driver-mismatch"]


def test_without_drain_nothing_is_changed_and_a_failing_scontrol_is_reported(lab: Lab, tmp_path: Path):
    path = f"{_scontrol(tmp_path, status=1)}:{os.environ['PATH']}"
    plain = lab.run(scenarios.driver_installed_module_not_loaded(), gpudoctor_command() + ["health"],
                    env_extra={"PATH": path, "SLURMD_NODENAME": "gpu3"})
    assert plain.returncode == 1 and plain.stdout.startswith("driver-not-loaded: ")
    assert not (tmp_path / "scontrol.args").exists()
    drained = lab.run(scenarios.driver_installed_module_not_loaded(), gpudoctor_command() + ["health", "--drain"],
                      env_extra={"PATH": path, "SLURMD_NODENAME": "gpu3"})
    assert drained.returncode == 1 and len(drained.stdout.splitlines()) == 1
    assert "could not drain gpu3" in drained.stderr
