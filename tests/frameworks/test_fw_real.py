"""The real CPU torch 2.13.0 and a real (CUDA-built) tensorflow, probed live on a machine without GPU.

Both are installed in a venv of their own (tests/frameworks/requirements.txt), probed as a --python
target; one live probe is shared by the whole module because importing tensorflow takes seconds.
"""

from __future__ import annotations

import pytest

from gpudoctor.facts import Facts
from gpudoctor.probes.context import ProbeContext
from gpudoctor.probes.frameworks import probe_frameworks
from gpudoctor.renderers.framework_lines import readiness_lines
from gpudoctor.rules import diagnose

from .conftest import frameworks_python
from .test_fw_isolation import gpu_machine


@pytest.fixture(scope="module")
def probed():
    python = frameworks_python("torch", "tensorflow")
    return probe_frameworks(ProbeContext.from_environment(python=python, timeout=120))


def test_real_cpu_torch(probed):
    facts, statuses = probed
    torch = facts.frameworks["torch"]
    assert torch.static.build == "cpu" and torch.static.version.endswith("+cpu")
    assert torch.live.status == "ok" and torch.live.import_ok
    assert torch.live.version == torch.static.version
    assert torch.live.built_with_cuda is False and torch.live.gpu_available is False
    assert torch.live.import_seconds is not None and torch.live.arch_list == []


def test_real_tensorflow_is_built_with_cuda_and_finds_no_driver(probed):
    facts, _ = probed
    tf = facts.frameworks["tensorflow"]
    assert tf.static.build == "cuda" and tf.static.cuda_version
    assert tf.live.status == "ok" and tf.live.built_with_cuda is True
    assert tf.live.device_count == 0 and tf.live.op_skipped_reason
    assert tf.live.details["build_info"]["cuda_version"] == tf.static.cuda_version
    kinds = {line.kind for line in tf.live.log_lines}
    assert kinds & {"no-cuda-drivers", "cuinit-failed"}  # TF's own words for "no driver"


def test_no_driver_machine_reads_as_built_with_cuda_not_broken(probed):
    facts = Facts(frameworks=probed[0])
    findings = diagnose(facts)
    assert [f.code for f in findings if f.severity.value == "error"] == []
    lines = readiness_lines(facts, findings)
    assert any(line.startswith("TensorFlow") and "built with CUDA" in line and "runs on the CPU" in line
               for line in lines)
    assert any(line.startswith("PyTorch 2.13.0+cpu: CPU-only build") for line in lines)


def test_same_packages_on_a_gpu_machine_flag_the_cpu_torch(probed):
    facts = gpu_machine(probed[0])
    codes = [f.code for f in diagnose(facts)]
    assert "cpu-only-build" in codes
