"""The CUDA runtime each companion package's compiled extensions were linked against.

flash-attn, xformers, mamba-ssm, vllm and friends ship .so extension modules built against one torch
and one CUDA. A wheel built for CUDA 11 next to a cu121 torch asks for libcudart.so.11.0, which the
torch wheel does not bring: the import fails with "libcudart.so.11.0: cannot open shared object file".
The DT_NEEDED entries of those modules say so before anything is imported. The same modules built
against another torch release need C++ symbols the installed torch no longer defines ("undefined
symbol: _ZN3c10..." at import); their dynamic symbol tables say so too (elf_symbols.py). Only the files
the distribution's RECORD lists are opened, and only their ELF headers and tables are read.
"""

from __future__ import annotations

import os
import re
import time
from typing import Iterable, List, Optional

from ...facts.frameworks import Distribution, ExtensionLink
from .elf import read_dynamic
from .elf_symbols import TORCH_LIBRARY, TorchExports, undefined_torch_symbols

# Companion distributions (PEP 503 names) whose extension modules link a CUDA runtime of their own build.
CUDA_EXTENSION_PACKAGES = ("flash-attn", "xformers", "mamba-ssm", "causal-conv1d", "vllm", "apex", "detectron2",
                           "pytorch3d", "mmcv", "mmcv-full", "torchvision", "torchaudio", "torch-scatter",
                           "torch-sparse", "torch-cluster", "torch-spline-conv", "pyg-lib", "auto-gptq", "exllamav2",
                           "flashinfer-python", "sageattention", "bitsandbytes", "torch-tensorrt", "natten")
MAX_FILES_PER_PACKAGE = 64  # RECORD can list thousands of files; the extension modules are few
_CUDART = re.compile(r"^libcudart\.so\.\d+(?:\.\d+)*$")
SYMBOLS_SHOWN = 3  # the loader names only the first missing symbol; a few show the pattern


def read_extension_links(distributions: Iterable[Distribution], deadline_s: float = 1.0,
                         torch_package_dir: Optional[str] = None) -> List[ExtensionLink]:
    """One ExtensionLink per extension module of the installed companions that needs a libcudart soname or
    symbols of torch that the torch in `torch_package_dir` does not define."""
    stop = time.monotonic() + deadline_s
    links: List[ExtensionLink] = []
    companions = [d for d in distributions if d.key in CUDA_EXTENSION_PACKAGES and d.metadata_dir]
    if not companions:
        return links  # torch's libraries are not even opened
    with TorchExports(torch_package_dir) as torch_exports:
        for dist in companions:
            for path in _shared_objects(dist):
                if time.monotonic() > stop:
                    return links  # a slow disk: what was read so far is still true
                link = _read_link(dist, path, torch_exports)
                if link is not None:
                    links.append(link)
    return links


def _read_link(dist: Distribution, path: str, torch_exports: TorchExports) -> Optional[ExtensionLink]:
    dynamic = read_dynamic(path)
    if dynamic is None:
        return None
    cudart = next((n for n in dynamic.needed if _CUDART.match(n)), None)
    missing: List[str] = []
    # only a module linked against torch's libraries is built for a torch (bitsandbytes' are not)
    if torch_exports.readable and any(TORCH_LIBRARY.match(n) for n in dynamic.needed):
        missing = torch_exports.missing(undefined_torch_symbols(path) or [])
    if not cudart and not missing:
        return None
    return ExtensionLink(dist.name, dist.version, path, cudart, missing[:SYMBOLS_SHOWN], len(missing))


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
