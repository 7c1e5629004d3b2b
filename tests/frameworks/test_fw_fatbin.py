"""The fat binary reader: which GPU architectures a CUDA library carries kernels for."""

from __future__ import annotations

import glob
import os

import pytest

from gpudoctor.probes.frameworks.fatbin import read_fatbin_archs

# These tests check what is read, not how fast: a cold page cache on a slow CI disk once made a
# 95 MB library's walk overrun the product's 2 s deadline (which says 'incomplete', as it should).
REAL_LIBRARY_DEADLINE_S = 120.0

from .conftest import frameworks_python
from .fatbin_elf import PTX, SASS, elf_with_sections, fatbin_blob, write_cuda_library


def test_sass_and_ptx_of_a_cuda_12_style_library(tmp_path):
    lib = write_cuda_library(tmp_path / "libtorch_cuda.so", sass=[50, 60, 70, 75, 80, 86, 90], ptx=[90])
    archs = read_fatbin_archs(str(lib))
    assert archs.error is None and archs.complete
    assert archs.sass == ["5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0"]
    assert archs.ptx == ["9.0"]
    assert archs.arch_list() == ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90", "compute_90"]
    assert archs.entries == 16  # 8 entries in each of 2 blobs


def test_blackwell_sm_numbers_have_three_digits(tmp_path):
    lib = write_cuda_library(tmp_path / "libcudnn_ops.so.9", sass=[100, 120], ptx=[120], blobs=1)
    assert read_fatbin_archs(str(lib)).arch_list() == ["sm_100", "sm_120", "compute_120"]


def test_padding_between_blobs_is_skipped(tmp_path):
    data = fatbin_blob([(SASS, 37)]) + b"\0" * 40 + fatbin_blob([(SASS, 80), (PTX, 80)])
    lib = tmp_path / "libpadded.so"
    lib.write_bytes(elf_with_sections([(".nv_fatbin", data)]))
    archs = read_fatbin_archs(str(lib))
    assert archs.sass == ["3.7", "8.0"] and archs.ptx == ["8.0"]


def test_library_without_device_code(tmp_path):
    lib = tmp_path / "libplain.so"
    lib.write_bytes(elf_with_sections([(".text", b"\x90" * 16)]))
    archs = read_fatbin_archs(str(lib))
    assert archs.sass == [] and "no .nv_fatbin" in archs.error


@pytest.mark.parametrize("content", [b"", b"not an elf at all", b"\x7fELF" + b"\xff" * 60])
def test_garbage_is_an_error_not_a_crash(tmp_path, content):
    path = tmp_path / "libbroken.so"
    path.write_bytes(content)
    archs = read_fatbin_archs(str(path))
    assert archs.error and archs.sass == []


def test_truncated_fatbin_keeps_what_was_read(tmp_path):
    data = fatbin_blob([(SASS, 70), (SASS, 80)])
    lib = tmp_path / "libtruncated.so"
    # the section claims more bytes than the file holds after the first entry
    lib.write_bytes(elf_with_sections([(".nv_fatbin", data[:16 + 64 + 24])]))
    archs = read_fatbin_archs(str(lib))
    assert archs.sass == ["7.0"]


def test_entry_budget_marks_the_answer_incomplete(tmp_path):
    lib = write_cuda_library(tmp_path / "libbig.so", sass=[50, 60, 70, 80], blobs=3)
    archs = read_fatbin_archs(str(lib), max_entries=5)
    assert not archs.complete and archs.entries == 5


def test_missing_file(tmp_path):
    archs = read_fatbin_archs(str(tmp_path / "absent.so"))
    assert archs.error and "absent.so" in archs.error


def test_real_libcublas_11_from_debian(real_libs):
    found = glob.glob(os.path.join(real_libs.cache, "deb", "libcublas11", "**", "libcublas.so.11.*"), recursive=True)
    if not found:
        pytest.skip("libcublas11 not fetched")
    archs = read_fatbin_archs(found[0], deadline_s=REAL_LIBRARY_DEADLINE_S)
    # CUDA 11.8's cuBLAS: Kepler sm_35 is still there (CUDA 12 dropped it), Hopper's PTX on top.
    assert archs.complete and archs.error is None
    assert "3.5" in archs.sass and "9.0" in archs.sass and "9.0" in archs.ptx
    assert archs.entries > 100


def test_real_tensorflow_library_agrees_with_its_build_info():
    import subprocess

    from gpudoctor.probes.frameworks.fatbin import framework_archs
    from gpudoctor.probes.frameworks.static import literal_assignments

    folder = subprocess.run([frameworks_python("tensorflow"), "-c", "import importlib.util as u; "
                             "print(u.find_spec('tensorflow').submodule_search_locations[0])"],
                            capture_output=True, text=True).stdout.strip()
    if not folder:
        pytest.skip("no tensorflow in the frameworks venv")
    archs = framework_archs("tensorflow", folder, REAL_LIBRARY_DEADLINE_S)
    info = dict(literal_assignments(os.path.join(folder, "python", "platform", "build_info.py"))["build_info"])
    assert archs is not None and archs.complete
    # every architecture the build says it targets is really in the shipped library
    assert set(info["cuda_compute_capabilities"]) <= set(archs.arch_list())


