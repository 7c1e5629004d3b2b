"""`gpudoctor fleet slurm` and `gpudoctor health --drain` through a real Slurm cluster on localhost.

Three slurmd (`-N node1..3`) on one host: the host name repeats, so only SLURMD_NODENAME tells
the nodes apart. A TaskProlog gives each node its machine (a lab scenario, a PATH).
"""

from __future__ import annotations

import json
import os
import time
from typing import Dict, List

import pytest

from tests.fleet.slurm_cluster import SlurmCluster
from tests.lab import scenarios
from tests.lab.fixtures import Lab


def _machine_env(lab: Lab, scenario, path: str) -> Dict[str, str]:
    env = dict(lab.machine(scenario))
    env["PATH"] = path
    return env


def _fleet(slurm: SlurmCluster, args: List[str], path: str, timeout: float = 120):
    return slurm.run(["gpudoctor", "fleet", "slurm"] + args, timeout=timeout, env_extra={"PATH": path})


@pytest.fixture
def nodes_path(gpudoctor_bin: str) -> str:
    return gpudoctor_bin + os.pathsep + "/usr/bin:/bin:/usr/sbin:/sbin"


@pytest.fixture
def one_upgraded_node(slurm: SlurmCluster, fleet_lab: Lab, nodes_path: str):
    """node1 and node2: a healthy 4x RTX 2080 Ti; node3: the driver upgraded without a reboot."""
    for node in ("node1", "node2"):
        slurm.set_node_env(node, _machine_env(fleet_lab, scenarios.rtx2080ti_x4(), nodes_path))
    slurm.set_node_env("node3", _machine_env(fleet_lab, scenarios.nvml_mismatch(), nodes_path))
    yield slurm
    slurm.clear_node_env()


def test_fleet_slurm_names_the_node_with_the_other_driver(one_upgraded_node: SlurmCluster, nodes_path: str):
    proc = _fleet(one_upgraded_node, ["--quick", "--json", "-N", "3"], nodes_path)
    assert proc.returncode == 1, proc.stderr
    fleet = json.loads(proc.stdout)
    nodes = {n["node"]: n for n in fleet["nodes"]}
    assert sorted(nodes) == ["node1", "node2", "node3"]  # SLURMD_NODENAME, not the host name
    assert all(n["error"] is None for n in nodes.values())
    assert fleet["verdict"] == "error"
    assert sorted(fleet["majority"]["nodes"]) == ["node1", "node2"]
    assert [o["node"] for o in fleet["outliers"]] == ["node3"]
    culprit = fleet["outliers"][0]["differs"][0]
    assert culprit == {"key": "driver.version", "label": "NVIDIA driver version (kernel module)",
                       "value": "535.161.08", "majority": "535.183.01"}
    assert "nvml-driver-mismatch" in [c["code"] for c in nodes["node3"]["root_causes"]]
    assert nodes["node1"]["verdict"] != "error"


def test_health_drains_the_broken_node_with_its_reason(one_upgraded_node: SlurmCluster, nodes_path: str):
    slurm = one_upgraded_node
    healthy = slurm.run(["srun", "-w", "node1", "-N", "1", "gpudoctor", "health", "--drain"],
                        env_extra={"PATH": nodes_path})
    assert (healthy.returncode, healthy.stdout.strip()) == (0, "OK"), healthy.stderr
    try:
        broken = slurm.run(["srun", "-w", "node3", "-N", "1", "gpudoctor", "health", "--drain"],
                           env_extra={"PATH": nodes_path})
        assert broken.returncode == 1
        assert broken.stdout.strip().startswith("nvml-driver-mismatch: ")
        assert len(broken.stdout.strip().splitlines()) == 1
        reasons = slurm.run(["sinfo", "-R", "-h", "-o", "%N|%E"]).stdout
        assert "node3|gpudoctor: nvml-driver-mismatch" in reasons.splitlines()
        assert "node1" not in reasons
        state = slurm.run(["sinfo", "-h", "-n", "node3", "-o", "%t"]).stdout.strip()
        assert state.startswith("drain")
    finally:
        slurm.run(["scontrol", "update", "NodeName=node3", "State=RESUME"])



def test_health_as_slurms_health_check_program_drains_the_node(slurm: SlurmCluster, fleet_lab: Lab, nodes_path: str):
    """slurm.conf: HealthCheckProgram=<a script that runs `gpudoctor health --drain`>,
    HealthCheckInterval=5: slurmd itself runs it (with no environment but SLURMD_NODENAME, so the
    script sets PATH, and here SLURM_CONF for this cluster's own config), and node2 is drained with
    gpudoctor's reason."""
    env = _machine_env(fleet_lab, scenarios.driver_installed_module_not_loaded(), nodes_path)
    slurm.set_health_env("node2", dict(env, SLURM_CONF=str(slurm.conf)))
    try:
        deadline = time.monotonic() + 30
        reasons = ""
        while time.monotonic() < deadline and "node2|gpudoctor: driver-not-loaded" not in reasons:
            time.sleep(1)
            reasons = slurm.run(["sinfo", "-R", "-h", "-o", "%N|%E"]).stdout
        assert "node2|gpudoctor: driver-not-loaded" in reasons.splitlines(), reasons
    finally:
        slurm.set_health_env("node2", None)
        slurm.run(["scontrol", "update", "NodeName=node2", "State=RESUME"])



