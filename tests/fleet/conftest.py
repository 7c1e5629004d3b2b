"""Fixtures of the fleet tests: lab machines that outlive one test, a real three-node Slurm
cluster and a real three-node Ray cluster on localhost. Select these tests with
`pytest tests/fleet` (or `-m fleet`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

import pytest

from tests.fleet.slurm_cluster import ClusterError, SlurmCluster, missing_programs
from tests.lab.fixtures import Lab, gpudoctor_command

HANG_SCRIPT = "#!/bin/sh\n# a gpudoctor that never answers\nexec sleep 600\n"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "fleet: gpudoctor fleet and health, through real Slurm and Ray")


def pytest_collection_modifyitems(items: list) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.fleet)


@pytest.fixture(scope="session")
def fleet_lab(lab_libdir: Path, tmp_path_factory: pytest.TempPathFactory) -> Lab:
    """Lab machines for the whole session (the clusters' nodes keep pointing at them)."""
    return Lab(lab_libdir, tmp_path_factory.mktemp("fleet-lab"))


@pytest.fixture(scope="session")
def gpudoctor_bin() -> str:
    """The folder of the installed `gpudoctor` command, to put on the nodes' PATH."""
    exe = gpudoctor_command()[0]
    if not exe.endswith("gpudoctor"):
        pytest.skip("the gpudoctor command is not installed (pip install -e .)")
    return os.path.dirname(exe)


@pytest.fixture(scope="session")
def hanging_bin(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A folder whose `gpudoctor` never answers: a node stuck past --timeout."""
    folder = tmp_path_factory.mktemp("hanging-bin")
    script = folder / "gpudoctor"
    script.write_text(HANG_SCRIPT)
    script.chmod(0o755)
    return str(folder)


@pytest.fixture(scope="session")
def slurm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SlurmCluster]:
    missing = missing_programs()
    if missing:
        pytest.skip(f"Slurm is not installed here ({', '.join(missing)} not found); "
                    "`apt-get install slurm-wlm munge` provides it")
    if os.geteuid() != 0:
        pytest.skip("the local Slurm cluster needs root (slurmd starts jobs as their user)")
    root = tmp_path_factory.mktemp("slurm")
    root.chmod(0o700)  # munged refuses a key or socket folder others can write to
    cluster = SlurmCluster(root)
    try:
        cluster.start()
    except ClusterError:
        cluster.stop()
        raise
    try:
        yield cluster
    finally:
        cluster.stop()
