"""Through the installed `gpudoctor` command: compat answers sourced arch lists, CUDA updates with
their drivers, and says plainly when a release is newer than the tables; `check` on a simulated GPU
machine with a torch newer than the tables says so and guesses nothing."""

from __future__ import annotations

import json
import subprocess
import textwrap

from gpudoctor import compat as C
from tests.lab import scenarios
from tests.lab.fixtures import gpudoctor_command


def compat_json(*args: str):
    p = subprocess.run(gpudoctor_command() + ["compat", *args, "--json"], capture_output=True, text=True, timeout=60)
    return p.returncode, json.loads(p.stdout)


def compat_text(*args: str) -> str:
    p = subprocess.run(gpudoctor_command() + ["compat", *args], capture_output=True, text=True, timeout=60,
                       env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_torch_241_lists_each_variants_arch_list_with_its_build_script():
    rc, d = compat_json("torch", "2.4.1")
    assert rc == 0
    archs = {v["name"]: (v["arch_list"], v["arch_source"]) for v in d["variants"]}
    assert archs["cu118"][0] == ["3.7", "5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0"]  # Kepler kept on 11.8 only
    assert archs["cu121"][0] == ["5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0"]
    assert all("pytorch/builder manywheel/build_cuda.sh on branch release/2.4 at 4ce1afeb2262" in s for _, s in archs.values())
    text = compat_text("torch", "2.4.1")
    assert "arch list: pytorch/builder manywheel/build_cuda.sh" in text
    lines = text.splitlines()
    # each install command on a line of its own, outside the table's borders: selecting it copies it whole
    command = "pip install torch==2.4.1 --index-url https://download.pytorch.org/whl/cu118"
    assert any(line.strip() == command for line in lines)


def test_torch_2150_answers_variant_python_and_arch_list_from_its_wheel():
    rc, d = compat_json("torch", "2.15.0")
    assert rc == 0 and d["default_variant"] == "cu132" and "3.15" in d["python"]
    (v,) = d["variants"]
    assert v["cuda"] == "13.2" and v["cudnn"] == "9.26.0.51"
    assert v["arch_list"] == ["7.5", "8.0", "8.6", "9.0", "10.0", "12.0"]
    assert "torch-2.15.0-cp312-cp312-manylinux_2_28_x86_64.whl (sha256 6d8c86f4" in v["arch_source"]
    assert "libtorch_cuda.so" in v["arch_source"]


def test_cuda_132_names_each_release_and_its_minimum_driver():
    rc, d = compat_json("cuda", "13.2")
    assert rc == 0
    releases = {r["release"]: r["linux"] for r in d["releases"]}
    assert releases == {"CUDA 13.2 GA": "595.45.04", "CUDA 13.2 Update 1": "595.58.03",
                        "CUDA 13.2 Update 2": "595.71.05"}  # 13.2 Update 2 release notes, Table 3
    assert all(r["windows"] is None for r in d["releases"])  # N/A for 13.x
    assert d["linux"]["toolkit_driver"] == "595.45.04"  # the GA's driver stays the minor's toolkit driver
    text = compat_text("cuda", "13.2")
    for line in ("CUDA 13.2 GA: Linux driver >= 595.45.04", "CUDA 13.2 Update 1: Linux driver >= 595.58.03",
                 "CUDA 13.2 Update 2: Linux driver >= 595.71.05"):
        assert line in text


def test_torch_newer_than_the_tables_is_answered_not_unknown():
    rc, d = compat_json("torch", "2.16.0")
    newest = C.newest_covered("torch")
    assert rc == 0 and d["newer_than_tables"]["newest"] == newest.newest
    assert d["newer_than_tables"]["table"] == "pytorch.toml" and "variants" not in d
    text = compat_text("torch", "2.16.0")
    assert f"newer than gpudoctor's tables, which cover up to {newest.newest}" in " ".join(text.split())
    assert "unknown" not in text


def test_check_with_a_torch_newer_than_the_tables_says_so_and_guesses_nothing(lab, tmp_path):
    site = tmp_path / "site"
    (site / "torch-2.16.0.dist-info").mkdir(parents=True)
    (site / "torch-2.16.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.16.0\n")
    (site / "torch").mkdir()
    (site / "torch" / "__init__.py").write_text("")
    (site / "torch" / "version.py").write_text(textwrap.dedent("""\
        __version__ = '2.16.0'
        cuda = '13.2'
        hip = None
    """))
    machine = scenarios.rtx2080ti_x4()
    machine.driver_version, machine.cuda_driver_version = "595.45.04", 13020
    rc, report, stderr = lab.run_check(machine, "--quick", env_extra={"PYTHONPATH": str(site)})
    found = [f for f in report["findings"] if f["code"] == "newer-than-tables"]
    assert len(found) == 1 and found[0]["severity"] == "info", stderr
    assert "PyTorch 2.16.0" in found[0]["detail"] and "up to 2.15.0" in found[0]["detail"]
    codes = {f["code"] for f in report["findings"]}
    assert not codes & {"python-unsupported", "gpu-arch-unsupported", "driver-too-old"}
    assert not any("PyTorch 2.15" in step for f in report["findings"] for step in f["fix"])


def test_torch_280_gives_each_variant_a_list_or_the_releases_own_supported_range():
    rc, d = compat_json("torch", "2.8.0")
    assert rc == 0
    by = {v["name"]: v for v in d["variants"]}
    assert by["cu128"]["arch_list"][0] == "7.0" and by["cu128"]["capability_range"] is None
    assert by["cu129"]["arch_list"] is None and by["cu129"]["capability_range"] == ["7.0", "12.0"]
    assert by["cu126"]["capability_range"] == ["5.0", "9.0"]
    assert "CUDA_ARCHES_SUPPORTED" in by["cu129"]["capability_range_source"]
    text = compat_text("torch", "2.8.0")
    assert "list unknown; supports 7.0 to 12.0" in text and "supported range: wheel torch-2.8.0" in text
