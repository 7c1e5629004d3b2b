"""`gpudoctor explain` end to end, in a subprocess: exit codes, JSON contract, messages."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(__file__).parent / "corpus"


def run(*args, stdin=b""):
    return subprocess.run([sys.executable, "-m", "gpudoctor.commands.explain", "explain", *args],
                          input=stdin, capture_output=True, cwd=ROOT, timeout=60)


def test_error_log_from_file_exits_1_with_fix():
    p = run("--no-color", str(CORPUS / "nvml-mismatch-0.log"))
    assert p.returncode == 1
    out = p.stdout.decode()
    assert "nvml-driver-mismatch" in out and "Reboot" in out


def test_json_from_stdin_has_the_check_contract():
    p = run("--json", "-", stdin=(CORPUS / "tf-libcudart-11.0-jax3746.log").read_bytes())
    assert p.returncode == 1
    report = json.loads(p.stdout)
    assert set(report) >= {"schema", "gpudoctor_version", "verdict", "findings", "source"}
    assert report["verdict"] == "error"
    f = report["findings"][0]
    assert set(f) == {"code", "severity", "layer", "title", "detail", "evidence", "fix", "caused_by"}
    assert f["code"] == "cuda-library-missing"


def test_not_environment_exits_0_with_pointer():
    p = run("--no-color", str(CORPUS / "assert-0.log"))
    assert p.returncode == 0
    assert "not-environment" in p.stdout.decode()


def test_nothing_recognisable_is_said_plainly():
    p = run("--no-color", "-", stdin=b"epoch 1 loss 0.5\n")
    assert p.returncode == 0
    assert "Nothing recognisable" in p.stdout.decode()


def test_unreadable_file_exits_2_without_traceback():
    p = run(str(CORPUS / "does-not-exist.log"))
    assert p.returncode == 2
    assert b"Traceback" not in p.stderr and b"cannot read" in p.stderr


def test_binary_junk_does_not_crash():
    p = run("--json", "-", stdin=bytes(range(256)) * 1000)
    assert p.returncode == 0
    assert json.loads(p.stdout)["findings"] == []


def test_check_option_without_pipeline_still_answers():
    p = run("--json", "--check", str(CORPUS / "nvml-mismatch-0.log"))
    assert p.returncode in (0, 1)
    assert json.loads(p.stdout)["findings"]
