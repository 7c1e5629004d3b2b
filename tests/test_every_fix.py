"""Every fix gpudoctor can print names packages that exist: the explain catalogue (every signature's
fix templates, sonames.toml, cuda_errors.toml, the corpus), the codes' remedies, and the rules over a
broad set of machines. Package names are checked against the committed lists in gpudoctor/fixes/."""

from __future__ import annotations

import itertools
import re
import string
from pathlib import Path
from typing import Dict, Iterator, List, Tuple

import pytest

from gpudoctor.codes import CATALOG
from gpudoctor.explain import explain_text
from gpudoctor.explain.catalogue import load_catalogue
from gpudoctor.facts.frameworks import CondaPackage, Distribution, FrameworkFacts, FrameworkStatic, SonameNeed
from gpudoctor.facts.libraries import LibraryCopy, LibraryFacts
from gpudoctor.fixes import check_command, install_specs
from gpudoctor.rules import diagnose
from tests.explain.corpus_cases import load_cases
from tests.factories import gpu_machine, no_gpu_machine

# Values a template may meet, as consistent sets (a CUDA 10.0 log, a CUDA 11 log, a CUDA 12 log, ...).
VALUE_SETS: List[Dict[str, str]] = [
    {"version": "10.0", "major": "10", "cuda_version": "10.0", "built_v": "7.6.5", "built_major": "7",
     "built_next": "8", "loaded_v": "7.4.1", "lib": "cufft", "sm": "61", "cc": "6.1", "found_cuda": "10.0"},
    {"version": "11.0", "major": "11", "cuda_version": "11.0", "built_v": "8.1.0", "built_major": "8",
     "built_next": "9", "loaded_v": "8.0.4", "lib": "curand", "sm": "86", "cc": "8.6", "found_cuda": "11.4"},
    {"version": "12", "major": "12", "cuda_version": "12", "built_v": "9.3.0", "built_major": "9",
     "built_next": "10", "loaded_v": "9.1.0", "lib": "cusolver", "sm": "120", "cc": "12.0", "found_cuda": "12.1"},
    {"version": "13.0", "major": "13", "cuda_version": "13.0", "built_v": "9.10.0", "built_major": "9",
     "built_next": "10", "loaded_v": "9.1.0", "lib": "cusparse", "sm": "100", "cc": "10.0", "found_cuda": "12.8"},
]
LOG_SONAMES = ["libcudart.so.9.0", "libcudart.so.10.0", "libcudart.so.10.1", "libcudart.so.11.0", "libcudart.so.12",
               "libcudart.so.13", "libcublas.so.10.0", "libcublas.so.10", "libcublas.so.11", "libcublas.so.12",
               "libcublasLt.so.12", "libcufft.so.10.0", "libcufft.so.10", "libcufft.so.11", "libcurand.so.10",
               "libcusolver.so.11", "libcusparse.so.12", "libnvrtc.so.11.2", "libnvrtc.so.12", "libnvJitLink.so.12",
               "libcudnn.so.7", "libcudnn.so.8", "libcudnn.so.9", "libcudnn_ops_infer.so.8", "libnccl.so.2",
               "libcuda.so.1", "libnvinfer.so.8"]
CONTEXTS = ["", "  File \"/home/u/miniconda3/envs/tf/lib/python3.9/site-packages/x.py\", line 1\n",
            "| NVIDIA-SMI 470.57.02    Driver Version: 470.57.02    CUDA Version: 11.4 |\n"]


def _names(template: str) -> List[str]:
    return [n for _, n, _, _ in string.Formatter().parse(template.replace("[[", "").replace("]]", "")) if n]


def _fix_problems(fixes: List[str]) -> List[str]:
    return [f"{p}  <- {fix!r}" for fix in fixes for p in check_command(fix)]


def test_the_checker_catches_what_issue_11_saw():
    assert check_command("`pip install nvidia-cuda-runtime-cu10`")  # NVIDIA's wheels start with CUDA 11
    assert check_command("`pip install nvidia-cublas-cu110`")  # a placeholder that raises at install
    assert check_command("`pip install tensorflow-gpu`")  # its newest release is a placeholder
    assert check_command('`pip install "nvidia-cudnn-cu12==7.*"`')  # no cuDNN 7 for CUDA 12
    assert not check_command('`conda install -c conda-forge cudatoolkit=10.0` or `pip install "tensorflow-gpu==1.14.0"`')
    specs = install_specs('`python -m pip install -U "jax[cuda12]"` and `conda install -c nvidia cuda-nvcc`')
    assert [(s.tool, s.name) for s in specs] == [("pip", "jax"), ("conda", "cuda-nvcc")]


def test_every_signature_fix_template_names_real_packages():
    cat = load_catalogue()
    problems = []
    for sig in cat.signatures:
        for template, values in itertools.product(sig.fix, VALUE_SETS):
            from gpudoctor.explain.templates import render
            problems += _fix_problems([render(template, values)])
    for err in cat.cuda_errors:
        problems += _fix_problems(list(err.fix))
    assert not problems, "\n".join(problems)


