"""Installed packages of the target interpreter, from metadata only, and what the rules make of them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from gpudoctor.probes.frameworks import probe_frameworks
from gpudoctor.probes.frameworks.packages import probe_packages
from gpudoctor.rules import diagnose
from gpudoctor.rules.frameworks import pip

from .conftest import FakeSite, make_venv
from .test_fw_isolation import gpu_machine

TORCH_251_PINS = (
    'nvidia-cudnn-cu12==9.1.0.70; platform_system == "Linux" and platform_machine == "x86_64"',
    'nvidia-cublas-cu12==12.4.5.8; platform_system == "Linux" and platform_machine == "x86_64"',
    'nvidia-nccl-cu12==2.21.5; platform_system == "Linux" and platform_machine == "x86_64"',
    'sympy==1.13.1; python_version >= "3.9"',
)
TF_215_AND_CUDA = (
    'nvidia-cudnn-cu12==8.9.4.25; extra == "and-cuda"',
    'nvidia-cublas-cu12==12.2.5.6; extra == "and-cuda"',
    'numpy<2.0.0,>=1.23.5',
)


def site_packages(venv_python: str) -> Path:
    out = subprocess.run([venv_python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         check=True, capture_output=True, text=True).stdout.strip()
    return Path(out)


def test_distributions_versions_installers_and_requirements_are_read(site):
    site.dist("torch", "2.5.1", requires=TORCH_251_PINS)
    site.dist("nvidia-cudnn-cu12", "9.1.0.70")
    site.dist("nvidia-cublas-cu12", "12.4.5.8")
    site.dist("requests", "2.32.3")
    facts, status, _ = probe_packages(site.context())
    assert status.status == "ok"
    assert facts.packages["requests"] == "2.32.3"
    assert facts.nvidia_wheels() == {"nvidia-cudnn-cu12": "9.1.0.70", "nvidia-cublas-cu12": "12.4.5.8"}
    torch = facts.installed("torch")[0]
    assert torch.installer == "pip" and torch.requires == list(TORCH_251_PINS)
    assert all(d.key != "requests" for d in facts.distributions)  # details only for the stack


def test_torch_pins_compared_with_installed_nvidia_wheels(site):
    site.dist("torch", "2.5.1", requires=TORCH_251_PINS)
    site.dist("nvidia-cudnn-cu12", "9.5.0.50")  # upgraded by something else
    site.dist("nvidia-cublas-cu12", "12.4.5.8")
    facts, _, _ = probe_packages(site.context())
    pins = {p.package: p for p in facts.pins}
    assert set(pins) == {"nvidia-cudnn-cu12", "nvidia-cublas-cu12", "nvidia-nccl-cu12"}  # not sympy
    assert pins["nvidia-cudnn-cu12"].satisfied is False and pins["nvidia-cudnn-cu12"].installed == "9.5.0.50"
    assert pins["nvidia-cublas-cu12"].satisfied is True
    assert pins["nvidia-nccl-cu12"].installed is None and pins["nvidia-nccl-cu12"].satisfied is None
    finding = next(f for f in diagnose(gpu_machine(facts)) if f.code == "conflicting-packages")
    assert "nvidia-cudnn-cu12==9.1.0.70" in finding.detail and "9.5.0.50" in finding.detail
    assert finding.fix[0].startswith('pip install "nvidia-cudnn-cu12==9.1.0.70"')


def test_tensorflow_and_cuda_extra_pins_are_checked(site):
    site.dist("tensorflow", "2.15.0", requires=TF_215_AND_CUDA)
    site.dist("nvidia-cudnn-cu12", "9.1.0.70")
    facts, _, _ = probe_packages(site.context())
    pin = next(p for p in facts.pins if p.package == "nvidia-cudnn-cu12")
    assert pin.extra == "and-cuda" and pin.specifier == "==8.9.4.25" and pin.satisfied is False


def test_tensorflow_plus_tensorflow_gpu_conflict(site):
    site.dist("tensorflow", "2.15.0")
    site.dist("tensorflow-gpu", "2.10.0")
    facts, _ = probe_frameworks(site.context(quick=True))
    finding = next(f for f in diagnose(gpu_machine(facts)) if f.code == "conflicting-packages")
    assert finding.evidence["distributions"] == {"tensorflow": "2.15.0", "tensorflow-gpu": "2.10.0"}
    assert finding.fix[0] == "pip uninstall -y tensorflow tensorflow-gpu"
    assert finding.fix[1] == 'pip install "tensorflow[and-cuda]==2.15.0"'


def test_tensorflow_requiring_tensorflow_intel_is_not_a_conflict(site):
    site.dist("tensorflow", "2.12.0", requires=('tensorflow-intel==2.12.0; platform_system == "Windows"',))
    site.dist("tensorflow-intel", "2.12.0")
    facts, _ = probe_frameworks(site.context(quick=True))
    assert "conflicting-packages" not in [f.code for f in diagnose(gpu_machine(facts))]


def test_two_torch_distributions_on_the_path(site, tmp_path):
    site.dist("torch", "2.5.1")
    user_site = tmp_path / "user-site"
    FakeSite(user_site).dist("torch", "2.1.0+cu118")
    ctx = site.context(extra_env={"PYTHONPATH": "%s:%s" % (user_site, site.root)})
    facts, _, _ = probe_packages(ctx)
    assert facts.packages["torch"] == "2.1.0+cu118"  # the first on sys.path is the one imported
    finding = next(f for f in diagnose(gpu_machine(facts)) if f.code == "conflicting-packages")
    assert finding.title == "torch is installed more than once"
    assert [c["version"] for c in finding.evidence["copies"]] == ["2.1.0+cu118", "2.5.1"]


def test_nvidia_cu11_and_cu12_wheels_mixed(site):
    site.dist("nvidia-cudnn-cu11", "8.5.0.96")
    site.dist("nvidia-cudnn-cu12", "8.9.2.26")
    site.dist("nvidia-cublas-cu12", "12.1.3.1")
    facts, _, _ = probe_packages(site.context())
    finding = next(f for f in diagnose(gpu_machine(facts)) if f.code == "conflicting-packages")
    assert finding.severity.value == "error"  # both ship nvidia/cudnn/lib/libcudnn.so.8: one overwrote the other
    assert finding.evidence["clashing_components"] == ["nvidia-cudnn"]
    assert "pip uninstall -y nvidia-cudnn-cu11" in finding.fix[0]


def test_second_venv_with_python_flag_and_conda_meta(tmp_path, bare_python):
    """--python PATH: the probes see that interpreter's packages, not gpudoctor's own."""
    other = make_venv(tmp_path / "other-env")
    purelib = site_packages(other)
    other_site = FakeSite(purelib, other)
    other_site.dist("torch", "2.3.1", installer="conda")
    other_site.module("torch/version.py", "__version__ = '2.3.1'\ncuda = '12.1'\nhip = None\n")
    other_site.module("torch/__init__.py", "")
    other_site.dist("nvidia-cublas-cu12", "12.1.3.1")
    meta = Path(other).parent.parent / "conda-meta"  # make it look like a conda env: sys.prefix/conda-meta
    meta.mkdir()
    (meta / "cudatoolkit-11.8.0-h6a678d5_0.json").write_text("{}")
    (meta / "pytorch-2.3.1-py3.11_cuda12.1_cudnn8.9.2_0.json").write_text("{}")
    (meta / "numpy-1.26.4-py311h.json").write_text("{}")
    ctx = FakeSite(tmp_path / "empty", other).context(quick=True, extra_env={"PYTHONPATH": ""})
    facts, statuses = probe_frameworks(ctx)
    assert facts.python == other
    assert facts.frameworks["torch"].static.cuda_version == "12.1"
    assert facts.conda_prefix == str(Path(other).parent.parent)
    assert [(p.name, p.version) for p in facts.conda_packages] == [("cudatoolkit", "11.8.0"), ("pytorch", "2.3.1")]
    findings = diagnose(gpu_machine(facts))
    under = next(f for f in findings if f.title == "conda CUDA packages under pip nvidia-* wheels")
    assert under.severity.value == "warning"
    # gpudoctor's own interpreter is not the target: fixes name the target's pip
    full = gpu_machine(facts)
    full.system.gpudoctor_python = sys.executable
    assert pip(full) == other + " -m pip"
    # and the bare interpreter of the other tests sees none of it
    bare, _ = probe_frameworks(FakeSite(tmp_path / "e2", bare_python).context(quick=True))
    assert bare.frameworks == {}
