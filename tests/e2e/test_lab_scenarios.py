"""The installed `gpudoctor check --json`, run in a subprocess on simulated machines (tests/lab).

Each test reads like the scenario it proves and asserts what a user sees: the finding codes,
the fix text, the exit status.
"""

import pytest

from tests.lab import scenarios


def findings_of(report):
    return {f["code"]: f for f in report["findings"]}


def problems_of(report):
    """Errors and warnings, less one the host brings: a system CUDA toolkit (this image ships CUDA
    13 under /usr/local) that the lab's simulated driver is too old for is a real, correct warning."""
    def host_toolkit(f):
        runtimes = f["evidence"].get("runtimes") or []
        return (f["code"] == "driver-too-old" and f["severity"] == "warning" and runtimes
                and all(set(r["found_via"]) <= {"ldconfig", "default", "CUDA_HOME"} for r in runtimes))
    return [f["code"] for f in report["findings"] if f["severity"] != "info" and not host_toolkit(f)]


def test_no_gpu_at_all_is_info_and_exit_0(lab):
    rc, report, _ = lab.run_check(scenarios.no_gpu())
    assert rc == 0 and report["verdict"] == "ok"
    assert problems_of(report) == [] and "no-nvidia-gpu" in findings_of(report)


def test_gpu_on_the_bus_but_no_driver(lab):
    rc, report, _ = lab.run_check(scenarios.gpu_no_driver())
    root = report["findings"][0]
    assert rc == 1 and root["code"] == "driver-not-loaded" and root["caused_by"] is None


def test_user_space_driver_installed_but_module_not_loaded_names_its_cuda_version(lab):
    rc, report, _ = lab.run_check(scenarios.driver_installed_module_not_loaded())
    found = findings_of(report)
    assert rc == 1 and report["findings"][0]["code"] == "driver-not-loaded"
    assert "CUDA 12.2" in found["driver-not-loaded"]["detail"]
    assert found["cuda-init-failed"]["caused_by"] == "driver-not-loaded"


def test_healthy_four_2080ti(lab):
    rc, report, stderr = lab.run_check(scenarios.rtx2080ti_x4())
    assert rc == 0, stderr
    assert problems_of(report) == []
    gpus = report["facts"]["gpus"]
    assert [g["name"] for g in gpus] == ["NVIDIA GeForce RTX 2080 Ti"] * 4
    assert all(g["compute_capability"] == "7.5" for g in gpus)
    assert report["facts"]["driver"]["nvml"]["driver_version"] == "535.183.01"
    runtime = report["facts"]["runtime_test"]
    assert runtime["ran"] and [d["ok"] for d in runtime["devices"]] == [True] * 4


def test_gpus_2_and_3_full_prints_visible_devices_0_1(lab):
    rc, report, _ = lab.run_check(scenarios.rtx2080ti_x4_two_full())
    full = findings_of(report)["gpu-memory-full"]
    assert "CUDA_VISIBLE_DEVICES=0,1 " in full["fix"][0]
    assert "pid 4242" in full["detail"] and "python train.py" in full["detail"]
    failed = [f for f in report["findings"] if f["code"] == "gpu-op-failed"]
    assert failed and all(f["caused_by"] == "gpu-memory-full" for f in failed)


def test_visible_devices_1_2_shows_cuda0_as_gpu1(lab):
    rc, report, _ = lab.run_check(scenarios.rtx2080ti_x4(), env_extra={"CUDA_VISIBLE_DEVICES": "1,2"})
    mapping = report["facts"]["visible_devices"]["mapping"]
    assert rc == 0 and [(m["logical"], m["physical_index"]) for m in mapping] == [("cuda:0", 1), ("cuda:1", 2)]
    assert report["facts"]["visible_devices"]["mapping_source"] == "cuda"


def test_visible_devices_5_on_a_four_gpu_machine(lab):
    rc, report, _ = lab.run_check(scenarios.rtx2080ti_x4(), env_extra={"CUDA_VISIBLE_DEVICES": "5"})
    found = findings_of(report)
    assert rc == 1 and report["findings"][0]["code"] == "invalid-device-ordinal"
    assert found["no-visible-gpu"]["caused_by"] == "invalid-device-ordinal"
    assert "cuda-init-failed" not in found  # CUDA_ERROR_NO_DEVICE here is the variable's doing


