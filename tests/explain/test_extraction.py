"""Versions and names in a log end up in the finding's detail and fix."""

from __future__ import annotations

import pytest

from gpudoctor.explain import explain_text, join_with_check
from gpudoctor.explain.catalogue import load_catalogue
from gpudoctor.explain.enrich import cuda_version_from_int, library_version_from_int
from gpudoctor.codes import CATALOG
from gpudoctor.model import Severity


def test_missing_libcudart_11_0_names_cuda_11_0():
    r = explain_text("W dso_loader.cc:64] Could not load dynamic library 'libcudart.so.11.0'; "
                     "dlerror: libcudart.so.11.0: cannot open shared object file: No such file or directory")
    f = r.findings[0]
    assert f.code == "cuda-library-missing"
    assert "CUDA 11.0" in f.detail
    assert any("CUDA 11.0" in step for step in f.fix)
    assert f.evidence["cuda_version"] == "11.0"


def test_dlerror_names_the_dependency_that_is_really_missing():
    r = explain_text("Could not load dynamic library 'libcusolver.so.11'; dlerror: libnvJitLink.so.12: "
                     "cannot open shared object file: No such file or directory")
    assert r.findings[0].evidence["soname"] == "libnvJitLink.so.12"
    assert "CUDA 12" in r.findings[0].detail


def test_cudnn_mismatch_versions_in_fix():
    r = explain_text("Loaded runtime CuDNN library: 8.0.4 but source was compiled with: 8.1.0.")
    f = r.findings[0]
    assert f.code == "cudnn-version-mismatch"
    assert "8.1.0" in f.detail and "8.0.4" in f.detail
    assert any("cudnn-cu12==8.*" in step for step in f.fix)


def test_integer_versions_are_decoded():
    assert cuda_version_from_int(12010) == "12.1"
    assert library_version_from_int(7201) == "7.2.1"
    assert library_version_from_int(90100) == "9.1.0"
    r = explain_text("Found CUDA version 12010, but JAX was built against version 12020, which is newer.")
    assert "12.1" in r.findings[0].detail and "12.2" in r.findings[0].detail


def test_arch_warning_extracts_sm_and_arch_list():
    r = explain_text("NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current "
                     "PyTorch installation.\nThe current PyTorch install supports CUDA capabilities sm_50 sm_80 sm_90.")
    f = r.findings[0]
    assert f.code == "gpu-arch-unsupported"
    assert "12.0" in f.detail and "sm_90" in f.detail
    assert any("sm_120" in step for step in f.fix)


def test_driver_facts_from_nvidia_smi_are_used():
    r = explain_text("| NVIDIA-SMI 470.57.02    Driver Version: 470.57.02    CUDA Version: 11.4 |\n"
                     "RuntimeError: The NVIDIA driver on your system is too old (found version 11040).")
    f = r.findings[0]
    assert f.code == "driver-too-old" and "11.4" in f.detail
    assert f.evidence["driver_version"] == "470.57.02"


def test_symptom_points_at_its_cause():
    r = explain_text("Could not load dynamic library 'libcudnn.so.8'; dlerror: libcudnn.so.8: cannot open shared "
                     "object file: No such file or directory\nCannot dlopen some GPU libraries. Skipping registering")
    codes = [f.code for f in r.findings]
    assert codes == ["cudnn-missing", "framework-gpu-not-detected"]
    assert r.findings[1].caused_by == "cudnn-missing"


def test_nothing_recognisable():
    r = explain_text("epoch 1 loss 0.3\nepoch 2 loss 0.2\n")
    assert r.findings == [] and r.notes == []


def test_oom_at_context_creation_is_an_environment_error_but_not_during_training():
    ctx = explain_text("failed call to cuDevicePrimaryCtxRetain: CUDA_ERROR_OUT_OF_MEMORY: out of memory")
    assert ctx.findings[0].code == "gpu-memory-full" and ctx.findings[0].severity == Severity.ERROR
    train = explain_text("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.")
    assert train.findings[0].code == "not-environment"


