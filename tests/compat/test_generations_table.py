"""compat/gpu_generations.toml: schema, sources, and what the queries answer from it."""

import shutil

import pytest

from gpudoctor.compat import CompatDataError, data_dir, gpu_generations


def test_every_row_is_sourced_and_architectures_do_not_overlap():
    rows = gpu_generations()
    seen = set()
    for row in rows:
        assert row.source.startswith("https://docs.nvidia.com/datacenter/tesla/drivers/")
        assert not seen & set(row.compute_capabilities), row.architecture
        seen |= set(row.compute_capabilities)
        # retired rows state both ends; ongoing rows neither (NVIDIA writes "Ongoing")
        assert (row.last_driver_branch is None) == (row.last_cuda_major is None), row.architecture
    assert {"3.7", "5.2", "6.1", "7.0", "7.5", "8.9", "9.0"} <= seen


@pytest.mark.parametrize("broken, message", [
    ('last_driver_branch = "470"', "expected int"),
    ("source = \"\"", "source"),
    ("colour = 3", "unknown field"),
])
def test_broken_rows_are_refused_with_the_file_and_row(tmp_path, broken, message):
    folder = tmp_path / "compat"
    shutil.copytree(data_dir(), folder)
    text = (folder / "gpu_generations.toml").read_text()
    head, sep, tail = text.partition("[[generation]]\n")
    key = broken.split(" = ")[0]
    lines = [ln for ln in tail.splitlines() if not ln.startswith(key + " ")]
    (folder / "gpu_generations.toml").write_text(head + sep + broken + "\n" + "\n".join(lines) + "\n")
    with pytest.raises(CompatDataError, match=message):
        gpu_generations(folder)
