"""The probe and the rules against NVIDIA's real libraries (DESIGN.md, "Testing without a GPU").

The CUDA 12 runtime wheel, Debian's CUDA 11.8 runtime and cuBLAS (without its cuBLASLt), and the
real 535 and 470 user-space drivers on a machine whose kernel module is not loaded.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys

import pytest

from gpudoctor.facts import Facts
from gpudoctor.facts.driver import PciDevice
from gpudoctor.probes import libraries as L
from gpudoctor.probes.context import ProbeContext
from gpudoctor.rules import libraries as R
from gpudoctor.rules.base import Prior

CHILD = os.path.join(os.path.dirname(L.__file__), "children", "libraries_child.py")

# Asks a real libcuda / libcudart what they say on this machine, in a child process (never in pytest's).
DRIVER_SCRIPT = r"""
import ctypes, json, sys
out = {}
cu = ctypes.CDLL(sys.argv[1])
v = ctypes.c_int(-1)
out["cuDriverGetVersion"] = [cu.cuDriverGetVersion(ctypes.byref(v)), v.value]
out["cuInit"] = cu.cuInit(0)
if len(sys.argv) > 2:
    rt = ctypes.CDLL(sys.argv[2])
    n = ctypes.c_int(-1)
    out["cudaGetDeviceCount"] = rt.cudaGetDeviceCount(ctypes.byref(n))
    rt.cudaGetErrorString.restype = ctypes.c_char_p
    out["error_string"] = rt.cudaGetErrorString(out["cudaGetDeviceCount"]).decode()
print(json.dumps(out))
"""


def ask_driver(driver_dir: str, runtime: str = "") -> dict:
    env = dict(os.environ, LD_LIBRARY_PATH=driver_dir)  # cudart dlopens libcuda.so.1 by name
    out = subprocess.run([sys.executable, "-c", DRIVER_SCRIPT, os.path.join(driver_dir, "libcuda.so.1")]
                         + ([runtime] if runtime else []), env=env, stdout=subprocess.PIPE, check=True)
    return json.loads(out.stdout)


def probe(monkeypatch, site_packages=(), ld_library_path=(), conda_prefix=None, quick=False):
    """The real probe, full mode, with the target environment's site-packages given."""
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "CONDA_PREFIX", "CUDA_HOME")}
    if ld_library_path:
        env["LD_LIBRARY_PATH"] = ":".join(ld_library_path)
    if conda_prefix:
        env["CONDA_PREFIX"] = conda_prefix
    monkeypatch.setattr(L, "target_paths", lambda ctx: (list(site_packages), sys.prefix, None))
    facts, statuses = L.probe_libraries(ProbeContext(env=env, python=sys.executable, timeout=30, quick=quick))
    return facts, statuses


def with_gpu(libraries, driver_version=None) -> Facts:
    facts = Facts(libraries=libraries)
    facts.driver.pci_devices = [PciDevice("0000:01:00.0", "0x10de", "0x1e04", "0x030000")]
    facts.driver.libcuda.loaded = driver_version is not None
    facts.driver.libcuda.driver_version = driver_version
    return facts


def run(rule, facts):
    return list(rule(facts, Prior()))


@pytest.mark.parametrize("code, version", [(12090, "12.9"), (11080, "11.8"), (13000, "13.0")])
def test_cudart_version_decoding(code, version):
    assert child_module().decode_cudart(code) == version


@pytest.mark.parametrize("code, version", [(8902, "8.9.2"), (7605, "7.6.5"), (90100, "9.1.0"), (91002, "9.10.2")])
def test_cudnn_version_decoding_follows_both_documented_layouts(code, version):
    assert child_module().decode_cudnn(code) == version


@pytest.mark.parametrize("code, version", [(2804, "2.8.4"), (21809, "2.18.9"), (22105, "2.21.5")])
def test_nccl_version_decoding(code, version):
    assert child_module().decode_nccl(code) == version


def child_module():
    sys.path.insert(0, os.path.dirname(CHILD))
    try:
        spec = importlib.util.spec_from_file_location("libraries_child", CHILD)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    finally:
        sys.path.pop(0)
    return module


def test_cuda12_wheel_runtime_reports_its_real_version(real_libs, monkeypatch):
    facts, statuses = probe(monkeypatch, site_packages=[real_libs.site_packages])
    assert facts.dlopen_checked and statuses[1].status == "ok"
    (wheel,) = [c for c in facts.library("cudart").copies if "site-packages" in c.found_via]
    assert (wheel.soname, wheel.version_from_name) == ("libcudart.so.12", "12")
    assert (wheel.version, wheel.version_code, wheel.version_source) == ("12.9", 12090, "library")
    assert wheel.package == "nvidia-cuda-runtime-cu12 12.9.79"
    # a wheel is not on the loader's path: a plain dlopen does not find it (frameworks load it by path)
    (res,) = [r for r in facts.library("cudart").loader_resolution if r.soname == "libcudart.so.12"]
    assert res.real_path is None and "cannot open shared object file" in res.error


