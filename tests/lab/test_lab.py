"""Tests of the simulated-GPU lab itself: the stand-ins must behave like NVIDIA's libraries.

Each test runs a real client (ctypes for libcuda, NVIDIA's pynvml for NVML) in a child
process on a lab machine, the way gpudoctor's probes will.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.lab import cuda_rules, scenarios
from tests.lab.scenario import LabGpu, LabMig, Scenario

HERE = Path(__file__).resolve().parent
CLIENT = str(HERE / "driver_client.py")

REQUIRED_CUDA_SYMBOLS = """cuInit cuDriverGetVersion cuDeviceGetCount cuDeviceGet cuDeviceGetName
cuDeviceGetAttribute cuDeviceTotalMem_v2 cuDeviceGetUuid cuDeviceGetUuid_v2 cuDeviceGetPCIBusId
cuGetErrorName cuGetErrorString cuCtxCreate_v2 cuCtxDestroy_v2 cuCtxSetCurrent cuDevicePrimaryCtxRetain
cuDevicePrimaryCtxRelease_v2 cuMemAlloc_v2 cuMemFree_v2 cuMemcpyHtoD_v2 cuMemcpyDtoH_v2 cuMemGetInfo_v2
cuModuleLoadData cuModuleLoadDataEx cuModuleGetFunction cuModuleUnload cuLaunchKernel
cuCtxSynchronize""".split()
REQUIRED_NVML_SYMBOLS = """nvmlInit nvmlInit_v2 nvmlInitWithFlags nvmlShutdown nvmlErrorString
nvmlSystemGetDriverVersion nvmlSystemGetCudaDriverVersion nvmlSystemGetCudaDriverVersion_v2
nvmlDeviceGetCount_v2 nvmlDeviceGetHandleByIndex_v2 nvmlDeviceGetName nvmlDeviceGetUUID
nvmlDeviceGetPciInfo_v3 nvmlDeviceGetMemoryInfo nvmlDeviceGetMemoryInfo_v2
nvmlDeviceGetComputeRunningProcesses_v3 nvmlDeviceGetUtilizationRates nvmlDeviceGetMigMode
nvmlSystemGetProcessName""".split()

BUS = ["0000:1A:00.0", "0000:1B:00.0", "0000:3D:00.0", "0000:3E:00.0"]


def client(lab, scenario, *args, env=None, timeout=30):
    proc = lab.run(scenario, [sys.executable, CLIENT] + list(args), env_extra=env, timeout=timeout)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def cuda_bus_ids(lab, scenario, env=None):
    out = client(lab, scenario, "devices", env=env)
    return out["cuInit"], [d["pci_bus_id"] for d in out["devices"]]


# ---- the build --------------------------------------------------------------------------
def test_libraries_export_the_real_symbols(lab_libdir):
    cu = ctypes.CDLL(str(lab_libdir / "libcuda.so.1"))
    nv = ctypes.CDLL(str(lab_libdir / "libnvidia-ml.so.1"))
    assert [s for s in REQUIRED_CUDA_SYMBOLS if not hasattr(cu, s)] == []
    assert [s for s in REQUIRED_NVML_SYMBOLS if not hasattr(nv, s)] == []


def test_build_is_cached(lab_libdir):
    from tests.lab.build import build_libs
    assert build_libs() == lab_libdir


# ---- libcuda: versions and cuInit -----------------------------------------------------------
def test_healthy_machine_devices(lab):
    out = client(lab, scenarios.rtx2080ti_x4(), "devices")
    assert out["cuDriverGetVersion"] == [0, 12020]
    assert out["cuInit"] == 0
    assert out["cuDeviceGetCount"] == [0, 4]
    d0 = out["devices"][0]
    assert d0["name"] == "NVIDIA GeForce RTX 2080 Ti"
    assert (d0["cc_major"], d0["cc_minor"]) == (7, 5)
    assert d0["total_bytes"] == 11264 * 1024 * 1024
    assert d0["pci_bus_id"] == "0000:1A:00.0"
    assert (d0["pci_domain"], d0["pci_bus"], d0["pci_device"]) == (0, 0x1A, 0)
    assert d0["sm_count"] == 68
    assert "GPU-" + d0["uuid"] == scenarios.RTX_2080_TI_UUIDS[0]
    assert [d["pci_bus_id"] for d in out["devices"]] == BUS


def test_driver_418_versions(lab):
    out = client(lab, scenarios.driver_418(), "devices")
    assert out["cuDriverGetVersion"] == [0, 10010]
    assert out["devices"][0]["name"] == "Tesla V100-SXM2-16GB"
    assert out["devices"][0]["pci_bus_id"] == "0000:00:1E.0"


@pytest.mark.parametrize("make,code,name", [
    (scenarios.cuinit_999, 999, "CUDA_ERROR_UNKNOWN"),
    (scenarios.uvm_missing, 999, "CUDA_ERROR_UNKNOWN"),
    (scenarios.nvml_mismatch, 803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"),
    (scenarios.driver_installed_module_not_loaded, 100, "CUDA_ERROR_NO_DEVICE"),
])
def test_cuinit_failures(lab, make, code, name):
    out = client(lab, make(), "devices")
    assert out["cuInit"] == code and out["cuInit_name"] == name
    assert out["cuDriverGetVersion"] == [0, 12020]  # answers without a working driver
    assert out["cuDeviceGetCount"][0] == 3  # CUDA_ERROR_NOT_INITIALIZED, as NVIDIA's 535 does


def test_any_call_can_fail_on_demand(lab):
    s = scenarios.rtx2080ti_x4()
    s.errors["cuInit"] = 35  # not a CUresult: cuGetErrorName refuses it, like the real driver
    out = client(lab, s, "devices")
    assert out["cuInit"] == 35 and out["cuInit_name"] is None
    s = scenarios.rtx2080ti_x4()
    s.errors["cuCtxCreate"] = 2  # a base name covers cuCtxCreate_v2
    out = client(lab, s, "contexts")
    assert [c["create"] for c in out["contexts"]] == [2, 2, 2, 2]
    assert [c["primary_retain"] for c in out["contexts"]] == [0, 0, 0, 0]


def test_error_names_and_strings(lab):
    out = client(lab, scenarios.rtx2080ti_x4(), "errors", "0", "2", "100", "999", "803", "12345")
    assert out["100"] == [0, "CUDA_ERROR_NO_DEVICE", 0, "no CUDA-capable device is detected"]
    assert out["2"] == [0, "CUDA_ERROR_OUT_OF_MEMORY", 0, "out of memory"]
    assert out["999"] == [0, "CUDA_ERROR_UNKNOWN", 0, "unknown error"]
    assert out["12345"] == [1, None, 1, None]


def test_no_scenario_behaves_like_no_gpu(lab):
    env = {"GPUDOCTOR_LAB_SCENARIO": ""}
    out = client(lab, scenarios.rtx2080ti_x4(), "devices", env=env)
    assert out["cuInit"] == 100


# ---- visibility -------------------------------------------------------------------------
@pytest.mark.parametrize("cvd,want", [
    ("1,2", [BUS[1], BUS[2]]),
    ("2,1", [BUS[2], BUS[1]]),
    ("0,2,-1,1", [BUS[0], BUS[2]]),
    (" 1 , 3 ", [BUS[1], BUS[3]]),
    ("1gpu2,3", [BUS[1], BUS[3]]),
    ("3,0,,1", [BUS[3], BUS[0]]),
    ("GPU-3a1", [BUS[0]]),
    ("GPU-e9f8a7b6-c5d4-4e3f-a2b1-c0d9e8f7a6b5,GPU-3a7", [BUS[3], BUS[1]]),
    ("GPU-b4,0", [BUS[2], BUS[0]]),
    ("0,GPU-3a,1", [BUS[0]]),  # "GPU-3a" is ambiguous (GPU 0 and 1): parsing stops there
])
def test_cuda_visible_devices(lab, cvd, want):
    code, ids = cuda_bus_ids(lab, scenarios.rtx2080ti_x4(), env={"CUDA_VISIBLE_DEVICES": cvd})
    assert code == 0 and ids == want


@pytest.mark.parametrize("cvd", ["5", "", "-1", "0,0", "1,2,1", "GPU-3a", "GPU-ffff", "MIG-1", "abc", "-1,0"])
def test_cuda_visible_devices_hiding_everything(lab, cvd):
    out = client(lab, scenarios.rtx2080ti_x4(), "devices", env={"CUDA_VISIBLE_DEVICES": cvd})
    assert out["cuInit"] == 100  # CUDA_ERROR_NO_DEVICE
    assert out["cuDeviceGetCount"][0] == 3


def test_device_order(lab):
    s = scenarios.mixed_order
    out = client(lab, s(), "devices")
    assert [d["name"] for d in out["devices"]] == ["NVIDIA GeForce RTX 3090", "NVIDIA GeForce GTX 1080"]
    out = client(lab, s(), "devices", env={"CUDA_DEVICE_ORDER": "PCI_BUS_ID"})
    assert [d["name"] for d in out["devices"]] == ["NVIDIA GeForce GTX 1080", "NVIDIA GeForce RTX 3090"]
    out = client(lab, s(), "devices", env={"CUDA_DEVICE_ORDER": "FASTEST_FIRST", "CUDA_VISIBLE_DEVICES": "1"})
    assert [d["name"] for d in out["devices"]] == ["NVIDIA GeForce GTX 1080"]
    out = client(lab, s(), "devices", env={"CUDA_DEVICE_ORDER": "PCI_BUS_ID", "CUDA_VISIBLE_DEVICES": "1"})
    assert [d["name"] for d in out["devices"]] == ["NVIDIA GeForce RTX 3090"]


def test_mig_devices(lab):
    s = scenarios.a100_mig
    out = client(lab, s(), "devices")
    # the MIG-mode A100 shows one MIG device; the other A100 shows whole
    assert [d["name"] for d in out["devices"]] == ["NVIDIA A100-SXM4-40GB MIG 1g.5gb", "NVIDIA A100-SXM4-40GB"]
    mig = out["devices"][0]
    assert "GPU-" + mig["uuid"] == s().gpus[0].uuid  # cuDeviceGetUuid: the GPU's
    assert "MIG-" + mig["uuid_v2"] == s().gpus[0].mig_devices[0].uuid  # _v2: the MIG device's own
    assert mig["total_bytes"] == 4864 * 1024 * 1024
    out = client(lab, s(), "devices", env={"CUDA_VISIBLE_DEVICES": "MIG-8c7b"})
    assert "MIG-" + out["devices"][0]["uuid_v2"] == s().gpus[0].mig_devices[1].uuid


# ---- contexts, memory and the kernel --------------------------------------------------------
def test_vector_add_through_the_driver_api(lab):
    out = client(lab, scenarios.rtx2080ti_x4(), "vadd", "3")
    assert out["ok"] and out["correct"], out
    assert out["first"] == [1000.0, 999.5, 999.0, 998.5]


def test_kernel_wrong_result(lab):
    out = client(lab, scenarios.kernel_wrong_result(), "vadd")
    assert out["ok"] and out["correct"] is False


def test_kernel_failure_is_reported_at_synchronize(lab):
    out = client(lab, scenarios.kernel_launch_failure(), "vadd")
    assert out["failed_at"] == "cuCtxSynchronize" and out["error"] == 719
    assert out["error_name"] == "CUDA_ERROR_LAUNCH_FAILED"


def test_ptx_newer_than_the_driver_is_refused(lab):
    code = textwrap.dedent("""
        import ctypes, json, sys
        sys.path.insert(0, %r)
        import driver_client as dc
        cu = dc.load()
        out = dc.vadd(cu, 0, ptx=dc.VADD_PTX.replace(b".version 6.0", b".version 7.0"))
        print(json.dumps(out))
    """ % str(HERE))
    proc = lab.run_python(scenarios.driver_418(), code)  # CUDA 10.1 knows PTX ISA <= 6.4
    out = json.loads(proc.stdout)
    assert out["failed_at"] == "cuModuleLoadDataEx" and out["error"] == 222


def test_full_gpus_fail_context_creation_with_oom(lab):
    out = client(lab, scenarios.rtx2080ti_x4_two_full(), "contexts")
    assert [c["create"] for c in out["contexts"]] == [0, 0, 2, 2]
    assert [c["primary_retain"] for c in out["contexts"]] == [0, 0, 2, 2]
    free, total = out["contexts"][0]["meminfo"][1:]
    assert total == 11264 * 1024 * 1024 and free == (11264 - 300) * 1024 * 1024  # a context takes 300 MiB


def test_full_gpus_stay_hidden_with_visible_devices(lab):
    out = client(lab, scenarios.rtx2080ti_x4_two_full(), "contexts", env={"CUDA_VISIBLE_DEVICES": "0,1"})
    assert [c["create"] for c in out["contexts"]] == [0, 0]


# ---- hangs and crashes ------------------------------------------------------------------
def test_cuinit_hang_is_caught_by_a_timeout(lab):
    with pytest.raises(subprocess.TimeoutExpired):
        lab.run(scenarios.cuinit_hang(), [sys.executable, CLIENT, "devices"], timeout=3)


def test_cuinit_crash_is_a_segfault(lab):
    proc = lab.run(scenarios.cuinit_crash(), [sys.executable, CLIENT, "devices"], timeout=30)
    assert proc.returncode == -signal.SIGSEGV


# ---- NVML through NVIDIA's pynvml ---------------------------------------------------------
NVML_CLIENT = textwrap.dedent("""
    import json, pynvml
    out = {}
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as e:
        print(json.dumps({"init_error": e.value, "str": str(e), "class": type(e).__name__,
                          "errorString": pynvml.nvmlErrorString(e.value)}))
        raise SystemExit(0)
    out["driver"] = pynvml.nvmlSystemGetDriverVersion()
    out["cuda"] = pynvml.nvmlSystemGetCudaDriverVersion_v2()
    out["count"] = pynvml.nvmlDeviceGetCount()
    out["gpus"] = []
    for i in range(out["count"]):
        h = pynvml.nvmlDeviceGetHandleByIndex(i)
        mem = pynvml.nvmlDeviceGetMemoryInfo(h)
        mem2 = pynvml.nvmlDeviceGetMemoryInfo(h, version=pynvml.nvmlMemory_v2)
        util = pynvml.nvmlDeviceGetUtilizationRates(h)
        try:
            mig = pynvml.nvmlDeviceGetMigMode(h)
        except pynvml.NVMLError_NotSupported:
            mig = "not supported"
        out["gpus"].append({
            "name": pynvml.nvmlDeviceGetName(h), "uuid": pynvml.nvmlDeviceGetUUID(h),
            "bus": pynvml.nvmlDeviceGetPciInfo(h).busId, "total": mem.total, "used": mem.used,
            "free": mem.free, "free_v2": mem2.free, "util": [util.gpu, util.memory], "mig": mig,
            "cc": list(pynvml.nvmlDeviceGetCudaComputeCapability(h)),
            "procs": [[p.pid, p.usedGpuMemory] for p in pynvml.nvmlDeviceGetComputeRunningProcesses(h)],
        })
    out["pname"] = pynvml.nvmlSystemGetProcessName(4242) if out["count"] > 2 else None
    pynvml.nvmlShutdown()
    print(json.dumps(out, default=str))
