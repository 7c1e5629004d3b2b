"""Rules from facts: each framework finding code, its severity, root cause and fix."""

from __future__ import annotations

from gpudoctor.codes import make_finding
from gpudoctor.facts import Facts
from gpudoctor.facts.frameworks import (Distribution, FrameworkFacts, FrameworkLive, FrameworksFacts,
                                        FrameworkStatic, GpuDeviceInfo, OpCheck)
from gpudoctor.renderers.framework_lines import readiness_lines
from gpudoctor.rules import RULES, diagnose

from ..factories import no_gpu_machine
from .test_fw_isolation import gpu_machine


def torch(version="2.5.1+cu124", build="cuda", cuda="12.4", live=None) -> FrameworkFacts:
    return FrameworkFacts("torch", FrameworkStatic("torch", True, "torch", version, "/site/torch", build, cuda),
                          live)


def tensorflow(version="2.15.0", build="cuda", cuda="12.2", cudnn="8", live=None, dist="tensorflow"):
    return FrameworkFacts("tensorflow", FrameworkStatic("tensorflow", True, dist, version, "/site/tensorflow",
                                                        build, cuda, cudnn), live)


def env(*frameworks: FrameworkFacts, dists=()) -> FrameworksFacts:
    facts = FrameworksFacts(python="/usr/bin/python3")
    facts.frameworks = {fw.name: fw for fw in frameworks}
    facts.distributions = [Distribution(n, v, "/site") for n, v in dists]
    return facts


def ready_torch_live(**overrides) -> FrameworkLive:
    live = FrameworkLive("torch", "framework-torch", status="ok", phase="done", import_ok=True,
                         version="2.5.1+cu124", built_with_cuda=True, cuda_version="12.4", cudnn_version="9.1.0",
                         gpu_available=True, device_count=2,
                         devices=[GpuDeviceInfo(0, "NVIDIA A100", "8.0"), GpuDeviceInfo(1, "NVIDIA A100", "8.0")],
                         cudnn_acceptable=True,
                         ops=[OpCheck("matmul", "cuda:0", True, True, 1e-6, 1e-3, 0.01),
                              OpCheck("conv2d", "cuda:0", True, True, 1e-6, 1e-3, 0.02)])
    for key, value in overrides.items():
        setattr(live, key, value)
    return live


def by_code(findings):
    return {f.code: f for f in findings}


def test_healthy_gpu_machine_with_cuda_torch_has_no_framework_findings_and_a_ready_line():
    facts = gpu_machine(env(torch(live=ready_torch_live())))
    findings = diagnose(facts)
    assert [f.code for f in findings if f.severity.value != "info"] == []
    assert readiness_lines(facts, findings) == ["PyTorch 2.5.1+cu124: GPU ready, 2 devices, cuDNN 9.1"]


def test_healthy_gpu_machine_with_cpu_torch_gives_cpu_only_build_with_install_command():
    facts = gpu_machine(env(torch("2.5.1+cpu", "cpu", None), dists=[("torch", "2.5.1+cpu"),
                                                                      ("torchvision", "0.20.1+cpu")]))
    finding = by_code(diagnose(facts))["cpu-only-build"]
    assert finding.severity.value == "error"
    assert finding.fix[0] == "pip uninstall -y torch torchvision"
    # from the compat tables: the newest CUDA variant of 2.5.1 that driver 535 (CUDA 12.2) runs
    assert finding.fix[1].startswith("pip install torch==2.5.1") and "CUDA 12.4" in finding.fix[1]
    assert "torchvision" in finding.fix[2]
    assert readiness_lines(facts, [finding]) == ["PyTorch 2.5.1+cpu: CPU-only build — see cpu-only-build"]


def test_cpu_torch_release_unknown_to_the_compat_tables_gets_a_command_from_facts_alone():
    facts = gpu_machine(env(torch("9.9.0+cpu", "cpu", None), dists=[("torch", "9.9.0+cpu"),
                                                                      ("torchvision", "9.10.0+cpu")]))
    finding = by_code(diagnose(facts))["cpu-only-build"]
    assert finding.fix[1].startswith("pip install torch==9.9.0 torchvision==9.10.0")
    assert any("12.2" in step for step in finding.fix)  # the driver's CUDA version bounds the choice


def test_cpu_torch_on_a_machine_without_gpu_is_fine():
    facts = no_gpu_machine()
    facts.frameworks = env(torch("2.13.0+cpu", "cpu", None))
    assert [f.code for f in diagnose(facts) if f.severity.value != "info"] == []


def test_tensorflow_cpu_on_gpu_machine():
    facts = gpu_machine(env(tensorflow(build="cpu", dist="tensorflow-cpu"),
                            dists=[("tensorflow-cpu", "2.15.0")]))
    finding = by_code(diagnose(facts))["cpu-only-build"]
    assert finding.fix[:2] == ["pip uninstall -y tensorflow-cpu", 'pip install "tensorflow[and-cuda]==2.15.0"']


def test_cuda_build_without_driver_is_not_an_error():
    """tensorflow built with CUDA on a machine with no NVIDIA driver: 'built with CUDA, no driver'."""
    live = FrameworkLive("tensorflow", "framework-tensorflow", status="ok", phase="done", import_ok=True,
                         version="2.15.0", built_with_cuda=True, gpu_available=False, device_count=0)
    facts = no_gpu_machine()
    facts.frameworks = env(tensorflow(live=live))
    findings = diagnose(facts)
    assert [f.code for f in findings if f.severity.value != "info"] == []
    assert readiness_lines(facts, findings) == [
        "TensorFlow 2.15.0: built with CUDA 12.2, no usable NVIDIA GPU here — runs on the CPU"]


