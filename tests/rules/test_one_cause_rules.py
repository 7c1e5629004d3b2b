"""One cause, one finding in `check` too, and the verdict line counts causes."""

from gpudoctor.facts.libraries import LibraryCopy, LibraryFacts
from gpudoctor.fixes import check_command
from gpudoctor.renderers.terminal import verdict_line
from gpudoctor.rules import diagnose
from tests.factories import gpu_machine
from tests.rules.test_compat_rules import TF_114_SONAMES, with_framework

MISSING = "libnvJitLink.so.12: cannot open shared object file: No such file or directory"


def _wheel_library(facts, name, soname, version):
    folder = f"/env/lib/python3.11/site-packages/nvidia/{name}/lib"
    lib = LibraryFacts(name=name)
    lib.copies.append(LibraryCopy(path=f"{folder}/{soname}", real_path=f"{folder}/{soname}", soname=soname,
                                  found_via=["site-packages"], version=version, load_error=MISSING, cuda_major=12))
    facts.libraries.libraries.append(lib)


def test_cusolver_and_cusparse_missing_one_nvjitlink_are_one_finding():
    facts = gpu_machine()
    _wheel_library(facts, "cusolver", "libcusolver.so.11", "11.6.1.9")
    _wheel_library(facts, "cusparse", "libcusparse.so.12", "12.3.1.170")
    missing = [f for f in diagnose(facts) if f.code == "cuda-library-missing"]
    assert len(missing) == 1
    f = missing[0]
    assert "libcusolver.so.11" in f.detail and "libcusparse.so.12" in f.detail and "libnvJitLink.so.12" in f.detail
    assert f.fix[0] == "pip install nvidia-nvjitlink-cu12"
    assert [u["soname"] for u in f.evidence["needed_by"]] == ["libcusolver.so.11", "libcusparse.so.12"]


def test_tensorflow_114_missing_cuda_and_cudnn_is_one_finding_with_fixes_that_exist():
    facts = with_framework(gpu_machine(driver="418.87.01", cuda=10010), "tensorflow", "1.14.0", cuda="10.0",
                           cudnn="7", sonames=TF_114_SONAMES)
    facts.libraries.search_dirs = [["/usr/local/cuda-10.1/lib64", "LD_LIBRARY_PATH"]]
    facts.system.env_kind = "conda"
    findings = diagnose(facts)
    library_findings = [f for f in findings if f.layer.value == "cuda-libraries" and f.severity.value == "error"]
    assert [f.code for f in library_findings] == ["cuda-library-missing"]
    assert "libcudnn.so.7" in library_findings[0].detail and "libcudart.so.10.0" in library_findings[0].detail
    fix = " ".join(library_findings[0].fix)
    assert "conda install -c conda-forge cudatoolkit=10.0 \"cudnn=7\"" in fix
    assert not [p for step in library_findings[0].fix for p in check_command(step)]


def test_verdict_line_counts_causes_not_symptoms():
    facts = gpu_machine()
    _wheel_library(facts, "cusolver", "libcusolver.so.11", "11.6.1.9")
    _wheel_library(facts, "cusparse", "libcusparse.so.12", "12.3.1.170")
    text = verdict_line("error", diagnose(facts)).plain
    assert "1 error" in text and "2 error" not in text


def test_gpus_2_and_3_full_are_one_finding_naming_both():
    facts = gpu_machine(count=4, used_mib=(0, 0, 11000, 11000))
    full = [f for f in diagnose(facts) if f.code == "gpu-memory-full"]
    assert len(full) == 1
    assert [g["gpu"] for g in full[0].evidence["full"]] == [2, 3]
    assert "GPU 2" in full[0].detail and "GPU 3" in full[0].detail