# One or more sonames (Linux) and DLL names (Windows) for every family of sonames.toml, in every era.
FAMILY_SAMPLES = LOG_SONAMES + [
    "libnvidia-ml.so.1", "libcusolverMg.so.11", "libnpp.so.12", "libnvjpeg.so.12", "libnvrtc-builtins.so.12",
    "libcupti.so.11.8", "libcupti.so.12", "libnvToolsExt.so.1", "libcustatevec.so.1", "libnvinfer_plugin.so.8", "libnvvm.so", "nvcuda.dll", "nvml.dll", "cudart64_110.dll", "cudart64_101.dll", "nvrtc-builtins64_116.dll",
    "cudart64_92.dll", "cudart64_12.dll", "cudart64_13.dll", "cublas64_11.dll", "cublasLt64_12.dll", "cublas64_10.dll",
    "cublas64_13.dll", "cudnn64_7.dll", "cudnn64_8.dll", "cudnn_ops_infer64_8.dll", "cudnn64_9.dll", "cufft64_10.dll",
    "cufft64_11.dll", "curand64_10.dll", "cusolver64_11.dll", "cusparse64_12.dll", "nvinfer64_8.dll",
    "cupti64_2022.3.0.dll"]


def test_every_soname_family_fix_names_real_packages():
    """Each family's fixes rendered with the values its own pattern extracts (as explain does)."""
    from gpudoctor.explain.cuda_causes import library_install_steps
    from gpudoctor.explain.enrich import ENRICHERS
    from gpudoctor.explain.templates import render_all

    cat = load_catalogue()
    problems, uncovered = [], []
    for fam in cat.sonames:
        samples = [so for so in FAMILY_SAMPLES if cat.soname_family(so) is fam]
        if not samples:
            uncovered.append(fam.pattern.pattern)
        for so in samples:
            values = ENRICHERS["soname"](cat, {"soname": so}, so, "") or {}
            for facts in ({}, {"conda_env": "/opt/conda/envs/x"}):
                fixes = library_install_steps(values, facts) + render_all(list(fam.fix), dict(values, soname=so))
                problems += [f"{so}: {p}" for p in _fix_problems(fixes)]
    assert not uncovered, f"add a sample soname for these families: {uncovered}"
    assert not problems, "\n".join(problems)


def test_every_code_remedy_names_real_packages():
    assert not _fix_problems([entry.remedy for entry in CATALOG.values()])


@pytest.mark.parametrize("soname", LOG_SONAMES)
def test_a_missing_library_in_any_era_gets_fixes_that_exist(soname):
    for context in CONTEXTS:
        log = (context + f"W dso_loader.cc:64] Could not load dynamic library '{soname}'; dlerror: {soname}: "
               "cannot open shared object file: No such file or directory")
        fixes = [step for f in explain_text(log).findings for step in f.fix]
        assert not _fix_problems(fixes), (soname, context, fixes)
        if re.match(r"libcu\w+\.so\.(9|10)\.\d$", soname):
            assert not any("nvidia-" in s and "install" in s for s in fixes), fixes  # no wheels before CUDA 11


def test_every_corpus_log_gets_fixes_that_exist():
    root = Path(__file__).parent / "explain"
    problems = []
    for case in load_cases(root / "corpus") + load_cases(root / "holdout"):
        text = case["path"].read_text(encoding="utf-8", errors="replace")
        problems += [f"{case['id']}: {p}" for f in explain_text(text).findings for p in _fix_problems(f.fix)]
    assert not problems, "\n".join(problems)


# -- the rules over many machines ------------------------------------------------------------------

def _framework(facts, name, version, build="cuda", cuda=None, cudnn=None, sonames=(), distribution=None):
    static = FrameworkStatic(name=name, installed=True, distribution=distribution or name, version=version,
                             build=build, cuda_version=cuda, cudnn_version=cudnn,
                             sonames=[SonameNeed(lib, so, "build-info") for lib, so in sonames])
    facts.frameworks.frameworks[name] = FrameworkFacts(name, static, None)
    facts.frameworks.distributions.append(Distribution(distribution or name, version, "/env/site-packages", "pip"))
    return facts


def _library(facts, name, soname, version, folder, via="LD_LIBRARY_PATH", load_error=None, cuda_major=None):
    lib = facts.libraries.library(name)
    if lib is None:
        lib = LibraryFacts(name=name)
        facts.libraries.libraries.append(lib)
    lib.copies.append(LibraryCopy(path=f"{folder}/{soname}", real_path=f"{folder}/{soname}.{version}", soname=soname,
                                  found_via=[via], version_from_name=version, version=version, load_error=load_error,
                                  cuda_major=cuda_major))
    facts.libraries.search_dirs = [[folder, via]]
    return facts


def _tf(version, cuda, cudnn, sonames, conda=False, libs=()):
    facts = gpu_machine(driver="535.183.01", cuda=12020)
    facts.system.python_version = "3.9.18"
    if conda:
        facts.system.env_kind = "conda"
        facts.frameworks.conda_packages = [CondaPackage("cudatoolkit", "11.2.2")]
    _framework(facts, "tensorflow", version, cuda=cuda, cudnn=cudnn, sonames=sonames)
    for name, soname, v, folder in libs:
        _library(facts, name, soname, v, folder)
    return facts


