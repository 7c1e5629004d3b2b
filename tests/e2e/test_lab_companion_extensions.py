"""A companion's compiled extension linked against another CUDA runtime than torch's build, or built against
another torch (issue 10, class 3), through the installed command: flash-attn's flash_attn_2_cuda module
built for CUDA 11 next to a cu121 torch, or needing a c10 symbol the installed torch no longer exports. The
extensions are real ELF files (DT_NEEDED libcudart.so.11.0; an undefined _ZN3c10... symbol, built by the C
compiler against stand-ins of torch/lib); their distribution's RECORD lists them, as pip writes it."""

from tests.e2e.test_lab_frameworks import dist_info, fake_torch, write
from tests.frameworks.fatbin_elf import elf_with_needed
from tests.frameworks.torch_abi_libs import ADD_OP, SET_DEVICE, SET_DEVICE_OLD, extension, torch_lib
from tests.lab import scenarios

MODULE = "flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so"


def flash_attn(site, cudart: str, version: str = "2.5.8", module: bytes = b""):
    dist_info(site, "flash-attn", version)
    (site / MODULE).write_bytes(module or elf_with_needed(["libc10.so", "libtorch.so", "libc10_cuda.so", cudart]))
    write(site / f"flash_attn-{version}.dist-info" / "RECORD",
          f"flash_attn/__init__.py,sha256=x,10\n{MODULE},sha256=y,1234\n"
          f"flash_attn-{version}.dist-info/RECORD,,\n")
    write(site / "flash_attn" / "__init__.py")


def companion_findings(report):
    return [f for f in report["findings"] if f["code"] == "conflicting-packages" and "companions" in f["evidence"]]


def test_a_flash_attn_built_for_cuda_11_next_to_a_cu121_torch(lab, tmp_path):
    site = tmp_path / "site"
    fake_torch(site, "2.2.2+cu121", "12.1")
    flash_attn(site, "libcudart.so.11.0")
    rc, report, stderr = lab.run_check(scenarios.rtx2080ti_x4(), "--quick", env_extra={"PYTHONPATH": str(site)})
    assert rc == 1, stderr
    [finding] = companion_findings(report)
    [companion] = finding["evidence"]["companions"]
    assert companion["name"] == "flash-attn" and "libcudart.so.11.0 (CUDA 11)" in companion["reason"]
    assert MODULE in companion["reason"] and "CUDA 12.1" in companion["reason"]
    assert "\"libcudart.so.11.0: cannot open shared object file\"" in finding["detail"]
    assert any("--force-reinstall --no-cache-dir --no-build-isolation flash-attn" in step for step in finding["fix"])


def test_a_flash_attn_built_for_torchs_cuda_is_quiet(lab, tmp_path):
    site = tmp_path / "site"
    fake_torch(site, "2.2.2+cu121", "12.1")
    flash_attn(site, "libcudart.so.12")
    rc, report, stderr = lab.run_check(scenarios.rtx2080ti_x4(), "--quick", env_extra={"PYTHONPATH": str(site)})
    assert companion_findings(report) == [], report["findings"]


def test_a_record_pointing_at_a_missing_or_broken_file_is_no_crash(lab, tmp_path):
    site = tmp_path / "site"
    fake_torch(site, "2.2.2+cu121", "12.1")
    flash_attn(site, "libcudart.so.11.0")
    (site / MODULE).write_bytes(b"\x7fELF\x02\x01garbage")  # truncated: not a readable ELF
    write(site / "flash_attn-2.5.8.dist-info" / "RECORD", f"{MODULE},,\n../../../etc/passwd,,\nmissing.so,,\n")
    rc, report, stderr = lab.run_check(scenarios.rtx2080ti_x4(), "--quick", env_extra={"PYTHONPATH": str(site)})
    assert "Traceback" not in stderr
    assert companion_findings(report) == []


