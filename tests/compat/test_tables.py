"""Every compat table loads through its schema, and the tables agree with each other."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gpudoctor import compat as C
from gpudoctor.compat.loader import TABLE_FILES, data_dir, load_tables
from gpudoctor.compat.versions import vkey


@pytest.fixture(scope="module")
def t():
    return load_tables()


def test_every_table_file_exists_and_validates(t):
    for name in TABLE_FILES:
        assert (data_dir() / f"{name}.toml").is_file(), name
    assert t.tf_tested and t.torch and t.toolkit_drivers and t.cudnn and t.gpus and t.arch_series


def test_every_row_names_its_source(t):
    rows = (list(t.tf_tested) + list(t.tf_and_cuda) + list(t.toolkit_drivers) + list(t.minor_version_compat)
            + list(t.cudnn) + list(t.gpus) + list(t.architectures) + list(t.arch_series) + list(t.cupy) + list(t.jax))
    rows += [v for r in t.torch for v in r.variants]
    assert all(r.source.strip() for r in rows)
    assert all(r.source.strip() for r in t.torch)
    assert t.mvc_limits_source


def test_coverage_spans_what_the_issue_asks(t):
    series = C.tensorflow_series(t)
    assert series[0] == "1.0" and vkey(series[-1]) >= vkey("2.20")
    cudas = C.cuda_versions(t)
    assert cudas[0] == "8.0" and cudas[-1].startswith("13.")
    torches = sorted((r.version for r in t.torch), key=vkey)
    assert torches[0].startswith("1.") and torches[-1].startswith("2.")


def test_versions_are_unique(t):
    keys = [(r.platform, r.version) for r in t.tf_tested]
    assert len(keys) == len(set(keys))
    assert len({r.version for r in t.torch}) == len(t.torch)
    assert len({r.release for r in t.toolkit_drivers}) == len(t.toolkit_drivers)
    assert len({g.name for g in t.gpus}) == len(t.gpus)
    for r in t.torch:
        assert len({v.name for v in r.variants}) == len(r.variants), r.version


def test_driver_minimums_never_go_down_as_cuda_goes_up(t):
    """No contradicting ranges: a newer toolkit never needs an older driver than an older toolkit."""
    for os in ("linux", "windows"):
        prev = None
        for cuda in C.cuda_versions(t):
            d = C.min_driver_for_cuda(cuda, os, t).toolkit_driver
            if d is None:
                continue
            if prev is not None:
                assert vkey(d) >= vkey(prev), (os, cuda, d, prev)
            prev = d


def test_minor_version_compat_driver_is_not_above_the_toolkit_driver(t):
    for cuda in C.cuda_versions(t):
        req = C.min_driver_for_cuda(cuda, "linux", t)
        if req.minor_version_compat_driver:
            if cuda == "11.0":
                continue  # documented: 11.0 shipped with an earlier driver than the 11.x MVC minimum
            assert C.versions.vge(req.toolkit_driver, req.minor_version_compat_driver), cuda
        else:
            assert vkey(cuda) < (11,), cuda


def test_arch_series_do_not_overlap(t):
    s = sorted(t.arch_series, key=lambda r: vkey(r.cuda_from))
    for a, b in zip(s, s[1:]):
        assert vkey(a.cuda_to) < vkey(b.cuda_from)
    mins = [vkey(r.min_compute_capability) for r in s]
    assert mins == sorted(mins)


def test_every_torch_variant_cuda_is_in_the_driver_table(t):
    known = set(C.cuda_versions(t))
    for r in t.torch:
        for v in r.variants:
            assert v.cuda in known, (r.version, v.name)
            assert v.name == "cu" + v.cuda.replace(".", ""), (r.version, v.name)


def test_every_tensorflow_cuda_is_in_the_driver_table(t):
    known = set(C.cuda_versions(t))
    for r in t.tf_tested:
        assert r.cuda in known, (r.platform, r.version, r.cuda)


def test_every_gpu_compute_capability_has_an_architecture(t):
    archs = {a.compute_capability for a in t.architectures}
    for g in t.gpus:
        assert g.compute_capability in archs, g.name


def test_tensorflow_and_cuda_pins_agree_with_the_tested_table(t):
    """The shipped wheel's pins match the tested CUDA major.minor of its series."""
    for a in t.tf_and_cuda:
        r = C.tensorflow_release(a.version, t)
        assert r and r.linux, a.version
        assert a.cuda_runtime.startswith(r.linux.cuda + "."), (a.version, a.cuda_runtime, r.linux.cuda)
        assert a.cudnn.startswith(r.linux.cudnn.split(".")[0] + "."), (a.version, a.cudnn, r.linux.cudnn)


def _copy_tables(tmp_path: Path) -> Path:
    d = tmp_path / "compat"
    shutil.copytree(data_dir(), d)
    return d


def test_a_row_without_source_is_rejected_naming_file_and_row(tmp_path):
    d = _copy_tables(tmp_path)
    p = d / "gpus.toml"
    p.write_text(p.read_text().replace('source = "https://developer.nvidia.com/cuda-gpus (CUDA GPU Compute Capability, current table)"', 'source = ""', 1))
    with pytest.raises(C.CompatDataError, match=r"'gpus'.*#1.*source"):
        load_tables(d)


def test_a_bad_version_string_is_rejected(tmp_path):
    d = _copy_tables(tmp_path)
    p = d / "cuda_drivers.toml"
    p.write_text(p.read_text().replace('linux = "595.45.04"', 'linux = "595.x"', 1))
    with pytest.raises(C.CompatDataError, match=r"cuda_drivers.*linux.*dotted version"):
        load_tables(d)


def test_a_missing_required_field_is_rejected(tmp_path):
    d = _copy_tables(tmp_path)
    p = d / "cudnn.toml"
    p.write_text(p.read_text().replace("cuda_major = 12\n", "", 1))
    with pytest.raises(C.CompatDataError, match=r"cudnn.*cuda_major"):
        load_tables(d)