def test_misspelled_visible_devices(lab):
    rc, report, _ = lab.run_check(scenarios.rtx2080ti_x4(), env_extra={"CUDA_VISIBLE_DIVICES": "1"})
    found = findings_of(report)["misspelled-env-var"]
    assert rc == 0 and report["verdict"] == "warning"
    assert found["fix"] == ["unset CUDA_VISIBLE_DIVICES; export CUDA_VISIBLE_DEVICES=1"]
    assert len(report["facts"]["visible_devices"]["mapping"]) == 4


def test_nvml_mismatch_after_upgrade(lab):
    rc, report, _ = lab.run_check(scenarios.nvml_mismatch())
    root = report["findings"][0]
    assert rc == 1 and root["code"] == "nvml-driver-mismatch"
    assert "Driver/library version mismatch" in root["detail"]
    assert findings_of(report)["cuda-init-failed"]["caused_by"] == "nvml-driver-mismatch"


def test_cuinit_999(lab):
    rc, report, _ = lab.run_check(scenarios.cuinit_999())
    found = findings_of(report)["cuda-init-failed"]
    assert rc == 1 and "999" in found["detail"] and "CUDA_ERROR_UNKNOWN" in found["detail"]


def test_uvm_missing_is_the_root_of_cuinit_failure(lab):
    rc, report, _ = lab.run_check(scenarios.uvm_missing())
    assert rc == 1 and report["findings"][0]["code"] == "uvm-not-loaded"
    assert findings_of(report)["cuda-init-failed"]["caused_by"] == "uvm-not-loaded"


def test_cuinit_hanging_still_gives_a_report_naming_the_probe(lab):
    rc, report, _ = lab.run_check(scenarios.cuinit_hang(), "--timeout", "3", timeout=60)
    timeouts = [f for f in report["findings"] if f["code"] == "probe-timeout"]
    assert rc == 1 and len(timeouts) == 1 and "cuda-driver" in timeouts[0]["evidence"]["probes"]
    assert "cuInit did not return" in findings_of(report)["probe-timeout"]["detail"]
    assert report["facts"]["driver"]["nvml"]["driver_version"] == "535.183.01"  # the other probes still answered


def test_cuinit_crash_is_probe_crashed_and_the_rest_comes_out(lab):
    rc, report, _ = lab.run_check(scenarios.cuinit_crash())
    crashed = findings_of(report)["probe-crashed"]
    assert rc == 1 and "SIGSEGV" in crashed["detail"]
    assert len(report["facts"]["gpus"]) == 4


def test_mixed_models_cuda_numbers_fastest_first(lab):
    rc, report, _ = lab.run_check(scenarios.mixed_order())
    order = findings_of(report)["device-order-differs"]
    assert rc == 0 and "cuda:0→GPU 1" in order["detail"]
    rc, report, _ = lab.run_check(scenarios.mixed_order(), env_extra={"CUDA_DEVICE_ORDER": "PCI_BUS_ID"})
    assert "device-order-differs" not in findings_of(report)
    assert [m["physical_index"] for m in report["facts"]["visible_devices"]["mapping"]] == [0, 1]


def test_container_without_device_nodes_says_gpus_all(lab):
    rc, report, _ = lab.run_check(scenarios.container_no_device_nodes())
    found = findings_of(report)["container-no-gpu-access"]
    assert rc == 1 and any("--gpus all" in step for step in found["fix"])
    assert report["facts"]["system"]["in_container"] is True
    # one cause, one finding: the missing nodes, libcuda and uvm are its symptoms, not findings of their own
    roots = [f["code"] for f in report["findings"] if f["severity"] == "error" and not f["caused_by"]]
    assert roots == ["container-no-gpu-access"], roots
    assert {"device-nodes-missing", "libcuda-missing", "uvm-not-loaded"}.isdisjoint(findings_of(report))
    assert "no /dev/nvidiaN device node" in found["detail"] and "libcuda" in found["detail"]


