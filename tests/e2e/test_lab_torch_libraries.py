"""torch's own CUDA libraries, searched the way torch's loader does (issue 10, class 7), through the
installed command. The torch package is fake, but its libtorch_cuda.so is a real ELF file whose
DT_NEEDED and RUNPATH are what torch 2.4.1+cu121's says (libcudnn.so.9, libcublas.so.12, ...)."""

from tests.e2e.test_lab_frameworks import fake_torch, write
from tests.frameworks.fatbin_elf import elf_with_needed
from tests.lab import scenarios

RUNPATH = "$ORIGIN/../../nvidia/cublas/lib:$ORIGIN/../../nvidia/cuda_runtime/lib:$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN"
PINS = ('nvidia-cuda-runtime-cu12 (==12.1.105) ; platform_system == "Linux" and platform_machine == "x86_64"',
        'nvidia-cublas-cu12 (==12.1.3.1) ; platform_system == "Linux" and platform_machine == "x86_64"',
        'nvidia-cudnn-cu12 (==9.1.0.70) ; platform_system == "Linux" and platform_machine == "x86_64"')


def torch_241(site, wheels=("cuda_runtime", "cublas", "cudnn")):
    fake_torch(site, "2.4.1+cu121", "12.1")
    meta = site / "torch-2.4.1+cu121.dist-info" / "METADATA"
    meta.write_text(meta.read_text() + "".join(f"Requires-Dist: {p}\n" for p in PINS))
    lib = site / "torch" / "lib"
    lib.mkdir(parents=True)
    (lib / "libtorch_cuda.so").write_bytes(elf_with_needed(
        ["libc10_cuda.so", "libcudart.so.12", "libcublas.so.12", "libcudnn.so.9", "libc10.so"], RUNPATH))
    files = {"cuda_runtime": ["libcudart.so.12"], "cublas": ["libcublas.so.12", "libcublasLt.so.12"],
             "cudnn": ["libcudnn.so.9"]}
    for wheel in wheels:
        for name in files[wheel]:
            write(site / "nvidia" / wheel / "lib" / name, "\x7fELF")


def test_torch_without_its_cudnn_wheel(lab, tmp_path):
    site = tmp_path / "site"
    torch_241(site, wheels=("cuda_runtime", "cublas"))
    rc, report, stderr = lab.run_check(scenarios.rtx2080ti_x4(), "--quick", env_extra={"PYTHONPATH": str(site)})
    assert rc == 1, stderr
    [missing] = [f for f in report["findings"] if f["code"] == "cudnn-missing"]
    assert missing["evidence"]["framework"] == "torch" and missing["evidence"]["needs"] == ["libcudnn.so.9"]
    assert "PyTorch 2.4.1+cu121 links libcudnn.so.9" in missing["detail"]
    assert missing["fix"] == ['pip install "nvidia-cudnn-cu12==9.1.0.70"  # the versions PyTorch 2.4.1+cu121 pins']


def test_torch_with_its_wheels_is_quiet(lab, tmp_path):
    site = tmp_path / "site"
    torch_241(site)
    rc, report, stderr = lab.run_check(scenarios.rtx2080ti_x4(), "--quick", env_extra={"PYTHONPATH": str(site)})
    codes = {f["code"] for f in report["findings"]}
    assert not codes & {"cudnn-missing", "cuda-library-missing", "cuda-version-mismatch"}, report["findings"]


def test_cudnn_bundled_in_torch_lib_counts(lab, tmp_path):
    """torch wheels up to 1.12 carried cuDNN in torch/lib, found through RUNPATH's $ORIGIN."""
    site = tmp_path / "site"
    torch_241(site, wheels=("cuda_runtime", "cublas"))
    write(site / "torch" / "lib" / "libcudnn.so.9", "\x7fELF")
    rc, report, stderr = lab.run_check(scenarios.rtx2080ti_x4(), "--quick", env_extra={"PYTHONPATH": str(site)})
    assert "cudnn-missing" not in {f["code"] for f in report["findings"]}, report["findings"]


def test_foreign_cudnn_on_ld_library_path_shadows_the_pinned_wheel(lab, tmp_path):
    import os

    site = tmp_path / "site"
    torch_241(site)
    write(site / "nvidia_cudnn_cu12-9.1.0.70.dist-info" / "METADATA",
          "Metadata-Version: 2.1\nName: nvidia-cudnn-cu12\nVersion: 9.1.0.70\n")
    old = tmp_path / "cudnn-9.0" / "lib"
    write(old / "libcudnn.so.9.0.0", "\x7fELF")
    os.symlink("libcudnn.so.9.0.0", old / "libcudnn.so.9")
    machine = scenarios.rtx2080ti_x4()
    libdir = lab.machine(machine)["LD_LIBRARY_PATH"]
    rc, report, stderr = lab.run_check(machine, "--quick", env_extra={
        "PYTHONPATH": str(site), "LD_LIBRARY_PATH": os.pathsep.join([libdir, str(old)])})
    assert rc == 1, stderr
    [foreign] = [f for f in report["findings"] if f["code"] == "cudnn-version-mismatch"]
    assert foreign["evidence"]["framework"] == "torch" and foreign["evidence"]["pinned"] == "nvidia-cudnn-cu12==9.1.0.70"
    assert "libcudnn.so.9.0.0" in foreign["detail"] and "shadows the pinned wheel" in foreign["detail"]
    assert foreign["fix"][0].startswith(f"Take {old} off LD_LIBRARY_PATH")
