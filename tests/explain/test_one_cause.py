"""One cause, one finding (issue 11): the TensorFlow 1.14 log this project started from."""

from __future__ import annotations

import json
import subprocess
import sys

from gpudoctor.causes import count_causes, tally_text
from gpudoctor.explain import explain_text
from gpudoctor.fixes import check_command
from gpudoctor.model import Severity

# Verbatim from issue 11 (the "(the same for ...)" line is the issue's own shorthand).
ISSUE_11_VERBATIM = """\
... dso_loader.cc:53] Could not dlopen library 'libcudart.so.10.0'; dlerror: libcudart.so.10.0: cannot open shared object file: No such file or directory; LD_LIBRARY_PATH: /home/u/.mujoco/mjpro150/bin:/usr/local/cuda-10.1/lib64:
... (the same for libcublas, libcufft, libcurand, libcusolver, libcusparse .so.10.0)
... dso_loader.cc:42] Successfully opened dynamic library libcudnn.so.7
... gpu_device.cc:1663] Cannot dlopen some GPU libraries. Skipping registering GPU devices...
"""
LIBRARIES = ("libcudart", "libcublas", "libcufft", "libcurand", "libcusolver", "libcusparse")
# The same log written out: one dlerror line per library, as TensorFlow 1.14 prints them.
ISSUE_11_FULL = "".join(
    f"2019-08-01 10:00:00.00000{i}: I tensorflow/stream_executor/platform/default/dso_loader.cc:53] Could not dlopen "
    f"library '{lib}.so.10.0'; dlerror: {lib}.so.10.0: cannot open shared object file: No such file or directory; "
    "LD_LIBRARY_PATH: /home/u/.mujoco/mjpro150/bin:/usr/local/cuda-10.1/lib64:\n" for i, lib in enumerate(LIBRARIES)
) + ("2019-08-01 10:00:00.000007: I tensorflow/stream_executor/platform/default/dso_loader.cc:42] Successfully opened "
     "dynamic library libcudnn.so.7\n"
     "2019-08-01 10:00:00.000008: W tensorflow/core/common_runtime/gpu/gpu_device.cc:1663] Cannot dlopen some GPU "
     "libraries. Skipping registering GPU devices...\n")


def _roots(result):
    return [f for f in result.findings if f.caused_by is None and f.severity == Severity.ERROR]


def _assert_the_answer(result):
    roots = _roots(result)
    assert len(roots) == 1, [f.code for f in roots]
    root = roots[0]
    assert root.code == "cuda-version-mismatch"
    assert "CUDA 10.0" in root.detail and "10.1" in root.detail and "LD_LIBRARY_PATH" in root.detail
    assert "/usr/local/cuda-10.1/lib64" in root.detail
    assert "libcudnn.so.7" in root.detail  # the library that did load
    fix = " ".join(root.fix)
    assert "conda install -c conda-forge cudatoolkit=10.0" in fix
    assert 'tensorflow==2.3.0' in fix and "2.1.0-2.3.0" in fix  # built for 10.1, from compat/tensorflow.toml
    assert "nvidia-" not in fix  # CUDA 10.0 has no NVIDIA pip wheels
    assert not [p for step in root.fix for p in check_command(step)]
    symptoms = [f for f in result.findings if f.caused_by]
    assert symptoms and all(f.caused_by == root.code for f in symptoms)
    return root


def test_issue_11_log_verbatim_gives_one_root_cause():
    _assert_the_answer(explain_text(ISSUE_11_VERBATIM))


def test_six_missing_libraries_of_cuda_10_0_are_one_finding():
    root = _assert_the_answer(explain_text(ISSUE_11_FULL))
    assert all(f"{lib}.so.10.0" in root.detail for lib in LIBRARIES)
    assert root.evidence["count"] == 6 and len(root.evidence["sonames"]) == 6
    assert count_causes(explain_text(ISSUE_11_FULL).findings) == {"errors": 1, "warnings": 0, "symptoms": 1}


def test_a_conda_env_in_the_log_gets_the_conda_command_for_this_env():
    log = ('  File "/home/u/anaconda3/envs/tf/lib/python3.7/site-packages/tensorflow/__init__.py", line 1\n'
           + ISSUE_11_FULL)
    root = _roots(explain_text(log))[0]
    assert root.fix[0].startswith("`conda install -c conda-forge cudatoolkit=10.0` in this conda env")


def test_versions_from_a_conda_list_name_what_was_found():
    log = "cudatoolkit               10.1.243             h6bb024c_0\n" + ISSUE_11_FULL.replace(
        "LD_LIBRARY_PATH: /home/u/.mujoco/mjpro150/bin:/usr/local/cuda-10.1/lib64:", "LD_LIBRARY_PATH: /opt/x:")
    root = _roots(explain_text(log))[0]
    assert "conda's cudatoolkit 10.1" in root.detail and "in this conda env" in root.fix[0]