@pytest.mark.parametrize("runtime, says, not_says", [
    ("docker", "docker run --gpus all", "nvidia.com/gpu=all"),
    ("podman", "podman run --device nvidia.com/gpu=all", "docker run"),
    ("kubernetes", "nvidia.com/gpu: 1", "docker run"),
])
def test_a_container_without_gpu_access_gets_the_fix_of_its_runtime(lab, runtime, says, not_says):
    scenario = scenarios.container_no_device_nodes()
    scenario.container = runtime
    rc, report, _ = lab.run_check(scenario, "--quick")
    found = findings_of(report)["container-no-gpu-access"]
    assert rc == 1 and found["evidence"]["runtime"] == runtime
    assert any(says in step for step in found["fix"]) and not any(not_says in step for step in found["fix"])


def test_nvidia_visible_devices_void_is_named_as_the_cause(lab):
    rc, report, _ = lab.run_check(scenarios.container_no_device_nodes(), "--quick",
                                  env_extra={"NVIDIA_VISIBLE_DEVICES": "void"})
    found = findings_of(report)["container-no-gpu-access"]
    assert rc == 1 and 'NVIDIA_VISIBLE_DEVICES is void ("void")' in found["detail"]
    assert found["fix"][0].startswith("Set NVIDIA_VISIBLE_DEVICES=all")


def test_a_container_with_gpu_access_is_not_blamed(lab):
    scenario = scenarios.rtx2080ti_x4()
    scenario.container = "docker"
    rc, report, _ = lab.run_check(scenario, "--quick")
    assert "container-no-gpu-access" not in findings_of(report)


@pytest.mark.parametrize("scenario, code", [(scenarios.kernel_wrong_result, "gpu-op-wrong-result"),
                                            (scenarios.kernel_launch_failure, "gpu-op-failed")])
def test_broken_gpu_computation_is_caught_without_any_framework(lab, scenario, code):
    rc, report, _ = lab.run_check(scenario())
    assert rc == 1 and code in findings_of(report)


def test_quick_skips_the_gpu_operation_but_keeps_the_diagnosis(lab):
    rc, report, _ = lab.run_check(scenarios.rtx2080ti_x4_two_full(), "--quick")
    assert report["mode"] == "quick" and report["facts"]["runtime_test"]["ran"] is False
    assert "gpu-memory-full" in findings_of(report)


def test_old_driver_418_gets_builds_it_can_run(lab):
    rc, report, _ = lab.run_check(scenarios.driver_418())
    rec = findings_of(report)["recommendation"]
    assert rc == 0 and "418.87.01" in rec["detail"] and "CUDA 10.1" in rec["detail"]


def test_every_lab_scenario_yields_a_report_and_a_contract_exit_code(lab):
    for scenario in scenarios.all_scenarios():
        rc, report, stderr = lab.run_check(scenario, "--timeout", "3", timeout=60)
        assert rc in (0, 1), (scenario.name, stderr)
        assert report["verdict"] in ("ok", "warning", "error") and "Traceback" not in stderr, scenario.name


def test_a_healthy_wsl2_machine_has_no_wsl_finding(lab):
    rc, report, _ = lab.run_check(scenarios.wsl2(), "--quick")
    assert "wsl-driver-misconfigured" not in findings_of(report), report["findings"]
    assert report["facts"]["system"]["wsl"] is True


@pytest.mark.parametrize("change, says, fix_says", [
    ({"wsl_linux_driver": True}, "a Linux driver installed inside WSL shadows it", "apt-get remove --purge"),
    ({"wsl_libcuda_links": ("libcuda.so.1",)}, "/usr/lib/wsl/lib/libcuda.so is missing", "ld.wsl.conf && sudo ldconfig"),
    ({"missing_device_nodes": ("dxg",)}, "/dev/dxg is missing", "wsl --update"),
])
def test_a_broken_wsl2_setup_is_one_root_cause_with_the_wsl_fix(lab, change, says, fix_says):
    scenario = scenarios.wsl2()
    for name, value in change.items():
        setattr(scenario, name, value)
    rc, report, _ = lab.run_check(scenario, "--quick")
    found = findings_of(report)["wsl-driver-misconfigured"]
    assert says in found["detail"] and any(fix_says in step for step in found["fix"])
    roots = [f["code"] for f in report["findings"] if f["severity"] == "error" and not f["caused_by"]]
    assert roots == ["wsl-driver-misconfigured"], roots
