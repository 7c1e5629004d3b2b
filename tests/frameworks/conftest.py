"""Fixtures for the framework probes: fake framework packages on a temporary path, a second venv,
and the real CPU torch / CUDA tensorflow when installed.

Real frameworks live in a venv of their own, probed as a `--python` target: the test interpreter
stays free of frameworks, so the lab scenarios (a healthy GPU machine must exit 0) are not turned
into "CPU-only torch on a GPU machine". `.ci/run` creates it once (see
tests/frameworks/requirements.txt) and exports GPUDOCTOR_FRAMEWORKS_PYTHON=<that venv>/bin/python
and GPUDOCTOR_REQUIRE_FRAMEWORKS=1, so a missing framework fails the run instead of skipping.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict, Optional

import pytest

from gpudoctor.probes.context import ProbeContext


class FakeSite:
    """A folder put on PYTHONPATH holding fake packages and their dist-info metadata."""

    def __init__(self, root: Path, python: str = sys.executable) -> None:
        self.root = root
        self.python = python  # the target interpreter: a bare venv, so no real framework leaks in
        root.mkdir(parents=True, exist_ok=True)

    def dist(self, name: str, version: str, requires: tuple = (), installer: str = "pip",
             where: Optional[Path] = None) -> None:
        folder = (where or self.root) / ("%s-%s.dist-info" % (name.replace("-", "_"), version))
        folder.mkdir(parents=True, exist_ok=True)
        lines = ["Metadata-Version: 2.1", "Name: %s" % name, "Version: %s" % version]
        lines += ["Requires-Dist: %s" % r for r in requires]
        (folder / "METADATA").write_text("\n".join(lines) + "\n\nA long description that is never read.\n")
        (folder / "INSTALLER").write_text(installer + "\n")

    def module(self, relpath: str, source: str) -> Path:
        path = self.root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source))
        return path

    def context(self, timeout: float = 20.0, quick: bool = False, python: Optional[str] = None,
                extra_env: Optional[Dict[str, str]] = None) -> ProbeContext:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "TF_", "CUDA_"))}
        env["PYTHONPATH"] = str(self.root)
        env.update(extra_env or {})
        return ProbeContext(env=env, python=python or self.python, timeout=timeout, quick=quick)


def make_venv(path: Path) -> str:
    """A second interpreter with nothing installed (`python -m venv --without-pip`): fast to make."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    return str(path / "bin" / "python")


@pytest.fixture(scope="session")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    return make_venv(tmp_path_factory.mktemp("bare-venv") / "venv")


@pytest.fixture
def site(tmp_path: Path, bare_python: str) -> FakeSite:
    return FakeSite(tmp_path / "site", bare_python)


def frameworks_python(*names: str) -> str:
    """The interpreter that has the real frameworks: GPUDOCTOR_FRAMEWORKS_PYTHON, else this one if it
    has them. Skips (or, with GPUDOCTOR_REQUIRE_FRAMEWORKS=1, fails) when there is none."""
    python = os.environ.get("GPUDOCTOR_FRAMEWORKS_PYTHON")
    if python:
        check = "import importlib.util, sys; sys.exit(any(importlib.util.find_spec(n) is None for n in sys.argv[1:]))"
        if subprocess.run([python, "-c", check, *names]).returncode == 0:
            return python
    elif all(importlib.util.find_spec(n) is not None for n in names):
        return sys.executable
    message = "%s not installed where GPUDOCTOR_FRAMEWORKS_PYTHON points (see tests/frameworks/requirements.txt)" \
        % " and ".join(names)
    if os.environ.get("GPUDOCTOR_REQUIRE_FRAMEWORKS") == "1":
        pytest.fail(message)
    pytest.skip(message)
