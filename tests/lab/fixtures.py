"""pytest plugin: the ``lab`` fixture, which turns a Scenario into a machine to test against.

Load it from the top ``tests/conftest.py`` with ``pytest_plugins = ["tests.lab.fixtures"]``.

    def test_full_gpus(lab):
        code, report, stderr = lab.run_check(scenarios.rtx2080ti_x4_two_full())
        assert code == 1

``lab.machine(scenario)`` writes the scenario file and the fake sysroot under the test's
temporary directory and returns the environment variables (a dict) that point a process at
them: ``GPUDOCTOR_SYSROOT``, ``GPUDOCTOR_LAB_SCENARIO`` and ``LD_LIBRARY_PATH`` (the
directory of the compiled stand-ins first). The returned dict also carries the paths as
attributes (``.sysroot``, ``.scenario_file``, ``.libdir``) and the ``.scenario`` itself.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import pytest

from tests.lab.build import BuildError, build_libs
from tests.lab.scenario import Scenario

#: Variables a parent shell may have set that would change what the lab machine shows.
#: run_* helpers drop them unless the caller passes them in env_extra.
INHERITED_TO_DROP = ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "GPUDOCTOR_SYSROOT", "GPUDOCTOR_LAB_SCENARIO")


class LabMachine(dict):
    """The environment of a lab machine; a dict, with the paths as attributes."""

    scenario: Scenario
    sysroot: Path
    scenario_file: Path
    libdir: Optional[Path]


class Lab:
    def __init__(self, libdir: Path, workdir: Path):
        self.libdir = libdir
        self.workdir = workdir
        self._n = 0

    def machine(self, scenario: Scenario) -> LabMachine:
        """Materialise ``scenario``; return the environment variables that select it."""
        self._n += 1
        slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", scenario.name)[:40] or "lab"
        base = self.workdir / ("%02d-%s" % (self._n, slug))
        sysroot = scenario.write_sysroot(base / "sysroot")
        scenario_file = scenario.write_flat(base / "scenario.txt")
        env = LabMachine()
        env["GPUDOCTOR_SYSROOT"] = str(sysroot)
        env["GPUDOCTOR_LAB_SCENARIO"] = str(scenario_file)
        # A machine without the user-space driver has no libcuda/NVML to find: leave the
        # stand-ins off the search path (an empty directory takes their place).
        libdir: Optional[Path] = self.libdir if scenario.userspace_driver else None
        first = str(libdir) if libdir else str(_mkdir(base / "no-driver-libs"))
        if scenario.wsl and libdir:
            first = self._wsl_driver_libs(scenario, sysroot, libdir, base)
        rest = os.environ.get("LD_LIBRARY_PATH", "")
        env["LD_LIBRARY_PATH"] = first + (os.pathsep + rest if rest else "")
        env.scenario = scenario
        env.sysroot = sysroot
        env.scenario_file = scenario_file
        env.libdir = libdir
        return env

    @staticmethod
    def _wsl_driver_libs(scenario: Scenario, sysroot: Path, libdir: Path, base: Path) -> str:
        """WSL2: the Windows driver's libraries in <sysroot>/usr/lib/wsl/lib (links to the stand-ins), and
        for a Linux driver installed inside WSL a copy of its own that the loader finds first."""
        wsl_lib = _mkdir(sysroot / "usr/lib/wsl/lib")
        for name in scenario.wsl_libcuda_links:
            os.symlink(libdir / "libcuda.so.1", wsl_lib / name)
        os.symlink(libdir / "libnvidia-ml.so.1", wsl_lib / "libnvidia-ml.so.1")
        if not scenario.wsl_linux_driver:
            return str(wsl_lib)
        linux = _mkdir(base / "linux-driver-inside-wsl")
        for name in ("libcuda.so.1", "libnvidia-ml.so.1"):
            shutil.copy2(libdir / name, linux / name)
        return str(linux) + os.pathsep + str(wsl_lib)

    def environ(self, scenario: Scenario, env_extra: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
        """The full environment of a process on the lab machine."""
        env = {k: v for k, v in os.environ.items() if k not in INHERITED_TO_DROP}
        env.update(self.machine(scenario))
        env.update(env_extra or {})
        return env

    def run(self, scenario: Scenario, argv: Sequence[str], env_extra: Optional[Mapping[str, str]] = None,
            timeout: float = 60, cwd: Optional[str] = None) -> subprocess.CompletedProcess:
        """Run ``argv`` on the lab machine; on timeout kill its whole process group and raise
        subprocess.TimeoutExpired (so hung grandchildren do not outlive the test)."""
        env = self.environ(scenario, env_extra)
        proc = subprocess.Popen(list(argv), env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                universal_newlines=True, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            out, err = proc.communicate()
            raise subprocess.TimeoutExpired(proc.args, timeout, output=out, stderr=err)
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)

    def run_python(self, scenario: Scenario, code: str, env_extra: Optional[Mapping[str, str]] = None,
                   timeout: float = 60) -> subprocess.CompletedProcess:
        """Run a Python snippet (with this interpreter) on the lab machine."""
        return self.run(scenario, [sys.executable, "-c", code], env_extra=env_extra, timeout=timeout)

    def run_check(self, scenario: Scenario, *args: str, env_extra: Optional[Mapping[str, str]] = None,
                  timeout: float = 60) -> Tuple[int, Any, str]:
        """Run the installed ``gpudoctor check --json [args]`` on the lab machine.

        Returns (exit code, the parsed JSON report or None if stdout was not JSON, stderr).
        """
        argv = gpudoctor_command() + ["check", "--json"] + list(args)
        proc = self.run(scenario, argv, env_extra=env_extra, timeout=timeout)
        try:
            report = json.loads(proc.stdout)
        except ValueError:
            report = None
        return proc.returncode, report, proc.stderr


def gpudoctor_command() -> List[str]:
    """The installed ``gpudoctor`` script, else ``python -m gpudoctor``."""
    beside = os.path.join(os.path.dirname(sys.executable), "gpudoctor")  # this venv's, even off PATH
    exe = beside if os.access(beside, os.X_OK) else shutil.which("gpudoctor")
    if exe:
        return [exe]
    return [sys.executable, "-m", "gpudoctor"]


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def _mkdir(p: Path) -> Path:
    p.mkdir(parents=True, exist_ok=True)
    return p


@pytest.fixture(scope="session")
def lab_libdir() -> Path:
    """The directory of the compiled libcuda.so.1 / libnvidia-ml.so.1 stand-ins."""
    try:
        return build_libs()
    except BuildError as e:
        if "no C compiler" in str(e):
            pytest.skip(str(e))
        raise


@pytest.fixture
def lab(lab_libdir: Path, tmp_path: Path) -> Lab:
    """Build lab machines from scenarios and run commands on them."""
    return Lab(lab_libdir, tmp_path / "lab")
