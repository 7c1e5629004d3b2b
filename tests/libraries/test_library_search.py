"""The library search: order, found_via, merging by real path, versions without loading anything.

Fake trees of empty .so files: pure Python and fast.
"""

from __future__ import annotations

import os

import pytest

from gpudoctor.facts.libraries import LibraryCopy
from gpudoctor.probes import libraries as L
from gpudoctor.probes.context import ProbeContext


def touch(path: str, link_to: str = "") -> str:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if link_to:
        os.symlink(link_to, path)
    else:
        open(path, "w").close()
    return path


@pytest.fixture
def machine(tmp_path):
    """A machine with a pip env (CUDA 12 and 13 wheels), a conda env, a cuDNN on LD_LIBRARY_PATH,
    a CUDA_HOME toolkit and a default /usr/local/cuda-like toolkit."""
    t = str(tmp_path)
    sp = os.path.join(t, "env/lib/python3.11/site-packages")
    touch(f"{sp}/nvidia/cuda_runtime/lib/libcudart.so.12")
    touch(f"{sp}/nvidia/cu13/lib/libcudart.so.13")
    touch(f"{sp}/nvidia/cudnn/lib/libcudnn.so.9")
    touch(f"{sp}/nvidia/cudnn/lib/libcudnn_ops.so.9")  # a cuDNN sub-library: not a library we list
    os.makedirs(f"{sp}/nvidia_cuda_runtime_cu12-12.4.127.dist-info")
    os.makedirs(f"{sp}/nvidia_cudnn_cu12-9.1.0.70.dist-info")
    os.makedirs(f"{sp}/nvidia_cuda_runtime-13.0.96.dist-info")
    conda = os.path.join(t, "conda/envs/ml")
    os.makedirs(f"{conda}/conda-meta")
    touch(f"{conda}/lib/libcudart.so.11.8.89")
    touch(f"{conda}/lib/libcudart.so.11.0", "libcudart.so.11.8.89")
    touch(f"{conda}/lib/libcudart.so", "libcudart.so.11.0")  # the dev link is not a soname
    lld = os.path.join(t, "opt/cudnn8/lib")
    touch(f"{lld}/libcudnn.so.8.1.0")
    touch(f"{lld}/libcudnn.so.8", "libcudnn.so.8.1.0")
    home = os.path.join(t, "cuda-12.4")
    touch(f"{home}/targets/x86_64-linux/lib/libcudart.so.12.4.127")
    touch(f"{home}/targets/x86_64-linux/lib/libcudart.so.12", "libcudart.so.12.4.127")
    touch(f"{home}/targets/x86_64-linux/lib/libcublas.so.12.4.5.8")
    touch(f"{home}/targets/x86_64-linux/lib/libcublas.so.12", "libcublas.so.12.4.5.8")
    os.symlink("targets/x86_64-linux/lib", f"{home}/lib64")
    default = os.path.join(t, "usr-local/cuda-11.8")
    touch(f"{default}/lib64/libcudart.so.11.8.89")
    touch(f"{default}/lib64/libcudart.so.11.0", "libcudart.so.11.8.89")
    touch(f"{default}/lib64/libcudart.so.11.0.broken", "nothing-here")  # not a soname, and dangling
    env = {"CONDA_PREFIX": conda, "LD_LIBRARY_PATH": f"{lld}::/does/not/exist", "CUDA_HOME": home}
    return {"root": t, "sp": sp, "conda": conda, "lld": lld, "home": home, "default": default,
            "ctx": ProbeContext(env=env, quick=True)}


def _copies(m, ldconfig=()):
    dirs = L.search_dirs(m["ctx"], [m["sp"]], None, [m["default"]])
    families = L.collect_copies(dirs, list(ldconfig))
    L.fill_static_versions(families, [m["sp"]])
    return dirs, families


def test_search_order_is_site_packages_conda_ld_library_path_cuda_home_default(machine):
    dirs, _ = _copies(machine)
    vias = [via for _, via in dirs]
    assert vias == sorted(vias, key=L.SEARCH_ORDER.index)
    assert dirs[0] == (f"{machine['sp']}/nvidia/cu13/lib", "site-packages")  # the CUDA 13 layout first
    assert (f"{machine['conda']}/lib", "conda") in dirs
    assert (machine["lld"], "LD_LIBRARY_PATH") in dirs
    assert all(d != "/does/not/exist" for d, _ in dirs)  # absent folders are not listed
    # lib64 is a link to targets/x86_64-linux/lib: the folder is listed once for CUDA_HOME
    assert len([d for d, via in dirs if via == "CUDA_HOME"]) == 1


