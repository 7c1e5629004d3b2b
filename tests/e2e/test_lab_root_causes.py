"""Independent root causes are all reported (issue 10, class 8), through the installed command.

TensorFlow 1.14 on Python 3.11 next to CUDA 10.1 libraries has two problems, and fixing either one
leaves the other: it supports Python up to 3.7, and it dlopens the CUDA 10.0 sonames. Both are root
causes (caused_by null), each with its own fix.
"""

import sys

import pytest

from tests.e2e.test_lab_frameworks import findings_of, tensorflow_114_with_cuda_101


@pytest.mark.skipif(sys.version_info[:2] <= (3, 7), reason="needs a Python that TensorFlow 1.14 does not support")
def test_tensorflow_114_on_python_311_with_cuda_101(lab, tmp_path):
    rc, report, stderr, _ = tensorflow_114_with_cuda_101(lab, tmp_path)
    assert rc == 1, stderr
    found = findings_of(report)
    python = found["python-unsupported"]
    libraries = found["cuda-version-mismatch"]
    for root in (python, libraries):
        assert root["severity"] == "error" and root["caused_by"] is None and root["fix"]
    assert "Python 3.7" in python["fix"][0] or "python=3.7" in python["fix"][0]
    assert "CUDA 10.0" in " ".join(libraries["fix"])
    # no fix proposes a TensorFlow that this driver (418, CUDA 10.1) cannot run on the GPU
    assert not any("tensorflow==2.2" in step for step in python["fix"]), python["fix"]
    assert "no tensorflow release" in python["fix"][-1].lower() and "418.87.01" in python["fix"][-1]
