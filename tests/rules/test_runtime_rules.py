"""The driver-API test's results and failed probes as findings."""

from gpudoctor.facts.probe_status import ProbeStatus
from gpudoctor.facts.runtime import DeviceOpResult
from tests.factories import codes, finding, gpu_machine, problems


def test_passing_vector_add_is_silent():
    facts = gpu_machine()
    facts.runtime_test.ran = True
    facts.runtime_test.devices = [DeviceOpResult(i, step="done", ok=True, max_abs_error=0.0, elements=4096) for i in range(4)]
    assert problems(facts) == []


def test_context_out_of_memory_is_caused_by_the_full_gpu():
    facts = gpu_machine(used_mib=[0, 0, 11100, 11100])
    facts.runtime_test.devices = [DeviceOpResult(2, step="context", error_code=2, error_name="CUDA_ERROR_OUT_OF_MEMORY")]
    assert finding(facts, "gpu-op-failed").caused_by == "gpu-memory-full"


def test_wrong_sum_is_reported_with_its_size():
    facts = gpu_machine()
    facts.runtime_test.devices = [DeviceOpResult(0, step="compare", max_abs_error=3.5, elements=4096)]
    assert "3.5" in finding(facts, "gpu-op-wrong-result").detail


def test_hung_cuinit_is_a_probe_timeout_naming_the_probe():
    facts = gpu_machine()
    facts.probes = [ProbeStatus("cuda-driver", "timeout", 5.0, "cuInit did not return within the timeout (no answer within 5 s)")]
    found = finding(facts, "probe-timeout")
    assert "cuInit did not return" in found.detail and found.evidence["probes"] == ["cuda-driver"]


def test_segfaulting_probe_is_probe_crashed():
    facts = gpu_machine()
    facts.probes = [ProbeStatus("nvml", "crashed", 0.1, "killed by SIGSEGV", "Segmentation fault")]
    assert "SIGSEGV" in finding(facts, "probe-crashed").detail


def test_recommendation_names_newest_builds_for_the_driver_with_commands():
    from gpudoctor.model import Severity

    facts = gpu_machine(driver="470.82.01", cuda=11040)
    facts.system.python_version = "3.10.12"
    found = finding(facts, "recommendation")
    assert found.severity == Severity.INFO and "470.82.01" in found.detail
    assert any("--index-url" in step and "cu11" in step for step in found.fix)


def test_a_gpu_op_that_fails_on_a_full_gpu_costs_what_the_full_gpu_costs():
    from gpudoctor.model import Severity

    facts = gpu_machine(used_mib=[0, 0, 11100, 11100])  # GPUs 0 and 1 are free: a warning
    facts.runtime_test.devices = [DeviceOpResult(2, step="context", error_code=2, error_name="CUDA_ERROR_OUT_OF_MEMORY")]
    assert finding(facts, "gpu-memory-full").severity == Severity.WARNING
    assert finding(facts, "gpu-op-failed").severity == Severity.WARNING
