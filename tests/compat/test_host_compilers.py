"""compat/host_compilers.toml: every row sourced, every bound a version, the ranges sensible."""

from packaging.version import Version

from gpudoctor.compat.host_compilers import _table, host_compiler_bounds


def test_every_row_is_sourced_and_its_range_is_not_empty():
    rows = _table().values()
    assert len(rows) >= 30
    for row in rows:
        assert row.source.startswith("torch 2.13.0 wheel"), row
        assert Version(row.minimum) < Version(row.max_excl), row


def test_lookups_take_a_full_nvcc_version_and_unknown_releases_give_none():
    assert host_compiler_bounds("gcc", "13.0.88").max_excl == "16.0"  # CUDA 13.0's host_config.h: gcc <= 15
    assert host_compiler_bounds("gcc", "12.1.105").newest_major == 12
    assert host_compiler_bounds("gcc", "10.2.89") is None
    assert host_compiler_bounds("icc", "12.1") is None
