"""CUDA libraries (libcudart, libcublas, libcudnn, ...): every copy found and what dlopen loads.

Owned by the CUDA-libraries probe (gpudoctor/probes/libraries.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional


@dataclass
class LibraryCopy:
    path: str  # as found, e.g. .../nvidia/cuda_runtime/lib/libcudart.so.12
    real_path: str
    soname: str  # libcudart.so.12
    found_via: List[str] = field(default_factory=list)  # site-packages | conda | LD_LIBRARY_PATH | ldconfig | CUDA_HOME | default
    version_from_name: Optional[str] = None  # from the real file name, e.g. 12.4.127
    version: Optional[str] = None  # asked of the library itself, e.g. cudaRuntimeGetVersion
    load_error: Optional[str] = None  # dlerror text


@dataclass
class LibraryFacts:
    name: str  # cudart, cublas, cublasLt, cufft, curand, cusolver, cusparse, cudnn, nccl, nvrtc, nvJitLink
    copies: List[LibraryCopy] = field(default_factory=list)
    loader_resolution: List["LoaderResolution"] = field(default_factory=list)


@dataclass
class LoaderResolution:
    """What a plain dlopen(soname) gives in the user's environment."""

    soname: str
    real_path: Optional[str] = None
    version: Optional[str] = None
    error: Optional[str] = None


@dataclass
class ToolFacts:
    name: str  # nvcc, ptxas
    path: Optional[str] = None
    version: Optional[str] = None
    error: Optional[str] = None


@dataclass
class LibrariesFacts:
    libraries: List[LibraryFacts] = field(default_factory=list)
    tools: List[ToolFacts] = field(default_factory=list)
    search_dirs: List[List[str]] = field(default_factory=list)  # [dir, found_via] in search order
