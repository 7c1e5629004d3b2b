"""Fixtures of the fleet tests: lab machines that outlive one test, a real three-node Slurm
cluster and a real three-node Ray cluster on localhost. Select these tests with
`pytest tests/fleet` (or `-m fleet`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, Iterator, Optional

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


@pytest.fixture(scope="module")  # torn down after its module: no daemons idle through the rest of the suite
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


class RayNodes:
    """A real three-node Ray cluster on localhost. ray-node1 runs gpudoctor from the test venv;
    ray-node2 and ray-node3 find `gpudoctor` through a folder of their own first on PATH, which a
    test points at the real command, a hanging one, or nothing. ray-node3 is the lab machine whose
    driver was upgraded without a reboot."""

    def __init__(self, cluster, bins: Dict[str, Path]):
        self.cluster = cluster
        self.address: str = cluster.address
        self.bins = bins

    def use(self, node: str, target: Optional[str]) -> None:
        link = self.bins[node] / "gpudoctor"
        if link.is_symlink() or link.exists():
            link.unlink()
        if target:
            link.symlink_to(target)


@pytest.fixture(scope="module")
def ray_nodes(fleet_lab: Lab, gpudoctor_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RayNodes]:
    try:
        from ray.cluster_utils import Cluster
    except ImportError:
        pytest.skip("Ray is not installed for the test interpreter (pip install ray)")
    from tests.lab import scenarios

    bins = {node: tmp_path_factory.mktemp(f"bin-{node}") for node in ("ray-node2", "ray-node3")}
    system_path = "/usr/bin:/bin"
    small = dict(num_cpus=1, object_store_memory=78 * 1024 * 1024)
    env = {
        "ray-node1": dict(fleet_lab.machine(scenarios.rtx2080ti_x4()), PATH=gpudoctor_bin + ":" + system_path),
        "ray-node2": dict(fleet_lab.machine(scenarios.rtx2080ti_x4()), PATH=f"{bins['ray-node2']}:{system_path}"),
        "ray-node3": dict(fleet_lab.machine(scenarios.nvml_mismatch()), PATH=f"{bins['ray-node3']}:{system_path}"),
    }
    cluster = Cluster(initialize_head=True, head_node_args=dict(
        small, include_dashboard=False, node_name="ray-node1", env_vars=env["ray-node1"]))
    try:
        for node in ("ray-node2", "ray-node3"):
            cluster.add_node(**small, node_name=node, env_vars=env[node])
        cluster.wait_for_nodes()
        yield RayNodes(cluster, bins)
    finally:
        cluster.shutdown()