def test_cuda_11_libraries_get_wheels_and_cuda_12_conda_gets_cuda_version():
    log = "".join(f"Could not load dynamic library '{so}'; dlerror: {so}: cannot open shared object file: No such file\n"
                  for so in ("libcudart.so.11.0", "libcublas.so.11", "libcufft.so.10", "libcudnn.so.8"))
    roots = _roots(explain_text(log))
    assert len(roots) == 1 and roots[0].code == "cuda-library-missing"
    fix = " ".join(roots[0].fix)
    assert "nvidia-cuda-runtime-cu11" in fix and "nvidia-cublas-cu11" in fix and "cudatoolkit=11.0" in fix
    assert '"nvidia-cudnn-cu11==8.*"' in fix
    one = explain_text("ImportError: libcublas.so.12: cannot open shared object file: No such file or directory")
    assert "cuda-version=12" in " ".join(one.findings[0].fix) and "nvidia-cublas-cu12" in " ".join(one.findings[0].fix)


def test_tally_counts_causes_not_lines():
    findings = explain_text(ISSUE_11_FULL).findings
    assert tally_text(findings) == "1 error + 1 symptom"


def test_explain_command_prints_one_root_cause(tmp_path):
    log = tmp_path / "tf114.log"
    log.write_text(ISSUE_11_FULL, encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "gpudoctor", "explain", "--json", str(log)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 1, out.stderr
    report = json.loads(out.stdout)
    roots = [f for f in report["findings"] if f["caused_by"] is None and f["severity"] == "error"]
    assert [f["code"] for f in roots] == ["cuda-version-mismatch"]
    assert "conda install -c conda-forge cudatoolkit=10.0" in " ".join(roots[0]["fix"])


def test_a_driver_too_old_for_the_missing_cuda_is_said_with_the_fix():
    log = ("| NVIDIA-SMI 470.57.02    Driver Version: 470.57.02    CUDA Version: 11.4 |\n"
           "ImportError: libcudart.so.12: cannot open shared object file: No such file or directory")
    f = explain_text(log).findings[0]
    assert any("supports CUDA up to 11.4" in step for step in f.fix)


def test_the_gpus_of_one_full_memory_problem_are_one_finding():
    log = "".join(f"CUDA runtime implicit initialization on GPU:{i} failed. Status: out of memory\n" for i in (0, 2, 3))
    full = [f for f in explain_text(log).findings if f.code == "gpu-memory-full"]
    assert len(full) == 1
    assert "GPU 0, 2, 3" in full[0].detail and full[0].evidence["all_gpu"] == ["0", "2", "3"]


def test_tensorflow_215_log_gets_its_and_cuda_command_and_the_wheel_it_has():
    log = ("tensorflow==2.15.0\nnvidia-cuda-runtime-cu11==11.8.89\n" + "".join(
        f"W dso_loader.cc:64] Could not load dynamic library '{so}'; dlerror: {so}: cannot open shared object file: "
        "No such file or directory\n" for so in ("libcudart.so.12", "libcublas.so.12", "libcudnn.so.8")))
    roots = _roots(explain_text(log))
    assert len(roots) == 1 and roots[0].code == "cuda-version-mismatch"
    assert roots[0].fix[0].startswith('`pip install "tensorflow[and-cuda]==2.15.0"`')
    assert "nvidia-cuda-runtime-cu11 11.8" in roots[0].detail
    assert not [p for step in roots[0].fix for p in check_command(step)]


def test_every_fact_signature_reads_its_own_example():
    from gpudoctor.explain.catalogue import load_catalogue

    for sig in load_catalogue().signatures:
        if sig.kind == "fact":
            assert explain_text(sig.example).facts, sig.id


def test_join_with_check_says_where_this_machine_has_the_missing_cuda_10_0():
    from gpudoctor.explain import join_with_check

    folder = "/usr/local/cuda-10.0/lib64"
    check = {"findings": [], "facts": {"libraries": {"libraries": [
        {"name": lib[3:], "copies": [{"soname": f"{lib}.so.10.0", "path": f"{folder}/{lib}.so.10.0"}]}
        for lib in LIBRARIES]}}}
    joined = join_with_check(explain_text(ISSUE_11_FULL).findings, check)
    root = _roots_of(joined)[0]
    assert folder in root.detail and root.fix[0] == f"export LD_LIBRARY_PATH={folder}:$LD_LIBRARY_PATH"
    nothing = _roots_of(join_with_check(explain_text(ISSUE_11_FULL).findings, {"facts": {}}))[0]
    assert "none of them on this machine either" in nothing.detail


def _roots_of(findings):
    return [f for f in findings if f.caused_by is None and f.severity == Severity.ERROR]


def test_tensorflow_114_symptom_does_not_offer_the_and_cuda_extra():
    log = "tensorflow-gpu==1.14.0\n" + ISSUE_11_FULL
    symptom = next(f for f in explain_text(log).findings if f.code == "framework-gpu-not-detected")
    assert not any("and-cuda" in step for step in symptom.fix)
    generic = next(f for f in explain_text(ISSUE_11_FULL).findings if f.code == "framework-gpu-not-detected")
    assert any("tensorflow[and-cuda]" in step for step in generic.fix)
