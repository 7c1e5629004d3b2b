"""Every compat table declares the newest release it covers and the date its sources were read."""

from __future__ import annotations

import datetime
import re

import pytest

from gpudoctor import compat as C
from gpudoctor.compat.loader import data_dir, load_tables, read_toml
from gpudoctor.compat.model import CompatDataError
from gpudoctor.compat.versions import vkey


def test_every_table_file_declares_its_coverage():
    for path in sorted(data_dir().glob("*.toml")):
        rows = read_toml(path).get("coverage")
        assert rows, f"{path.name} has no [[coverage]] row"
        for row in rows:
            assert C.versions.is_dotted(row["newest"]), path.name
            datetime.date.fromisoformat(row["read"])  # a real date, YYYY-MM-DD
            assert row["source"].strip() and row["subject"].strip(), path.name


def test_coverage_reaches_the_newest_row_of_each_table():
    t = load_tables()
    assert C.newest_covered("torch", t).newest == max((r.version for r in t.torch), key=vkey)
    assert C.newest_covered("cuda", t).newest == max((r.cuda for r in t.toolkit_drivers), key=vkey)
    assert C.newest_covered("driver", t).newest == max((r.linux for r in t.toolkit_drivers), key=vkey)
    newest_tf = max((r.version for r in t.tf_tested if r.platform == "linux"), key=vkey)
    assert C.newer_than_tables("tensorflow", newest_tf, t) is None
    assert C.newest_covered("jax", t).newest == max((r.version for r in t.jax_releases), key=vkey)


def test_a_coverage_row_without_a_source_is_rejected(tmp_path):
    import shutil
    shutil.copytree(data_dir(), tmp_path / "c")
    p = tmp_path / "c" / "cupy.toml"
    p.write_text(re.sub(r'(\[\[coverage\]\][^\[]*?)source = "[^"]*"\n', r"\1", p.read_text(), count=1))
    with pytest.raises(CompatDataError, match="source"):
        load_tables(tmp_path / "c")
