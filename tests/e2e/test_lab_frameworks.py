"""Framework builds on simulated GPU machines, through the installed command (issue 4's end-to-end
scenarios). The frameworks are fake packages on PYTHONPATH whose build files say what real ones
say; `--quick` reads them without importing anything, as the conda hook does.
"""

import os
import textwrap

from tests.lab import scenarios


def findings_of(report):
    return {f["code"]: f for f in report["findings"]}


def write(path, text=""):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))


def dist_info(site, name, version):
    write(site / f"{name.replace('-', '_')}-{version}.dist-info" / "METADATA",
          f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")


def fake_torch(site, version, cuda):
    dist_info(site, "torch", version)
    write(site / "torch" / "__init__.py")
    write(site / "torch" / "version.py", f"__version__ = '{version}'\ncuda = '{cuda}'\nhip = None\n")


def fake_tensorflow_114(site):
    dist_info(site, "tensorflow-gpu", "1.14.0")
    write(site / "tensorflow" / "__init__.py")
    write(site / "tensorflow" / "python" / "platform" / "build_info.py", """
        msvcp_dll_name = 'msvcp140.dll'
        cudart_dll_name = 'cudart64_100.dll'
        cuda_version_number = '10.0'
        cudnn_version_number = '7'
        is_windows_build = False
    """)


def cuda_101_toolkit(folder):
    """A CUDA 10.1 lib64 as the toolkit lays it out: versioned files behind soname links."""
    folder.mkdir(parents=True)
    for stem, soname, real in [("cudart", "10.1", "10.1.243"), ("cublas", "10", "10.2.1.243"),
                               ("cufft", "10", "10.1.1.243"), ("curand", "10", "10.1.1.243"),
                               ("cusolver", "10", "10.2.0.243"), ("cusparse", "10", "10.3.0.243")]:
        (folder / f"lib{stem}.so.{real}").write_bytes(b"")
        os.symlink(f"lib{stem}.so.{real}", folder / f"lib{stem}.so.{soname}")
    return str(folder)


def test_torch_built_for_cuda_124_on_driver_470(lab, tmp_path):
    fake_torch(tmp_path / "site", "2.5.1+cu124", "12.4")
    machine = scenarios.rtx2080ti_x4()
    machine.driver_version, machine.cuda_driver_version = "470.82.01", 11040
    rc, report, stderr = lab.run_check(machine, "--quick", env_extra={"PYTHONPATH": str(tmp_path / "site")})
    assert rc == 1, stderr
    too_old = report["findings"][0]  # the root cause, before this host's own CUDA 13 toolkit warning
    assert too_old["code"] == "driver-too-old" and too_old["severity"] == "error"
    assert "PyTorch 2.5.1+cu124" in too_old["detail"] and "470.82.01" in too_old["detail"]
    assert "525.60.13" in too_old["fix"][0]


def tensorflow_114_with_cuda_101(lab, tmp_path):
    """`check --quick` of TensorFlow 1.14 on driver 418 with only a CUDA 10.1 toolkit on LD_LIBRARY_PATH."""
    fake_tensorflow_114(tmp_path / "site")
    cuda101 = cuda_101_toolkit(tmp_path / "cuda-10.1" / "lib64")
    machine = scenarios.driver_418()
    libdir = lab.machine(machine)["LD_LIBRARY_PATH"]
    rc, report, stderr = lab.run_check(machine, "--quick", env_extra={
        "PYTHONPATH": str(tmp_path / "site"), "LD_LIBRARY_PATH": os.pathsep.join([libdir, cuda101])})
    return rc, report, stderr, cuda101


def test_tensorflow_114_with_only_cuda_101_on_ld_library_path(lab, tmp_path):
    rc, report, stderr, cuda101 = tensorflow_114_with_cuda_101(lab, tmp_path)
    found = findings_of(report)
    assert rc == 1, stderr
    mismatch = found["cuda-version-mismatch"]
    assert "TensorFlow 1.14.0" in mismatch["detail"] and "libcudart.so.10.0" in mismatch["detail"]
    assert "libcudart.so.10.1" in mismatch["detail"] and cuda101 in mismatch["detail"]
    assert any("CUDA 10.0 and cuDNN 7.4" in step for step in mismatch["fix"])
    # nothing provides libcudnn.so.7 either: the same cause (this build's CUDA stack), one finding
    assert "libcudnn.so.7" in mismatch["detail"] and "cudnn-missing" not in found
