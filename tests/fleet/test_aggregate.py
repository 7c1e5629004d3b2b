"""The aggregation behind every engine, and `gpudoctor fleet reports` end to end."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import tracemalloc
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

from gpudoctor.fleet.aggregate import FleetAggregator, NodeAnswer
from gpudoctor.fleet.hostlist import compress
from tests.lab import scenarios
from tests.lab.fixtures import Lab, gpudoctor_command


@pytest.fixture(scope="module")
def saved(fleet_lab: Lab) -> Dict[str, Dict[str, Any]]:
    """Real quick reports of lab machines: healthy, upgraded without a reboot, two GPUs full."""
    out = {}
    for name, scenario in (("healthy", scenarios.rtx2080ti_x4()), ("upgraded", scenarios.nvml_mismatch()),
                           ("full", scenarios.rtx2080ti_x4_two_full())):
        code, report, stderr = fleet_lab.run_check(scenario, "--quick")
        assert report is not None, stderr
        out[name] = report
    return out


def _write(folder: Path, reports: Dict[str, Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for node, report in reports.items():
        (folder / f"{node}.json").write_text(report if isinstance(report, str) else json.dumps(report))
    return folder


def _fleet_reports(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(gpudoctor_command() + ["fleet", "reports"] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=60)


def test_saved_reports_name_the_upgraded_node_and_the_silent_one(saved, tmp_path: Path):
    folder = _write(tmp_path / "reports", {"gpu01": saved["healthy"], "gpu02": saved["healthy"],
                                           "gpu03": saved["upgraded"], "gpu04": "<html>502 Bad Gateway</html>"})
    proc = _fleet_reports(str(folder))
    assert proc.returncode == 1
    out = proc.stdout
    assert "4 nodes via reports, 3 answered, 2 stack groups" in out
    assert "gpu03" in out and "NVIDIA driver version (kernel module): 535.161.08  (majority: 535.183.01)" in out
    assert "GPUs 0-3 model: (unknown)  (majority: NVIDIA GeForce RTX 2080 Ti)" in out  # NVML cannot answer there
    assert "gpu04: " in out and "holds no JSON" in out
    assert "nvml-driver-mismatch  1: gpu03" in out

    fleet = json.loads(_fleet_reports(str(folder), "--json").stdout)
    assert {"schema", "verdict", "nodes", "majority", "outliers"} <= set(fleet)
    assert fleet["verdict"] == "error"
    assert [set(n) >= {"node", "verdict", "error", "root_causes"} for n in fleet["nodes"]] == [True] * 4
    assert [o["node"] for o in fleet["outliers"]] == ["gpu03"]
    assert set(fleet["outliers"][0]["differs"][0]) >= {"key", "value", "majority"}


def test_a_fleet_of_one_stack_without_errors_exits_0(saved, tmp_path: Path):
    folder = _write(tmp_path / "r", {f"n{i}": saved["healthy"] for i in range(3)})
    proc = _fleet_reports(str(folder / "n0.json"), str(folder / "n1.json"), str(folder / "n2.json"))
    assert proc.returncode == 0, proc.stdout
    assert "Every node that answered has the same stack." in proc.stdout


def test_a_node_with_an_error_but_the_majority_stack_is_no_outlier(saved, tmp_path: Path):
    """GPUs full is a state, not a stack: the node stays in the majority, its finding is listed."""
    folder = _write(tmp_path / "r", {"a": saved["healthy"], "b": saved["healthy"], "c": saved["full"]})
    fleet = json.loads(_fleet_reports(str(folder), "--json").stdout)
    assert fleet["outliers"] == [] and sorted(fleet["majority"]["nodes"]) == ["a", "b", "c"]
    spread = {f["code"]: f["nodes"] for f in fleet["findings"]}
    assert spread["gpu-memory-full"] == ["c"]


def test_between_two_equal_groups_the_healthy_one_is_the_majority(saved):
    summary = FleetAggregator("test").add_all([NodeAnswer("bad", saved["upgraded"]),
                                               NodeAnswer("good", saved["healthy"])]).finish()
    assert summary.majority.nodes == ["good"]
    assert [o.node for o in summary.outliers] == ["bad"]


def test_differences_come_in_diffs_order_driver_before_kernel(saved):
    odd = copy.deepcopy(saved["healthy"])
    odd["facts"]["system"]["kernel_release"] = "5.15.0-91-generic"
    odd["facts"]["driver"]["kernel"]["version"] = "535.161.08"
    odd["facts"]["frameworks"]["packages"]["numpy"] = "0.0-not-in-the-fingerprint"
    summary = FleetAggregator("test").add_all(
        [NodeAnswer(f"n{i}", saved["healthy"]) for i in range(3)] + [NodeAnswer("odd", odd)]).finish()
    keys = [d.key for d in summary.outliers[0].differs]
    assert keys == ["driver.version", "system.kernel_release"]


def test_a_repeated_node_name_stays_two_nodes(saved):
    summary = FleetAggregator("test").add_all([NodeAnswer("vm", saved["healthy"]),
                                               NodeAnswer("vm", saved["healthy"])]).finish()
    assert [n.node for n in summary.nodes] == ["vm", "vm#2"]


def test_aggregation_streams_memory_does_not_hold_the_reports(saved):
    """2,000 reports of ~30 KB (60 MB of JSON; several hundred MB as Python objects if kept)."""
    base = copy.deepcopy(saved["healthy"])
    packages = base["facts"]["frameworks"]["packages"]
    for i in range(400):
        packages[f"synthetic-package-{i:04d}"] = "1.0"
    text = json.dumps(base)
    assert len(text) > 25_000

    def answers() -> Iterator[NodeAnswer]:
        for i in range(2000):
            yield NodeAnswer(f"gpu{i:05d}", json.loads(text))

    tracemalloc.start()
    try:
        summary = FleetAggregator("test").add_all(answers()).finish()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(summary.nodes) == 2000 and len(summary.groups) == 1
    assert peak < 20 * 1024 * 1024, f"peak {peak / 1e6:.0f} MB"


def test_usage_errors_exit_2(tmp_path: Path):
    missing = _fleet_reports(str(tmp_path / "nope"))
    assert missing.returncode == 2 and "no such file or folder" in missing.stderr
    no_engine = subprocess.run(gpudoctor_command() + ["fleet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, timeout=60)
    assert no_engine.returncode == 2 and "slurm, ray or reports" in no_engine.stderr
    stray = _fleet_reports(str(tmp_path), "-N", "3")
    assert stray.returncode == 2 and "unrecognized arguments: -N 3" in stray.stderr
    no_srun = subprocess.run(gpudoctor_command() + ["fleet", "slurm", "-N", "3"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, timeout=60, env=dict(os.environ, PATH=str(tmp_path)))
    assert no_srun.returncode == 2 and "srun is not on PATH" in no_srun.stderr


def test_fleet_ray_without_ray_says_how_to_get_it(tmp_path: Path):
    fake = tmp_path / "ray"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise ImportError('No module named ray (test stand-in)')\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    proc = subprocess.run(gpudoctor_command() + ["fleet", "ray"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=60, env=env)
    assert proc.returncode == 2
    assert 'pip install ray' in proc.stderr  # a package that exists (gpudoctor itself is installed from source)


@pytest.mark.parametrize("names, text", [
    (["node1", "node2", "node3", "node7"], "node[1-3,7]"),
    (["gpu01", "gpu02", "gpu10", "login"], "gpu[01-02,10],login"),
    (["a1"], "a1"),
    ([f"n{i}" for i in range(0, 60, 2)], "n[0,2,4,6,8,10,12,14,16,18,20,22,… 18 more]"),
])
def test_node_lists_read_like_slurm_hostlists(names: List[str], text: str):
    assert compress(names) == text


def test_a_ticket_markdown_report_named_on_the_command_line_is_a_node_too(saved, tmp_path: Path):
    folder = _write(tmp_path / "r", {"gpu01": saved["healthy"], "gpu02": saved["healthy"]})
    (folder / "README.md").write_text("# how these reports were collected\n")  # not a report: left alone
    ticket = tmp_path / "gpu03.md"
    made = subprocess.run(gpudoctor_command() + ["report", "--from", str(folder / "gpu01.json"), "-o", str(ticket)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    fleet = json.loads(_fleet_reports(str(folder), str(ticket), "--json").stdout)
    assert [(n["node"], n["error"]) for n in fleet["nodes"]] == [("gpu01", None), ("gpu02", None), ("gpu03", None)]


def test_a_big_fleet_read_by_worker_processes_gives_the_same_summary(saved, tmp_path: Path, monkeypatch):
    from gpudoctor.fleet import reports

    odd = copy.deepcopy(saved["healthy"])
    odd["facts"]["driver"]["kernel"]["version"] = "535.161.08"
    folder = tmp_path / "r"
    folder.mkdir()
    healthy, upgraded = json.dumps(saved["healthy"]), json.dumps(odd)
    for i in range(reports.PARALLEL_FROM + 50):
        (folder / f"gpu{i:04d}.json").write_text(upgraded if i % 50 == 7 else healthy)
    (folder / "gpu9999.json").write_text("{not json")

    def summary() -> Dict[str, Any]:
        return FleetAggregator("reports").add_all(reports.read_reports([str(folder)])).finish().to_json()

    parallel = summary()
    monkeypatch.setattr(reports, "PARALLEL_FROM", 10 ** 9)
    assert summary() == parallel
    assert parallel["counts"] == {"nodes": 551, "answered": 550, "no_answer": 1, "groups": 2}
    assert [o["node"] for o in parallel["outliers"]] == [f"gpu{i:04d}" for i in range(7, 550, 50)]
