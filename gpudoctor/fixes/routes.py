"""How to install the CUDA libraries of one CUDA version, by era. Pure functions, no I/O.

- CUDA <= 10.2: NVIDIA published no pip wheels (its nvidia-*-cu11 wheels start with CUDA 11): the
  toolkit installer, or conda's monolithic `cudatoolkit=X.Y` (conda-forge has 9.2 and 10.0-11.8).
- CUDA 11 and 12: the `nvidia-<component>-cu11` / `-cu12` wheels; conda: `cudatoolkit=11.X` for 11,
  the split `cuda-*`/`lib*` packages selected with `cuda-version=12.X` from 12.0 on.
- CUDA 13: NVIDIA dropped the suffix (`nvidia-cuda-runtime` 13.x; the `-cu13` names of the toolkit
  libraries are deprecated 0.0.1 shims), while cuDNN and NCCL keep `-cu13` wheels.
Sources: conda-forge/cuda-feedstock recipe/doc/end_user_run_guide.md; the package index listing
summarised in gpudoctor/fixes/pip_names.toml.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

from ..versions import version_parts
from .names import known_conda

# component -> (pip wheel base name, conda package from CUDA 12 on, follows the CUDA version)
CUDA_COMPONENTS: Dict[str, Tuple[str, str, bool]] = {
    "cudart": ("cuda-runtime", "cuda-cudart", True),
    "cublas": ("cublas", "libcublas", True),
    "cublasLt": ("cublas", "libcublas", True),
    "cufft": ("cufft", "libcufft", False),
    "curand": ("curand", "libcurand", False),
    "cusolver": ("cusolver", "libcusolver", False),
    "cusparse": ("cusparse", "libcusparse", False),
    "nvrtc": ("cuda-nvrtc", "cuda-nvrtc", True),
    "nvJitLink": ("nvjitlink", "libnvjitlink", True),
    "nvcc": ("cuda-nvcc", "cuda-nvcc", True),
}
# Not part of the toolkit: versioned on their own, -cuXX wheels for every CUDA major with wheels.
SEPARATE = {"cudnn": ("cudnn", "cudnn"), "nccl": ("nccl", "nccl")}
TOOLKIT_WHEELS_FROM = 11  # the first CUDA major with nvidia-*-cuXX wheels
FIRST_CUDA = {"nvJitLink": 12}  # nvJitLink is new in CUDA 12.0: no nvidia-nvjitlink-cu11 wheel exists
SPLIT_CONDA_FROM = 12  # conda-forge's split cuda-* packages start with CUDA 12.0


def _major_minor(cuda: str) -> Tuple[Optional[int], Optional[int]]:
    parts = version_parts(cuda)
    return (parts[0] if parts else None, parts[1] if len(parts) > 1 else None)


def pip_wheel(component: str, cuda_major: int, library_major: Optional[str] = None) -> Optional[str]:
    """The wheel (with a pin where the name alone is not enough) of a component for a CUDA major,
    or None where NVIDIA published none (CUDA <= 10.2)."""
    if cuda_major < max(TOOLKIT_WHEELS_FROM, FIRST_CUDA.get(component, 0)):
        return None
    if component in SEPARATE:
        name = f"nvidia-{SEPARATE[component][0]}-cu{cuda_major}"
        return f"{name}=={library_major}.*" if library_major and component == "cudnn" else name
    if component not in CUDA_COMPONENTS:
        return None
    base, _, follows_cuda = CUDA_COMPONENTS[component]
    if cuda_major <= 12:
        return f"nvidia-{base}-cu{cuda_major}"
    return f"nvidia-{base}=={cuda_major}.*" if follows_cuda else f"nvidia-{base}"


def pip_wheels_command(components: Sequence[str], cuda_major: int, pip: str = "pip",
                       cudnn_major: Optional[str] = None) -> Optional[str]:
    wheels: List[str] = []
    for c in components:
        w = pip_wheel(c, cuda_major, cudnn_major if c == "cudnn" else None)
        if w and w not in wheels:
            wheels.append(w)
    if not wheels:
        return None
    return f"{pip} install " + " ".join(f'"{w}"' if "*" in w else w for w in wheels)


def _cudatoolkit(cuda: str) -> Optional[str]:
    major, minor = _major_minor(cuda)
    versions = known_conda().get("cudatoolkit", {}).get("versions", [])
    wanted = f"{major}.{minor}"
    return wanted if wanted in versions else None


def conda_cuda_command(components: Sequence[str], cuda: str, cudnn_major: Optional[str] = None) -> Optional[str]:
    """`conda install ...` for these components of CUDA major.minor, or None when conda has no package."""
    major, minor = _major_minor(cuda)
    if major is None:
        return None
    extra = [f'"cudnn={cudnn_major}"'] if cudnn_major and "cudnn" in components else []
    if major < SPLIT_CONDA_FROM:
        toolkit = _cudatoolkit(cuda)
        if toolkit is None:
            return None
        return " ".join(["conda install -c conda-forge", f"cudatoolkit={toolkit}"] + extra)
    names: List[str] = []
    for c in components:
        name = CUDA_COMPONENTS[c][1] if c in CUDA_COMPONENTS else SEPARATE.get(c, ("", ""))[1]
        if name and name not in names and name != "cudnn":
            names.append(name)
    version = f"cuda-version={major}.{minor}" if minor is not None else f'"cuda-version={major}.*"'
    return " ".join(["conda install -c conda-forge", version] + (names or ["cuda-runtime"]) + extra)


def cuda_install_steps(cuda: str, components: Sequence[str], env_kind: Optional[str] = None, pip: str = "pip",
                       cudnn_major: Optional[str] = None) -> List[str]:
    """Steps that install these libraries of CUDA `cuda` (e.g. "10.0", "11.8", "12"): the conda command
    for a conda env (or when the kind of env is unknown), then the era's other route."""
    major, minor = _major_minor(cuda)
    if major is None:
        return []
    steps: List[str] = []
    conda = conda_cuda_command(components, cuda, cudnn_major)
    if conda and env_kind in (None, "conda"):
        where = "in this conda env" if env_kind == "conda" else "in a conda env"
        steps.append(f"`{conda}` {where}: conda's CUDA {cuda} libraries, found in the env's lib folder.")
    if major < TOOLKIT_WHEELS_FROM:
        label = f"{major}.{minor}" if minor is not None else f"{major}.x"
        steps.append(f"Or NVIDIA's CUDA {label} toolkit installer (toolkit only, not its driver), installed next "
                     f"to the CUDA you have, then `export LD_LIBRARY_PATH=/usr/local/cuda-{label}/lib64:$LD_LIBRARY_PATH`."
                     " (CUDA 10.2 and older have no pip wheels.)")
        return steps
    wheels = pip_wheels_command(components, major, pip, cudnn_major)
    if wheels:
        steps.append(f"`{wheels}`: NVIDIA's CUDA {major} wheels; a program that does not look for them itself needs "
                     "their site-packages/nvidia/*/lib folders on LD_LIBRARY_PATH.")
    return steps