def scenarios() -> Iterator[Tuple[str, object]]:
    yield "healthy", gpu_machine()
    yield "no gpu", no_gpu_machine()
    yield "gpus full", gpu_machine(count=2, used_mib=(11000, 11000))
    yield "container", gpu_machine(container=True)
    yield "old driver", gpu_machine(driver="418.87.01", cuda=10010)
    tf114 = [("cudart", "libcudart.so.10.0"), ("cublas", "libcublas.so.10.0"), ("cufft", "libcufft.so.10.0"),
             ("cudnn", "libcudnn.so.7")]
    cuda101 = [("cudart", "libcudart.so.10.1", "10.1.243", "/usr/local/cuda-10.1/lib64"),
               ("cublas", "libcublas.so.10", "10.2.1.243", "/usr/local/cuda-10.1/lib64")]
    for conda in (False, True):
        yield f"tf 1.14 on cuda 10.1 conda={conda}", _tf("1.14.0", "10.0", "7", tf114, conda, cuda101)
        yield f"tf 1.14 nothing conda={conda}", _tf("1.14.0", "10.0", "7", tf114, conda)
        yield f"tf 2.4 conda={conda}", _tf("2.4.0", "11.0", "8", [("cudart", "libcudart.so.11.0"),
                                                                  ("cudnn", "libcudnn.so.8")], conda)
        yield f"tf 2.10 conda={conda}", _tf("2.10.0", "11.2", "8", [("cudart", "libcudart.so.11.0"),
                                                                    ("cusolver", "libcusolver.so.11")], conda,
                                            [("cudart", "libcudart.so.12", "12.4.127", "/usr/local/cuda-12.4/lib64")])
        yield f"tf 2.15 conda={conda}", _tf("2.15.0", "12.2", "8", [("cudart", "libcudart.so.12"),
                                                                    ("cudnn", "libcudnn.so.8")], conda,
                                            [("cudnn", "libcudnn.so.8", "8.6.0", "/usr/lib/x86_64-linux-gnu")])
        yield f"tf 2.21 conda={conda}", _tf("2.21.0", "12.5.1", "9", [("cudart", "libcudart.so.12"),
                                                                      ("cudnn", "libcudnn.so.9")], conda)
    for name, version, dist in (("torch", "2.4.1+cpu", "torch"), ("tensorflow", "2.15.0", "tensorflow-cpu"),
                                ("jax", "0.4.30", "jaxlib")):
        facts = gpu_machine()
        _framework(facts, name, version, build="cpu", distribution=dist)
        yield f"cpu {name}", facts
    for via, wheel_major in (("site-packages", 12), ("conda", 12), ("LD_LIBRARY_PATH", 11)):
        facts = gpu_machine()
        _library(facts, "cusolver", f"libcusolver.so.{wheel_major - 1}", "11.4.5", "/env/lib", via=via,
                 load_error=f"libnvJitLink.so.{wheel_major}: cannot open shared object file: No such file or directory",
                 cuda_major=wheel_major)
        _library(facts, "cusparse", f"libcusparse.so.{wheel_major}", "12.1.0", "/env/lib", via=via,
                 load_error=f"libnvJitLink.so.{wheel_major}: cannot open shared object file: No such file or directory",
                 cuda_major=wheel_major)
        yield f"nvjitlink missing via {via}", facts
    facts = gpu_machine(driver="470.82.01", cuda=11040)
    _library(facts, "cudart", "libcudart.so.12", "12.4.127", "/env/site-packages/nvidia/cuda_runtime/lib",
             via="site-packages", cuda_major=12)
    yield "driver too old for a cu12 runtime", facts


@pytest.mark.parametrize("name,facts", list(scenarios()), ids=[n for n, _ in scenarios()])
def test_every_rule_fix_names_real_packages(name, facts):
    findings = diagnose(facts)
    problems = [f"{f.code}: {p}" for f in findings for p in _fix_problems(f.fix)]
    assert not problems, "\n".join(problems)


def test_refresh_script_drops_placeholders_by_file_size():
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "tools" / "refresh_package_names.py"
    spec = importlib.util.spec_from_file_location("refresh_package_names", path)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    index = {"files": [{"filename": "tensorflow_gpu-2.11.0-cp310-cp310-manylinux2014_x86_64.whl", "size": 588_000_000},
                       {"filename": "tensorflow-gpu-2.12.0.tar.gz", "size": 2_600},
                       {"filename": "tensorflow-gpu-2.10.0.tar.gz", "size": 900, "yanked": True}]}
    assert tool.releases(index, "tensorflow-gpu") == ["2.11.0"]
    assert tool.placeholder_release([{"filename": "nvidia-cublas-cu110-0.0.1.dev5.tar.gz", "size": 8118}])
    assert not tool.placeholder_release([{"filename": "ninja-1.13.2-py3-none-manylinux.whl", "size": 180_000}])