def test_gpu_not_detected_points_at_the_lower_layer_cause():
    live = FrameworkLive("torch", "framework-torch", status="ok", import_ok=True, version="2.5.1+cu124",
                         built_with_cuda=True, gpu_available=False, device_count=0,
                         cuda_init_error="Found no NVIDIA driver on your system.")
    facts = Facts(frameworks=env(torch(live=live)))
    facts.driver.pci_devices = []  # the GPU is there, the driver is not:

    def driver_layer(facts, prior):
        yield make_finding("driver-not-loaded", "nvidia module not loaded")

    findings = diagnose(facts, [driver_layer] + list(RULES))
    finding = by_code(findings)["framework-gpu-not-detected"]
    assert finding.caused_by == "driver-not-loaded"
    assert "Found no NVIDIA driver" in finding.detail
    assert readiness_lines(facts, findings) == ["PyTorch 2.5.1+cu124: cannot use the GPU — see driver-not-loaded"]


def test_gpu_not_detected_with_working_driver_and_no_known_cause():
    live = FrameworkLive("torch", "framework-torch", status="ok", import_ok=True, version="2.5.1+cu124",
                         built_with_cuda=True, gpu_available=False, device_count=0)
    finding = by_code(diagnose(gpu_machine(env(torch(live=live)))))["framework-gpu-not-detected"]
    assert finding.caused_by is None and finding.severity.value == "error"
    assert "the driver sees 1 GPU(s)" in finding.detail


def test_cudnn_unacceptable():
    facts = gpu_machine(env(torch(live=ready_torch_live(cudnn_acceptable=False, cudnn_version="8.9.2"))))
    finding = by_code(diagnose(facts))["cudnn-unacceptable"]
    assert "8.9.2" in finding.detail


def test_gpu_op_failed_and_wrong_result():
    ops = [OpCheck("matmul", None, False, None, None, 1e-3, 0.1,
                   "RuntimeError: CUDA error: no kernel image is available for execution on the device"),
           OpCheck("conv2d", "cuda:0", True, False, 3.5, 1e-3, 0.02)]
    facts = gpu_machine(env(torch(live=ready_torch_live(ops=ops))))
    found = by_code(diagnose(facts))
    assert "no kernel image" in found["gpu-op-failed"].detail
    assert found["gpu-op-wrong-result"].evidence["max_abs_error"] == 3.5
    assert readiness_lines(facts, list(found.values()))[0].startswith("PyTorch 2.5.1+cu124: GPU found but not working")


def test_tensorflow_gpu_op_that_ran_on_the_cpu_is_a_failed_gpu_op():
    live = FrameworkLive("tensorflow", "framework-tensorflow", status="ok", import_ok=True, version="2.15.0",
                         built_with_cuda=True, gpu_available=True, device_count=1,
                         ops=[OpCheck("matmul", "/job:localhost/replica:0/task:0/device:CPU:0", True, False, 0.0,
                                      1e-3, 0.01, "the op ran on .../device:CPU:0, not on /GPU:0", False)])
    found = by_code(diagnose(gpu_machine(env(tensorflow(live=live)))))
    assert "gpu-op-failed" in found and "gpu-op-wrong-result" not in found


def test_tensorflow_log_cudnn_mismatch_becomes_the_root_cause():
    from gpudoctor.facts.frameworks import FrameworkLogLine
    line = FrameworkLogLine("cudnn-version-mismatch", "Loaded runtime CuDNN library: 8.1.0 but source was "
                            "compiled with: 8.6.0.", runtime_version="8.1.0", compiled_version="8.6.0")
    live = FrameworkLive("tensorflow", "framework-tensorflow", status="ok", import_ok=True, version="2.12.0",
                         built_with_cuda=True, gpu_available=False, device_count=0, log_lines=[line])
    facts = gpu_machine(env(tensorflow("2.12.0", cuda="11.8", live=live)))
    findings = diagnose(facts)
    found = by_code(findings)
    assert found["cudnn-version-mismatch"].evidence["runtime"] == "8.1.0"
    assert found["framework-gpu-not-detected"].caused_by == "cudnn-version-mismatch"
    assert readiness_lines(facts, findings) == ["TensorFlow 2.12.0: cannot use the GPU — see cudnn-version-mismatch"]


def test_probe_timeout_names_the_framework_and_phase():
    live = FrameworkLive("tensorflow", "framework-tensorflow", status="timeout", phase="devices", import_ok=True,
                         duration_s=30.0)
    finding = by_code(diagnose(gpu_machine(env(tensorflow(live=live)))))["probe-timeout"]
    assert finding.title == "TensorFlow probe timed out (devices)"
    assert "during 'devices'" in finding.detail


def test_framework_facts_survive_a_json_round_trip():
    """Saved reports (and real-GPU fixtures) are fed back to the rules through from_json."""
    from gpudoctor.facts.serialize import from_json, to_json
    original = env(torch(live=ready_torch_live()), dists=[("torch", "2.5.1+cu124")])
    again = from_json(FrameworksFacts, to_json(original))
    assert again == original
    assert again.frameworks["torch"].live.ops[1].name == "conv2d"
