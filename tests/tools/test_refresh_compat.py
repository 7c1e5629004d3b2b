"""tools/refresh_compat.py against saved index responses and small saved wheel fragments (no network):
range reads take only what a row needs, the fatbin headers give the arch list, the proposed rows name
their wheel, official rows are never overwritten, and applied rows pass the tables' schema."""

from __future__ import annotations

import hashlib
import json
import shutil
import urllib.parse
from pathlib import Path

import pytest

from gpudoctor.compat.loader import load_tables
from gpudoctor.compat.queries import torch_release
from tests.tools import fragments
from tools import fatbin, index_json, refresh_compat, wheel_facts
from tools.wheel_range import central_directory

DATA = fragments.DATA
ROOT = Path(__file__).resolve().parents[2]
TORCH_216 = "torch-2.16.0-cp312-cp312-manylinux_2_28_x86_64.whl"


class SavedWheel:
    """A fetch over a saved wheel's bytes that counts what it hands out, like an HTTP range reader."""

    def __init__(self, name: str) -> None:
        self.data = (DATA / name).read_bytes()
        self.downloaded = 0
        self.requests = 0

    def __call__(self, offset: int, length: int) -> bytes:
        self.requests += 1
        self.downloaded += length
        return self.data[offset:offset + length]


def saved_source(opened: dict) -> refresh_compat.Source:
    docs = json.loads((DATA / "index-fragments.json").read_text())

    def project(name):
        doc = dict(docs.get(name) or {"releases": {}})
        doc["_url"] = f"https://index.invalid/pypi/{name}/json"  # file URLs are relative to the document
        return doc

    def fetch_for(wheel):
        name = urllib.parse.urlparse(wheel.url).path.rsplit("/", 1)[-1]
        opened[name] = SavedWheel(name)
        return opened[name]

    return refresh_compat.Source(project, fetch_for)


@pytest.fixture()
def compat_copy(tmp_path):
    shutil.copytree(ROOT / "compat", tmp_path / "compat")
    return tmp_path / "compat"


def test_saved_fragments_are_what_the_generator_makes():
    for name, data in fragments.build().items():
        assert (DATA / name).read_bytes() == data, f"{name}: run python -m tests.tools.fragments"


def test_metadata_is_read_with_a_few_small_range_reads():
    wheel = SavedWheel(TORCH_216)
    members = central_directory(wheel, len(wheel.data))
    md = wheel_facts.parse_metadata(wheel_facts.member_text(wheel, members, ".dist-info/METADATA"))
    assert md.requires_python == ">=3.11"
    assert wheel_facts.pins(md)["cuda-toolkit"] == "==13.3.1"
    assert wheel_facts.pins(md, "opt-einsum") == {"opt-einsum": ">=3.3"}
    assert wheel.requests <= 4 and wheel.downloaded < len(wheel.data) / 3  # never the stored 256 KiB filler


def test_fatbin_headers_give_the_arch_list_from_the_elf_section_table():
    lib = fragments.libtorch_cuda()
    found = fatbin.archs_from_elf(lambda o, n: lib[o:o + n])
    assert found.containers == 4
    assert found.arch_list() == ["7.5", "8.0", "9.0+PTX"]  # the list every ordinary kernel file has
    assert found.extra() == [89]  # one special kernel container
    assert fatbin.archs_from_elf(lambda o, n: b"not an elf"[o:o + n]) is None


def test_a_deflated_library_is_streamed_a_stored_one_read_by_headers():
    for name in (TORCH_216, TORCH_216.replace(".whl", "-stored.whl")):
        wheel = SavedWheel(name)
        members = central_directory(wheel, len(wheel.data))
        found = wheel_facts.library_archs(wheel, members["torch/lib/libtorch_cuda.so"], chunk=512)
        assert found.arch_list() == ["7.5", "8.0", "9.0+PTX"], name