def test_health_in_a_prolog_drains_the_node_and_keeps_the_job_off_it(slurm: SlurmCluster, fleet_lab: Lab,
                                                                      nodes_path: str):
    """slurm.conf: Prolog=<the same script>: the job's launch fails there, and the node is drained
    with gpudoctor's reason (Slurm keeps it over its own "Prolog error")."""
    env = _machine_env(fleet_lab, scenarios.nvml_mismatch(), nodes_path)
    slurm.set_health_env("node1", dict(env, SLURM_CONF=str(slurm.conf)), hook="prolog")
    try:
        job = slurm.run(["srun", "-w", "node1", "-N", "1", "true"], env_extra={"PATH": nodes_path})
        assert job.returncode != 0 and "prolog" in job.stderr.lower()
        reasons = slurm.run(["sinfo", "-R", "-h", "-o", "%N|%E"]).stdout
        assert "node1|gpudoctor: nvml-driver-mismatch" in reasons.splitlines(), reasons
    finally:
        slurm.set_health_env("node1", None, hook="prolog")
        slurm.run(["scontrol", "update", "NodeName=node1", "State=RESUME"])


def test_fleet_slurm_reports_missing_and_hung_nodes_and_aggregates_the_rest(
        slurm: SlurmCluster, fleet_lab: Lab, nodes_path: str, hanging_bin: str):
    slurm.set_node_env("node1", _machine_env(fleet_lab, scenarios.rtx2080ti_x4(), nodes_path))
    slurm.set_node_env("node2", {"PATH": "/usr/bin:/bin"})  # no gpudoctor there
    slurm.set_node_env("node3", {"PATH": hanging_bin + ":/usr/bin:/bin"})  # one that never answers
    try:
        started = time.monotonic()
        proc = _fleet(slurm, ["--quick", "--timeout", "5", "-N", "3"], nodes_path, timeout=90)
        elapsed = time.monotonic() - started
    finally:
        slurm.clear_node_env()
    assert proc.returncode == 1, proc.stderr
    assert elapsed < 40, "a hung node must cost its --timeout, not more"
    out = proc.stdout
    assert "node2: gpudoctor is not installed on this node" in out
    assert "node3: no answer within 5 s (--timeout)" in out
    assert "3 nodes via slurm, 1 answered" in out
    assert "1: node1" in out  # the node that answered is aggregated (the majority)



def test_fleet_slurm_inside_an_allocation_checks_all_of_its_nodes(slurm: SlurmCluster, nodes_path: str):
    proc = slurm.run(["salloc", "-N", "3", "gpudoctor", "fleet", "slurm", "--quick", "--json"], timeout=120,
                     env_extra={"PATH": nodes_path})
    fleet = json.loads(proc.stdout)
    assert sorted(n["node"] for n in fleet["nodes"]) == ["node1", "node2", "node3"], proc.stderr
    assert [n["error"] for n in fleet["nodes"]] == [None, None, None]
    assert fleet["outliers"] == [] and len(fleet["groups"]) == 1  # three slurmd, one machine


def test_fleet_slurm_refused_arguments_are_a_usage_error(slurm: SlurmCluster, nodes_path: str):
    proc = _fleet(slurm, ["--quick", "-p", "no-such-partition"], nodes_path, timeout=60)
    assert proc.returncode == 2
    assert "srun ran no task" in proc.stderr and "partition" in proc.stderr.lower()


def test_fleet_slurm_names_a_drained_node_instead_of_waiting_for_it(slurm: SlurmCluster, nodes_path: str):
    """srun would wait for node2 forever; the fleet gives up after --timeout plus the start-up
    allowance and says which selected node Slurm cannot run on, and why."""
    slurm.run(["scontrol", "update", "NodeName=node2", "State=DRAIN", "Reason=fan failure"])
    try:
        started = time.monotonic()
        proc = _fleet(slurm, ["--quick", "--json", "--timeout", "3", "-w", "node[1-3]"], nodes_path, timeout=90)
        elapsed = time.monotonic() - started
    finally:
        slurm.run(["scontrol", "update", "NodeName=node2", "State=RESUME"])
    assert proc.returncode == 1, proc.stderr
    assert elapsed < 30
    fleet = json.loads(proc.stdout)
    assert [(n["node"], n["error"]) for n in fleet["nodes"]] == [
        ("node2", "not available in Slurm (state drained; reason: fan failure)")]
    assert fleet["notes"][0].startswith("srun started no task within 8 s")
    assert slurm.run(["squeue", "-h", "-o", "%i %T"]).stdout.strip() == "", "the pending job was not cancelled"