""")


def nvml(lab, scenario, env=None):
    pytest.importorskip("pynvml")
    proc = lab.run_python(scenario, NVML_CLIENT, env_extra=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_nvml_full_gpus(lab):
    out = nvml(lab, scenarios.rtx2080ti_x4_two_full())
    assert out["driver"] == "535.183.01" and out["cuda"] == 12020 and out["count"] == 4
    g0, g2 = out["gpus"][0], out["gpus"][2]
    assert g0["name"] == "NVIDIA GeForce RTX 2080 Ti" and g0["uuid"] == scenarios.RTX_2080_TI_UUIDS[0]
    assert g0["bus"] == "00000000:1A:00.0"
    assert g0["procs"] == [] and g0["mig"] == "not supported" and g0["cc"] == [7, 5]
    assert g2["procs"] == [[4242, 11000 * 1024 * 1024]]
    assert g2["used"] == 11000 * 1024 * 1024 and g2["free"] == g2["free_v2"] == 264 * 1024 * 1024
    assert g2["util"] == [100, 87]
    assert out["pname"] == "python train.py"


def test_nvml_ignores_cuda_visible_devices(lab):
    out = nvml(lab, scenarios.mixed_order(), env={"CUDA_VISIBLE_DEVICES": "1", "CUDA_DEVICE_ORDER": "FASTEST_FIRST"})
    assert [g["name"] for g in out["gpus"]] == ["NVIDIA GeForce GTX 1080", "NVIDIA GeForce RTX 3090"]


def test_nvml_version_mismatch(lab):
    out = nvml(lab, scenarios.nvml_mismatch())
    assert out["init_error"] == 18 and out["class"] == "NVMLError_LibRmVersionMismatch"
    # The driver's own text, as nvidia-smi prints it ("Failed to initialize NVML: ...").
    assert out["errorString"] == "Driver/library version mismatch"
    # pynvml's __str__ prefers its own table for the codes it knows.
    assert out["str"] in ("RM has detected an NVML/RM version mismatch.", "Driver/library version mismatch")


def test_nvml_driver_not_loaded(lab):
    out = nvml(lab, scenarios.driver_installed_module_not_loaded())
    assert out["init_error"] == 9 and out["str"] == "Driver Not Loaded"


def test_nvml_in_wsl(lab):
    out = nvml(lab, scenarios.wsl2())
    assert out["driver"] == "551.86" and out["cuda"] == 12040 and out["count"] == 1


def test_no_driver_means_no_library(lab):
    proc = lab.run_python(scenarios.gpu_no_driver(), "import ctypes; ctypes.CDLL('libcuda.so.1')")
    if proc.returncode == 0:
        pytest.skip("this machine has a real libcuda.so.1 in the loader's default paths")
    assert "libcuda.so.1" in proc.stderr


# ---- the sysroot ------------------------------------------------------------------------
def test_sysroot_of_a_healthy_machine(lab):
    m = lab.machine(scenarios.rtx2080ti_x4())
    root = m.sysroot
    version = (root / "proc/driver/nvidia/version").read_text()
    assert re.match(r"NVRM version: NVIDIA UNIX x86_64 Kernel Module  535\.183\.01  \w{3} \w{3} +\d+ ", version)
    assert "GCC version:" in version
    mods = [line.split()[0] for line in (root / "proc/modules").read_text().splitlines()]
    assert {"nvidia", "nvidia_uvm", "nvidia_modeset", "nvidia_drm"} <= set(mods)
    assert (root / "sys/module/nvidia").is_dir() and (root / "sys/module/nvidia_uvm").is_dir()
    nv = [d for d in sorted((root / "sys/bus/pci/devices").iterdir()) if (d / "vendor").read_text() == "0x10de\n"]
    assert [d.name for d in nv] == ["0000:1a:00.0", "0000:1b:00.0", "0000:3d:00.0", "0000:3e:00.0"]
    assert (nv[0] / "class").read_text() == "0x030000\n" and (nv[0] / "device").read_text() == "0x1e07\n"
    others = [d for d in (root / "sys/bus/pci/devices").iterdir() if (d / "vendor").read_text() != "0x10de\n"]
    assert others, "a non-NVIDIA device is there too"
    devs = sorted(p.name for p in (root / "dev").iterdir())
    assert devs == ["nvidia-modeset", "nvidia-uvm", "nvidia-uvm-tools", "nvidia0", "nvidia1", "nvidia2",
                    "nvidia3", "nvidiactl"]
    for name in devs:
        with open(str(root / "dev" / name), "rb"):
            pass
    assert m["LD_LIBRARY_PATH"].split(os.pathsep)[0] == str(m.libdir)
    assert m["GPUDOCTOR_SYSROOT"] == str(root) and Path(m["GPUDOCTOR_LAB_SCENARIO"]).is_file()


def test_sysroot_variants(lab):
    root = lab.machine(scenarios.gpu_no_driver()).sysroot
    assert not (root / "proc/driver/nvidia").exists() and not list((root / "dev").iterdir())
    assert "nvidia" not in (root / "proc/modules").read_text()
    assert (root / "sys/bus/pci/devices/0000:1a:00.0/vendor").read_text() == "0x10de\n"

    root = lab.machine(scenarios.uvm_missing()).sysroot
    assert not (root / "dev/nvidia-uvm").exists() and (root / "dev/nvidiactl").exists()
    assert not (root / "sys/module/nvidia_uvm").exists()

    root = lab.machine(scenarios.driver_418()).sysroot
    assert (root / "sys/bus/pci/devices/0000:00:1e.0/class").read_text() == "0x030200\n"

    root = lab.machine(scenarios.wsl2()).sysroot
    assert "microsoft-standard-WSL2" in (root / "proc/version").read_text()
    assert (root / "dev/dxg").exists() and not (root / "dev/nvidiactl").exists()

    m = lab.machine(scenarios.container_no_device_nodes())
    assert (m.sysroot / ".dockerenv").exists() and "docker" in (m.sysroot / "proc/1/cgroup").read_text()
    assert not list((m.sysroot / "dev").iterdir()) and (m.sysroot / "proc/driver/nvidia/version").exists()
    assert m.libdir is None

    root = lab.machine(scenarios.nvml_mismatch()).sysroot
    assert "535.161.08" in (root / "proc/driver/nvidia/version").read_text()


def test_every_predefined_scenario_materialises(lab):
    for make in scenarios.SCENARIOS.values():
        s = make()
        m = lab.machine(s)
        assert s.name == make.__name__
        assert m.scenario_file.read_text().startswith("# gpudoctor-lab-scenario 1\n")


def test_scenario_validation():
    with pytest.raises(ValueError):
        Scenario(gpus=[scenarios.rtx2080ti(1), scenarios.rtx2080ti(0)]).to_flat()  # not PCI order
    with pytest.raises(ValueError):
        Scenario(errors={"cuInit; rm -rf": 1}).to_flat()


# ---- property test: the C parser against the reference rules --------------------------------
hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies


@pytest.fixture(scope="module")
def visibility_lib(lab_libdir):
    cu = ctypes.CDLL(str(lab_libdir / "libcuda.so.1"))
    cu.gpudoctor_lab_visible_devices.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int),
                                                ctypes.POINTER(ctypes.c_int), ctypes.c_int]
    return cu


def c_visible(cu, path, cvd, order):
    os.environ["GPUDOCTOR_LAB_SCENARIO"] = path
    cu.gpudoctor_lab_reload()
    gpus, migs = (ctypes.c_int * 256)(), (ctypes.c_int * 256)()
    n = cu.gpudoctor_lab_visible_devices(None if cvd is None else cvd.encode("utf-8"),
                                         None if order is None else order.encode(), gpus, migs, 256)
    return [(gpus[i], migs[i]) for i in range(n)]


HEX = "abc"


@st.composite
def machines(draw):
    n = draw(st.integers(0, 5))
    gpus = []
    for i in range(n):
        head = draw(st.text(HEX, min_size=1, max_size=4))
        mig_mode = draw(st.sampled_from([None, False, True]))
        migs = []
        if mig_mode:
            for j in range(draw(st.integers(0, 2))):
                migs.append(LabMig("MIG-%s-%d%d" % (draw(st.text(HEX, min_size=1, max_size=3)), i, j)))
        gpus.append(LabGpu(name="GPU %d" % i, uuid="GPU-%s-%04x" % (head, i), pci_bus_id="0000:%02x:00.0" % (i + 1),
                           speed_rank=draw(st.integers(0, 3)), mig_mode=mig_mode, mig_devices=migs))
    return gpus


@st.composite
def visible_values(draw, gpus):
    uuids = [g.uuid for g in gpus] + [m.uuid for g in gpus for m in g.mig_devices]
    pieces = st.one_of(
        st.integers(-2, 7).map(str),
        st.sampled_from(["", " ", "+1", " 2", "3 ", "1gpu", "0x1", "\t0", "GPU-", "MIG-", "abc", "-0", "007"]),
        st.sampled_from(uuids or ["GPU-x"]).flatmap(lambda u: st.integers(4, len(u)).map(lambda k: u[:k])),
        st.text(min_size=0, max_size=3).filter(lambda s: "\x00" not in s and "," not in s),
    )
    if draw(st.booleans()) and draw(st.booleans()):
        return None
    return ",".join(draw(st.lists(pieces, min_size=0, max_size=6)))


@hypothesis.settings(max_examples=300, deadline=None)
@hypothesis.given(data=st.data())
def test_visibility_matches_the_reference_rules(visibility_lib, tmp_path_factory, data):
    gpus = data.draw(machines())
    cvd = data.draw(visible_values(gpus))
    order = data.draw(st.sampled_from([None, "PCI_BUS_ID", "FASTEST_FIRST", "bogus"]))
    path = tmp_path_factory.mktemp("vis") / "scenario.txt"
    Scenario(gpus=gpus).write_flat(path)
    saved = os.environ.get("GPUDOCTOR_LAB_SCENARIO")
    try:
        got = c_visible(visibility_lib, str(path), cvd, order)
    finally:
        if saved is None:
            os.environ.pop("GPUDOCTOR_LAB_SCENARIO", None)
        else:
            os.environ["GPUDOCTOR_LAB_SCENARIO"] = saved
    assert got == cuda_rules.visible_devices(gpus, cvd, order)


@pytest.mark.parametrize("cvd,order,want", [
    (None, None, [(0, -1), (1, -1), (2, -1), (3, -1)]),
    ("0,2,-1,1", None, [(0, -1), (2, -1)]),
    ("", None, []),
    ("5", None, []),
    ("1,1", None, []),
    ("GPU-3a", None, []),
    ("GPU-3a7,+3", None, [(1, -1), (3, -1)]),
])
def test_reference_rules_examples(cvd, order, want):
    assert cuda_rules.visible_devices(scenarios.rtx2080ti_x4().gpus, cvd, order) == want


# ---- the helpers ------------------------------------------------------------------------
def test_run_check_plumbing(lab, tmp_path, monkeypatch):
    """run_check runs `gpudoctor check --json ARGS` with the machine's environment."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "gpudoctor"
    fake.write_text("#!%s\nimport json, os, sys\n"
                    "keys = ['GPUDOCTOR_SYSROOT', 'GPUDOCTOR_LAB_SCENARIO', 'LD_LIBRARY_PATH', 'CUDA_VISIBLE_DEVICES', 'X']\n"
                    "print(json.dumps({'argv': sys.argv[1:], 'env': {k: os.environ.get(k) for k in keys}}))\n"
                    "sys.stderr.write('note')\nsys.exit(1)\n" % sys.executable)
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(bindir) + os.pathsep + os.environ["PATH"])
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3")  # inherited: dropped
    code, report, stderr = lab.run_check(scenarios.rtx2080ti_x4(), "--quick", env_extra={"X": "1"})
    assert code == 1 and stderr == "note"
    assert report["argv"] == ["check", "--json", "--quick"]
    env = report["env"]
    assert env["CUDA_VISIBLE_DEVICES"] is None and env["X"] == "1"
    assert Path(env["GPUDOCTOR_SYSROOT"], "proc/driver/nvidia/version").is_file()
    assert Path(env["LD_LIBRARY_PATH"].split(os.pathsep)[0], "libcuda.so.1").is_file()


