"""`gpudoctor compat` in a subprocess, read through --json."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-m", "gpudoctor.commands.compat", *args], capture_output=True, text=True, env=env)
    return p.returncode, p.stdout, p.stderr


def test_tensorflow_json():
    rc, out, _ = run("tensorflow", "2.15", "--json")
    d = json.loads(out)
    assert rc == 0 and d["linux"]["cuda"] == "12.2" and d["and_cuda"]["command"].startswith('pip install "tensorflow[and-cuda]==')


def test_torch_json():
    rc, out, _ = run("torch", "2.4.1", "--json")
    d = json.loads(out)
    assert rc == 0 and d["default_variant"] == "cu121"
    assert any(v["name"] == "cu124" and "whl/cu124" in v["command"] for v in d["variants"])


def test_cuda_json():
    rc, out, _ = run("cuda", "12.4", "--json")
    d = json.loads(out)
    assert rc == 0 and d["linux"]["minor_version_compat_driver"] == "525.60.13"
    assert d["build_archs"]["min_compute_capability"] == "5.0"


def test_gpu_json():
    rc, out, _ = run("gpu", "NVIDIA GeForce RTX 3090", "--json")
    assert rc == 0 and json.loads(out)["compute_capability"] == "8.6"


def test_driver_json_and_readable():
    rc, out, _ = run("--driver", "470.82", "--json")
    d = json.loads(out)
    assert rc == 0 and d["newest_cuda_full"] == "11.4" and d["torch"]["variant"] == "cu118"
    rc, out, _ = run("--driver", "470.82")
    assert rc == 0 and "tensorflow[and-cuda]" in out


def test_unknown_version_exits_2_without_traceback():
    rc, out, err = run("torch", "0.1")
    assert rc == 2 and "not in the tables" in err and "Traceback" not in err
    rc, out, err = run()
    assert rc == 2 and "usage" in err