def test_cuda12_runtime_on_ld_library_path_is_what_dlopen_loads(real_libs, monkeypatch):
    lib = os.path.join(real_libs.site_packages, "nvidia", "cuda_runtime", "lib")
    facts, _ = probe(monkeypatch, ld_library_path=[lib])
    (res,) = [r for r in facts.library("cudart").loader_resolution if r.soname == "libcudart.so.12"]
    assert (res.real_path, res.version, res.found_via) == (os.path.join(lib, "libcudart.so.12"), "12.9",
                                                           ["LD_LIBRARY_PATH"])


def test_debian_cuda11_runtime_falls_back_to_its_file_name(real_libs, monkeypatch):
    facts, _ = probe(monkeypatch, ld_library_path=[real_libs.cudart11_dir])
    (copy,) = [c for c in facts.library("cudart").copies if "LD_LIBRARY_PATH" in c.found_via]
    assert (copy.soname, copy.version_from_name, copy.cuda_major) == ("libcudart.so.11.0", "11.8.89", 11)
    if copy.version_source == "library":  # a machine with a working driver answers
        assert copy.version == "11.8"
    else:  # the CUDA 11 runtime's cudaRuntimeGetVersion needs a driver: 35 without libcuda, 100 without a GPU
        assert (copy.version, copy.version_source) == ("11.8.89", "file-name")
        assert copy.version_error in ("cudaRuntimeGetVersion returned 35", "cudaRuntimeGetVersion returned 100")


def test_cublas_without_its_cublaslt_is_a_missing_library_on_a_gpu_machine(real_libs, monkeypatch):
    facts, _ = probe(monkeypatch, ld_library_path=[real_libs.cublas11_dir])
    (res,) = [r for r in facts.library("cublas").loader_resolution if r.soname == "libcublas.so.11"]
    assert res.real_path is None and "libcublasLt.so.11: cannot open shared object file" in res.error
    (finding,) = run(R.cuda_library_missing, with_gpu(facts))
    assert finding.code == "cuda-library-missing" and finding.severity.value == "error"
    assert "needs libcublasLt.so.11" in finding.detail and finding.evidence["how"].startswith("dlopen:")
    assert run(R.cuda_library_missing, Facts(libraries=facts)) == []  # no GPU here: nothing needs it


def test_quick_mode_knows_cublas_needs_cublaslt_from_the_soname_alone(real_libs, monkeypatch):
    facts, _ = probe(monkeypatch, ld_library_path=[real_libs.cublas11_dir], quick=True)
    (finding,) = run(R.cuda_library_missing, with_gpu(facts))
    assert finding.evidence["needs"] == "libcublasLt.so.11"


def test_cuda12_runtime_on_the_real_470_driver_is_driver_too_old(real_libs, monkeypatch):
    wheel = os.path.join(real_libs.site_packages, "nvidia", "cuda_runtime", "lib", "libcudart.so.12")
    said = ask_driver(real_libs.driver_470, wheel)
    assert said["cuDriverGetVersion"] == [0, 11040]  # the 470 driver: CUDA 11.4
    assert said["cuInit"] == 100  # CUDA_ERROR_NO_DEVICE: no kernel module, no GPU here
    assert said["cudaGetDeviceCount"] == 35  # cudaErrorInsufficientDriver
    facts, _ = probe(monkeypatch, site_packages=[real_libs.site_packages])
    (finding,) = run(R.driver_too_old, with_gpu(facts, said["cuDriverGetVersion"][1]))
    assert finding.severity.value == "error" and "CUDA up to 11.4" in finding.detail
    assert "CUDA 12.9 runtime" in finding.detail and "error 35" in finding.detail
    assert finding.evidence["runtimes"][0]["path"] == wheel


def test_cuda12_runtime_on_the_real_535_driver_runs_by_minor_version_compatibility(real_libs, monkeypatch):
    wheel = os.path.join(real_libs.site_packages, "nvidia", "cuda_runtime", "lib", "libcudart.so.12")
    said = ask_driver(real_libs.driver_535, wheel)
    assert said["cuDriverGetVersion"] == [0, 12020] and said["cuInit"] == 100
    assert said["cudaGetDeviceCount"] == 100  # no device, but not 35: 12.9 runs on a 12.2 driver
    facts, _ = probe(monkeypatch, site_packages=[real_libs.site_packages])
    findings = run(R.driver_too_old, with_gpu(facts, 12020))
    (note,) = [f for f in findings if f.severity.value == "info"]
    assert "minor-version compatibility" in note.title and "PTX" in note.detail
    assert note.evidence["runtimes"][0]["path"] == wheel
    # what else there is, is this machine's own toolkit (CUDA 13 under /usr/local: a leftover 12.2 cannot run)
    assert all(f.severity.value == "warning" and "/usr/local" in f.detail for f in findings if f is not note)


