"""Static facts read from files, never by import: torch's version.py and sonames, TF's build_info.py."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from gpudoctor.probes.frameworks import probe_frameworks
from gpudoctor.probes.frameworks.elf import read_dynamic
from gpudoctor.probes.frameworks.static import literal_assignments, tensorflow_sonames


def build_shared(path: Path, soname: str, needed: list) -> None:
    """A real ELF .so with the given DT_NEEDED entries, linked against stub libraries."""
    stub_dir = path.parent / "stubs"
    stub_dir.mkdir(exist_ok=True)
    (stub_dir / "empty.c").write_text("int gpudoctor_stub(void) { return 0; }\n")
    libs = []
    for dep in needed:
        stub = stub_dir / dep
        subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(stub), str(stub_dir / "empty.c"),
                        "-Wl,-soname," + dep], check=True)
        libs.append("-l:" + dep)
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(path), str(stub_dir / "empty.c"), "-Wl,-soname," + soname,
                    "-Wl,--no-as-needed", "-L" + str(stub_dir), *libs,
                    "-Wl,--enable-new-dtags,-rpath,$ORIGIN/../../nvidia/cudnn/lib"], check=True)


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc to build an ELF file")
def test_torch_cuda_sonames_come_from_dt_needed(site):
    site.dist("torch", "2.5.1+cu124")
    site.module("torch/__init__.py", "raise SystemExit('never imported in quick mode')")
    site.module("torch/version.py", """
        from typing import Optional
        __version__ = '2.5.1+cu124'
        debug = False
        cuda: Optional[str] = '12.4'
        git_version = 'a8d6afb511a69687bbb2b7e88a3cf67917e1697e'
        hip: Optional[str] = None
    """)
    (site.root / "torch" / "lib").mkdir()
    build_shared(site.root / "torch" / "lib" / "libtorch_cuda.so", "libtorch_cuda.so",
                 ["libcudart.so.12", "libcublas.so.12", "libcudnn.so.9", "libc10.so"])
    facts, _ = probe_frameworks(site.context(quick=True))
    torch = facts.frameworks["torch"].static
    assert (torch.build, torch.cuda_version, torch.version) == ("cuda", "12.4", "2.5.1+cu124")
    assert [(s.library, s.soname, s.source) for s in torch.sonames] == [
        ("cudart", "libcudart.so.12", "elf-needed"), ("cublas", "libcublas.so.12", "elf-needed"),
        ("cudnn", "libcudnn.so.9", "elf-needed")]
    assert torch.library_runpath == ["$ORIGIN/../../nvidia/cudnn/lib"]


def test_read_dynamic_rejects_what_is_not_elf(tmp_path):
    (tmp_path / "x.so").write_bytes(b"not an ELF file at all" * 4)
    assert read_dynamic(str(tmp_path / "x.so")) is None
    assert read_dynamic(str(tmp_path / "missing.so")) is None


def test_tensorflow_build_info_new_style(tmp_path):
    path = tmp_path / "build_info.py"
    path.write_text("import collections\nbuild_info = collections.OrderedDict([('cuda_version', '12.5.1'), "
                    "('cudnn_version', '9'), ('is_cuda_build', True), "
                    "('cuda_compute_capabilities', ['sm_60', 'compute_90'])])\n")
    assert literal_assignments(str(path))["build_info"]["cuda_version"] == "12.5.1"


def test_tensorflow_build_info_subscript_style(tmp_path):
    path = tmp_path / "build_info.py"
    path.write_text("import collections\nbuild_info = collections.OrderedDict()\n"
                    "build_info['cuda_version'] = '11.2'\nbuild_info['cudnn_version'] = '8'\n"
                    "build_info['is_cuda_build'] = True\n")
    assert literal_assignments(str(path))["build_info"] == {"cuda_version": "11.2", "cudnn_version": "8",
                                                           "is_cuda_build": True}


@pytest.mark.parametrize("cuda,cudnn,expected", [
    ("10.0", "7", ["libcudart.so.10.0", "libcublas.so.10.0", "libcufft.so.10.0", "libcudnn.so.7"]),
    ("10.1", "7", ["libcudart.so.10.1", "libcublas.so.10", "libcusolver.so.10", "libcudnn.so.7"]),
    ("11.0", "8", ["libcudart.so.11.0", "libcublas.so.11", "libcusolver.so.10", "libcufft.so.10"]),
    ("11.2", "8", ["libcudart.so.11.0", "libcusolver.so.11", "libcusparse.so.11", "libcudnn.so.8"]),
    ("12.5.1", "9", ["libcudart.so.12", "libcublas.so.12", "libcufft.so.11", "libcusolver.so.11",
                     "libcusparse.so.12", "libcudnn.so.9"]),
])
def test_tensorflow_dso_loader_sonames(cuda, cudnn, expected):
    sonames = [s.soname for s in tensorflow_sonames(cuda, cudnn)]
    assert set(expected) <= set(sonames)


def test_tensorflow_cpu_distribution_is_a_cpu_build(site):
    site.dist("tensorflow-cpu", "2.15.0")
    site.module("tensorflow/__init__.py", "")
    site.module("tensorflow/python/platform/build_info.py",
                "import collections\nbuild_info = collections.OrderedDict([('is_cuda_build', False), "
                "('is_rocm_build', False)])\n")
    facts, _ = probe_frameworks(site.context(quick=True))
    tf = facts.frameworks["tensorflow"].static
    assert (tf.distribution, tf.build, tf.sonames) == ("tensorflow-cpu", "cpu", [])


def test_jax_and_cupy_builds_come_from_their_distributions(site):
    site.dist("jax", "0.4.30")
    site.dist("jaxlib", "0.4.30")
    site.dist("jax-cuda12-plugin", "0.4.30")
    site.dist("cupy-cuda12x", "13.3.0")
    facts, _ = probe_frameworks(site.context(quick=True))
    jax, cupy = facts.frameworks["jax"].static, facts.frameworks["cupy"].static
    assert (jax.build, jax.cuda_version, jax.details["plugins"]) == ("cuda", "12", {"jax-cuda12-plugin": "0.4.30"})
    assert (cupy.build, cupy.cuda_version) == ("cuda", "12.x")
