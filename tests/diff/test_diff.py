"""`gpudoctor diff`: healthy vs driver-too-old ranks the driver first."""

from __future__ import annotations

import argparse
import copy
import json
from pathlib import Path
from typing import List

from gpudoctor.commands import diff as diff_cmd
from gpudoctor.commands import report as report_cmd
from gpudoctor.diff import diff_reports

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "reports"
HEALTHY, OLD = str(FIXTURES / "healthy_4gpu.json"), str(FIXTURES / "driver_too_old.json")


def load(path: str) -> dict:
    return json.loads(Path(path).read_text())


def gpudoctor(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(prog="gpudoctor")
    sub = parser.add_subparsers()
    diff_cmd.register(sub)
    report_cmd.register(sub)
    args = parser.parse_args(argv)
    return args.handler(args)


def test_healthy_vs_driver_too_old_ranks_the_driver_first():
    result = diff_reports(load(HEALTHY), load(OLD))
    top = result.facts[0]
    assert top.category == "driver" and (top.a, top.b) == ("550.54.15", "470.82.01")
    assert [d.key for d in result.facts[:2]] == ["driver.version", "driver.cuda_version"]
    assert result.facts[1].a == "12.4" and result.facts[1].b == "11.4"
    assert "driver-too-old" in top.why


def test_findings_one_side_has():
    result = diff_reports(load(HEALTHY), load(OLD))
    assert [f.code for f in result.only_in_b] == ["driver-too-old", "framework-gpu-not-detected"]
    assert [f.code for f in result.only_in_a] == ["recommendation"]
    assert result.a_verdict == "ok" and result.b_verdict == "error"


def test_without_findings_the_layers_still_rank_a_driver_above_a_package():
    a, b = load(HEALTHY), load(OLD)
    a["findings"], b["findings"] = [], []
    b["facts"]["frameworks"]["packages"]["numpy"] = "2.0.0"
    b["facts"]["environment"]["variables"]["CUDA_VISIBLE_DEVICES"] = "1"
    keys = [d.key for d in diff_reports(a, b).facts]
    assert keys.index("driver.version") < keys.index("env.CUDA_VISIBLE_DEVICES") < keys.index("pkg.numpy")


def test_cuda_library_paths_visible_devices_and_wheels_are_compared():
    a, b = load(HEALTHY), copy.deepcopy(load(HEALTHY))
    lib = b["facts"]["libraries"]["libraries"][2]["loader_resolution"][0]  # cudnn
    lib.update(real_path="/usr/local/cuda-11.2/lib64/libcudnn.so.8.1.0", version="8.1.0")
    b["facts"]["visible_devices"]["cuda_visible_devices"] = "2,3"
    b["facts"]["frameworks"]["packages"]["nvidia-cudnn-cu12"] = "9.1.0.70"
    b["facts"]["frameworks"]["packages"]["requests"] = "2.31.0"
    result = {d.key: d for d in diff_reports(a, b).facts}
    assert result["lib.libcudnn.so.8.version"].b == "8.1.0"
    assert result["lib.libcudnn.so.8.path"].b.startswith("/usr/local/cuda-11.2")
    assert result["visibility.cuda_visible_devices"].a == "(not set)"
    assert result["pkg.nvidia-cudnn-cu12"].score > result["pkg.requests"].score


def test_identical_reports_have_no_differences():
    result = diff_reports(load(HEALTHY), load(HEALTHY))
    assert result.facts == [] and not result.only_in_a and not result.only_in_b


def test_cli_json_output(capsys):
    assert gpudoctor(["diff", HEALTHY, OLD, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["facts"][0]["key"] == "driver.version"
    assert data["findings"]["only_in_b"][0]["code"] == "driver-too-old"
    assert data["a"]["verdict"] == "ok" and data["b"]["verdict"] == "error"


def test_cli_terminal_output_reads_markdown_reports_too(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    md = tmp_path / "b.md"
    assert gpudoctor(["report", "--from", OLD, "-o", str(md), "--no-redact"]) == 0
    capsys.readouterr()
    assert gpudoctor(["diff", HEALTHY, str(md)]) == 0
    out = capsys.readouterr().out
    assert "What differs" in out and "550.54.15" in out and "470.82.01" in out
    assert out.index("NVIDIA driver version") < out.index("torch")
    assert "Findings only in B" in out and "driver-too-old" in out


def test_cli_missing_file_is_a_usage_error(tmp_path, capsys):
    assert gpudoctor(["diff", HEALTHY, str(tmp_path / "missing.json")]) == 2
    assert "cannot read" in capsys.readouterr().err
