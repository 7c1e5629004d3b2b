"""The real NVIDIA libraries (Debian's driver and CUDA packages, NVIDIA's wheels) as a fixture.

Shared by every test folder: registered in tests/conftest.py.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from typing import Dict, Optional

import pytest

FETCH = os.path.join(os.path.dirname(__file__), "fetch.py")


def _load_fetch():
    spec = importlib.util.spec_from_file_location("gpudoctor_real_libs_fetch", FETCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


@dataclass
class RealLibs:
    cache: str
    manifest: Dict

    def _root(self, package: str) -> Optional[str]:
        entry = self.manifest["debs"].get(package)
        return os.path.join(self.cache, entry["root"]) if entry else None

    def need(self, path: Optional[str], what: str) -> str:
        if not path or not os.path.exists(path):
            pytest.skip(f"{what} not fetched: {self.manifest['missing']}")
        return path

    @property
    def driver_535(self) -> str:  # folder with libcuda.so.1 -> libcuda.so.535.x
        root = self._root("libcuda1")
        return self.need(root and os.path.join(root, "usr/lib/x86_64-linux-gnu/nvidia/current"), "libcuda1 (535)")

    @property
    def nvml_535(self) -> str:
        root = self._root("libnvidia-ml1")
        return self.need(root and os.path.join(root, "usr/lib/x86_64-linux-gnu/nvidia/current"), "libnvidia-ml1")

    @property
    def driver_470(self) -> str:
        root = self._root("libnvidia-tesla-470-cuda1")
        return self.need(root and os.path.join(root, "usr/lib/x86_64-linux-gnu/nvidia/tesla-470"),
                         "libnvidia-tesla-470-cuda1")

    @property
    def nvml_470(self) -> str:
        root = self._root("libnvidia-tesla-470-ml1")
        return self.need(root and os.path.join(root, "usr/lib/x86_64-linux-gnu/nvidia/tesla-470"),
                         "libnvidia-tesla-470-ml1")

    @property
    def cudart11_dir(self) -> str:  # libcudart.so.11.0 -> libcudart.so.11.8.89
        root = self._root("libcudart11.0")
        return self.need(root and os.path.join(root, "usr/lib/x86_64-linux-gnu"), "libcudart11.0")

    @property
    def cublas11_dir(self) -> str:  # libcublas.so.11, whose libcublasLt.so.11 is not fetched
        root = self._root("libcublas11")
        return self.need(root and os.path.join(root, "usr/lib/x86_64-linux-gnu"), "libcublas11")

    @property
    def site_packages(self) -> str:  # nvidia/cuda_runtime/lib/libcudart.so.12 + dist-info
        path = os.path.join(self.cache, "site-packages")
        return self.need(path if "nvidia-cuda-runtime-cu12" in self.manifest["wheels"] else None,
                         "nvidia-cuda-runtime-cu12")


@pytest.fixture(scope="session")
def real_libs() -> RealLibs:
    """The real NVIDIA libraries, fetched once into tests/.cache/real_libs (see tests/real_libs/fetch.py)."""
    if os.environ.get("GPUDOCTOR_NO_REAL_LIBS"):
        pytest.skip("GPUDOCTOR_NO_REAL_LIBS is set")
    manifest = _load_fetch().ensure()
    # the product reports real paths (symlinks resolved): a cache reached through a link must compare equal
    return RealLibs(os.path.realpath(manifest["cache"]), manifest)