def test_library_copies_get_their_archs_cudnn_from_its_sub_libraries(tmp_path):
    import time

    from gpudoctor.probes.libraries import collect_copies, fill_archs

    from .fatbin_elf import elf_with_sections

    lib = tmp_path / "nvidia" / "cudnn" / "lib"
    lib.mkdir(parents=True)
    (lib / "libcudnn.so.9").write_bytes(elf_with_sections([(".text", b"\x90" * 8)]))  # the dispatcher: no kernels
    write_cuda_library(lib / "libcudnn_engines_precompiled.so.9", sass=[50, 60, 70, 75, 80, 86, 90], ptx=[90])
    write_cuda_library(lib / "libcudnn_ops.so.9", sass=[50, 90], blobs=1)
    families = collect_copies([(str(lib), "site-packages")], [])
    fill_archs(families, deadline=time.monotonic() + 5)
    [copy] = families["cudnn"]
    assert copy.archs == ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90", "compute_90"]
    assert sorted(os.path.basename(p) for p in copy.archs_from) == ["libcudnn_engines_precompiled.so.9",
                                                                  "libcudnn_ops.so.9"]


def test_library_archs_stop_at_the_deadline(tmp_path):
    from gpudoctor.probes.libraries import collect_copies, fill_archs

    lib = tmp_path / "lib"
    write_cuda_library(lib / "libcublasLt.so.12", sass=[80])
    families = collect_copies([(str(lib), "LD_LIBRARY_PATH")], [])
    fill_archs(families, deadline=0.0)  # already past: nothing is read, nothing is claimed
    assert families["cublasLt"][0].archs == []


def test_library_archs_of_debians_libcublas_11(real_libs):
    import time

    from gpudoctor.probes.libraries import collect_copies, fill_archs

    found = glob.glob(os.path.join(real_libs.cache, "deb", "libcublas11", "**", "libcublas.so.11.*"), recursive=True)
    if not found:
        pytest.skip("libcublas11 not fetched")
    families = collect_copies([(os.path.dirname(found[0]), "LD_LIBRARY_PATH")], [])
    fill_archs(families, deadline=time.monotonic() + REAL_LIBRARY_DEADLINE_S)
    [copy] = [c for c in families["cublas"] if c.real_path == os.path.realpath(found[0])]
    assert copy.archs[0] == "sm_35" and "sm_90" in copy.archs and copy.archs[-1] == "compute_90"


def test_jax_plugin_and_cupy_extension_are_found_next_to_their_packages(tmp_path):
    from gpudoctor.probes.frameworks.fatbin import framework_archs

    site = tmp_path / "site"
    write_cuda_library(site / "jax_plugins" / "xla_cuda12" / "xla_cuda_plugin.so", sass=[52, 60, 70, 80, 90], ptx=[90])
    (site / "jax").mkdir()
    assert framework_archs("jax", str(site / "jax")).arch_list()[0] == "sm_52"
    write_cuda_library(site / "cupy" / "cuda" / "cub.cpython-311-x86_64-linux-gnu.so", sass=[60, 70], ptx=[70])
    archs = framework_archs("cupy", str(site / "cupy"))
    assert archs.arch_list() == ["sm_60", "sm_70", "compute_70"] and archs.path.endswith("linux-gnu.so")
    assert framework_archs("torch", str(site / "torch")) is None  # nothing installed: nothing claimed


def test_a_walk_cut_short_makes_no_claim(tmp_path):
    """Reading stops at the entry budget: the partial list is kept as a detail, never used as the arch list."""
    from gpudoctor.facts.frameworks import FrameworkStatic
    from gpudoctor.probes.frameworks import fatbin, static

    site = tmp_path / "site"
    write_cuda_library(site / "torch" / "lib" / "libtorch_cuda.so", sass=[50, 60, 70, 80, 90], blobs=3)
    torch = FrameworkStatic(name="torch", installed=True, build="cuda", package_dir=str(site / "torch"))
    budget = fatbin.MAX_ENTRIES
    fatbin.MAX_ENTRIES = 4
    try:
        static._fatbin_archs(torch)
    finally:
        fatbin.MAX_ENTRIES = budget
    assert torch.details["fatbin"]["complete"] is False and torch.cuda_compute_capabilities == []
    static._fatbin_archs(torch)
    assert torch.cuda_compute_capabilities == ["sm_50", "sm_60", "sm_70", "sm_80", "sm_90"]
