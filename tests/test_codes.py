"""Every finding code is catalogued, documented, and used under its catalogued name."""

import os
import re

from gpudoctor.codes import CATALOG, render_markdown

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DESIGN_CODES = """no-nvidia-gpu driver-not-loaded device-nodes-missing uvm-not-loaded wsl-driver-misconfigured
libcuda-missing nvml-driver-mismatch cuda-init-failed no-visible-gpu invalid-visible-devices invalid-device-ordinal
misspelled-env-var device-order-differs gpu-memory-full cuda-library-missing cuda-version-mismatch cudnn-missing
cudnn-version-mismatch multiple-cuda-installs ptxas-missing libdevice-missing driver-too-old gpu-arch-unsupported
python-unsupported platform-unsupported recommendation cpu-only-build conflicting-packages framework-import-failed
framework-gpu-not-detected gpu-op-failed gpu-op-wrong-result cudnn-unacceptable probe-timeout probe-crashed
not-environment""".split()


def test_design_vocabulary_is_all_catalogued():
    assert set(DESIGN_CODES) <= set(CATALOG)


def test_entries_are_complete_and_kebab_case():
    for code, entry in CATALOG.items():
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", code)
        assert entry.code == code and entry.title and entry.meaning and entry.detection and entry.remedy


def test_docs_findings_md_is_generated_from_the_catalogue():
    with open(os.path.join(ROOT, "docs", "findings.md"), encoding="utf-8") as handle:
        assert handle.read().strip() == render_markdown().strip(), "run: gpudoctor codes --markdown > docs/findings.md"


def test_every_code_the_package_emits_is_catalogued():
    used = set()
    for folder, _, files in os.walk(os.path.join(ROOT, "gpudoctor")):
        for name in files:
            if name.endswith(".py"):
                with open(os.path.join(folder, name), encoding="utf-8") as handle:
                    used |= set(re.findall(r'make_finding\(\s*"([a-z0-9-]+)"', handle.read()))
    assert used and used <= set(CATALOG), used - set(CATALOG)