def test_real_index_response_final_releases_and_python_versions():
    doc = json.loads((DATA / "index-torch-2.15.json").read_text())
    doc["_url"] = "https://index.invalid/pypi/torch/json"
    releases = index_json.final_releases(doc)
    assert set(releases) == {"2.14.1", "2.15.0"}  # the rc without files is not a release
    wheel = index_json.linux_x86_64_wheel(releases["2.15.0"])
    assert wheel.filename == "torch-2.15.0-cp312-cp312-manylinux_2_28_x86_64.whl"
    assert wheel.sha256 == "6d8c86f4e33a9f12a58149bd9b0d64351632b8eb44479be8ff85e5389932dd79"
    assert wheel.url.startswith("https://index.invalid/packages/packages/42/43/")
    assert index_json.python_versions(releases["2.15.0"]) == ["3.11", "3.12", "3.13", "3.14", "3.15"]


def test_proposal_for_a_new_torch_names_its_wheel_and_applies_through_the_schema(compat_copy):
    opened = {}
    prop = refresh_compat.propose(saved_source(opened), load_tables(compat_copy))
    diff = refresh_compat.render(compat_copy, prop, write=True, today="2027-01-21")
    sha = hashlib.sha256((DATA / TORCH_216).read_bytes()).hexdigest()
    assert '+version = "2.16.0"' in diff and '+default_variant = "cu133"' in diff
    assert f"{TORCH_216} (sha256 {sha})" in diff
    assert "2.17.0rc1" not in diff  # pre-releases are never proposed
    t = load_tables(compat_copy)  # the applied rows pass the schema
    r = torch_release("2.16.0", t)
    v = r.variant("cu133")
    assert r.default_variant == "cu133" and v.cuda == "13.3" and v.cudnn == "9.28.1.4"
    assert v.arch_list == ("7.5", "8.0", "9.0+PTX") and "libtorch_cuda.so" in v.arch_source
    assert next(c for c in t.coverage if c.subject == "torch").newest == "2.16.0"
    assert next(c for c in t.coverage if c.subject == "torch").read == "2027-01-21"
    assert opened[TORCH_216].downloaded < len(opened[TORCH_216].data)


def test_an_official_row_is_kept_and_the_disagreement_reported(compat_copy):
    before = torch_release("2.14.1", load_tables(compat_copy))
    prop = refresh_compat.propose(saved_source({}), load_tables(compat_copy))
    refresh_compat.render(compat_copy, prop, write=True, today="2027-01-21")
    assert any("torch 2.14.1 cu130" in d and "9.99.0.1" in d and "table row kept" in d for d in prop.disagreements)
    assert torch_release("2.14.1", load_tables(compat_copy)) == before


def test_tensorflow_ranges_jax_plugins_and_cuda_wheels(compat_copy):
    prop = refresh_compat.propose(saved_source({}), load_tables(compat_copy))
    diff = refresh_compat.render(compat_copy, prop, write=True, today="2027-01-21")
    assert any(line.startswith("tensorflow 2.22.0: and-cuda uses ranges") for line in prop.report)
    assert any("2.22.0: series not in the tested-configurations table" in line for line in prop.report)
    assert "[[and_cuda]]" not in diff  # the schema holds exact pins only: nothing invented
    rel = next(r for r in load_tables(compat_copy).jax_releases if r.version == "0.13.0")
    assert rel.package == "jax-cuda13-plugin" and rel.requires_python == ">=3.12"
    assert rel.requires["nvidia-cudnn-cu13"] == "<10.0,>=9.12.0.46"
    assert any("CUDA 13.3 wheels exist; the driver table stops at 13.2" in line for line in prop.report)


def test_nothing_new_means_no_diff(compat_copy):
    prop = refresh_compat.Proposal()
    assert refresh_compat.render(compat_copy, prop, write=False, today="2027-01-21") == ""


def test_requirement_parsing():
    assert wheel_facts.requirement("nvidia-cudnn-cu12 (==9.1.0.70) ; platform_system == 'Linux'") == \
        ("nvidia-cudnn-cu12", "==9.1.0.70", "platform_system == 'Linux'")
    assert wheel_facts.exact_pin("==12.4.127") == "12.4.127" and wheel_facts.exact_pin(">=12.1") is None
