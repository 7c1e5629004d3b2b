"""NVIDIA's real user-space driver libraries (Debian's 535 and 470) and real CUDA runtimes, run
through the installed command. With no GPU here they behave like a machine whose kernel module
is not loaded: cuDriverGetVersion answers, cuInit returns 100, NVML says "Driver Not Loaded".
The lab provides only the sysroot (what /proc, /sys and /dev show); the libraries are real.
"""

import os

from tests.lab import scenarios


def findings_of(report):
    return {f["code"]: f for f in report["findings"]}


def real_driver(real_libs, version):
    libcuda = real_libs.driver_535 if version == 535 else real_libs.driver_470
    nvml = real_libs.nvml_535 if version == 535 else real_libs.nvml_470
    return os.pathsep.join([libcuda, nvml])


def test_gpu_on_the_bus_and_the_real_535_driver_without_its_module(lab, real_libs):
    rc, report, stderr = lab.run_check(scenarios.driver_installed_module_not_loaded(),
                                       env_extra={"LD_LIBRARY_PATH": real_driver(real_libs, 535)})
    assert rc == 1, stderr
    root = report["findings"][0]
    assert root["code"] == "driver-not-loaded" and "CUDA 12.2" in root["detail"]
    libcuda = report["facts"]["driver"]["libcuda"]
    assert libcuda["driver_version"] == 12020 and libcuda["init_result"] == 100
    assert os.path.basename(libcuda["path"]).startswith("libcuda.so.535.")
    assert report["facts"]["driver"]["nvml"]["error"] == "Driver Not Loaded"
    assert findings_of(report)["cuda-init-failed"]["caused_by"] == "driver-not-loaded"


def test_no_gpu_on_the_bus_keeps_no_nvidia_gpu_as_the_verdict(lab, real_libs):
    for version in (535, 470):
        rc, report, _ = lab.run_check(scenarios.no_gpu(), env_extra={"LD_LIBRARY_PATH": real_driver(real_libs, version)})
        assert rc == 0 and report["verdict"] == "ok", version
        assert [f["code"] for f in report["findings"]] == ["no-nvidia-gpu"], version
        assert report["facts"]["driver"]["libcuda"]["driver_version"] == (12020 if version == 535 else 11040)


def test_cuda12_runtime_on_the_real_470_driver_is_driver_too_old(lab, real_libs):
    path = os.pathsep.join([real_driver(real_libs, 470), os.path.join(real_libs.site_packages, "nvidia", "cuda_runtime", "lib")])
    rc, report, _ = lab.run_check(scenarios.driver_installed_module_not_loaded(), env_extra={"LD_LIBRARY_PATH": path})
    too_old = findings_of(report)["driver-too-old"]
    assert too_old["severity"] == "error" and "11.4" in too_old["detail"] and "12." in too_old["detail"]
    cudart = next(lib for lib in report["facts"]["libraries"]["libraries"] if lib["name"] == "cudart")
    assert any(c["version"] and c["version"].startswith("12.") for c in cudart["copies"])
