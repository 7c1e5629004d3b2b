"""Companion packages built for another framework release, through the installed command (issue 10,
class 3). The packages are fake dist-info folders whose METADATA says what the real wheels say."""

import textwrap

from tests.e2e.test_lab_frameworks import fake_torch, findings_of, write
from tests.lab import scenarios


def dist(site, name, version, *requires):
    lines = "".join(f"Requires-Dist: {r}\n" for r in requires)
    write(site / f"{name.replace('-', '_')}-{version}.dist-info" / "METADATA",
          f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{lines}")


def run(lab, site, *args):
    rc, report, stderr = lab.run_check(scenarios.rtx2080ti_x4(), "--quick", *args, env_extra={"PYTHONPATH": str(site)})
    assert report is not None, stderr
    return rc, report


def companion_findings(report):
    return [f for f in report["findings"] if f["code"] == "conflicting-packages" and "companions" in f["evidence"]]


def test_torchvision_built_for_another_torch(lab, tmp_path):
    site = tmp_path / "site"
    fake_torch(site, "2.4.1+cu121", "12.1")
    # torchvision 0.20.1's wheel METADATA pins the torch it was built with
    dist(site, "torchvision", "0.20.1", "numpy", "torch (==2.5.1)", "pillow (!=8.3.*,>=5.3.0)")
    rc, report = run(lab, site)
    [finding] = companion_findings(report)
    assert rc == 1 and finding["severity"] == "error"
    assert "torch 2.4.1+cu121" in finding["detail"] and "torchvision 0.20.1 requires torch==2.5.1" in finding["detail"]
    assert finding["fix"] == ['pip install "torch==2.4.1" "torchvision!=0.20.1" '
                              '--index-url https://download.pytorch.org/whl/cu121  # pip picks the versions whose pins '
                              'match torch 2.4.1']


def test_torchvision_for_another_cuda_variant(lab, tmp_path):
    site = tmp_path / "site"
    fake_torch(site, "2.4.1+cu121", "12.1")
    dist(site, "torchvision", "0.19.1+cu118", "torch (==2.4.1)")
    dist(site, "torchaudio", "2.4.1+cu121", "torch (==2.4.1)")
    rc, report = run(lab, site)
    [finding] = companion_findings(report)
    assert "torchvision 0.19.1+cu118 is built for cu118, torch for cu121" in finding["detail"]
    assert "torchaudio" not in finding["detail"]  # the matching one is not blamed
    assert finding["fix"] == ["pip install --force-reinstall --no-deps torchvision==0.19.1 "
                              "--index-url https://download.pytorch.org/whl/cu121"]


def test_keras_3_next_to_tensorflow_215(lab, tmp_path):
    site = tmp_path / "site"
    dist(site, "tensorflow", "2.15.1", "keras (<2.16,>=2.15.0)", "tensorflow-intel (==2.15.1) ; platform_system == \"Windows\"")
    write(site / "tensorflow" / "__init__.py")
    dist(site, "keras", "3.6.0", "numpy")
    rc, report = run(lab, site)
    [finding] = companion_findings(report)
    assert "keras 3.6.0 is not what tensorflow 2.15.1 requires (keras<2.16,>=2.15.0)" in finding["detail"]
    assert finding["fix"] == ['pip install "keras<2.16,>=2.15.0"  # what tensorflow 2.15.1 requires']


def test_jaxlib_and_plugin_from_another_jax(lab, tmp_path):
    site = tmp_path / "site"
    dist(site, "jax", "0.4.35", "jaxlib (<=0.4.35,>=0.4.34)",
         "jax-cuda12-plugin[with_cuda] (<=0.4.35,>=0.4.34) ; extra == \"cuda12\"")
    write(site / "jax" / "__init__.py")
    dist(site, "jaxlib", "0.4.30")
    dist(site, "jax-cuda12-plugin", "0.4.30", "jax-cuda12-pjrt (==0.4.30)")
    dist(site, "jax-cuda12-pjrt", "0.4.30")
    rc, report = run(lab, site)
    [finding] = companion_findings(report)
    assert "jaxlib 0.4.30" in finding["detail"] and "jax-cuda12-plugin 0.4.30" in finding["detail"]
    assert finding["fix"] == ['pip install -U "jax[cuda12]==0.4.35"  # jaxlib and the CUDA plugin at the versions '
                              'jax 0.4.35 requires']


def test_matching_companions_are_quiet(lab, tmp_path):
    site = tmp_path / "site"
    fake_torch(site, "2.4.1+cu121", "12.1")
    dist(site, "torchvision", "0.19.1+cu121", "torch (==2.4.1)")
    dist(site, "torch-scatter", "2.1.2+pt24cu121")
    rc, report = run(lab, site)
    assert companion_findings(report) == []


def test_pyg_extension_built_for_another_torch(lab, tmp_path):
    site = tmp_path / "site"
    fake_torch(site, "2.4.1+cu121", "12.1")
    dist(site, "torch-scatter", "2.1.2+pt23cu118")
    rc, report = run(lab, site)
    [finding] = companion_findings(report)
    assert "torch-scatter 2.1.2+pt23cu118 is built for torch 2.3 and cu118" in finding["detail"]
    assert finding["fix"] == ["pip install --force-reinstall --no-deps torch-scatter "
                              "-f https://data.pyg.org/whl/torch-2.4.0+cu121.html"]