# ---- against NVIDIA's real libraries, where a test run has them -------------------------
REAL_DIR = os.environ.get("GPUDOCTOR_REAL_NVIDIA_LIBDIR")  # e.g. Debian's libcuda1 unpacked


@pytest.mark.skipif(not REAL_DIR, reason="set GPUDOCTOR_REAL_NVIDIA_LIBDIR to a dir with NVIDIA's libcuda.so.1")
def test_error_tables_match_the_real_driver(lab_libdir):
    """Every CUresult name/string and every nvmlErrorString is the real driver's."""
    real_cu = ctypes.CDLL(os.path.join(REAL_DIR, "libcuda.so.1"))
    fake_cu = ctypes.CDLL(str(lab_libdir / "libcuda.so.1"))

    def cu_table(lib):
        out = []
        for code in range(1001):
            n, s = ctypes.c_char_p(), ctypes.c_char_p()
            out.append((lib.cuGetErrorName(code, ctypes.byref(n)), n.value,
                        lib.cuGetErrorString(code, ctypes.byref(s)), s.value))
        return out

    assert cu_table(fake_cu) == cu_table(real_cu)
    real_nv = ctypes.CDLL(os.path.join(REAL_DIR, "libnvidia-ml.so.1"))
    fake_nv = ctypes.CDLL(str(lab_libdir / "libnvidia-ml.so.1"))
    real_nv.nvmlErrorString.restype = fake_nv.nvmlErrorString.restype = ctypes.c_char_p
    assert [fake_nv.nvmlErrorString(c) for c in range(1001)] == [real_nv.nvmlErrorString(c) for c in range(1001)]
