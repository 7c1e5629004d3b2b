"""Issue 10's classes in `gpudoctor explain`: the installed command on real logs from the corpus,
and the signature tables 30-36 checked as data (each documented, each example matching itself)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpudoctor.explain.catalogue import DATA_DIR, _load, load_catalogue

CORPUS = Path(__file__).parent / "corpus"
GPUDOCTOR = shutil.which("gpudoctor") or os.path.join(os.path.dirname(sys.executable), "gpudoctor")
ISSUE10_FILES = sorted((DATA_DIR / "signatures").glob("3*.toml"))


def explain_json(log: Path):
    proc = subprocess.run([GPUDOCTOR, "explain", "--json", str(log)], capture_output=True, timeout=60)
    assert b"Traceback" not in proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def roots(report):
    return [f for f in report["findings"] if f["caused_by"] is None]


def test_gpu_dropped_by_the_driver_branch_gets_its_legacy_branch_not_a_newer_driver():
    rc, report = explain_json(CORPUS / "generations" / "legacy-340-geforce-9400m-trueos.log")
    assert rc == 1
    first = report["findings"][0]
    assert first["code"] == "driver-not-loaded"
    fixes = " ".join(first["fix"])
    assert "340.xx legacy driver" in fixes
    assert "379.39" in first["detail"]  # the installed driver that ignores the GPU


def test_blackwell_gpu_on_an_old_build_is_told_the_cu128_index():
    rc, report = explain_json(CORPUS / "arch" / "sm120-webui-nix-journal.log")
    assert rc == 1
    assert [f["code"] for f in roots(report)] == ["gpu-arch-unsupported"]
    assert "https://download.pytorch.org/whl/cu128" in " ".join(report["findings"][0]["fix"])


@pytest.mark.parametrize("log,code,in_title,in_fix", [
    # torchvision for another CUDA: both versions, and the index of torch's own CUDA
    ("companions/tv-cu118-sd-easy-mode.log", "conflicting-packages", ["11.7", "11.8"],
     "https://download.pytorch.org/whl/cu117"),
    # nvcc of another CUDA than torch's: both versions, and CUDA_HOME pointed at torch's
    ("extensions/mm-118-vs-124-autoalign.log", "extension-cuda-mismatch", ["11.8", "12.4"],
     "CUDA_HOME=/usr/local/cuda-12.4"),
    # a ptxas older than the build: its version, and the wheel that brings a current one
    ("xla/ptxas-9.2-older-than-11.1-jax.log", "ptxas-too-old", ["9.2.148"], "nvidia-cuda-nvcc-cu12"),
    # a gcc newer than nvcc accepts: the newest gcc it takes, as a package to install beside
    ("extensions/gcc-later-than-6-matlab.log", "host-compiler-unsupported", ["gcc newer than 6"], "gcc-6 g++-6"),
    # a foreign libcublasLt before torch's: put the cuBLAS wheel's own folder first
    ("torch-libs/cublaslt-hshmatmul-lipzh5.log", "multiple-cuda-installs", ["libcublasLt"], "nvidia.cublas.lib"),
])
def test_first_finding_names_the_versions_and_the_command_that_aligns_them(log, code, in_title, in_fix):
    rc, report = explain_json(CORPUS / log)
    assert rc == 1
    first = report["findings"][0]
    assert first["code"] == code and first["caused_by"] is None
    assert all(v in first["title"] for v in in_title)
    assert in_fix in " ".join(first["fix"])


def test_companions_broken_by_one_torch_change_are_one_finding():
    rc, report = explain_json(CORPUS / "companions" / "pip-xformers-downgrades-torch.log")
    assert rc == 1
    assert [f["code"] for f in report["findings"]] == ["conflicting-packages"]


def test_preallocation_is_the_cause_and_the_cudnn_failure_its_symptom():
    rc, report = explain_json(CORPUS / "memory" / "conv-tf-models-7088.log")
    assert rc == 1
    first = report["findings"][0]
    assert first["code"] == "gpu-memory-preallocated" and first["caused_by"] is None
    assert "TF_FORCE_GPU_ALLOW_GROWTH=true" in " ".join(first["fix"])
    assert all(f["caused_by"] == "gpu-memory-preallocated" for f in report["findings"][1:])


def test_out_of_memory_while_training_stays_a_program_problem():
    rc, report = explain_json(CORPUS / "memory" / "train-oom-epipolarpose.log")
    assert rc == 0
    assert [f["code"] for f in report["findings"]] == ["not-environment"]


# -- the tables as data --------------------------------------------------------------------
ENTRIES = [(path.name, e) for path in ISSUE10_FILES for e in _load(str(path))["signature"]]


@pytest.mark.parametrize("name,entry", ENTRIES, ids=[e["id"] for _, e in ENTRIES])
def test_every_signature_is_documented_and_matches_its_own_example(name, entry):
    assert entry["meaning"] and entry["example"], entry["id"]
    assert entry["source"].startswith("https://"), entry["id"]
    sig = next(s for s in load_catalogue().signatures if s.id == entry["id"])
    assert any(k in entry["example"].lower() for k in sig.keywords), "a keyword must pre-select the example"
    assert sig.regex.search(entry["example"]), entry["id"]
    if sig.kind == "finding":
        assert sig.fix, "every finding carries a fix"
