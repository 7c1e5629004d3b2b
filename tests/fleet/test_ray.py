"""`gpudoctor fleet ray` through a real three-node Ray cluster on localhost."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from typing import List

import pytest

from tests.fleet.conftest import RayNodes


def _fleet(ray_nodes: RayNodes, args: List[str], gpudoctor_bin: str, timeout: float = 120):
    env = dict(os.environ, PATH=gpudoctor_bin + os.pathsep + os.environ.get("PATH", ""))
    return subprocess.run(["gpudoctor", "fleet", "ray", "--address", ray_nodes.address] + args, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)


def test_fleet_ray_names_the_node_with_the_other_driver(ray_nodes: RayNodes, gpudoctor_bin: str):
    for node in ("ray-node2", "ray-node3"):
        ray_nodes.use(node, os.path.join(gpudoctor_bin, "gpudoctor"))
    proc = _fleet(ray_nodes, ["--quick", "--json"], gpudoctor_bin)
    assert proc.returncode == 1, proc.stderr
    fleet = json.loads(proc.stdout)
    nodes = {n["node"]: n for n in fleet["nodes"]}
    assert sorted(nodes) == ["ray-node1", "ray-node2", "ray-node3"]
    assert all(n["error"] is None for n in nodes.values()), nodes
    assert sorted(fleet["majority"]["nodes"]) == ["ray-node1", "ray-node2"]
    assert [o["node"] for o in fleet["outliers"]] == ["ray-node3"]
    assert fleet["outliers"][0]["differs"][0] == {
        "key": "driver.version", "label": "NVIDIA driver version (kernel module)",
        "value": "535.161.08", "majority": "535.183.01"}
    assert "nvml-driver-mismatch" in [c["code"] for c in nodes["ray-node3"]["root_causes"]]


def test_fleet_ray_reports_missing_and_hung_nodes_and_aggregates_the_rest(
        ray_nodes: RayNodes, gpudoctor_bin: str, hanging_bin: str):
    ray_nodes.use("ray-node2", None)
    ray_nodes.use("ray-node3", os.path.join(hanging_bin, "gpudoctor"))
    started = time.monotonic()
    proc = _fleet(ray_nodes, ["--quick", "--json", "--timeout", "5"], gpudoctor_bin)
    elapsed = time.monotonic() - started
    assert proc.returncode == 1, proc.stderr
    assert elapsed < 40, "a hung node must cost its --timeout, not more"
    fleet = json.loads(proc.stdout)
    errors = {n["node"]: n["error"] for n in fleet["nodes"]}
    assert errors["ray-node1"] is None
    assert errors["ray-node2"].startswith("gpudoctor is not installed on this node")
    assert errors["ray-node3"] == "no answer within 5 s (--timeout)"
    assert fleet["majority"]["nodes"] == ["ray-node1"]
    assert fleet["counts"] == {"nodes": 3, "answered": 1, "no_answer": 2, "groups": 1}


def test_fleet_ray_lists_a_dead_node(ray_nodes: RayNodes, gpudoctor_bin: str):
    """The last test on the cluster in this file: the cluster remembers the dead node from now on."""
    for node in ("ray-node2", "ray-node3"):
        ray_nodes.use(node, os.path.join(gpudoctor_bin, "gpudoctor"))
    gone = ray_nodes.cluster.add_node(num_cpus=1, object_store_memory=78 * 1024 * 1024, node_name="ray-node4")
    ray_nodes.cluster.remove_node(gone)
    proc = _fleet(ray_nodes, ["--quick", "--json", "--timeout", "20"], gpudoctor_bin)
    fleet = json.loads(proc.stdout)
    errors = {n["node"]: n["error"] for n in fleet["nodes"]}
    assert errors.pop("ray-node4") == "down (Ray lists the node as dead)"
    assert errors == {"ray-node1": None, "ray-node2": None, "ray-node3": None}
    assert proc.returncode == 1


def test_fleet_ray_at_an_address_without_a_cluster_is_a_usage_error_at_once(gpudoctor_bin: str):
    pytest.importorskip("ray")
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    started = time.monotonic()
    proc = subprocess.run(["gpudoctor", "fleet", "ray", "--address", f"127.0.0.1:{port}"], env=dict(
        os.environ, PATH=gpudoctor_bin + os.pathsep + os.environ["PATH"]), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, timeout=60)
    assert proc.returncode == 2
    assert f"cannot join the Ray cluster at 127.0.0.1:{port}" in proc.stderr
    assert time.monotonic() - started < 15
