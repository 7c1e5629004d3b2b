"""CUDA libraries (libcudart, libcublas, libcudnn, ...): every copy found and what dlopen loads.

Owned by the CUDA-libraries probe (gpudoctor/probes/libraries.py).

found_via vocabulary (cuda-pathfinder's words, plus the loader's own steps), in search order:
site-packages | conda | LD_LIBRARY_PATH | ldconfig | CUDA_HOME | default | dlopen
("default": /usr/local/cuda*; "dlopen": only the loader found it, in none of the other places).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional


@dataclass
class LibraryCopy:
    """One real file. Copies reached through several names or folders are merged (by real path)."""

    path: str  # as first found, e.g. .../nvidia/cuda_runtime/lib/libcudart.so.12
    real_path: str
    soname: str  # libcudart.so.12: the name frameworks dlopen
    found_via: List[str] = field(default_factory=list)  # in search order, no repeats
    found_at: List[List[str]] = field(default_factory=list)  # [found_via, path] for every way it was found
    version_from_name: Optional[str] = None  # from the real file name, e.g. 12.4.127 (or just 12)
    version: Optional[str] = None  # the best version known, e.g. 12.9 (see version_source)
    version_source: Optional[str] = None  # library | header | dist-info | file-name
    version_code: Optional[int] = None  # the raw number the library answered, e.g. 12090, 90100
    version_error: Optional[str] = None  # why the library could not answer, e.g. cudaRuntimeGetVersion returned 35
    cuda_major: Optional[int] = None  # the CUDA major this copy belongs to, where its soname proves it
    package: Optional[str] = None  # the wheel it came from, e.g. nvidia-cuda-runtime-cu12 12.9.79
    load_error: Optional[str] = None  # dlerror text when loading this file by its path failed
    archs: List[str] = field(default_factory=list)  # sm_XX/compute_XX of its fat binaries (cuBLAS, cuDNN); [] unknown
    archs_from: List[str] = field(default_factory=list)  # the files they were read from (cuDNN keeps kernels in siblings)


@dataclass
class LoaderResolution:
    """What a plain dlopen(soname) gives in the user's environment (a child process)."""

    soname: str
    real_path: Optional[str] = None
    version: Optional[str] = None
    error: Optional[str] = None  # dlerror text
    found_via: List[str] = field(default_factory=list)  # of the copy it resolved to


@dataclass
class LibraryFacts:
    name: str  # cudart, cublas, cublasLt, cufft, curand, cusolver, cusparse, cudnn, nccl, nvrtc, nvJitLink
    copies: List[LibraryCopy] = field(default_factory=list)
    loader_resolution: List[LoaderResolution] = field(default_factory=list)


@dataclass
class ToolFacts:
    name: str  # nvcc, ptxas, nvlink
    path: Optional[str] = None
    version: Optional[str] = None  # 13.0.88
    error: Optional[str] = None
    found_via: Optional[str] = None  # PATH | CUDA_HOME | site-packages | conda | default


@dataclass
class ToolchainFacts:
    """What building a CUDA extension would use: torch.utils.cpp_extension's nvcc, the host compiler,
    ninja. Empty in quick mode (finding them means running them)."""

    extension_nvcc: Optional[ToolFacts] = None  # the nvcc cpp_extension picks (CUDA_HOME, PATH, /usr/local/cuda)
    cuda_home: Optional[str] = None  # the folder it derives from, as cpp_extension would
    host_compiler: Optional[ToolFacts] = None  # name: gcc | clang | the $CXX given; version: 12.2.0
    ninja: Optional[ToolFacts] = None
    toolkits: Dict[str, str] = field(default_factory=dict)  # /usr/local/cuda-X.Y with bin/nvcc -> its version
    checked: bool = False


@dataclass
class LibrariesFacts:
    libraries: List[LibraryFacts] = field(default_factory=list)
    tools: List[ToolFacts] = field(default_factory=list)
    search_dirs: List[List[str]] = field(default_factory=list)  # [dir, found_via] in search order
    libdevice: List[str] = field(default_factory=list)  # libdevice.10.bc files found
    toolchain: ToolchainFacts = field(default_factory=ToolchainFacts)
    site_packages: List[str] = field(default_factory=list)  # of the target interpreter
    dlopen_checked: bool = False  # the child ran: loader_resolution and library versions are real
    dlopen_skipped_reason: Optional[str] = None  # e.g. quick mode: versions come from file names

    def library(self, name: str) -> Optional[LibraryFacts]:
        for lib in self.libraries:
            if lib.name == name:
                return lib
        return None
