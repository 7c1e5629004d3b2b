"""The CUDA runtime each companion package's compiled extensions were linked against.

flash-attn, xformers, mamba-ssm, vllm and friends ship .so extension modules built against one torch
and one CUDA. A wheel built for CUDA 11 next to a cu121 torch asks for libcudart.so.11.0, which the
torch wheel does not bring: the import fails with "libcudart.so.11.0: cannot open shared object file".
The DT_NEEDED entries of those modules say so before anything is imported. Only the files the
distribution's RECORD lists are opened, and only their ELF headers and dynamic section are read.
"""

from __future__ import annotations

import os
import re
import time
from typing import Iterable, List, Optional

from ...facts.frameworks import Distribution, ExtensionLink
from .elf import read_dynamic

# Companion distributions (PEP 503 names) whose extension modules link a CUDA runtime of their own build.
CUDA_EXTENSION_PACKAGES = ("flash-attn", "xformers", "mamba-ssm", "causal-conv1d", "vllm", "apex", "detectron2",
                           "pytorch3d", "mmcv", "mmcv-full", "torchvision", "torchaudio", "torch-scatter",
                           "torch-sparse", "torch-cluster", "torch-spline-conv", "pyg-lib", "auto-gptq", "exllamav2",
                           "flashinfer-python", "spconv", "sageattention", "bitsandbytes")
MAX_FILES_PER_PACKAGE = 64  # RECORD can list thousands of files; the extension modules are few
_CUDART = re.compile(r"^libcudart\.so\.\d+(?:\.\d+)*$")


def read_extension_links(distributions: Iterable[Distribution], deadline_s: float = 1.0) -> List[ExtensionLink]:
    """One ExtensionLink per extension module that needs a libcudart soname, for the companions installed."""
    stop = time.monotonic() + deadline_s
    links: List[ExtensionLink] = []
    for dist in distributions:
        if dist.key not in CUDA_EXTENSION_PACKAGES or not dist.metadata_dir:
            continue
        for path in _shared_objects(dist):
            if time.monotonic() > stop:
                return links  # a slow disk: what was read so far is still true
            dynamic = read_dynamic(path)
            if dynamic is None:
                continue
            cudart = next((n for n in dynamic.needed if _CUDART.match(n)), None)
            if cudart:
                links.append(ExtensionLink(dist.name, dist.version, path, cudart))
    return links


def _shared_objects(dist: Distribution) -> List[str]:
    """The .so files a distribution's RECORD lists, as paths under its location (at most a few dozen)."""
    record = _record_text(dist)
    if record is None:
        return []
    out: List[str] = []
    for line in record.splitlines():
        name = line.split(",", 1)[0].strip().strip('"')
        if not re.search(r"\.so(?:\.[\d.]+)?$", name) or os.path.isabs(name) or name.startswith(".."):
            continue
        out.append(os.path.join(dist.location, name))
        if len(out) >= MAX_FILES_PER_PACKAGE:
            break
    return out


def _record_text(dist: Distribution) -> Optional[str]:
    if not dist.metadata_dir or not dist.metadata_dir.endswith(".dist-info"):
        return None  # an egg-info has no RECORD
    try:
        with open(os.path.join(dist.location, dist.metadata_dir, "RECORD"), encoding="utf-8", errors="replace") as fh:
            return fh.read(1 << 20)
    except OSError:
        return None