def test_every_copy_is_found_with_how_it_was_found(machine):
    _, families = _copies(machine)
    cudart = {c.real_path: c for c in families["cudart"]}
    assert len(cudart) == 5
    wheel12 = cudart[f"{machine['sp']}/nvidia/cuda_runtime/lib/libcudart.so.12"]
    assert (wheel12.soname, wheel12.found_via, wheel12.cuda_major) == ("libcudart.so.12", ["site-packages"], 12)
    conda = cudart[f"{machine['conda']}/lib/libcudart.so.11.8.89"]
    assert conda.soname == "libcudart.so.11.0"  # the link frameworks dlopen, not the file's own name
    assert (conda.found_via, conda.version_from_name, conda.cuda_major) == (["conda"], "11.8.89", 11)
    home = cudart[os.path.realpath(f"{machine['home']}/targets/x86_64-linux/lib/libcudart.so.12.4.127")]
    assert (home.soname, home.found_via, home.version) == ("libcudart.so.12", ["CUDA_HOME"], "12.4.127")
    cudnn8 = families["cudnn"][-1]
    assert (cudnn8.soname, cudnn8.found_via, cudnn8.version) == ("libcudnn.so.8", ["LD_LIBRARY_PATH"], "8.1.0")
    assert not any("cudnn_ops" in c.real_path for c in families["cudnn"])


def test_one_file_found_several_ways_is_one_copy_with_every_found_via(machine):
    ctx = ProbeContext(env=dict(machine["ctx"].env, LD_LIBRARY_PATH=f"{machine['home']}/lib64"), quick=True)
    dirs = L.search_dirs(ctx, [], None, [])
    ldconfig = [("libcudart.so.12", f"{machine['home']}/targets/x86_64-linux/lib/libcudart.so.12")]
    families = L.collect_copies(dirs, ldconfig)
    (copy,) = [c for c in families["cudart"] if c.soname == "libcudart.so.12"]
    assert copy.found_via == ["LD_LIBRARY_PATH", "ldconfig", "CUDA_HOME"]
    assert [via for via, _ in copy.found_at] == ["LD_LIBRARY_PATH", "ldconfig", "CUDA_HOME"]
    assert copy.path == f"{machine['home']}/lib64/libcudart.so.12"  # as first found


def test_static_versions_come_from_file_name_then_header_then_dist_info(machine):
    _, families = _copies(machine)
    wheel9 = families["cudnn"][0]
    assert (wheel9.soname, wheel9.version, wheel9.version_source) == ("libcudnn.so.9", "9.1.0.70", "dist-info")
    assert wheel9.package == "nvidia-cudnn-cu12 9.1.0.70"
    header = touch(f"{machine['sp']}/nvidia/cudnn/include/cudnn_version.h")
    with open(header, "w") as h:
        h.write("#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n")
    _, families = _copies(machine)
    assert (families["cudnn"][0].version, families["cudnn"][0].version_source) == ("9.1.0", "header")
    cu13 = [c for c in families["cudart"] if c.soname == "libcudart.so.13"][0]
    assert cu13.package == "nvidia-cuda-runtime 13.0.96"  # CUDA 13 wheels: nvidia/cu13/lib, no -cuXX suffix
    wheel12 = [c for c in families["cudart"] if c.soname == "libcudart.so.12" and "site-packages" in c.found_via][0]
    assert (wheel12.version, wheel12.version_source) == ("12.4.127", "dist-info")