def test_a_package_with_one_library_per_cuda_version_is_fine_when_one_is_torchs(lab, tmp_path):
    # bitsandbytes (before 0.45) shipped libbitsandbytes_cudaXYZ.so for several CUDA versions and loads the one
    # matching torch's: the CUDA 11 ones beside a cu121 torch are not a mismatch
    site = tmp_path / "site"
    fake_torch(site, "2.2.2+cu121", "12.1")
    dist_info(site, "bitsandbytes", "0.43.1")
    libs = {"libbitsandbytes_cuda118.so": "libcudart.so.11.0", "libbitsandbytes_cuda121.so": "libcudart.so.12"}
    for name, cudart in libs.items():
        write(site / "bitsandbytes" / name)
        (site / "bitsandbytes" / name).write_bytes(elf_with_needed([cudart, "libcublas.so." + cudart[13:15]]))
    write(site / "bitsandbytes-0.43.1.dist-info" / "RECORD", "".join(f"bitsandbytes/{n},,\n" for n in libs))
    rc, report, stderr = lab.run_check(scenarios.rtx2080ti_x4(), "--quick", env_extra={"PYTHONPATH": str(site)})
    assert companion_findings(report) == [], report["findings"]
    # with only the CUDA 11 library left, it has nothing for torch's CUDA 12
    (site / "bitsandbytes" / "libbitsandbytes_cuda121.so").unlink()
    write(site / "bitsandbytes-0.43.1.dist-info" / "RECORD", "bitsandbytes/libbitsandbytes_cuda118.so,,\n")
    rc, report, stderr = lab.run_check(scenarios.rtx2080ti_x4(), "--quick", env_extra={"PYTHONPATH": str(site)})
    [finding] = companion_findings(report)
    assert finding["evidence"]["companions"][0]["name"] == "bitsandbytes"


def torch_with_libraries(site):
    """A cu121 torch whose torch/lib exports c10::cuda::SetDevice(int) and one ATen operator."""
    fake_torch(site, "2.2.2+cu121", "12.1")
    torch_lib(site / "torch", "libc10.so", [SET_DEVICE])
    torch_lib(site / "torch", "libtorch_cpu.so", [ADD_OP])


def check_with_flash_attn_needing(lab, tmp_path, symbols):
    """`gpudoctor check --quick` beside a cu121 torch and a flash-attn module that needs `symbols` of torch."""
    site = tmp_path / "site"
    torch_with_libraries(site)
    built = extension(tmp_path / "build" / MODULE, symbols, site / "torch")
    flash_attn(site, "", module=built.read_bytes())
    return lab.run_check(scenarios.rtx2080ti_x4(), "--quick", env_extra={"PYTHONPATH": str(site)})


def test_a_flash_attn_built_against_another_torch_is_named_with_the_symbol_it_lacks(lab, tmp_path):
    rc, report, stderr = check_with_flash_attn_needing(lab, tmp_path, [SET_DEVICE_OLD, ADD_OP])
    assert rc == 1, stderr
    [finding] = companion_findings(report)
    [companion] = finding["evidence"]["companions"]
    assert companion["name"] == "flash-attn" and SET_DEVICE_OLD in companion["reason"]
    assert "1 symbol(s) of torch that torch 2.2.2+cu121 does not define" in companion["reason"]
    assert f'"undefined symbol: {SET_DEVICE_OLD}"' in finding["detail"]
    assert any("--force-reinstall --no-cache-dir --no-build-isolation flash-attn" in step for step in finding["fix"])
    [link] = report["facts"]["frameworks"]["extension_links"]
    assert link["missing_torch_symbols"] == [SET_DEVICE_OLD] and link["cuda_runtime"] is None


def test_a_flash_attn_built_against_this_torch_is_quiet(lab, tmp_path):
    rc, report, stderr = check_with_flash_attn_needing(lab, tmp_path, [SET_DEVICE, ADD_OP])
    assert companion_findings(report) == [], report["findings"]
    assert report["facts"]["frameworks"]["extension_links"] == []