def test_generic_unknown_error_needs_a_cuda_context():
    assert explain_text("requests: unknown error while fetching").findings == []
    assert explain_text("RuntimeError: CUDA error: unknown error").findings[0].code == "uvm-not-loaded"  # its usual cause


def test_every_signature_is_documented_and_uses_known_codes():
    cat = load_catalogue()
    for sig in cat.signatures:
        assert sig.meaning and sig.example and sig.source.startswith("https://"), sig.id
        if sig.kind == "finding" and not sig.code.startswith("@"):
            assert sig.code in CATALOG
        if sig.id != "cuda-error-table":
            assert sig.regex.search(sig.example), f"{sig.id}: example does not match its regex"
    for err in cat.cuda_errors:
        assert err.code in CATALOG and err.meaning


def test_join_with_check_names_the_cudnn_on_the_machine():
    r = explain_text("Could not load dynamic library 'libcudnn.so.8'; dlerror: libcudnn.so.8: cannot open shared "
                     "object file: No such file or directory")
    check = {"findings": [], "facts": {"libraries": {"libraries": [
        {"name": "cudnn", "copies": [{"soname": "libcudnn.so.9", "path": "/env/lib/libcudnn.so.9", "version": "9.1.0"}]}]}}}
    joined = join_with_check(r.findings, check)
    assert joined[0].code == "cudnn-version-mismatch"
    assert "libcudnn.so.8" in joined[0].detail and "9.1.0" in joined[0].detail


def test_join_with_check_finds_the_library_off_the_loader_path():
    r = explain_text("ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory")
    check = {"facts": {"libraries": [{"name": "cudart", "copies": [
        {"soname": "libcudart.so.11.0", "path": "/usr/local/cuda-11.2/lib64/libcudart.so.11.0", "found_via": ["CUDA_HOME"]}]}]}}
    joined = join_with_check(r.findings, check)
    assert joined[0].code == "cuda-library-missing"
    assert joined[0].fix[0] == "export LD_LIBRARY_PATH=/usr/local/cuda-11.2/lib64:$LD_LIBRARY_PATH"


def test_join_adds_check_findings_and_driver_facts():
    r = explain_text("CUDA driver version is insufficient for CUDA runtime version")
    check = {"facts": {"driver": {"nvml": {"driver_version": "470.57.02"}, "libcuda": {"driver_version": 11040}}},
             "findings": [{"code": "misspelled-env-var", "severity": "warning", "layer": "visibility",
                           "title": "t", "detail": "d", "evidence": {}, "fix": [], "caused_by": None}]}
    joined = join_with_check(r.findings, check)
    assert joined[0].code == "driver-too-old" and "470.57.02" in joined[0].detail and "11.4" in joined[0].detail
    assert "misspelled-env-var" in [f.code for f in joined]


@pytest.mark.parametrize("line, misspelt", [
    ("$ export CUDA_VISIABLE_DEVICES='0,1'", "CUDA_VISIABLE_DEVICES"),
    ('os.environ["CUDA_VISIBLE_DEIVCES"] = "1"', "CUDA_VISIBLE_DEIVCES"),
    ("CUDA_VISIBLE=0 python tools/train.py", "CUDA_VISIBLE"),
    ('os.environ["cuda_visible_devices"] = "1"', "cuda_visible_devices"),  # names are case-sensitive
    ("export CUDA_VISIBLE_DEVICES=0", None),
    ("echo $CUDA_VISIBLE_DEVICES", None),
])
def test_a_misspelt_cuda_visible_devices_is_named(line, misspelt):
    found = [f for f in explain_text(line).findings if f.code == "misspelled-env-var"]
    assert [f.evidence.get("misspelled_var") for f in found] == ([misspelt] if misspelt else [])
    if misspelt:
        assert found[0].severity.value == "warning" and "CUDA_VISIBLE_DEVICES" in found[0].fix[0]


def test_illegal_instruction_names_the_cpu():
    first = explain_text(">>> import tensorflow as tf\nIllegal instruction (core dumped)\n").findings[0]
    assert first.code == "framework-import-failed" and "AVX" in first.detail