def test_ldconfig_output_is_parsed_and_32_bit_entries_skipped():
    text = ("1234 libs found in cache `/etc/ld.so.cache'\n"
            "\tlibcudart.so.13 (libc6,x86-64) => /usr/local/cuda-13.0/lib/libcudart.so.13\n"
            "\tlibcudart.so (libc6,x86-64) => /usr/local/cuda-13.0/lib/libcudart.so\n"
            "\tlibcudart.so.11.0 (libc6) => /usr/lib/i386-linux-gnu/libcudart.so.11.0\n"
            "\tlibcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1\n"
            "\tlibcublasLt.so.12 (libc6,AArch64) => /usr/lib/aarch64-linux-gnu/libcublasLt.so.12\n")
    assert L.parse_ldconfig(text) == [("libcudart.so.13", "/usr/local/cuda-13.0/lib/libcudart.so.13"),
                                      ("libcublasLt.so.12", "/usr/lib/aarch64-linux-gnu/libcublasLt.so.12")]


@pytest.mark.parametrize("name, family, version", [
    ("libcudart.so.12.4.127", "cudart", "12.4.127"), ("libcublasLt.so.12", "cublasLt", "12"),
    ("libcublas.so.11.11.3.6", "cublas", "11.11.3.6"), ("libnvJitLink.so.12", "nvJitLink", "12"),
    ("libcudart.so", None, None), ("libcudnn_ops.so.9", None, None), ("libcuda.so.1", None, None),
])
def test_library_names(name, family, version):
    parsed = L.parse_lib_name(name)
    assert (parsed[0].name, parsed[1]) == (family, version) if family else parsed is None


@pytest.mark.parametrize("family, soname, major", [
    ("cudart", "libcudart.so.11.0", 11), ("cufft", "libcufft.so.11", 12), ("cufft", "libcufft.so.10", None),
    ("cusparse", "libcusparse.so.12", None), ("nvrtc", "libnvrtc.so.11.2", 11), ("cudnn", "libcudnn.so.9", None),
])
def test_cuda_major_only_where_the_soname_proves_it(family, soname, major):
    assert L.cuda_major_of(family, soname) == major


def test_child_answers_become_versions_and_loader_resolutions():
    wheel = LibraryCopy(path="/sp/nvidia/cuda_runtime/lib/libcudart.so.12", real_path="/sp/c12",
                        soname="libcudart.so.12", found_via=["site-packages"], version="12", version_source="file-name")
    families = {"cudart": [wheel]}
    records = {
        "resolve:libcudart.so.13": {"family": "cudart", "soname": "libcudart.so.13", "error": None,
                                    "real_path": "/usr/lib64/libcudart.so.13", "version": "13.0", "version_code": 13000},
        "resolve:libcudart.so.12": {"family": "cudart", "soname": "libcudart.so.12",
                                    "error": "libcudart.so.12: cannot open shared object file: No such file or directory"},
        "resolve:libcudart.so.11.0": {"family": "cudart", "soname": "libcudart.so.11.0",
                                      "error": "libcudart.so.11.0: cannot open shared object file: No such file or directory"},
        "copy:/sp/c12": {"family": "cudart", "soname": "libcudart.so.12", "error": None, "real_path": "/sp/c12",
                         "version": "12.9", "version_code": 12090},
    }
    resolutions = L.apply_child_records(families, records)
    assert (wheel.version, wheel.version_source, wheel.version_code) == ("12.9", "library", 12090)
    only_loader = families["cudart"][1]
    assert (only_loader.found_via, only_loader.version, only_loader.cuda_major) == (["dlopen"], "13.0", 13)
    # the wheel is not on the loader's path (frameworks load it by path): recorded, it has a copy;
    # libcudart.so.11.0 is nowhere: not worth a line
    assert [(r.soname, r.real_path is not None) for r in resolutions["cudart"]] == [
        ("libcudart.so.13", True), ("libcudart.so.12", False)]


def test_quick_probe_on_a_fake_machine_loads_nothing_and_says_so(machine, monkeypatch):
    monkeypatch.setattr(L, "target_paths", lambda ctx: ([machine["sp"]], machine["conda"], None))
    facts, statuses = L.probe_libraries(machine["ctx"])
    assert not facts.dlopen_checked and "quick mode" in facts.dlopen_skipped_reason
    assert [s.status for s in statuses] == ["ok", "skipped"]
    vias = {c.real_path: c.found_via for c in facts.library("cudart").copies}
    assert vias[f"{machine['conda']}/lib/libcudart.so.11.8.89"] == ["conda"]
    assert [d for d, via in facts.search_dirs if via == "ldconfig"] == [L.LDCONFIG_CACHE]
    assert facts.site_packages == [machine["sp"]]