def test_cuda11_runtime_on_the_470_driver_is_fine(real_libs, monkeypatch):
    facts, _ = probe(monkeypatch, ld_library_path=[real_libs.cudart11_dir])
    # only the CUDA 11 runtime matters here (this machine may have a CUDA 13 toolkit too)
    facts.library("cudart").copies = [c for c in facts.library("cudart").copies if c.cuda_major == 11]
    # 11.8 on an 11.4 driver: same major, minor-version compatibility: a note, not an error
    findings = run(R.driver_too_old, with_gpu(facts, 11040))
    assert [f.severity.value for f in findings] == ["info"]


def test_two_cuda11_runtimes_shadowing_each_other(real_libs, monkeypatch, tmp_path):
    # A conda env with another CUDA 11 runtime build, and Debian's on LD_LIBRARY_PATH
    conda = tmp_path / "conda-env"
    (conda / "conda-meta").mkdir(parents=True)
    (conda / "lib").mkdir()
    shutil.copy(os.path.join(real_libs.cudart11_dir, "libcudart.so.11.8.89"), conda / "lib" / "libcudart.so.11.2.152")
    os.symlink("libcudart.so.11.2.152", conda / "lib" / "libcudart.so.11.0")
    facts, _ = probe(monkeypatch, ld_library_path=[real_libs.cudart11_dir], conda_prefix=str(conda))
    findings = run(R.multiple_cuda_installs, Facts(libraries=facts))
    (finding,) = [f for f in findings if f.evidence["soname"] == "libcudart.so.11.0"]
    assert finding.severity.value == "warning"
    assert finding.evidence["resolved"] == os.path.realpath(os.path.join(real_libs.cudart11_dir, "libcudart.so.11.0"))
    assert "from LD_LIBRARY_PATH): it shadows the one from your conda environment (11.2.152)" in finding.detail
    assert finding.fix[0] == f"Take {real_libs.cudart11_dir} off LD_LIBRARY_PATH: `unset LD_LIBRARY_PATH`"


def test_real_535_and_470_drivers_without_a_kernel_module(real_libs):
    for driver, nvml, cuda in ((real_libs.driver_535, real_libs.nvml_535, 12020),
                               (real_libs.driver_470, real_libs.nvml_470, 11040)):
        said = ask_driver(driver)
        assert said == {"cuDriverGetVersion": [0, cuda], "cuInit": 100}
        script = ("import ctypes,sys; n=ctypes.CDLL(sys.argv[1]); n.nvmlErrorString.restype=ctypes.c_char_p; "
                  "r=n.nvmlInit_v2(); print(r, n.nvmlErrorString(r).decode())")
        out = subprocess.run([sys.executable, "-c", script, os.path.join(nvml, "libnvidia-ml.so.1")],
                             stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
        assert out.strip() == "9 Driver Not Loaded"


needs_cuda13 = pytest.mark.skipif(not os.path.exists("/usr/local/cuda/lib64/libcudart.so.13"),
                                  reason="this machine has no CUDA 13 toolkit under /usr/local/cuda")


@needs_cuda13
def test_this_machine_lists_the_cuda13_runtime_with_its_real_version(monkeypatch):
    facts, _ = probe(monkeypatch)
    (copy,) = [c for c in facts.library("cudart").copies if c.soname == "libcudart.so.13"]
    assert copy.version_source == "library" and copy.version.startswith("13.") and copy.cuda_major == 13
    assert "default" in copy.found_via
    nvcc = next(t for t in facts.tools if t.name == "nvcc")
    assert nvcc.path and nvcc.version and nvcc.version.startswith("13.")


@needs_cuda13
def test_this_machine_has_nothing_to_complain_about(monkeypatch):
    facts, _ = probe(monkeypatch)
    findings = [f for rule in R.RULES for f in rule(Facts(libraries=facts), Prior())]
    assert findings == []


def test_a_broken_file_is_a_load_error_not_a_crash(tmp_path):
    bad = tmp_path / "libcudart.so.12"
    bad.write_bytes(b"\x7fELF not really")
    from gpudoctor.probes.runner import ChildSpec, run_child

    request = {"resolve": [["cudart", "libcudart.so.12"]], "copies": [["cudart", "libcudart.so.12", str(bad)]]}
    result = run_child(ChildSpec("t", "libraries_child.py", sys.executable, dict(os.environ), 20,
                                 args=(json.dumps(request),), python_flags=("-S",)))
    assert result.ok and result.records["done"]
    assert str(bad) in result.records[f"copy:{bad}"]["error"]
