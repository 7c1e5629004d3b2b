"""Hardware, kernel-driver and user-space-driver rules, fed the facts of real situations."""

from gpudoctor.rules import diagnose
from gpudoctor.facts.driver import DeviceNode
from gpudoctor.model import Severity
from tests.factories import codes, finding, problems, gpu_machine, no_gpu_machine


def test_healthy_four_gpu_machine_has_no_findings():
    assert problems(gpu_machine()) == []


def test_no_gpu_machine_is_info_only():
    found = finding(no_gpu_machine(), "no-nvidia-gpu")
    assert found.severity == Severity.INFO and codes(no_gpu_machine()) == ["no-nvidia-gpu"]


def test_no_gpu_machine_with_driver_libraries_installed_stays_no_gpu():
    facts = no_gpu_machine()
    facts.driver.libcuda.loaded, facts.driver.libcuda.driver_version = True, 12020
    facts.driver.libcuda.init_result, facts.driver.libcuda.init_error_name = 100, "CUDA_ERROR_NO_DEVICE"
    facts.driver.nvml.error = "Driver Not Loaded"
    assert codes(facts) == ["no-nvidia-gpu"]


def test_gpu_on_the_bus_but_no_kernel_module_is_the_root_cause():
    facts = gpu_machine(count=1)
    facts.driver.kernel.version, facts.driver.kernel.modules = None, {}
    facts.driver.nvml.initialized, facts.driver.nvml.gpus, facts.driver.nvml.error = False, [], "Driver Not Loaded"
    facts.driver.libcuda.init_result, facts.driver.libcuda.init_error_name = 100, "CUDA_ERROR_NO_DEVICE"
    from tests.factories import set_environment
    set_environment(facts, {})
    root = finding(facts, "driver-not-loaded")
    assert root.severity == Severity.ERROR and "CUDA 12.2" in root.detail
    assert any("modprobe nvidia" in step for step in root.fix)
    assert finding(facts, "cuda-init-failed").caused_by == "driver-not-loaded"


def test_container_without_device_nodes_says_gpus_all():
    facts = gpu_machine(container=True)
    facts.driver.kernel.device_nodes = [DeviceNode("/dev/nvidiactl", False, False), DeviceNode("/dev/nvidia-uvm", False, False)]
    facts.driver.libcuda.init_result, facts.driver.libcuda.init_error_name = 100, "CUDA_ERROR_NO_DEVICE"
    found = finding(facts, "container-no-gpu-access")
    assert any("--gpus all" in step for step in found.fix)
    assert finding(facts, "cuda-init-failed").caused_by == "container-no-gpu-access"


def test_host_without_device_nodes_is_not_a_container_problem():
    facts = gpu_machine()
    facts.driver.kernel.device_nodes = [DeviceNode("/dev/nvidiactl", False, False), DeviceNode("/dev/nvidia-uvm", True, True)]
    assert any("nvidia-modprobe" in step for step in finding(facts, "device-nodes-missing").fix)
    assert "container-no-gpu-access" not in [f.code for f in diagnose(facts)]


def test_missing_uvm_explains_cuinit_999():
    facts = gpu_machine()
    facts.driver.kernel.modules["nvidia_uvm"] = False
    facts.driver.kernel.device_nodes = [n for n in facts.driver.kernel.device_nodes if n.path != "/dev/nvidia-uvm"]
    facts.driver.libcuda.init_result, facts.driver.libcuda.init_error_name = 999, "CUDA_ERROR_UNKNOWN"
    assert any("modprobe nvidia-uvm" in s for s in finding(facts, "uvm-not-loaded").fix)
    assert finding(facts, "cuda-init-failed").caused_by == "uvm-not-loaded"


def test_cuinit_999_alone_names_the_error_and_how_to_reload_uvm():
    facts = gpu_machine()
    facts.driver.libcuda.init_result, facts.driver.libcuda.init_error_name = 999, "CUDA_ERROR_UNKNOWN"
    found = finding(facts, "cuda-init-failed")
    assert "999" in found.detail and "CUDA_ERROR_UNKNOWN" in found.detail and found.caused_by is None
    assert any("modprobe nvidia_uvm" in s for s in found.fix)


def test_nvml_mismatch_after_upgrade_says_reboot():
    facts = gpu_machine()
    facts.driver.nvml.initialized, facts.driver.nvml.error = False, "Driver/library version mismatch"
    facts.driver.nvml.driver_version = None
    found = finding(facts, "nvml-driver-mismatch")
    assert "Driver/library version mismatch" in found.detail and any("Reboot" in s for s in found.fix)


def test_kernel_and_library_versions_that_differ_are_a_mismatch_even_when_nvml_answers():
    facts = gpu_machine()
    facts.driver.kernel.version = "535.104.05"
    assert "535.104.05" in finding(facts, "nvml-driver-mismatch").detail


def test_stub_libcuda_on_the_path():
    facts = gpu_machine()
    facts.driver.libcuda.path = "/usr/local/cuda-12.4/targets/x86_64-linux/lib/stubs/libcuda.so"
    facts.driver.libcuda.init_result, facts.driver.libcuda.init_error_name = 34, "CUDA_ERROR_STUB_LIBRARY"
    found = finding(facts, "cuda-init-failed")
    assert "stub" in found.detail and any("stubs" in s for s in found.fix)


def test_libcuda_missing_with_driver_loaded_on_a_host():
    facts = gpu_machine()
    facts.driver.libcuda.loaded, facts.driver.libcuda.path = False, None
    facts.driver.libcuda.load_error = "libcuda.so.1: cannot open shared object file: No such file or directory"
    found = finding(facts, "libcuda-missing")
    assert "libnvidia-compute-535" in " ".join(found.fix)


def test_wsl_with_a_linux_driver_inside_shadowing_the_windows_one():
    facts = gpu_machine(count=1)
    facts.driver.pci_devices = []
    facts.system.wsl = True
    facts.driver.kernel.wsl_dxg_present, facts.driver.kernel.wsl_libcuda_present = True, True
    facts.driver.libcuda.path = "/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.14"
    assert "shadows" in finding(facts, "wsl-driver-misconfigured").detail
