"""The installed `gpudoctor` command, as a user meets it: in a subprocess, reading its JSON."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from gpudoctor import __version__
from gpudoctor.codes import CATALOG

GPUDOCTOR = shutil.which("gpudoctor") or os.path.join(os.path.dirname(sys.executable), "gpudoctor")


def run(*args, env=None, timeout=120):
    return subprocess.run([GPUDOCTOR, *args], capture_output=True, text=True, timeout=timeout,
                          env=env if env is not None else dict(os.environ))


def no_gpu_env(tmp_path):
    """This machine as it is, but with an empty sysroot so a host GPU could never leak in."""
    env = dict(os.environ, GPUDOCTOR_SYSROOT=str(tmp_path))
    env.pop("CUDA_VISIBLE_DEVICES", None)
    return env


def test_version_and_help():
    assert run("--version").stdout.strip() == f"gpudoctor {__version__}"
    help_text = run("check", "--help").stdout
    for option in ("--json", "--quick", "--no-color", "--timeout", "--python", "-v"):
        assert option in help_text


@pytest.mark.parametrize("mode", [[], ["--quick"]])
def test_check_json_contract_on_a_machine_without_gpu(tmp_path, mode):
    proc = run("check", "--json", *mode, env=no_gpu_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["schema"] == "1" and report["gpudoctor_version"] == __version__
    assert report["verdict"] == "ok"
    assert {"system", "driver", "gpus", "visible_devices", "libraries", "frameworks", "environment"} <= set(report["facts"])
    assert [f["code"] for f in report["findings"] if f["severity"] != "info"] == []
    assert report["findings"][0]["code"] == "no-nvidia-gpu"
    for f in report["findings"]:
        assert set(f) == {"code", "severity", "layer", "title", "detail", "evidence", "fix", "caused_by"}
        assert f["code"] in CATALOG


def test_terminal_output_without_a_tty_has_verdict_and_fix(tmp_path):
    proc = run("check", "--no-color", env=no_gpu_env(tmp_path))
    assert proc.returncode == 0
    assert proc.stdout.startswith("✔ OK") and "no-nvidia-gpu" in proc.stdout and "\x1b[" not in proc.stdout


def test_usage_errors_exit_2_without_traceback():
    for args in (["check", "--timeout", "soon"], ["check", "--python", "/no/such/python"], ["nonsense"], []):
        proc = run(*args)
        assert proc.returncode == 2, args
        assert "Traceback" not in proc.stderr


def test_python_m_gpudoctor_works():
    proc = subprocess.run([sys.executable, "-m", "gpudoctor", "--version"], capture_output=True, text=True)
    assert proc.stdout.strip() == f"gpudoctor {__version__}"


def test_codes_documents_every_code():
    listing = run("codes").stdout
    assert all(code in listing for code in CATALOG)
    page = run("codes", "gpu-memory-full").stdout
    assert "What it means" in page and "How to fix" in page
    assert run("codes", "no-such-code").returncode == 2


def test_secrets_inside_collected_variables_never_reach_check_output(tmp_path):
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    env = dict(no_gpu_env(tmp_path),
               LD_LIBRARY_PATH=f"/opt/lib:https://deploy:hunter2secret@proxy.example/lib",
               CUDA_VISIBLE_DIVICES=token, HF_TOKEN=token, AWS_SECRET_ACCESS_KEY="wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    outputs = [run("check", "--json", env=env).stdout, run("check", "--no-color", "-v", env=env).stdout]
    for out in outputs:
        assert "hunter2secret" not in out and token not in out and "wJalrXUtnFEMI" not in out
    assert "/opt/lib" in outputs[0]  # the rest of the value is kept


@pytest.mark.skipif(not os.path.exists("/usr/local/cuda/lib64/libcudart.so.13"), reason="a machine without CUDA 13")
def test_this_machine_shows_its_cuda_13_runtime_with_the_real_version(tmp_path):
    proc = run("check", "--no-color", env=dict(no_gpu_env(tmp_path), COLUMNS="150"))
    assert proc.returncode == 0
    row = next(line for line in proc.stdout.splitlines() if "libcudart.so.13" in line)
    assert "13.0" in row and "yes" in row  # the version asked of the library, and dlopen loads it
    assert "cudart 13.0" in proc.stdout  # the layer summary


OLD_PYTHONS = [p for p in ("/root/.pyenv/versions/2.7.18/bin/python", "/root/.pyenv/versions/3.6.15/bin/python")
               if os.access(p, os.X_OK)]


@pytest.mark.skipif(not OLD_PYTHONS, reason="no old interpreter on this machine")
@pytest.mark.parametrize("python", OLD_PYTHONS)
def test_an_old_target_interpreter_is_examined_not_crashed_on(tmp_path, python):
    """TensorFlow 1.x users still have Python 2.7 and 3.6 environments: the child probes must run there."""
    site = tmp_path / "site"
    (site / "tensorflow" / "python" / "platform").mkdir(parents=True)
    (site / "tensorflow" / "__init__.py").write_text("__version__ = '1.14.0'\n")  # a broken TF: no tf.test
    (site / "tensorflow" / "python" / "platform" / "build_info.py").write_text(
        "cuda_version_number = '10.0'\ncudnn_version_number = '7'\n")
    (site / "tensorflow_gpu-1.14.0.dist-info").mkdir()
    (site / "tensorflow_gpu-1.14.0.dist-info" / "METADATA").write_text("Name: tensorflow-gpu\nVersion: 1.14.0\n")
    proc = run("check", "--json", "--python", python, env=dict(no_gpu_env(tmp_path), PYTHONPATH=str(site)))
    report = json.loads(proc.stdout)
    assert report["facts"]["system"]["python_version"].startswith(os.path.basename(os.path.dirname(os.path.dirname(python)))[:3])
    assert [p["name"] for p in report["facts"]["probes"] if p["status"] != "ok"] == []
    tf = report["facts"]["frameworks"]["frameworks"]["tensorflow"]
    assert tf["static"]["cuda_version"] == "10.0" and tf["live"]["import_ok"] is True
    assert "built_with_cuda" in tf["live"]["errors"]  # the missing attribute is a fact, not a crash


def run_without(modules, *args, tmp_path):
    """gpudoctor in a Python where `modules` cannot be imported (as if not installed)."""
    code = ("import sys\n" + "".join(f"sys.modules[{m!r}] = None\n" for m in modules) +
            "from gpudoctor.cli import main\nsys.exit(main(sys.argv[1:]))")
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120,
                          env=no_gpu_env(tmp_path))


def test_check_json_needs_no_terminal_library(tmp_path):
    proc = run_without(["rich"], "check", "--json", "--quick", tmp_path=tmp_path)
    assert proc.returncode == 0 and json.loads(proc.stdout)["verdict"] == "ok"


def test_a_missing_dependency_is_an_install_problem_not_a_bug(tmp_path):
    proc = run_without(["rich"], "check", "--quick", tmp_path=tmp_path)
    assert proc.returncode == 2 and "'rich' that gpudoctor needs is not installed" in proc.stderr
    assert "bug" not in proc.stderr and "Traceback" not in proc.stderr


def test_closed_stdout_is_said_plainly():
    proc = subprocess.run(f"'{GPUDOCTOR}' check --json --quick >&-", shell=True, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2 and "standard output is closed" in proc.stderr
